"""An opponent pool: each game is played by one member drawn uniformly from a list of agents.

Why: a learner trained against one fixed opponent learns that opponent's lines only; against a pool it must
cover every member (the best tabular Conniption agent is trained against the five seed-004 heuristics).

Spec: ``pool:members=sols+cells+hybrid+flip+conniption_random`` (member specs joined by ``+``; a member may
carry its own keys, e.g. ``mcts:simulations=200``, but no commas).

A new game starts at ``reset()`` (the match runner calls it before every game) or when the position goes back,
i.e. the pool's decision comes earlier in a game than its previous one did (fewer pieces, or the same pieces
at an earlier stage).  The second rule keeps the draw per game under learners that reset their opponent only
once per training segment (``tabular_q``), provided they play one game at a time (``parallel_games: 1``):
several rows of a batch belong to different games, so ``act_batch`` refuses more than one row.  The member is
drawn with the ``rng`` passed to the first decision of the game, so games stay reproducible from one seed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from boardrl.agents.base import Agent
from boardrl.errors import BoardRLError
from boardrl.games.base import Game

SEPARATOR = "+"


def _progress(state: Any) -> int:
    """How far a game has gone at one decision: pieces (bits of a ``mask`` field) or moves, and the stage."""
    fields = state._asdict() if hasattr(state, "_asdict") else {}
    if "mask" in fields and "stage" in fields:  # Conniption: 3 decisions per turn, pieces only grow
        return 3 * int(fields["mask"]).bit_count() + int(fields["stage"])
    return sum(int(v).bit_count() for v in state)  # other games: occupied cells / drawn lines only grow


class PoolAgent(Agent):
    """Plays each game as one member, drawn uniformly per game (module docstring)."""

    batched = False

    def __init__(self, game: Game, members: str | None = None, name: str | None = None) -> None:
        from boardrl.agents import make_agent

        specs = [s.strip() for s in (members or "").split(SEPARATOR) if s.strip()]
        if not specs:
            raise BoardRLError("pool needs members, e.g. pool:members=sols+cells+flip")
        super().__init__(game, name or "pool:members=" + SEPARATOR.join(specs))
        self.members = [make_agent(game, s) for s in specs]
        self.current: Agent | None = None
        self._last = -1

    def reset(self) -> None:
        self.current = None
        self._last = -1
        for m in self.members:
            m.reset()

    def act(self, state: Any, rng: np.random.Generator) -> int:
        progress = _progress(state)
        if self.current is None or progress <= self._last:
            self.current = self.members[int(rng.integers(len(self.members)))]
            self.current.reset()
        self._last = progress
        return self.current.act(state, rng)

    def act_batch(self, states: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if states.shape[0] > 1:
            raise BoardRLError(f"{self.name}: a pool plays one game at a time, got {states.shape[0]} rows "
                               "(with tabular_q set parallel_games: 1)")
        return super().act_batch(states, rng)
