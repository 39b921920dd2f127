"""The UCI Connect-4 start positions: regenerate them from the rules, read the data file, compare the two.

The UCI set (Tromp, 1995) is every position reachable in exactly 8 plies in which nobody has four in a row and
neither player has an immediate win available (an empty, playable cell that would complete a four), with each
left-right mirror pair kept once.  Enumerating the 8-ply level with the engine gives 134,934 such positions,
180 of them their own mirror image, so (134,934 + 180) / 2 = 67,557 mirror classes: the number of UCI rows.
Why regenerate at all: the equality of the two sets is a strong end-to-end test of the Connect 4 engine (move
generation, four detection, threat detection, mirroring) against data produced by someone else's program.

A mirror class is identified by its canonical key, ``min(key, mirror(key))`` with ``key = current + mask``
(the engine's ``state_key``); the mirror of a key is the key of the mirrored position because the key is
computed column by column.

UCI rows: 42 cells ``x``/``o``/``b`` in order a1..a6, b1..b6, ..., g1..g6 (letter = column, digit = row from
the bottom), then the game-theoretic label ``win``/``loss``/``draw`` for x, the first player, who is also the
player to move in every row (4 stones each).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numba import njit

from boardrl.games._kernels import popcount
from boardrl.errors import BoardRLError
from boardrl.games.base import NotationError
from boardrl.games.connect4 import (
    Connect4,
    Connect4State,
    batch_mirror,
    from_uci_cells,
    has_four,
    mirror_bits,
    playable_cells,
    to_uci_cells,
    winning_cells,
)
from boardrl.games.count import level_states

UCI_PLIES = 8
LABELS = ("win", "loss", "draw")
#: Facts of the published data set (see shared/data/uci/README.md); the tests check the regeneration against them.
UCI_CANDIDATES = 134_934
UCI_SYMMETRIC = 180
UCI_CLASSES = 67_557


class UciFormatError(NotationError):
    """A line of the UCI data file that is not 42 cells plus a label."""


# ---------------------------------------------------------------------------------------------- kernels
@njit(cache=True)
def is_quiet(current: int, mask: int) -> bool:
    """No four on the board and no playable cell that completes a four for either player."""
    other = current ^ mask
    if has_four(current) or has_four(other):
        return False
    playable = playable_cells(mask)
    return (winning_cells(current, mask) & playable) == 0 and (winning_cells(other, mask) & playable) == 0


@njit(cache=True)
def _quiet_rows(states: np.ndarray) -> np.ndarray:
    out = np.empty(states.shape[0], dtype=np.bool_)
    for i in range(states.shape[0]):
        out[i] = is_quiet(states[i, 0], states[i, 1])
    return out


@njit(cache=True)
def canonical_keys(states: np.ndarray) -> np.ndarray:
    """``min(key, mirrored key)`` for every (current, mask, plies) row: one value per mirror class."""
    out = np.empty(states.shape[0], dtype=np.int64)
    for i in range(states.shape[0]):
        k = states[i, 0] + states[i, 1]
        m = mirror_bits(k)
        out[i] = k if k <= m else m
    return out


# ---------------------------------------------------------------------------------------------- scalar helpers
def canonical_key(state: Connect4State) -> int:
    """The mirror-class key of one state: ``min(current + mask, its mirror image)``."""
    k = state.current + state.mask
    return min(k, mirror_bits(k))


def canonical_state(state: Connect4State) -> Connect4State:
    """The member of ``state``'s mirror pair with the smaller key (``state`` itself when symmetric)."""
    k = state.current + state.mask
    if mirror_bits(k) < k:
        return Connect4State(mirror_bits(state.current), mirror_bits(state.mask), state.plies)
    return state


# ---------------------------------------------------------------------------------------------- regeneration
@dataclass(frozen=True)
class UciRegeneration:
    """The UCI position set rebuilt from the rules.

    ``candidates``: (134,934, 3) rows of every quiet 8-ply position (both members of each mirror pair).
    ``keys``: sorted canonical keys, one per mirror class (67,557).  ``states``: (67,557, 3) rows, the
    canonical member of each class, in the order of ``keys``.
    """

    candidates: np.ndarray
    keys: np.ndarray
    states: np.ndarray
    n_symmetric: int

    @property
    def n_candidates(self) -> int:
        return int(self.candidates.shape[0])

    @property
    def n_classes(self) -> int:
        return int(self.keys.shape[0])


