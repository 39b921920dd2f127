"""How much of a difference is luck: a number over several training seeds, with its interval.

Benchmarks of other RL tools report one training run; with several seeds boardrl reports the interquartile
mean (IQM: the mean of the middle 50% of the values, robust to one lucky or unlucky seed, unlike the mean, and
less wasteful than the median) with a 95% percentile-bootstrap interval over seeds, the aggregate the
``rliable`` library recommends (Agarwal et al., 2021, "Deep RL at the edge of the statistical precipice").  With
one task per experiment its stratified bootstrap is a plain bootstrap over seeds; with a single seed the
interval is the value itself (nothing is known about the spread).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

METHOD = "interquartile mean, percentile bootstrap over seeds"
BOOTSTRAP_SAMPLES = 2000
CONFIDENCE = 0.95


def iqm(values: Sequence[float]) -> float:
    """Interquartile mean: scipy's 25%-trimmed mean (rliable's definition).

    One value is its own IQM (the trim removes ``int(0.25 * 1) = 0`` values), answered without importing
    scipy.stats: that import costs about a second, and most evaluate stages have one seed."""
    x = np.asarray(values, dtype=np.float64)
    if x.size == 1:
        return float(x[0])
    from scipy.stats import trim_mean  # imported here: scipy.stats costs every stage a second at start-up

    return float(trim_mean(x, proportiontocut=0.25))


def bootstrap_interval(values: Sequence[float], seed: int = 0, samples: int = BOOTSTRAP_SAMPLES,
                       confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Percentile-bootstrap interval of the IQM over seeds (resampled with replacement), seeded."""
    x = np.asarray(values, dtype=np.float64)
    if x.size == 1:
        return float(x[0]), float(x[0])
    from scipy.stats import trim_mean

    idx = np.random.default_rng(seed).integers(0, x.size, size=(samples, x.size))
    stats = trim_mean(x[idx], proportiontocut=0.25, axis=1)
    alpha = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(stats, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def across_seeds(values: Sequence[float | None], seed: int = 0) -> dict[str, Any] | None:
    """{"iqm", "ci", "values", "confidence", "method"} of one number over seeds; None when a value is missing."""
    if not values or any(v is None for v in values):
        return None
    vals = [float(v) for v in values]
    lo, hi = bootstrap_interval(vals, seed)
    return {"iqm": iqm(vals), "ci": [lo, hi], "values": vals, "confidence": CONFIDENCE, "method": METHOD}
