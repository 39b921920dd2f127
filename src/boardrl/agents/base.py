"""The Agent interface: every player, learned or not, plays every other through the same match runner.

An agent is bound to one game at construction.  ``act(state, rng)`` picks a legal action for the player to
move; ``act_batch(states, rng)`` does the same for the rows of a batched game's state array.  Randomness comes
only from the ``rng`` passed in (``numpy.random.Generator``), so matches are reproducible from one seed.
Agents are stateless between games, or clear their state in ``reset()``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from boardrl.games.base import Game, random_legal_actions


class Agent(ABC):
    """A player for one game."""

    #: True when ``act_batch`` is a real vectorised implementation (the match runner then plays in batch).
    batched: bool = False
    #: True when one call on many rows costs about what a call on one row does (a search whose network sees all
    #: rows' leaves at once): the match runner then plays games in lock-step even against a scalar opponent.
    wants_batches: bool = False

    def __init__(self, game: Game, name: str | None = None) -> None:
        self.game = game
        self.name = name or type(self).__name__.lower()

    @abstractmethod
    def act(self, state: Any, rng: np.random.Generator) -> int:
        """A legal action for the player to move in ``state`` (which is not over)."""

    def act_batch(self, states: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Actions for each row of an (N, width) int64 state array; the default loops over ``act``."""
        st = self.game.state_type
        return np.array([self.act(st(*(int(v) for v in row)), rng) for row in states], dtype=np.int64)

    def reset(self) -> None:
        """Forget anything remembered from the previous game."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.game.game_id!r}, name={self.name!r})"


class RandomAgent(Agent):
    """Uniform over legal moves."""

    batched = True

    def act(self, state: Any, rng: np.random.Generator) -> int:
        legal = np.flatnonzero(self.game.legal_moves(state))
        return int(legal[rng.integers(len(legal))])

    def act_batch(self, states: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return random_legal_actions(self.game.legal_mask_batch(states), rng)
