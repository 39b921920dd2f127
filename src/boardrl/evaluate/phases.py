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
#: Plies from which the game's referee answers by search within about a second; a phase starting earlier is
#: judged only when an opening book covers the plies before (Connect 4: the empty board takes minutes).
SEARCH_FROM_PLY = {"connect4": 9}


def book_plies(game_id: str) -> int:
    """The deepest ply the game's opening book covers; -1 without a book."""
    if game_id != "connect4":
        return -1
    from boardrl.solvers.connect4_book import default_book

    book = default_book()
    return -1 if book is None else int(book.plies)


def unjudged(game_id: str) -> dict[str, str]:
    """``{phase: why}`` for the phases the referee cannot judge in time here (no opening book)."""
    first = SEARCH_FROM_PLY.get(game_id, 0)
    if book_plies(game_id) >= first - 1:
        return {}
    return {name: f"plies {lo}-{first - 1} need the opening book (`boardrl book build`), which is not installed"
            for name, lo, _ in PHASES.get(game_id, ()) if lo < first}


def phase_positions(game: Game, total: int, seed: int) -> dict[str, list[Any]]:
    """The seeded position set of each phase of ``game`` (empty when the game has no phases or ``total`` < 4).

    A phase's set is distinct positions; the opening has only so many (1 + 7 + 49 + ... positions at plies
    0-2), so the sampler draws from the whole phase range and a set may repeat no position.
    """
    n = total // PHASE_SHARE
    if n == 0:
        return {}
    skip = unjudged(game.game_id)
    return {name: position_set(game, n, seed=seed + i, plies=(lo, hi))
            for i, (name, lo, hi) in enumerate(PHASES.get(game.game_id, ())) if name not in skip}


def rates_by_phase(agent: Agent, referee: Referee, sets: dict[str, list[Any]], seed: int) -> dict[str, Any]:
    """``{phase: {"plies": [lo, hi], "rate", "n", "optimal", "ci"}}`` for ``agent`` on each phase's set; a phase
    that could not be judged has ``rate`` None and ``unjudged`` saying why."""
    game_id = referee.game.game_id
    skip = unjudged(game_id)
    out: dict[str, Any] = {}
    for name, lo, hi in PHASES.get(game_id, ()):
        if name in sets:
            rate = optimal_move_rate(agent, referee, sets[name], np.random.default_rng(seed))
            out[name] = {"plies": [lo, hi], **rate.to_dict()}
        elif name in skip:
            out[name] = {"plies": [lo, hi], "rate": None, "n": 0, "unjudged": skip[name]}
    return out
