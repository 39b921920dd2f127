"""The UCI Connect-4 data as a table: parse, check the published facts, compare with the rules, save.

Why a table: the evaluate stage draws start positions by label, the report counts them, and users explore
the data in pandas; parquet keeps the dtypes (categorical cells and labels, int64 engine states) and loads
in milliseconds.  Each row keeps the 42 UCI attributes (``a1`` .. ``g6``, x/o/b) and the label, plus the
engine's view of the position: ``current``, ``mask``, ``plies`` (a ``Connect4State``) and ``mirror_key``
(the same number for a position and its left-right mirror image).

The checks are the facts of shared/data/uci/README.md: 67,557 rows; 44,473 win, 16,635 loss, 6,449 draw;
4 x and 4 o stones in every row; and the set equals the 8-ply positions regenerated from the rules modulo
mirror symmetry (134,934 positions, 180 of them symmetric).  Parsing and regeneration are the Connect 4
engine's (``boardrl.data.uci_positions``); this module adds the table and the fact checks.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from boardrl.errors import BoardRLError
from boardrl.atomic_io import atomic_write_bytes
from boardrl.data.uci_positions import (
    LABELS,
    canonical_keys,
    compare_with_uci,
    parse_uci_text,
    regenerate_uci_positions,
)

CELL_COLUMNS = tuple(f"{col}{row}" for col in "abcdefg" for row in range(1, 7))
CELL_VALUES = ("x", "o", "b")
EXPECTED_ROWS = 67_557
EXPECTED_CLASSES = {"win": 44_473, "loss": 16_635, "draw": 6_449}
EXPECTED_STONES = 4  # of each player in every row (8 plies, x to move)
EXPECTED_CANDIDATES = 134_934
EXPECTED_SYMMETRIC = 180
STATE_COLUMNS = ("current", "mask", "plies")


class UciCheckError(BoardRLError):
    """The data set contradicts one of its published facts."""


def uci_frame(text: str) -> pd.DataFrame:
    """One row per line of ``connect-4.data``: cells a1..g6, label, engine state and mirror key."""
    states, labels = parse_uci_text(text)  # validates every line; errors name the line
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    cells = np.array([ln.split(",")[:42] for ln in lines], dtype="<U1").reshape(-1, 42)
    frame = pd.DataFrame(
        {name: pd.Categorical(cells[:, i], categories=CELL_VALUES) for i, name in enumerate(CELL_COLUMNS)}
    )
    frame["label"] = pd.Categorical(labels, categories=LABELS)
    for j, name in enumerate(STATE_COLUMNS):
        frame[name] = states[:, j].astype(np.int64)
    frame["mirror_key"] = canonical_keys(np.ascontiguousarray(states, dtype=np.int64))
    return frame


def frame_states(frame: pd.DataFrame) -> np.ndarray:
    """(N, 3) int64 ``Connect4State`` rows of a UCI table (the batched engine's layout)."""
    return np.ascontiguousarray(frame[list(STATE_COLUMNS)].to_numpy(dtype=np.int64))


def check_facts(frame: pd.DataFrame) -> dict[str, Any]:
    """Row count, class counts and stones per row; ``UciCheckError`` naming the first fact that fails."""
    n = len(frame)
    if n != EXPECTED_ROWS:
        raise UciCheckError(f"UCI data: expected {EXPECTED_ROWS} rows, found {n}")
    counts = {lab: int((frame["label"] == lab).sum()) for lab in LABELS}
    if counts != EXPECTED_CLASSES:
        raise UciCheckError(f"UCI data: expected class counts {EXPECTED_CLASSES}, found {counts}")
    cells = frame[list(CELL_COLUMNS)]
    for stone in ("x", "o"):
        per_row = (cells == stone).sum(axis=1)
        bad = np.flatnonzero(per_row.to_numpy() != EXPECTED_STONES)
        if bad.size:
            raise UciCheckError(
                f"UCI data: row {bad[0] + 1} has {int(per_row.iloc[bad[0]])} {stone} stones, expected {EXPECTED_STONES}"
            )
    return {"rows": n, "classes": counts, "stones_per_player": EXPECTED_STONES}


def compare_with_rules(frame: pd.DataFrame) -> dict[str, Any]:
    """Regenerate the 8-ply set from the rules and check it equals the table modulo mirror symmetry."""
    from boardrl.games.connect4 import Connect4State

    regen = regenerate_uci_positions()
    records = [(Connect4State(*row), "") for row in frame_states(frame).tolist()]
    cmp = compare_with_uci(records, regen)
    facts = {
        "candidates": regen.n_candidates,
        "symmetric": regen.n_symmetric,
        "classes": regen.n_classes,
        "missing_from_data": cmp.missing,
        "extra_in_data": cmp.extra,
        "mirror_duplicates_in_data": cmp.mirror_duplicates,
        "equal_modulo_mirror": cmp.equal,
    }
    expected = (EXPECTED_CANDIDATES, EXPECTED_SYMMETRIC, EXPECTED_ROWS)
    if (regen.n_candidates, regen.n_symmetric, regen.n_classes) != expected or not cmp.equal:
        raise UciCheckError(
            "UCI data and the positions regenerated from the rules differ: "
            + ", ".join(f"{k}={v}" for k, v in facts.items())
            + f" (expected candidates={expected[0]}, symmetric={expected[1]}, classes={expected[2]}, equal)"
        )
    return facts


def write_parquet(frame: pd.DataFrame, path: Path) -> Path:
    """Save the table atomically (built in memory, then renamed into place)."""
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False, engine="pyarrow", compression="zstd")
    return atomic_write_bytes(path, buf.getvalue())


def read_parquet(path: Path) -> pd.DataFrame:
    """The table written by ``write_parquet``; ``BoardRLError`` when it is missing."""
    p = Path(path)
    if not p.is_file():
        raise BoardRLError(f"UCI table not found: {p} (run the prepare stage: dvc repro prepare)")
    return pd.read_parquet(p, engine="pyarrow")


def positions_by_label(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """State rows of each label, in file order: {"win": (44473, 3), "draw": ..., "loss": ...}."""
    states = frame_states(frame)
    labels = frame["label"].astype(str).to_numpy()
    return {lab: states[labels == lab] for lab in LABELS}
