"""PerfectAgent: plays a uniformly random move among the referee's optimal moves.

Why random among the optimal moves rather than the first: a perfect opponent that always plays the same line
lets a learner memorise one game; drawing among all value-keeping moves makes it the strongest *and* a varied
benchmark.  It exists wherever ``make_referee`` does (tic-tac-toe, Connect 4, Dots and Boxes up to 3x3); the
referee is built on the first move and reused, so its caches (tables, transposition table) persist across moves.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from boardrl.agents.base import Agent
from boardrl.errors import BoardRLError
from boardrl.games.base import Game
from boardrl.solvers.base import Referee
from boardrl.solvers.registry import make_referee


class PerfectAgent(Agent):
    """Uniform choice among ``make_referee(game).solve(state).optimal_moves``."""

    def __init__(self, game: Game, name: str = "perfect", referee: Referee | None = None) -> None:
        super().__init__(game, name)
        self._referee = referee
        self._own_referee = referee is None

    def __getstate__(self) -> dict:
        """Pickle without a referee we built ourselves (its tables can be large); the copy rebuilds its own."""
        state = self.__dict__.copy()
        if self._own_referee:
            state["_referee"] = None
        return state

    @property
    def referee(self) -> Referee:
        """Built on first use: constructing the agent (e.g. to validate a config) must not build tables."""
        if self._referee is None:
            self._referee = make_referee(self.game)
        return self._referee

    def act(self, state: Any, rng: np.random.Generator) -> int:
        self.game.check_state(state)
        if self.game.is_over(state):
            raise BoardRLError(f"{self.name}: no legal move, the game is over")
        moves = self.referee.solve(state).optimal_moves
        if not moves:
            raise BoardRLError(f"{self.name}: the referee gave no optimal move for {state!r}")
        return int(moves[rng.integers(len(moves))])
