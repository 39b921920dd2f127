"""Exact loss probability of a tic-tac-toe agent against ``perfect``, per seat, by walking the whole game tree.

Why exact: the ladder samples games, 1,000 a seat against ``perfect`` (which picks uniformly among the optimal
moves).  A greedy agent that errs in one rarely reached line shows there as a few losses or none, and two seeds
of one experiment cannot be told apart by such counts.  Tic-tac-toe is small enough to walk instead: where the
agent is to play, its move; where ``perfect`` is, every optimal reply weighted by the probability that ``perfect``
draws it (1/k of k).  The loss probability comes out as an exact fraction, so a seed is either flawless (0 in
both seats) or not, and the walk names the positions where the agent's move lost value.

Which moves the agent plays: a learned agent is greedy (a function of the position), so it is asked with four
random streams and all must give the same move; an agent whose move depends on its random stream (random ties,
exploration, a softmax) is refused with ``ExactLossError`` ("not deterministic"), as a one-move walk would
misstate it.  The two players that draw at random by design are walked over their known distributions instead:
``random`` (uniform over the legal moves) and ``perfect`` (uniform over the referee's optimal moves).  The agent
is treated as a function of the position: it is not reset between the positions it is asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from boardrl.agents.base import Agent, RandomAgent
from boardrl.agents.perfect import PerfectAgent
from boardrl.errors import BoardRLError
from boardrl.solvers.base import Referee
from boardrl.solvers.tictactoe import TicTacToeReferee

GAME_ID = "tictactoe"
SEAT_KEYS = ("as_first", "as_second")  # evaluate/stats.py's seat names
#: The random streams a deterministic agent must give one move for.  Their first uniform draws (0.64, 0.51, 0.26,
#: 0.09) straddle 1/2, so a tie broken by ``floor(u * k)`` among k >= 2 moves gives two moves; seeds 0 and 1 alone
#: agree on every 2-, 3- and 4-way tie and would walk a random-tie agent (QT) as if it always took the second.
PROBE_SEEDS = (0, 1, 2, 3)


class ExactLossError(BoardRLError):
    """The walk cannot be done: a game other than tic-tac-toe, or an agent whose move is not one move."""


@dataclass(frozen=True)
class SeatLoss:
    """One seat: the exact probability of losing to ``perfect``, and the agent's value-losing moves on the way
    (each ``"<moves that led there> -> <move played>"``, at a position reached with positive probability)."""

    loss: Fraction
    value_losing_moves: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"loss": float(self.loss), "value_losing_moves": list(self.value_losing_moves)}


@dataclass(frozen=True)
class ExactLoss:
    """Both seats of one agent against ``perfect``."""

    as_first: SeatLoss
    as_second: SeatLoss

    @property
    def flawless(self) -> bool:
        """Never loses to ``perfect``, in either seat."""
        return self.as_first.loss == 0 and self.as_second.loss == 0

    @property
    def value_losing_moves(self) -> int:
        """Value-losing moves at reachable positions, both seats together (a greedy agent: positions)."""
        return len(self.as_first.value_losing_moves) + len(self.as_second.value_losing_moves)

    def to_dict(self) -> dict[str, Any]:
        return {"opponent": "perfect", "as_first": self.as_first.to_dict(), "as_second": self.as_second.to_dict(),
                "value_losing_moves": self.value_losing_moves, "flawless": self.flawless}


def move_distribution(agent: Agent, state: Any, referee: Referee, where: str = "") -> dict[int, Fraction]:
    """The agent's moves at ``state`` with their probabilities; ``ExactLossError`` when not known exactly
    (``where``: how the message names the position, e.g. the moves that led there)."""
    game = agent.game
    if isinstance(agent, PerfectAgent):
        moves = referee.solve(state).optimal_moves
    elif isinstance(agent, RandomAgent):
        moves = tuple(int(m) for m in np.flatnonzero(game.legal_moves(state)))
    else:
        played = {int(agent.act(state, np.random.default_rng(s))) for s in PROBE_SEEDS}
        if len(played) != 1:
            raise ExactLossError(
                f"exact loss: {agent.name} is not deterministic at {where or repr(state)} "
                f"(moves {', '.join(game.format_move(m) for m in sorted(played))}): the walk needs a greedy agent")
        return {played.pop(): Fraction(1)}
    return {int(m): Fraction(1, len(moves)) for m in moves}


def seat_loss(agent: Agent, seat: int, referee: Referee | None = None) -> SeatLoss:
    """Exact probability that ``agent`` in ``seat`` (0 first, 1 second) loses to ``perfect``, with its
    value-losing moves.  Each position is solved once (transpositions share the result)."""
    game = _check_game(agent)
    referee = referee or TicTacToeReferee(game)
    mistakes: list[str] = []
    memo: dict[Any, Fraction] = {}

    def walk(state: Any, moves: tuple[int, ...]) -> Fraction:
        if game.is_over(state):
            winner = game.winner(state)
            return Fraction(1) if winner is not None and winner != seat else Fraction(0)
        key = game.state_key(state)
        if key in memo:
            return memo[key]
        if game.to_move(state) == seat:
            where = game.format_moves(moves) or "(start)"
            dist = move_distribution(agent, state, referee, where)
            optimal = referee.solve(state).optimal_moves
            mistakes.extend(f"{where} -> {game.format_move(m)}" for m in dist if m not in optimal)
        else:
            replies = referee.solve(state).optimal_moves
            dist = {int(m): Fraction(1, len(replies)) for m in replies}
        p = sum((q * walk(game.play(state, m), moves + (m,)) for m, q in dist.items()), Fraction(0))
        memo[key] = p
        return p

    return SeatLoss(walk(game.initial_state(), ()), tuple(mistakes))


def exact_loss(agent: Agent, referee: Referee | None = None) -> ExactLoss:
    """Both seats of ``agent`` against ``perfect``: exact loss probabilities and value-losing moves."""
    game = _check_game(agent)
    referee = referee or TicTacToeReferee(game)
    return ExactLoss(seat_loss(agent, 0, referee), seat_loss(agent, 1, referee))


def _check_game(agent: Agent):
    game = agent.game
    if game.game_id != GAME_ID:
        raise ExactLossError(f"exact loss: tic-tac-toe only (the whole tree is walked); {agent.name} plays "
                             f"{game.game_id}")
    return game
