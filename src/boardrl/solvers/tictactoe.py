"""Exact tic-tac-toe referee: negamax over every reachable state, solved once and kept in a table.

The game is tiny (5,478 reachable states), so the referee solves all of it up front with a memoised negamax
(numba, recursion over the engine's own kernels) into an int8 table indexed by the state key ``x | o << 9``.
Values are from the view of the player to move: +1 win, 0 draw, -1 loss under perfect play.  A finished
game's value follows its result: the mover there has lost if the previous player completed a line.

An optimal move is any move that keeps the value (not only the fastest win), as the Referee interface says.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import njit

from boardrl.errors import BoardRLError
from boardrl.games.base import Game
from boardrl.games.tictactoe import TicTacToeState, apply, legal_bits, status
from boardrl.solvers.base import Referee, Verdict

UNSOLVED = 2  # table entry of a key that is not a reachable state
TABLE_SIZE = 1 << 18  # x and o are 9-bit masks


@njit(cache=True)
def _negamax(x: int, o: int, values: np.ndarray) -> int:
    """Value of (x, o) for the player to move, filling ``values`` for every state below it."""
    key = x | (o << 9)
    v = values[key]
    if v != UNSOLVED:
        return v
    s = status(x, o)
    if s == 2:
        v = 0
    elif s != -1:
        v = -1  # only the player who just moved can have made the line
    else:
        v = -1
        bits = legal_bits(x, o)
        for c in range(9):
            if (bits >> c) & 1:
                nx, no = apply(x, o, c)
                r = -_negamax(nx, no, values)
                if r > v:
                    v = r
    values[key] = v
    return v


@lru_cache(maxsize=1)
def value_table() -> np.ndarray:
    """int8 values of all reachable states indexed by ``x | o << 9`` (``UNSOLVED`` elsewhere); read-only."""
    values = np.full(TABLE_SIZE, UNSOLVED, dtype=np.int8)
    _negamax(0, 0, values)
    values.flags.writeable = False
    return values


def solved_states() -> dict[TicTacToeState, int]:
    """Every reachable state with its value for the player to move (5,478 entries)."""
    values = value_table()
    keys = np.flatnonzero(values != UNSOLVED)
    return {TicTacToeState(int(k) & 0x1FF, int(k) >> 9): int(values[k]) for k in keys}


class TicTacToeReferee(Referee):
    """Exact value and every value-keeping move of any reachable tic-tac-toe state."""

    def __init__(self, game: Game | None = None) -> None:
        if game is None:
            from boardrl.games import make_game

            game = make_game("tictactoe")
        super().__init__(game)
        self.values = value_table()

    @property
    def num_states(self) -> int:
        return int(np.count_nonzero(self.values != UNSOLVED))

    def _value(self, x: int, o: int) -> int:
        return int(self.values[x | (o << 9)])

    def solve(self, state: TicTacToeState) -> Verdict:
        self.game.check_state(state)
        x, o = int(state.x), int(state.o)
        value = self._value(x, o)
        if value == UNSOLVED:
            raise BoardRLError(
                f"tictactoe: state x={x:#011b} o={o:#011b} cannot arise in play (stone counts or lines)"
            )
        bits = legal_bits(x, o)
        optimal = tuple(c for c in range(9) if (bits >> c) & 1 and -self._value(*apply(x, o, c)) == value)
        return Verdict(value=value, optimal_moves=optimal)
