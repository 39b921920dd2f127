"""Evaluation functions for depth-limited search: seed 002's line heuristics and plain terminal utility.

Seed 002 scores a position by summing a value over every line (tic-tac-toe: the 8 lines of three; Connect 4:
the 69 windows of four cells in the four directions).  A line holding only one player's pieces is worth a power
of ten in the number of those pieces, positive for the player we evaluate for, negative for the opponent; a
mixed or empty line is worth 0.  The two games use different exponents in the seed's code:

* tic-tac-toe: ``10^(n-1)`` (1, 10, 100), as ``line_heuristic`` in its TicTacToe module computes it;
* Connect 4: ``10^n`` (10, 100, 1000, and 10^4 for a completed four).

Both are antisymmetric (``score(own, opp) == -score(opp, own)``), which is what lets a negamax search evaluate
from the side to move and still reproduce the seed's "always from the root player" MaxMin exactly.  One kernel,
``line_score``, computes both (and Conniption's Sols evaluation: the same rule with other weights).

The kernels take plain bitboards so that the alpha-beta and MCTS kernels can call them inside numba.  The
Python-level evaluations have the signature ``evaluate(game, state, player) -> float`` and are looked up by name
with ``get_evaluation``.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from numba import njit

from boardrl.games._kernels import popcount
from boardrl.errors import BoardRLError
from boardrl.games.base import Game
from boardrl.games.tictactoe import LINES as TTT_LINES  # the 8 lines of three

#: ``evaluate(game, state, player)``: a score of ``state`` from ``player``'s point of view (higher = better).
Evaluation = Callable[[Game, Any, int], float]


# ---------------------------------------------------------------------------------------------- lines
@njit(cache=True)
def line_score(own: int, opp: int, lines: np.ndarray, values: np.ndarray) -> int:
    """Sum over ``lines`` (bitboards): ``values[n]`` for a line holding n > 0 pieces of ``own`` and none of
    ``opp``, minus ``values[n]`` for the reverse, 0 for a mixed or empty line (``values[0]`` must be 0)."""
    score = 0
    for line in lines:
        a = popcount(own & line)
        b = popcount(opp & line)
        if b == 0:
            score += values[a]
        elif a == 0:
            score -= values[b]
    return score


# ---------------------------------------------------------------------------------------------- tic-tac-toe
TTT_LINE_VALUES = np.array([0, 1, 10, 100], dtype=np.int64)  # seed 002 code: 10^(n-1) for n pieces


@njit(cache=True)
def ttt_sides(x: int, o: int) -> tuple[int, int]:
    """(stones of the player to move, stones of the opponent): X moves when both have as many stones."""
    if popcount(x) == popcount(o):
        return x, o
    return o, x


@njit(cache=True)
def ttt_line_score(own: int, opp: int) -> int:
    """Seed 002's tic-tac-toe heuristic for the owner of ``own`` (9-bit masks, bit i = cell i)."""
    return line_score(own, opp, TTT_LINES, TTT_LINE_VALUES)


# ---------------------------------------------------------------------------------------------- Connect 4
def _connect4_windows() -> np.ndarray:
    """The 69 four-cell windows as Tromp bitboards (bit ``7*col + row``, row 0 = bottom)."""

    def bit(c: int, r: int) -> int:
        return 1 << (7 * c + r)

    wins = []
    for r in range(6):  # horizontal
        for c in range(4):
            wins.append(sum(bit(c + k, r) for k in range(4)))
    for c in range(7):  # vertical
        for r in range(3):
            wins.append(sum(bit(c, r + k) for k in range(4)))
    for c in range(4):  # diagonal up-right
        for r in range(3):
            wins.append(sum(bit(c + k, r + k) for k in range(4)))
    for c in range(4):  # diagonal down-right
        for r in range(3, 6):
            wins.append(sum(bit(c + k, r - k) for k in range(4)))
    return np.array(wins, dtype=np.int64)


C4_WINDOWS = _connect4_windows()
C4_WINDOW_VALUES = np.array([0, 10, 100, 1000, 10000], dtype=np.int64)  # seed 002 code: 10^n, a four = 10^4


@njit(cache=True)
def c4_line_score(own: int, opp: int) -> int:
    """Seed 002's Connect 4 heuristic for the owner of ``own`` (Tromp bitboards)."""
    return line_score(own, opp, C4_WINDOWS, C4_WINDOW_VALUES)


# ---------------------------------------------------------------------------------------------- by name
def line_heuristic(game: Game, state: Any, player: int) -> float:
    """Seed 002's line heuristic (tic-tac-toe or Connect 4) from ``player``'s point of view."""
    if game.game_id == "tictactoe":
        own, opp = (state.x, state.o) if player == 0 else (state.o, state.x)
        return float(ttt_line_score(own, opp))
    if game.game_id == "connect4":
        mover = state.plies & 1
        other = state.current ^ state.mask
        own, opp = (state.current, other) if player == mover else (other, state.current)
        return float(c4_line_score(own, opp))
    raise BoardRLError(f"evaluation 'line' exists for tictactoe and connect4, not {game.game_id}")


def utility(game: Game, state: Any, player: int) -> float:
    """Terminal result for ``player`` (+1/0/-1), 0 for an unfinished game: search sees only wins and losses."""
    return float(game.returns(state)[player]) if game.is_over(state) else 0.0


def score_margin(game: Game, state: Any, player: int) -> float:
    """Boxes so far, ``player`` minus opponent (Dots and Boxes): the natural material count of that game."""
    margin = game.score_margin(state)
    if margin is None:
        raise BoardRLError(f"evaluation 'margin' needs a game that keeps a score, not {game.game_id}")
    return float(margin if player == 0 else -margin)


EVALUATIONS: dict[str, Evaluation] = {"utility": utility, "line": line_heuristic, "margin": score_margin}


def evaluation_names(game: Game) -> list[str]:
    """Names of the evaluations that apply to ``game``."""
    names = ["utility"]
    if game.game_id in ("tictactoe", "connect4"):
        names.append("line")
    if game.game_id.startswith("dots_and_boxes"):
        names.append("margin")
    return names


def get_evaluation(game: Game, name: str | Evaluation) -> Evaluation:
    """The evaluation called ``name`` for ``game`` (a callable is returned unchanged)."""
    if callable(name):
        return name
    legal = evaluation_names(game)
    if name not in legal:
        raise BoardRLError(f"unknown evaluation {name!r} for {game.game_id}; choices: {', '.join(legal)}")
    return EVALUATIONS[name]
