"""Optimal-move rate: the share of an agent's moves that keep the exact game value, judged by a referee.

Why: win rates against a fixed opponent saturate (everyone beats random) and depend on the opponent; the
optimal-move rate on a fixed, reproducible position set measures play quality directly, position by
position, and compares any two agents of a game on the same footing (DESIGN.md, measurement conventions).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from boardrl.agents.base import Agent
from boardrl.evaluate.stats import wilson_interval
from boardrl.errors import BoardRLError
from boardrl.games.base import Game
from boardrl.solvers.base import Referee


@dataclass(frozen=True)
class OptimalRate:
    """``rate`` = optimal moves / ``n`` positions, with a Wilson interval ``ci``."""

    rate: float
    n: int
    ci: tuple[float, float]
    optimal: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"rate": self.rate, "n": self.n, "optimal": self.optimal, "ci": list(self.ci)}


def optimal_move_rate(
    agent: Agent,
    referee: Referee,
    positions: Sequence[Any],
    rng: np.random.Generator,
    confidence: float = 0.95,
) -> OptimalRate:
    """Ask ``agent`` for one move in each position and count those among ``referee.solve(pos).optimal_moves``.

    Positions are independent, so the agent is reset before each one; a vectorised agent answers all of them
    in one ``act_batch`` call (same distribution, much faster).
    """
    if len(positions) == 0:
        raise BoardRLError("optimal_move_rate needs at least one position")
    game = referee.game
    if agent.game.game_id != game.game_id:
        raise BoardRLError(f"agent {agent.name!r} plays {agent.game.game_id}, the referee judges {game.game_id}")
    for i, pos in enumerate(positions):
        game.check_state(pos)
        if game.is_over(pos):
            raise BoardRLError(f"position {i} is already over; the optimal-move rate needs unfinished positions")
    moves = _agent_moves(agent, game, positions, rng)
    optimal = sum(int(m) in referee.solve(pos).optimal_moves for pos, m in zip(positions, moves))
    n = len(positions)
    return OptimalRate(optimal / n, n, wilson_interval(optimal, n, confidence), optimal)


def _agent_moves(agent: Agent, game: Game, positions: Sequence[Any], rng: np.random.Generator) -> list[int]:
    if agent.batched:
        agent.reset()
        rows = np.array([tuple(p) for p in positions], dtype=np.int64)
        return [int(m) for m in agent.act_batch(rows, rng)]
    moves = []
    for pos in positions:
        agent.reset()
        moves.append(int(agent.act(pos, rng)))
    return moves


def position_set(
    game: Game,
    n: int,
    seed: int,
    plies: int | tuple[int, int] | None = None,
    where: Callable[[Any], bool] | None = None,
    max_tries: int | None = None,
) -> list[Any]:
    """``n`` distinct unfinished positions reached by uniformly random play, reproducible from ``seed``.

    ``plies``: an exact number of actions from the start, an inclusive range ``(lo, hi)`` drawn uniformly per
    sample, or None for a uniformly chosen unfinished position along a whole random game.  ``where``: an
    extra filter (e.g. "no immediate win pending" for solver benchmarks).  Raises ``BoardRLError`` when fewer
    than ``n`` distinct positions turn up within ``max_tries`` random games (default ``50 * n + 1000``).
    """
    if n < 1:
        raise BoardRLError(f"position_set needs n >= 1, got {n}")
    lo, hi = _ply_range(plies)
    rng = np.random.default_rng(seed)
    tries = 50 * n + 1000 if max_tries is None else max_tries
    seen: set[Any] = set()
    out: list[Any] = []
    for _ in range(tries):
        pos = _sample(game, rng, lo, hi)
        if pos is None or pos in seen or (where is not None and not where(pos)):
            continue
        seen.add(pos)
        out.append(pos)
        if len(out) == n:
            return out
    raise BoardRLError(
        f"position_set: found only {len(out)} distinct positions of {game.game_id} (plies={plies!r}) in {tries} "
        f"random games, fewer than the {n} asked for"
    )


def _ply_range(plies: int | tuple[int, int] | None) -> tuple[int, int]:
    if plies is None:
        return (-1, -1)
    lo, hi = (plies, plies) if isinstance(plies, (int, np.integer)) else tuple(plies)
    if not 0 <= lo <= hi:
        raise BoardRLError(f"plies must be an int >= 0 or a range (lo, hi) with 0 <= lo <= hi, got {plies!r}")
    return int(lo), int(hi)


def _sample(game: Game, rng: np.random.Generator, lo: int, hi: int) -> Any | None:
    """One random-play position; None when the game ended before the chosen ply."""
    state = game.initial_state()
    if lo < 0:  # a whole game, then one of its unfinished positions
        path = []
        while not game.is_over(state):
            path.append(state)
            state = _random_step(game, state, rng)
        return path[int(rng.integers(len(path)))]
    for _ in range(int(rng.integers(lo, hi + 1))):
        if game.is_over(state):
            return None
        state = _random_step(game, state, rng)
    return None if game.is_over(state) else state


def _random_step(game: Game, state: Any, rng: np.random.Generator) -> Any:
    legal = np.flatnonzero(game.legal_moves(state))
    return game.play(state, int(legal[rng.integers(len(legal))]))
