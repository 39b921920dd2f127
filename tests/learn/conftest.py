"""Helpers for the learner tests: an exact solver written here, independent of the library's referees."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable

import pytest

from boardrl.games.base import Game


class ExactQ:
    """Q*(s, a) for any small game by plain recursion: the mover's result (+1/0/-1) under perfect play.

    Extra turns are handled the way the learner must: a successor where the same player moves again keeps the
    sign, one where the opponent moves flips it.
    """

    def __init__(self, game: Game) -> None:
        self.game = game
        self.value = lru_cache(maxsize=None)(self._value)
        self.q = lru_cache(maxsize=None)(self._q)

    def _value(self, state: Any) -> float:
        return max(self.q(state, a) for a in self.game.legal_actions(state))

    def _q(self, state: Any, action: int) -> float:
        g = self.game
        mover = g.to_move(state)
        child = g.play(state, action)
        if g.is_over(child):
            return g.returns(child)[mover]
        v = self.value(child)
        return v if g.to_move(child) == mover else -v

    def reachable(self) -> list[Any]:
        """Every unfinished state reachable from the initial one."""
        g, seen, stack, out = self.game, set(), [self.game.initial_state()], []
        while stack:
            s = stack.pop()
            if s in seen:
                continue
            seen.add(s)
            if not g.is_over(s):
                out.append(s)
                stack.extend(g.play(s, a) for a in g.legal_actions(s))
        return out

    def optimal(self, state: Any, action: int) -> bool:
        return self.q(state, action) == self.value(state)


@pytest.fixture
def exact() -> Callable[[Game], ExactQ]:
    return ExactQ
