"""Training games played side by side in the rows of one batched game: which row holds which game.

Why one helper: every tabular learner plays games number ``first .. end-1`` in ``parallel`` rows without
auto-reset, restarts a finished row with the next game until every game has started, then lets finished rows
stand (a finished game has no legal move, so ``step`` leaves it alone).  Doing that bookkeeping in one place keeps
the order of games, and so every run, the same in each learner.

Waves: a learner plays its games in waves of ``parallel`` games (game numbers ``k * parallel .. (k+1) * parallel
- 1``), each started together and played out before the next.  Why not one long stream of recycled rows: a
stream is cut wherever a training segment ends (a curve point, a checkpoint), and the cut changes which games
run side by side, so it changed the model.  Waves end at fixed game numbers, so the model is the same however
the run is cut; ``segment_stop`` tells a learner where a segment asked to reach ``end`` really stops.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from boardrl.games.base import BatchedGame, Game


class GameSlots:
    """Rows of ``game.batched(min(parallel, end - first))`` holding games ``first .. end-1`` (see module)."""

    def __init__(self, game: Game, first: int, end: int, parallel: int, start_row: np.ndarray) -> None:
        self.first, self.total = int(first), int(end - first)
        rows = min(int(parallel), self.total)
        self.batch: BatchedGame = game.batched(rows, auto_reset=False)
        self.start_row = np.asarray(start_row, dtype=np.int64)
        self.batch.states[:] = self.start_row
        self.number = self.first + np.arange(rows, dtype=np.int64)  # game number in each row
        self.active = np.ones(rows, dtype=np.bool_)  # rows whose game is still being played
        self.started, self.done = rows, 0

    @property
    def rows(self) -> int:
        return int(self.active.shape[0])

    @property
    def running(self) -> bool:
        return self.done < self.total

    def recycle(self, finished: np.ndarray) -> np.ndarray:
        """Count the rows that just finished; restart as many as games remain.  Returns the restarted rows."""
        ended = np.flatnonzero(finished)
        left = self.total - self.started
        restart, stop = ended[:left], ended[left:]
        self.batch.states[restart] = self.start_row
        self.number[restart] = self.first + self.started + np.arange(restart.size)
        self.active[stop] = False
        self.started += restart.size
        self.done += ended.size
        return restart


def segment_stop(end: int, total: int, *periods: int) -> int:
    """Where a segment asked to reach ``end`` games stops: the first multiple of a period at or after ``end``
    (the end of the wave in flight there), or ``total`` when that comes first.  No periods: ``end`` itself."""
    if not periods:
        return min(int(end), int(total))
    return min([int(total)] + [-(-int(end) // int(p)) * int(p) for p in periods])


def waves(first: int, end: int, *periods: int) -> Iterator[tuple[int, int]]:
    """Consecutive game ranges ``(lo, hi)`` covering ``first .. end``, cut at every multiple of each period."""
    if not periods:
        yield int(first), int(end)
        return
    lo = int(first)
    while lo < end:
        hi = segment_stop(lo + 1, end, *periods)
        yield lo, hi
        lo = hi