def quiet_positions(plies: int = UCI_PLIES) -> np.ndarray:
    """Every position reachable in exactly ``plies`` plies with no four and no immediate win for either side."""
    level = level_states(Connect4(), plies)
    return level[_quiet_rows(level)]


def regenerate_uci_positions() -> UciRegeneration:
    """Rebuild the UCI start positions from the rules (about a second once the kernels are compiled)."""
    cand = quiet_positions(UCI_PLIES)
    mirrored = batch_mirror(cand)
    keys = cand[:, 0] + cand[:, 1]
    mkeys = mirrored[:, 0] + mirrored[:, 1]
    canon_rows = np.where((mkeys < keys)[:, None], mirrored, cand)
    uniq, first = np.unique(np.minimum(keys, mkeys), return_index=True)
    n_sym = int(np.count_nonzero(keys == mkeys))
    return UciRegeneration(candidates=cand, keys=uniq, states=canon_rows[first], n_symmetric=n_sym)


# ---------------------------------------------------------------------------------------------- the data file
def parse_uci_line(line: str) -> tuple[Connect4State, str]:
    """``(state, label)`` for one UCI row: 42 cells x/o/b (a1..g6) and the label win/loss/draw for x."""
    parts = [p.strip() for p in line.strip().split(",")]
    if len(parts) != 43:
        raise UciFormatError(f"UCI row needs 42 cells and a label, got {len(parts)} fields: {line.strip()[:60]!r}")
    label = parts[42]
    if label not in LABELS:
        raise UciFormatError(f"UCI label {label!r} is not one of {', '.join(LABELS)}")
    return from_uci_cells(parts[:42]), label


def format_uci_line(state: Connect4State, label: str) -> str:
    """The UCI row of ``state`` with ``label`` (inverse of ``parse_uci_line``)."""
    if label not in LABELS:
        raise UciFormatError(f"UCI label {label!r} is not one of {', '.join(LABELS)}")
    return f"{to_uci_cells(state)},{label}"


def read_uci_text(path: str | Path) -> str:
    """The text of a UCI data file; ``.Z`` files (unix ``compress``) are decoded with ``unlzw3``."""
    p = Path(path)
    if not p.is_file():
        raise BoardRLError(f"UCI data file not found: {p}")
    raw = p.read_bytes()
    if p.suffix == ".Z" or raw[:2] == b"\x1f\x9d":  # LZW magic number
        import unlzw3

        raw = unlzw3.unlzw(raw)
    return raw.decode("ascii")


