"""The seed table's verdicts: where a published figure sits against our pooled 95% interval."""

from __future__ import annotations

import dataclasses

import pytest

from boardrl.evaluate.stats import wilson_interval as wilson
from boardrl.report.comparison import Pooled, verdict
from boardrl.report.seeds import SEED_NUMBERS


def _row(**changes):
    base = next(n for n in SEED_NUMBERS if n.seed == "004" and n.opponent == "flip" and n.seat == "as_first")
    return dataclasses.replace(base, **changes)


def test_the_table_uses_the_known_wilson_interval():
    lo, hi = wilson(0, 100)
    assert lo == 0.0 and hi == pytest.approx(0.0370, abs=1e-4)  # 0 of 100: [0, 3.7%]
    lo, hi = wilson(50, 100)
    assert (lo, hi) == (pytest.approx(0.4038, abs=1e-4), pytest.approx(0.5962, abs=1e-4))


@pytest.mark.parametrize("wins, published, expected", [
    (0, 0.0, "reproduced (within the interval)"),  # 0 of 100 against a published 0-100: on the interval's end
    (100, 1.0, "reproduced (within the interval)"),
    (60, 0.17, "beaten"),
    (5, 0.43, "not reached"),
])
def test_verdict_by_where_the_published_figure_sits(wins, published, expected):
    p = Pooled(wins, 0, 100 - wins, 1, {})
    value, lo, hi = p.measure("win")
    text = verdict(_row(value=published, reason=None), lo, hi, value)
    assert text == expected


def test_a_reason_follows_a_difference_but_not_a_reproduction():
    p = Pooled(5, 0, 95, 1, {})
    value, lo, hi = p.measure("win")
    assert verdict(_row(value=0.43, reason="why"), lo, hi, value) == "not reached: why"
    assert verdict(_row(value=0.05, reason="why"), lo, hi, value) == "reproduced (within the interval)"


def test_loss_is_lower_is_better_and_marks_are_pass_or_fail():
    p = Pooled(0, 90, 10, 1, {})
    value, lo, hi = p.measure("loss")
    assert verdict(_row(measure="loss", value=0.4, reason=None), lo, hi, value) == "beaten"
    assert verdict(_row(measure="win_draw", value=0.5, threshold=True), *p.measure("win_draw")[1:],
                   p.measure("win_draw")[0]) == "passes the seed's mark"


def test_score_interval_is_a_normal_interval_of_the_per_game_score():
    p = Pooled(60, 20, 20, 1, {})
    mean, lo, hi = p.measure("score")
    assert mean == pytest.approx(0.7) and lo < mean < hi and hi - lo == pytest.approx(2 * 1.96 * (0.16 / 100) ** 0.5,
                                                                                       rel=1e-3)
