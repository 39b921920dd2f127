"""Learning curves: W/D/L per seat against benchmark opponents at training-game counts, kept resume-safe.

Why a progress file: a learner calls back at each evaluation point and then checkpoints; a run resumed from
that checkpoint does not call back again for the points it already passed.  So the rows measured so far are
saved (atomically) next to the learner's checkpoint, stamped with the params hash of the run; a resumed run
with the same hash picks them up, anything else starts the curve afresh.  The learner empties the checkpoint
directory when training completes, which removes the progress file with it.

The TSV layout is the contract with ``dvc plots`` and the report stage:
``step  opponent  seat  win  draw  loss  games`` with one row per (step, opponent, seat) and seat in
as_first / as_second / combined; rates are fractions of ``games``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from boardrl.atomic_io import atomic_write_json, atomic_write_tsv
from boardrl.evaluate.stats import SEATS

HEADER = ("step", "opponent", "seat", "win", "draw", "loss", "games")
PROGRESS_FILE = "pipeline_curve.json"
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


class CurveProgress:
    """Curve rows measured so far, keyed by step, persisted in ``<checkpoint_dir>/pipeline_curve.json``."""

    def __init__(self, checkpoint_dir: Path, run_hash: str) -> None:
        self.path = Path(checkpoint_dir) / PROGRESS_FILE
        self.run_hash = run_hash
        self.by_step: dict[int, list[list[Any]]] = {}
        self.resumed = False

    def load(self) -> bool:
        """Take over the rows of an interrupted run with the same hash; False (and nothing loaded) otherwise."""
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return False
        if not isinstance(data, dict) or data.get("run_hash") != self.run_hash:
            return False
        self.by_step = {int(k): v for k, v in data.get("rows", {}).items()}
        self.resumed = True
        return True

    def record(self, step: int, rows: list[list[Any]]) -> None:
        """Store (or replace, when a resumed run re-measures a point) the rows of ``step`` and persist them."""
        self.by_step[int(step)] = rows
        atomic_write_json(self.path, {"run_hash": self.run_hash,
                                      "rows": {str(k): v for k, v in sorted(self.by_step.items())}})

    def rows(self) -> list[list[Any]]:
        return [row for step in sorted(self.by_step) for row in self.by_step[step]]

    def steps(self) -> list[int]:
        return sorted(self.by_step)


def write_tsv(path: Path, rows: Sequence[Sequence[Any]]) -> Path:
    return atomic_write_tsv(path, HEADER, rows)


def read_tsv(path: Path) -> list[dict[str, Any]]:
    """Rows of a curve TSV as dicts with typed values (for tests and the report)."""
    lines = Path(path).read_text().splitlines()
    header = lines[0].split("\t")
    if tuple(header) != HEADER:
        raise ValueError(f"{path}: header {header} is not {list(HEADER)}")
    out = []
    for line in lines[1:]:
        v = line.split("\t")
        out.append({"step": int(v[0]), "opponent": v[1], "seat": v[2], "win": float(v[3]), "draw": float(v[4]),
                    "loss": float(v[5]), "games": int(v[6])})
    return out

