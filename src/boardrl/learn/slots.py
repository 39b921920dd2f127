"""Training games played side by side in the rows of one batched game: which row holds which game.

Why one helper: every tabular learner plays games number ``first .. end-1`` in ``parallel`` rows without
auto-reset, restarts a finished row with the next game until every game has started, then lets finished rows
stand (a finished game has no legal move, so ``step`` leaves it alone).  Doing that bookkeeping in one place keeps
the order of games, and so every run, the same in each learner.
"""

from __future__ import annotations

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