#: Bit of each UCI cell (a1..a6, b1..b6, ..., g1..g6) on the Tromp bitboard: 7 * column + row.
_CELL_BITS = np.array([1 << (7 * (i // 6) + i % 6) for i in range(42)], dtype=np.int64)


@njit(cache=True)
def _rows_from_absolute(p0: np.ndarray, p1: np.ndarray, out: np.ndarray) -> int:
    """Fill (current, mask, plies) rows from absolute stones; returns the first invalid row (gravity or
    stone counts, as ``from_absolute`` checks them) or -1."""
    for i in range(p0.shape[0]):
        mask = p0[i] | p1[i]
        for c in range(7):
            col = (mask >> (7 * c)) & 0x3F
            if col & (col + 1):
                return i
        n0, n1 = popcount(p0[i]), popcount(p1[i])
        if n0 != n1 and n0 != n1 + 1:
            return i
        plies = n0 + n1
        out[i, 0] = p0[i] if plies % 2 == 0 else p1[i]
        out[i, 1] = mask
        out[i, 2] = plies
    return -1


def parse_uci_text(text: str) -> tuple[np.ndarray, np.ndarray]:
    """``(states (N, 3) int64, labels (N,) str)`` for the text of a UCI data file, vectorised.

    Rows in the standard layout (one letter per cell) are decoded with numpy; on any deviation the offending
    line goes through ``parse_uci_line`` so that the error names the line and what was wrong with it.
    """
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    n = len(lines)
    if n == 0:
        return np.empty((0, 3), dtype=np.int64), np.array([], dtype="<U4")
    heads = "".join(ln[:84] for ln in lines).encode("ascii", "replace")
    labels = np.array([ln[84:] for ln in lines])
    lengths_ok = np.array([len(ln) >= 85 and ln[83] == "," for ln in lines])
    if len(heads) == 84 * n:
        grid = np.frombuffer(heads, dtype=np.uint8).reshape(n, 84)
        cells, commas = grid[:, 0::2], grid[:, 1::2]
        ok = lengths_ok & (commas == ord(",")).all(axis=1) & np.isin(labels, LABELS)
        ok &= np.isin(cells, np.frombuffer(b"xob", dtype=np.uint8)).all(axis=1)
    else:
        ok = np.zeros(n, dtype=bool)
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        try:
            parse_uci_line(lines[i])
        except BoardRLError as exc:
            raise UciFormatError(f"UCI row {i + 1}: {exc}") from None
        raise UciFormatError(f"UCI row {i + 1}: not in the one-letter-per-cell layout: {lines[i][:60]!r}")
    p0 = ((cells == ord("x")) * _CELL_BITS).sum(axis=1)
    p1 = ((cells == ord("o")) * _CELL_BITS).sum(axis=1)
    states = np.empty((n, 3), dtype=np.int64)
    bad = _rows_from_absolute(p0, p1, states)
    if bad >= 0:
        try:
            parse_uci_line(lines[bad])
        except BoardRLError as exc:
            raise UciFormatError(f"UCI row {bad + 1}: {exc}") from None
    return states, labels


def load_uci_arrays(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """``(states (N, 3) int64, labels (N,) str)`` of a UCI data file (``connect-4.data`` or ``.data.Z``)."""
    try:
        return parse_uci_text(read_uci_text(path))
    except UciFormatError as exc:
        raise UciFormatError(f"{path}: {exc}") from None


def load_uci(path: str | Path) -> list[tuple[Connect4State, str]]:
    """Every row of a UCI data file (``connect-4.data`` or ``connect-4.data.Z``) as ``(state, label)``."""
    states, labels = load_uci_arrays(path)
    return [(Connect4State(int(c), int(m), int(p)), str(lab)) for (c, m, p), lab in zip(states.tolist(), labels)]


def uci_rows(records: list[tuple[Connect4State, str]]) -> tuple[np.ndarray, np.ndarray]:
    """``(states (N, 3) int64, labels (N,) str)`` arrays of loaded UCI records."""
    states = np.array([tuple(s) for s, _ in records], dtype=np.int64).reshape(-1, 3)
    labels = np.array([lab for _, lab in records])
    return states, labels


# ---------------------------------------------------------------------------------------------- comparison
@dataclass(frozen=True)
class UciComparison:
    """How a UCI file relates to the regenerated set, modulo mirror symmetry."""

    n_rows: int
    n_classes: int  # distinct mirror classes among the rows
    missing: int  # regenerated classes absent from the file
    extra: int  # file classes that the rules do not produce
    mirror_duplicates: int  # rows whose class already appeared earlier in the file

    @property
    def equal(self) -> bool:
        return self.missing == 0 and self.extra == 0 and self.mirror_duplicates == 0


def compare_with_uci(records: list[tuple[Connect4State, str]], regen: UciRegeneration | None = None) -> UciComparison:
    """Compare loaded UCI records with the regenerated set (computed here unless given)."""
    regen = regenerate_uci_positions() if regen is None else regen
    states, _ = uci_rows(records)
    keys = canonical_keys(states)
    uniq = np.unique(keys)
    return UciComparison(
        n_rows=int(keys.shape[0]),
        n_classes=int(uniq.shape[0]),
        missing=int(np.setdiff1d(regen.keys, uniq, assume_unique=True).shape[0]),
        extra=int(np.setdiff1d(uniq, regen.keys, assume_unique=True).shape[0]),
        mirror_duplicates=int(keys.shape[0] - uniq.shape[0]),
    )


__all__ = [
    "LABELS", "UCI_CANDIDATES", "UCI_CLASSES", "UCI_PLIES", "UCI_SYMMETRIC", "UciComparison", "UciFormatError",
    "UciRegeneration", "canonical_key", "canonical_keys", "canonical_state", "compare_with_uci",
    "format_uci_line", "is_quiet", "load_uci", "load_uci_arrays", "parse_uci_text", "parse_uci_line", "quiet_positions", "read_uci_text",
    "regenerate_uci_positions", "uci_rows",
]
