"""Wilson intervals against hand-computed values, and SeatStats bookkeeping."""

import json
import math

import pytest

from boardrl.evaluate.stats import SeatStats, combine, wilson_interval, z_for
from boardrl.errors import BoardRLError

Z95 = 1.959963984540054  # Phi^-1(0.975)


def test_z_for_standard_levels():
    assert z_for(0.95) == pytest.approx(Z95, abs=1e-12)
    assert z_for(0.999) == pytest.approx(3.2905267314919255, abs=1e-12)
    with pytest.raises(BoardRLError, match="between 0 and 1"):
        z_for(1.0)


def test_wilson_zero_successes_upper_bound_is_z2_over_n_plus_z2():
    # p = 0: centre = z^2/2n / (1+z^2/n), half the same, so hi = z^2 / (n + z^2).
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0
    assert hi == pytest.approx(Z95**2 / (10 + Z95**2), abs=1e-12)
    assert hi == pytest.approx(0.2775328, abs=1e-7)


def test_wilson_all_successes_mirrors_zero():
    lo, hi = wilson_interval(10, 10)
    assert hi == 1.0
    assert lo == pytest.approx(10 / (10 + Z95**2), abs=1e-12)
    assert lo == pytest.approx(0.7224672, abs=1e-7)


def test_wilson_half_of_hundred():
    # centre 0.5; half = z/(1+z^2/100) * sqrt(0.25/100 + z^2/40000) = 0.0961685 (by hand).
    lo, hi = wilson_interval(50, 100)
    assert lo == pytest.approx(0.4038315, abs=1e-7)
    assert hi == pytest.approx(0.5961685, abs=1e-7)


def test_wilson_other_confidence_is_wider():
    lo95, hi95 = wilson_interval(30, 100)
    lo99, hi99 = wilson_interval(30, 100, confidence=0.99)
    assert lo99 < lo95 < 0.3 < hi95 < hi99


def test_wilson_empty_and_bad_input():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(BoardRLError, match="successes"):
        wilson_interval(5, 3)


def test_seat_stats_rates_and_dict():
    s = SeatStats(wins=50, draws=20, losses=30)
    assert s.games == 100
    assert (s.win_rate, s.draw_rate, s.loss_rate) == (0.5, 0.2, 0.3)
    assert s.score == pytest.approx(0.6)
    d = s.to_dict()
    assert {"win", "draw", "loss", "games", "win_ci", "draw_ci", "loss_ci"} <= set(d)
    assert d["win"] == 0.5 and d["games"] == 100
    assert d["win_ci"] == pytest.approx([0.4038315, 0.5961685], abs=1e-7)
    json.dumps(d)  # JSON-ready


def test_seat_stats_empty_has_null_rates():
    s = SeatStats()
    assert math.isnan(s.win_rate)
    d = s.to_dict()
    assert d["win"] is None and d["games"] == 0 and d["win_ci"] == [0.0, 1.0]


def test_from_outcomes_swapped_and_combine():
    a = SeatStats.from_outcomes([1, 1, 0, -1])
    b = SeatStats.from_outcomes([-1, 0])
    assert (a.wins, a.draws, a.losses) == (2, 1, 1)
    assert a.swapped() == SeatStats(1, 1, 2)
    assert combine([a, b]) == a + b == SeatStats(2, 2, 2)
    assert combine([]) == SeatStats()
    with pytest.raises(BoardRLError, match="outcomes must be"):
        SeatStats.from_outcomes([2])
    with pytest.raises(BoardRLError, match="non-negative"):
        SeatStats(-1, 0, 0)
