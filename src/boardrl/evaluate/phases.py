"""Optimal-move rate by phase of the game: the opening judged apart from the middle and the end.

Why: a single rate over mid-game positions hides where an agent goes wrong.  Learned Connect 4 agents are
strongest in the middle game, where the referee used to be affordable; with the opening book
(``solvers/connect4_book.py``) every Connect 4 position is judged within a second, so the evaluate stage can
report the opening (plies 0-11) on its own.  The phases are fixed per game (not params) so that every agent of
a game is judged on the same position sets; each phase gets a quarter of ``evaluate.optimal_positions``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from boardrl.agents.base import Agent
from boardrl.evaluate.optimal_rate import optimal_move_rate, position_set
from boardrl.games.base import Game
from boardrl.solvers.base import Referee

#: (name, first ply, last ply) per game; plies are actions of uniformly random play from the empty board.
PHASES: dict[str, tuple[tuple[str, int, int], ...]] = {
    "connect4": (("opening", 0, 11), ("middle", 12, 29), ("end", 30, 41)),
}
#: Share of ``evaluate.optimal_positions`` each phase gets.
PHASE_SHARE = 4


def phase_positions(game: Game, total: int, seed: int) -> dict[str, list[Any]]:
    """The seeded position set of each phase of ``game`` (empty when the game has no phases or ``total`` < 4).

    A phase's set is distinct positions; the opening has only so many (1 + 7 + 49 + ... positions at plies
    0-2), so the sampler draws from the whole phase range and a set may repeat no position.
    """
    n = total // PHASE_SHARE
    if n == 0:
        return {}
    return {name: position_set(game, n, seed=seed + i, plies=(lo, hi))
            for i, (name, lo, hi) in enumerate(PHASES.get(game.game_id, ()))}


def rates_by_phase(agent: Agent, referee: Referee, sets: dict[str, list[Any]], seed: int) -> dict[str, Any]:
    """``{phase: {"plies": [lo, hi], "rate", "n", "optimal", "ci"}}`` for ``agent`` on each phase's set."""
    bounds = {name: [lo, hi] for name, lo, hi in PHASES.get(referee.game.game_id, ())}
    out: dict[str, Any] = {}
    for name, positions in sets.items():
        rate = optimal_move_rate(agent, referee, positions, np.random.default_rng(seed))
        out[name] = {"plies": bounds[name], **rate.to_dict()}
    return out
