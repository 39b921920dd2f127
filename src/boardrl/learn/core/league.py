"""League games: a share of a self-play learner's games played against fixed players (AlphaStar's league in
miniature, and seed 004's training against its benchmark players).

Why: self-play converges toward the game's equilibrium.  Where that equilibrium loses (every Conniption second
seat: the first player forces a win within 5 turns, README "Why flip's second seat resists"), only games against
the fixed players show which of their mistakes a line can wait for.

Which games are league games follows from the run's game counter alone: game g is one when
floor((g + 1) * share) > floor(g * share), so the share is spread evenly, and league game k puts the learner in
seat k % 2.  A resumed run therefore schedules the same games as an uninterrupted one.  The member playing a
league game is drawn uniformly from the learner's own generator.

Used by ``alphazero`` and ``dqn`` (params ``opponents`` and ``opponent_share``, from ``LeagueFields``).
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, Field, model_validator

from boardrl.agents.base import Agent
from boardrl.errors import BoardRLError
from boardrl.games.base import Game
from boardrl.learn.core.base import LearnError


class LeagueFields(BaseModel):
    """The two params of league games, shared by the learners that offer them."""

    opponents: list[str] = Field(default_factory=list, description="make_agent specs of the fixed players of the "
                                 "league games (one drawn per game)")
    opponent_share: float = Field(0.0, ge=0.0, le=1.0, description="share of the games played against one of "
                                  "``opponents`` (the learner's seat alternating); 0 = self-play only")

    @model_validator(mode="after")
    def _share_needs_opponents(self) -> "LeagueFields":
        if self.opponent_share > 0 and not self.opponents:
            raise ValueError("opponent_share > 0 needs opponents (agent specs to play the league games)")
        return self


class League:
    """The fixed players of one run, its schedule of league games, and their moves in batches."""

    def __init__(self, game: Game, specs: list[str], share: float, learner: str) -> None:
        from boardrl.agents import make_agent
        from boardrl.agents.pool import PoolAgent

        try:
            self.members: list[Agent] = [make_agent(game, spec) for spec in specs]
        except BoardRLError as exc:
            raise LearnError(f"{learner} opponents: {exc}") from None
        for spec, agent in zip(specs, self.members):
            if isinstance(agent, PoolAgent):  # it plays one game at a time; league games run side by side
                raise LearnError(f"{learner} opponents: {spec!r} is a pool; list its members in opponents instead "
                                 "(one is drawn per game)")
        self.share = share

    def seats(self, first_game: int, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """For games first_game .. first_game + n - 1: the player the fixed opponent controls (-1: a self-play
        game) and which member plays it (0 for self-play games)."""
        g = first_game + np.arange(n, dtype=np.int64)
        league = np.floor((g + 1) * self.share) > np.floor(g * self.share)
        k = np.floor(g * self.share).astype(np.int64)  # league games before game g
        seat = np.where(league, 1 - k % 2, -1).astype(np.int64)  # the opponent's player: learner first when k even
        which = np.zeros(n, dtype=np.int64)
        if league.any():
            which[league] = rng.integers(len(self.members), size=int(league.sum()))
        return seat, which

    def moves(self, states: np.ndarray, which: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The members' moves in ``states`` (row i played by member ``which[i]``), one batch per member."""
        moves = np.zeros(len(states), dtype=np.int64)
        for m in np.unique(which):
            rows = np.flatnonzero(which == m)
            moves[rows] = self.members[int(m)].act_batch(states[rows], rng)
        return moves
