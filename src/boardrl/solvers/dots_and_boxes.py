"""Exact Dots and Boxes referee by retrograde analysis over every edge set (boards of at most 24 edges).

Why this works: what is still to be won depends only on the set of drawn edges, not on who drew them or on
the scores so far.  So one number per edge set, F(E) = the best future score margin (boxes the mover will
still gain minus the opponent's) for the player to move, solves every position of the board:

    F(all edges) = 0
    F(E) = max over undrawn e of  k + F(E | e)   if e completes k > 0 boxes (the mover moves again)
                                  -F(E | e)      otherwise (the opponent moves next)

Every successor ``E | e`` is numerically larger than ``E``, so one pass over the edge sets in decreasing
numeric order fills the table.  |F| <= boxes <= 9 for the boards solved here, so int8 entries suffice: 2^24
bytes = 16 MiB for 3x3 boxes.  The table is cached on disk after the first build (``BOARDRL_CACHE`` or
``<repo>/cache``), written atomically and checked for size on load.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numba import njit

from boardrl import cache
from boardrl.errors import BoardRLError
from boardrl.games.base import Game
from boardrl.games.dots_and_boxes import MAX_REFEREE_EDGES, DotsAndBoxes, DotsAndBoxesState, Geometry
from boardrl.solvers.base import Referee, Verdict
from boardrl.atomic_io import atomic_writer

#: Below this many edges the table builds in milliseconds and is not worth a file.
MIN_CACHED_EDGES = 17
TABLE_VERSION = 1


# ---------------------------------------------------------------------------------------------- kernels
@njit(cache=True)
def _retrograde(num_edges: int, edge_box_masks: np.ndarray, table: np.ndarray) -> None:
    """Fill ``table[E]`` = F(E) for every edge set, from the full board down to the empty one."""
    full = (np.int64(1) << num_edges) - 1
    table[full] = 0
    for s in range(full - 1, -1, -1):
        best = -127
        for e in range(num_edges):
            bit = np.int64(1) << e
            if s & bit:
                continue
            t = s | bit
            m0 = edge_box_masks[e, 0]
            m1 = edge_box_masks[e, 1]
            k = np.int64((t & m0) == m0) + np.int64((t & m1) == m1)
            v = k + table[t] if k else -np.int64(table[t])
            if v > best:
                best = v
        table[s] = best


@njit(cache=True)
def _move_values(edges: int, num_edges: int, edge_box_masks: np.ndarray, table: np.ndarray, out: np.ndarray) -> None:
    """out[e] = future margin for the mover after drawing undrawn edge e (-128 for drawn edges)."""
    for e in range(num_edges):
        bit = np.int64(1) << e
        if edges & bit:
            out[e] = -128
            continue
        t = edges | bit
        m0 = edge_box_masks[e, 0]
        m1 = edge_box_masks[e, 1]
        k = np.int64((t & m0) == m0) + np.int64((t & m1) == m1)
        out[e] = k + table[t] if k else -np.int64(table[t])


# ---------------------------------------------------------------------------------------------- tables
@dataclass(frozen=True)
class RetrogradeTable:
    """A solved board: ``table[edges]`` = F(edges); how it was obtained and how long that took."""

    rows: int
    cols: int
    table: np.ndarray
    seconds: float
    source: str  # "built" or "disk"
    path: Path | None  # the cache file, when one is used


def _check_size(rows: int, cols: int) -> Geometry:
    geo = Geometry(rows, cols)
    if geo.num_edges > MAX_REFEREE_EDGES:
        raise BoardRLError(
            f"dots_and_boxes_{rows}x{cols}: {geo.num_edges} edges; the retrograde referee solves boards of at most "
            f"{MAX_REFEREE_EDGES} edges (up to 3x3 boxes, 2x4, 1x7)"
        )
    return geo


def build_table(rows: int, cols: int) -> np.ndarray:
    """F for every edge set of a rows x cols board: int8 array of 2^edges entries (no caching)."""
    geo = _check_size(rows, cols)
    table = np.empty(1 << geo.num_edges, dtype=np.int8)
    _retrograde(geo.num_edges, geo.edge_box_masks, table)
    return table


def table_path(rows: int, cols: int, cache_dir: str | Path | None = None) -> Path:
    base = Path(cache_dir) if cache_dir is not None else cache.cache_dir()
    return base / f"dots_and_boxes_{rows}x{cols}_retrograde_v{TABLE_VERSION}.int8"


def _save_atomic(table: np.ndarray, path: Path) -> None:
    """Readers see the old file or the whole new one (a half-written table would be wrong values, silently)."""
    with atomic_writer(path) as fh:
        table.tofile(fh)


def _load(path: Path, num_edges: int) -> np.ndarray | None:
    """The cached table, or None when missing or of the wrong size (a truncated or foreign file)."""
    try:
        if path.stat().st_size != 1 << num_edges:
            return None
        table = np.fromfile(path, dtype=np.int8)
    except OSError:
        return None
    full = (1 << num_edges) - 1
    return table if table.shape[0] == 1 << num_edges and table[full] == 0 else None


def load_or_build_table(
    rows: int, cols: int, cache_dir: str | Path | None = None, use_disk: bool | None = None
) -> RetrogradeTable:
    """The solved table of a board, read from the disk cache or built (and then cached); reports the time.

    ``use_disk`` defaults to caching boards of at least ``MIN_CACHED_EDGES`` edges only.
    """
    geo = _check_size(rows, cols)
    if use_disk is None:
        use_disk = geo.num_edges >= MIN_CACHED_EDGES
    path = table_path(rows, cols, cache_dir) if use_disk else None
    t0 = time.perf_counter()
    if path is not None:
        table = _load(path, geo.num_edges)
        if table is not None:
            return RetrogradeTable(rows, cols, table, time.perf_counter() - t0, "disk", path)
    table = build_table(rows, cols)
    seconds = time.perf_counter() - t0
    if path is not None:
        _save_atomic(table, path)
    return RetrogradeTable(rows, cols, table, seconds, "built", path)


_MEMO: dict[tuple[int, int], np.ndarray] = {}


def get_table(rows: int, cols: int, cache_dir: str | Path | None = None) -> np.ndarray:
    """The table, kept in memory for the life of the process so every referee shares one copy."""
    key = (rows, cols)
    if key not in _MEMO:
        _MEMO[key] = load_or_build_table(rows, cols, cache_dir).table
    return _MEMO[key]


# ---------------------------------------------------------------------------------------------- referee
class DotsAndBoxesReferee(Referee):
    """Exact final margin, value and optimal moves of any position of a board with at most 24 edges."""

    game: DotsAndBoxes

    def __init__(self, game: Game, cache_dir: str | Path | None = None) -> None:
        if not isinstance(game, DotsAndBoxes):
            raise BoardRLError(f"DotsAndBoxesReferee needs a dots_and_boxes game, got {game.game_id}")
        _check_size(game.rows, game.cols)
        super().__init__(game)
        self.table = get_table(game.rows, game.cols, cache_dir)

    def future_margin(self, state: DotsAndBoxesState) -> int:
        """F(edges): what the mover will still gain over the opponent under perfect play."""
        self.game.check_state(state)
        return int(self.table[state.edges])

    def move_margins(self, state: DotsAndBoxesState) -> dict[int, int]:
        """For each legal move, the final margin (mover's view, scores so far included) after perfect play."""
        self.game.check_state(state)
        g = self.game
        out = np.empty(g.num_edges, dtype=np.int64)
        _move_values(state.edges, g.num_edges, g.geo.edge_box_masks, self.table, out)
        now = self._current_margin(state)
        return {int(e): now + int(out[e]) for e in np.flatnonzero(out > -128)}

    def solve(self, state: DotsAndBoxesState) -> Verdict:
        self.game.check_state(state)
        now = self._current_margin(state)
        if self.game.is_over(state):
            return Verdict(value=int(np.sign(now)), optimal_moves=(), margin=now)
        margins = self.move_margins(state)
        margin = now + int(self.table[state.edges])
        optimal = tuple(sorted(e for e, m in margins.items() if m == margin))
        return Verdict(value=int(np.sign(margin)), optimal_moves=optimal, margin=margin)

    @staticmethod
    def _current_margin(state: DotsAndBoxesState) -> int:
        """Score difference so far from the mover's view."""
        d = state.score0 - state.score1
        return d if state.to_move == 0 else -d
