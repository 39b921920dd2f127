"""Counting distinct positions by depth: a perft-style check of a game's rules.

``count_positions(game, k)`` gives the number of distinct states after exactly 0, 1, ..., k actions from the
initial state (for games with extra turns or multi-stage turns a "ply" is one action).  A finished game's
position is counted at its depth but not expanded.  Known values (Connect 4: 1, 7, 49, 238, 1120, 4263, 16422,
54859, 184275) catch almost any rule bug, which is why the tests and the CLI use it.

Why a batched breadth-first search: every level is an (N, width) int64 array of distinct state rows; its
children come from the game's own batched kernels (``legal_mask_batch`` and ``BatchedGame.step``), so the count
exercises exactly the compiled rules that self-play uses, and deduplication is one ``np.unique`` per level
instead of millions of Python set insertions.  A state row is the state itself, so distinct rows are distinct
states.  ``count_positions_scalar`` is the plain per-level set of ``state_key`` values over the scalar API;
the tests use it as an independent check of the fast path on small depths.
"""

from __future__ import annotations

import numpy as np

from boardrl.errors import BoardRLError
from boardrl.games.base import Game


def _check_plies(plies: int) -> int:
    if isinstance(plies, bool) or not isinstance(plies, (int, np.integer)) or plies < 0:
        raise BoardRLError(f"plies must be a non-negative integer, got {plies!r}")
    return int(plies)


def unique_rows(rows: np.ndarray) -> np.ndarray:
    """The distinct rows of an (N, width) int64 array, in order of first appearance.

    Rows are compared as raw bytes (one sort of a void view), which works for any width and is all that
    deduplication needs; the order of the result is deterministic.
    """
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    if rows.shape[0] == 0:
        return rows
    raw = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
    _, first = np.unique(raw, return_index=True)
    return rows[np.sort(first)]


def children(game: Game, rows: np.ndarray) -> np.ndarray:
    """All successor rows (with repeats) of the unfinished states among ``rows``, via the batched kernels."""
    legal = game.legal_mask_batch(rows)
    parent, action = np.nonzero(legal)
    if parent.size == 0:
        return np.empty((0, rows.shape[1]), dtype=np.int64)
    batch = game.batched(parent.size, auto_reset=False)
    batch.states[:] = rows[parent]
    batch.step(action.astype(np.int64))
    return batch.states


def levels(game: Game, plies: int):
    """Yield the (N_k, width) array of distinct states after exactly k actions, for k = 0..plies."""
    plies = _check_plies(plies)
    level = np.asarray([game.initial_state()], dtype=np.int64)
    yield level
    for _ in range(plies):
        level = unique_rows(children(game, level))
        yield level


def level_states(game: Game, plies: int) -> np.ndarray:
    """The distinct states after exactly ``plies`` actions, as rows of an int64 array."""
    level = None
    for level in levels(game, plies):
        pass
    return level


def count_positions(game: Game, plies: int) -> list[int]:
    """Distinct positions after exactly k actions for k = 0..plies (finished games counted, not expanded)."""
    return [int(level.shape[0]) for level in levels(game, plies)]


def count_positions_scalar(game: Game, plies: int) -> list[int]:
    """The same counts through the scalar API with a Python set of ``state_key`` per level (slow; for checks)."""
    plies = _check_plies(plies)
    frontier = [game.initial_state()]
    counts = [1]
    for _ in range(plies):
        seen: dict[int, object] = {}
        for state in frontier:
            for a in game.legal_actions(state):
                child = game.play(state, a)
                seen.setdefault(game.state_key(child), child)
        frontier = list(seen.values())
        counts.append(len(frontier))
    return counts


__all__ = ["children", "count_positions", "count_positions_scalar", "level_states", "levels", "unique_rows"]
