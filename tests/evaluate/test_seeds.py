"""Spread across training seeds: the interquartile mean and its bootstrap interval."""

from __future__ import annotations

import numpy as np
import pytest

from boardrl.evaluate.seeds import across_seeds, bootstrap_interval, iqm


def test_iqm_drops_the_outer_quarters():
    assert iqm([0.0, 1.0, 2.0, 100.0]) == pytest.approx(1.5)  # middle two of four
    assert iqm([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]) == pytest.approx(4.5)
    assert iqm([0.2, 0.4, 0.9]) == pytest.approx(0.5)  # three values: nothing trimmed


def test_single_seed_interval_is_the_value():
    s = across_seeds([0.75])
    assert s["iqm"] == 0.75 and s["ci"] == [0.75, 0.75] and s["values"] == [0.75]


def test_interval_brackets_the_iqm_and_is_seeded():
    vals = [0.61, 0.64, 0.70, 0.72, 0.80]
    lo, hi = bootstrap_interval(vals, seed=3)
    assert min(vals) <= lo <= iqm(vals) <= hi <= max(vals)
    assert bootstrap_interval(vals, seed=3) == (lo, hi)


def test_interval_covers_the_true_mean_about_95_percent():
    """Coverage check: 400 experiments of 10 seeds from N(0.5, 0.05); the percentile bootstrap of a trimmed
    mean under-covers a little with 10 seeds, so the 95% binomial bound for 400 trials is widened to 85-99%."""
    rng = np.random.default_rng(0)
    hits = 0
    for i in range(400):
        lo, hi = bootstrap_interval(rng.normal(0.5, 0.05, 10), seed=i, samples=500)
        hits += lo <= 0.5 <= hi
    assert 0.85 * 400 <= hits <= 0.99 * 400


def test_missing_values_give_none():
    assert across_seeds([0.5, None]) is None and across_seeds([]) is None
