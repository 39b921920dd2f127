"""Value accuracy on the UCI Connect-4 labels: does an agent's value know who wins from the 8-ply positions?

Why: the UCI data set (67,557 positions, x to move after 8 plies) labels each position with its game-theoretic
value for x (win / draw / loss).  Issue 9 asks for the share of these labels a learned value gets right, read
from the value alone, with no search: the direct test of seed 000's claim that its network *learned* Connect 4
(SEEDS.md, seed 000), independent of how weak the opponent of a match is.

The optional agent capability is ``value_batch(states) -> (N,)`` values in [-1, 1] for the player to move
(``NetworkAgent`` has it); agents without it are not measured (``has_value``).  Every position is x to move,
so the agent's value is x's value and compares directly with the label.

Reading a value as a class: win above ``hi``, loss below ``lo``, draw in between, with (lo, hi) = (-1/3, 1/3)
by default: the three outcomes (+1, 0, -1) get equal thirds of the value range, fixed before any agent is seen.
It sits below the midpoint 1/2 between draw and win on purpose: discounted returns (a win k moves away is worth
gamma^k) and function approximation both pull learned values towards 0, and a lower cut does not count that
shrinkage as ignorance.  As a secondary number the best (lo, hi) on a 0.01 grid is reported under ``fitted``;
it is tuned on these same labels, so it is an optimistic upper bound, not a held-out accuracy.

Results: overall accuracy, per-label accuracy (the recall of each label) with 95% Wilson intervals, balanced
accuracy (mean recall; "win" is 66% of the labels), the confusion matrix (rows: true label, columns:
predicted), the mean value per label, and the majority-class baseline.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from boardrl.agents.base import Agent
from boardrl.data.uci_table import frame_states
from boardrl.errors import BoardRLError
from boardrl.evaluate.stats import wilson_interval
from boardrl.data.uci_positions import LABELS

DEFAULT_THRESHOLDS = (-1.0 / 3.0, 1.0 / 3.0)
CHUNK = 4096  # rows per value_batch call: one forward pass each, memory bounded on any machine
GRID_STEP = 0.01  # the grid of the fitted thresholds
FITTED_NOTE = "thresholds fitted on these same labels: an optimistic upper bound, not a held-out accuracy"
_VALUE_OF = {"win": 1, "draw": 0, "loss": -1}  # class index by the sign of the outcome for x


def has_value(agent: Agent) -> bool:
    """True when the agent offers ``value_batch`` (the optional value capability)."""
    return callable(getattr(agent, "value_batch", None))


def agent_values(agent: Agent, states: np.ndarray, chunk: int = CHUNK) -> np.ndarray:
    """(N,) float64 values of the agent for the rows of ``states``, ``chunk`` rows per ``value_batch`` call."""
    if not has_value(agent):
        raise BoardRLError(f"agent {agent.name!r} has no value_batch: it offers no value to measure")
    if chunk < 1:
        raise BoardRLError(f"chunk must be >= 1, got {chunk}")
    parts = []
    for start in range(0, len(states), chunk):
        rows = states[start:start + chunk]
        v = np.asarray(agent.value_batch(rows), dtype=np.float64)
        if v.shape != (len(rows),):
            raise BoardRLError(f"{agent.name}: value_batch gave shape {v.shape} for {len(rows)} rows, expected "
                               f"({len(rows)},)")
        parts.append(v)
    values = np.concatenate(parts) if parts else np.zeros(0)
    if not np.isfinite(values).all():
        row = int(np.argmin(np.isfinite(values)))
        raise BoardRLError(f"{agent.name}: value_batch gave a non-finite value (row {row})")
    return values


def classify(values: np.ndarray, thresholds: tuple[float, float] = DEFAULT_THRESHOLDS) -> np.ndarray:
    """+1 (win) above ``hi``, -1 (loss) below ``lo``, 0 (draw) from ``lo`` to ``hi`` inclusive."""
    lo, hi = _check_thresholds(thresholds)
    v = np.asarray(values, dtype=np.float64)
    return np.where(v > hi, 1, np.where(v < lo, -1, 0)).astype(np.int64)


def _check_thresholds(thresholds: tuple[float, float]) -> tuple[float, float]:
    try:
        lo, hi = (float(t) for t in thresholds)
    except (TypeError, ValueError):
        raise BoardRLError(f"thresholds must be a pair (lo, hi), got {thresholds!r}") from None
    if not -1.0 <= lo <= hi <= 1.0:
        raise BoardRLError(f"thresholds need -1 <= lo <= hi <= 1, got ({lo}, {hi})")
    return lo, hi


def _rate(correct: int, n: int) -> dict[str, Any]:
    return {"rate": correct / n if n else None, "correct": int(correct), "n": int(n),
            "ci": list(wilson_interval(int(correct), int(n)))}


@dataclass(frozen=True)
class ValueAccuracy:
    """Counts of (true label, predicted class) and what the report needs besides; ``to_dict`` for JSON."""

    thresholds: tuple[float, float]
    confusion: dict[str, dict[str, int]]  # confusion[true][predicted]
    mean_value: dict[str, float | None]
    fitted: dict[str, Any] | None
    seconds: float

    @property
    def n(self) -> int:
        return sum(sum(row.values()) for row in self.confusion.values())

    @property
    def correct(self) -> int:
        return sum(self.confusion[lab][lab] for lab in LABELS)

    @property
    def accuracy(self) -> float:
        return self.correct / self.n if self.n else float("nan")

    def to_dict(self) -> dict[str, Any]:
        per_label = {lab: _rate(self.confusion[lab][lab], sum(self.confusion[lab].values())) for lab in LABELS}
        recalls = [b["rate"] for b in per_label.values() if b["rate"] is not None]
        counts = {lab: sum(self.confusion[lab].values()) for lab in LABELS}
        return {
            "positions": self.n,
            "thresholds": list(self.thresholds),
            "accuracy": _rate(self.correct, self.n),
            "per_label": per_label,
            "balanced_accuracy": float(np.mean(recalls)) if recalls else None,
            "majority_baseline": max(counts.values()) / self.n if self.n else None,
            "confusion": self.confusion,
            "mean_value": self.mean_value,
            "fitted": self.fitted,
            "seconds": self.seconds,
        }


def confusion_matrix(values: np.ndarray, labels: np.ndarray,
                     thresholds: tuple[float, float] = DEFAULT_THRESHOLDS) -> dict[str, dict[str, int]]:
    """{true label: {predicted label: count}} over ``LABELS`` (every cell present, zeros included)."""
    predicted = classify(values, thresholds)
    names = np.asarray(labels).astype(str)
    unknown = sorted(set(np.unique(names)) - set(LABELS))
    if unknown:
        raise BoardRLError(f"unknown UCI label(s) {', '.join(unknown)}; labels are {', '.join(LABELS)}")
    truth = np.zeros(len(names), dtype=np.int64)
    for name, value in _VALUE_OF.items():
        truth[names == name] = value
    return {t: {p: int(((truth == _VALUE_OF[t]) & (predicted == _VALUE_OF[p])).sum()) for p in LABELS}
            for t in LABELS}


def fitted_thresholds(values: np.ndarray, labels: np.ndarray, step: float = GRID_STEP) -> dict[str, Any]:
    """The (lo, hi) on a grid over [-1, 1] with the most correct labels (ties: the first found, lo then hi).

    Counts come from sorted values per label (``searchsorted``), so the whole (lo, hi) grid costs one sort.
    """
    grid = np.round(np.linspace(-1.0, 1.0, int(round(2.0 / step)) + 1), 10)
    v = np.clip(np.asarray(values, dtype=np.float64), -1.0, 1.0)
    lab = np.asarray(labels).astype(str)
    win, draw, loss = (np.sort(v[lab == name]) for name in ("win", "draw", "loss"))
    loss_below = np.searchsorted(loss, grid, side="left")  # loss: v < lo
    win_above = len(win) - np.searchsorted(win, grid, side="right")  # win: v > hi
    draw_upto = np.searchsorted(draw, grid, side="right")  # draw: lo <= v <= hi
    draw_from = np.searchsorted(draw, grid, side="left")
    correct = loss_below[:, None] + win_above[None, :] + (draw_upto[None, :] - draw_from[:, None])
    correct = np.where(np.arange(len(grid))[:, None] <= np.arange(len(grid))[None, :], correct, -1)  # lo <= hi
    i, j = np.unravel_index(int(np.argmax(correct)), correct.shape)
    n = len(v)
    return {"thresholds": [float(grid[i]), float(grid[j])], "accuracy": int(correct[i, j]) / n if n else None,
            "grid_step": step, "note": FITTED_NOTE}


def value_accuracy(agent: Agent, table: pd.DataFrame,
                   thresholds: tuple[float, float] = DEFAULT_THRESHOLDS, chunk: int = CHUNK,
                   fit: bool = True) -> ValueAccuracy:
    """The agent's value read as win/draw/loss on every row of the UCI table (``data/uci_table.uci_frame``)."""
    if agent.game.game_id != "connect4":
        raise BoardRLError(f"value accuracy on the UCI labels is for connect4 agents, not {agent.game.game_id}")
    if "label" not in table.columns or len(table) == 0:
        raise BoardRLError("value accuracy needs the UCI table with its 'label' column and at least one row")
    thresholds = _check_thresholds(thresholds)
    t0 = time.perf_counter()
    values = agent_values(agent, frame_states(table), chunk)
    labels = table["label"].astype(str).to_numpy()
    means = {lab: (float(values[labels == lab].mean()) if (labels == lab).any() else None) for lab in LABELS}
    return ValueAccuracy(thresholds, confusion_matrix(values, labels, thresholds), means,
                         fitted_thresholds(values, labels) if fit else None, time.perf_counter() - t0)
