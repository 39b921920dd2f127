"""Learning-curve rows: W/D/L per seat against benchmark opponents at points of training progress.

The TSV layout is the contract with ``dvc plots`` and the report stage (whose ``read_curve`` is the one reader):
``step  opponent  seat  win  draw  loss  games`` with one row per (step, opponent, seat) and seat in
as_first / as_second / combined; rates are fractions of ``games``.  Rows measured before an interruption are
kept by the learner base in its checkpoints (learn/core/base.py), so a resumed run writes the whole curve.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np

from boardrl.atomic_io import atomic_write_tsv
from boardrl.evaluate.stats import SEATS

HEADER = ("step", "opponent", "seat", "win", "draw", "loss", "games")
RATE_DIGITS = 6


def sub_seed(seed: int, *keys: int) -> int:
    """A 63-bit seed for one (purpose, step, opponent, ...) tuple, independent of evaluation order."""
    state = np.random.SeedSequence([int(seed), *(int(k) for k in keys)]).generate_state(2, np.uint32)
    return int((int(state[0]) << 31) ^ int(state[1])) & (2**63 - 1)


def _rate(x: float | None) -> float | str:
    return "nan" if x is None else round(float(x), RATE_DIGITS)


def seat_rows(step: int, opponent: str, match_dict: dict[str, Any]) -> list[list[Any]]:
    """The three curve rows of one match (``MatchResult.to_dict()``) at ``step``."""
    rows = []
    for seat in SEATS:
        s = match_dict[seat]
        rows.append([int(step), opponent, seat, _rate(s["win"]), _rate(s["draw"]), _rate(s["loss"]), int(s["games"])])
    return rows


def write_tsv(path: Path, rows: Sequence[Sequence[Any]]) -> Path:
    return atomic_write_tsv(path, HEADER, rows)
