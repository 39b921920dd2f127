"""Win/draw/loss counts with Wilson score intervals.

Why Wilson: match results are binomial proportions, often near 0 or 1 (a strong agent against a weak one)
and over modest numbers of games.  The textbook normal interval ``p +- z*sqrt(p(1-p)/n)`` collapses to a
zero-width interval at 0% or 100% and can leave [0, 1]; the Wilson score interval (invert the score test)
stays inside [0, 1] and keeps close to its nominal coverage even there.  DESIGN.md asks for it on every
reported rate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Iterable

import numpy as np

from boardrl.errors import BoardRLError

#: The seats a result is reported for, from the named agent's side: moving first, second, and both together.
#: The one definition: match results, curve files, metrics, figures and the report all use these names.
SEATS = ("as_first", "as_second", "combined")


def z_for(confidence: float) -> float:
    """Two-sided normal quantile for a confidence level, e.g. 0.95 -> 1.95996..."""
    if not 0.0 < confidence < 1.0:
        raise BoardRLError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for ``successes`` out of ``n`` trials; (0, 1) when ``n`` is 0 (nothing known)."""
    if n < 0 or successes < 0 or successes > n:
        raise BoardRLError(f"wilson_interval needs 0 <= successes <= n, got successes={successes}, n={n}")
    z = z_for(confidence)
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = (z / denom) * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n))
    # Clamp rounding noise only: the exact interval always lies in [0, 1] and contains 0 (resp. 1) at p=0 (1).
    lo = 0.0 if successes == 0 else max(0.0, centre - half)
    hi = 1.0 if successes == n else min(1.0, centre + half)
    return (lo, hi)


@dataclass(frozen=True)
class SeatStats:
    """Wins, draws and losses of one agent (from its own side) over a number of games."""

    wins: int = 0
    draws: int = 0
    losses: int = 0
    confidence: float = 0.95

    def __post_init__(self) -> None:
        if min(self.wins, self.draws, self.losses) < 0:
            raise BoardRLError(f"SeatStats counts must be non-negative, got {self.wins}/{self.draws}/{self.losses}")

    @classmethod
    def from_outcomes(cls, outcomes: Iterable[float] | np.ndarray, confidence: float = 0.95) -> "SeatStats":
        """Count outcomes given as +1 (win), 0 (draw), -1 (loss), e.g. per-game returns of the agent."""
        arr = np.asarray(list(outcomes) if not isinstance(outcomes, np.ndarray) else outcomes, dtype=np.float64)
        if arr.size and not np.isin(arr, (-1.0, 0.0, 1.0)).all():
            bad = arr[~np.isin(arr, (-1.0, 0.0, 1.0))][0]
            raise BoardRLError(f"outcomes must be +1, 0 or -1, got {bad!r}")
        return cls(int((arr > 0).sum()), int((arr == 0).sum()), int((arr < 0).sum()), confidence)

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    def _rate(self, k: int) -> float:
        return k / self.games if self.games else math.nan

    @property
    def win_rate(self) -> float:
        """Share of games won; NaN when no game was played."""
        return self._rate(self.wins)

    @property
    def draw_rate(self) -> float:
        return self._rate(self.draws)

    @property
    def loss_rate(self) -> float:
        return self._rate(self.losses)

    @property
    def score(self) -> float:
        """Mean points with win = 1, draw = 1/2 (the usual match score); NaN when no game was played."""
        return self._rate(2 * self.wins + self.draws) / 2.0

    @property
    def win_ci(self) -> tuple[float, float]:
        return wilson_interval(self.wins, self.games, self.confidence)

    @property
    def draw_ci(self) -> tuple[float, float]:
        return wilson_interval(self.draws, self.games, self.confidence)

    @property
    def loss_ci(self) -> tuple[float, float]:
        return wilson_interval(self.losses, self.games, self.confidence)

    def swapped(self) -> "SeatStats":
        """The same games seen from the opponent's side (wins and losses exchanged)."""
        return SeatStats(self.losses, self.draws, self.wins, self.confidence)

    def __add__(self, other: "SeatStats") -> "SeatStats":
        if not isinstance(other, SeatStats):
            return NotImplemented
        if other.confidence != self.confidence:
            raise BoardRLError(f"cannot add SeatStats at confidence {self.confidence} and {other.confidence}")
        return SeatStats(self.wins + other.wins, self.draws + other.draws, self.losses + other.losses, self.confidence)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: rates are null when no game was played (a rate of 0 would claim something false)."""

        def rate(k: int) -> float | None:
            return k / self.games if self.games else None

        return {
            "win": rate(self.wins),
            "draw": rate(self.draws),
            "loss": rate(self.losses),
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "win_ci": list(self.win_ci),
            "draw_ci": list(self.draw_ci),
            "loss_ci": list(self.loss_ci),
        }

    def __str__(self) -> str:
        if not self.games:
            return "no games"
        lo, hi = self.win_ci
        return (
            f"W {self.win_rate:6.1%} [{lo:.1%}, {hi:.1%}]  D {self.draw_rate:6.1%}  L {self.loss_rate:6.1%}"
            f"  ({self.games} games)"
        )


def combine(stats: Iterable[SeatStats]) -> SeatStats:
    """Sum of several SeatStats (e.g. the two seats of a match); empty input gives zero games."""
    total: SeatStats | None = None
    for s in stats:
        total = s if total is None else total + s
    return total if total is not None else SeatStats()
