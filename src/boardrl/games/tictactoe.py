"""Tic-tac-toe: 3x3, X (player 0) first, three in a row wins, a full board without a line is a draw.

State: ``TicTacToeState(x, o)``, two 9-bit masks with bit i = cell i (cells 0..8 row-major).  Notation: cells
1-9 row-major (1 2 3 / 4 5 6 / 7 8 9), as in seed 000; a move string is digits ("5193"), optionally separated.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from boardrl.games._kernels import (
    INT64, permute_bits_batch, popcount, set_returns, trusted_entry_on_first_call, tuple_of,
)
from boardrl.games.base import BatchedGame, DigitNotation, Game, GameDescriptor, IllegalMoveError

LINES = np.array(
    [0b000000111, 0b000111000, 0b111000000, 0b001001001, 0b010010010, 0b100100100, 0b100010001, 0b001010100],
    dtype=np.int64,
)
FULL = 0b111111111
#: LEGAL_MASKS[bits] is the boolean mask of the 9-bit set ``bits``: the scalar path's mask without a Python loop.
LEGAL_MASKS = ((np.arange(512)[:, None] >> np.arange(9)) & 1).astype(bool)
LEGAL_MASKS.setflags(write=False)
#: Its rows (read-only views) in a list, which ``legal_moves`` hands out as they are: indexing a list is cheaper.
_LEGAL_ROWS = list(LEGAL_MASKS)
_new_state = tuple.__new__
CELL_BITS = np.arange(9, dtype=np.int64)


class TicTacToeState(NamedTuple):
    x: int
    o: int


@njit(cache=True)
def has_line(bits: int) -> bool:
    for line in LINES:
        if bits & line == line:
            return True
    return False


@njit(cache=True)
def status(x: int, o: int) -> int:
    """-1 = game on, 0 = X won, 1 = O won, 2 = draw."""
    if has_line(x):
        return 0
    if has_line(o):
        return 1
    if (x | o) == FULL:
        return 2
    return -1


@njit(cache=True)
def legal_bits(x: int, o: int) -> int:
    if status(x, o) != -1:
        return 0
    return FULL & ~(x | o)


@njit(cache=True)
def apply(x: int, o: int, cell: int) -> tuple[int, int]:
    if popcount(x) == popcount(o):
        return x | (1 << cell), o
    return x, o | (1 << cell)


@njit(cache=True)
def play_checked(x: int, o: int, cell: int) -> tuple[tuple[int, int], int]:
    """``(successor, its legal-move bits)`` when ``cell`` is legal, else ``((0, 0), -1)``.

    The scalar ``play`` in one compiled call; ``legal_moves`` of the successor reads the bits from the memo.
    """
    if cell < 0 or cell >= 9 or not (legal_bits(x, o) >> cell) & 1:
        return (0, 0), -1
    x, o = apply(x, o, cell)
    return (x, o), legal_bits(x, o)


@njit(cache=True)
def play_state(state: tuple[int, int], cell: int) -> tuple[tuple[int, int], int]:
    """``play_checked`` of a whole state tuple: for the trusted entry point, one argument is cheaper than two."""
    return play_checked(state[0], state[1], cell)


#: ``play_state`` for the states this game's ``play`` returned: its compiled entry point (``_kernels``).
_play_trusted = trusted_entry_on_first_call(globals(), "_play_trusted", play_state, tuple_of(INT64, 2), INT64)


@njit(cache=True)
def batch_legal(states: np.ndarray, out: np.ndarray) -> None:
    for i in range(states.shape[0]):
        bits = legal_bits(states[i, 0], states[i, 1])
        for c in range(9):
            out[i, c] = (bits >> c) & 1


@njit(cache=True)
def batch_step(states, actions, auto_reset, finished, rets, finals) -> int:
    """Apply actions row-wise; returns the first row with an illegal action (nothing applied then), or -1."""
    for i in range(states.shape[0]):
        x, o = states[i, 0], states[i, 1]
        a = actions[i]
        if status(x, o) == -1 and (a < 0 or a >= 9 or not (legal_bits(x, o) >> a) & 1):
            return i
    for i in range(states.shape[0]):
        x, o = states[i, 0], states[i, 1]
        finished[i] = False
        rets[i, 0] = 0.0
        rets[i, 1] = 0.0
        if status(x, o) != -1:
            continue
        x, o = apply(x, o, actions[i])
        s = status(x, o)
        if s != -1:
            finished[i] = True
            set_returns(rets, i, s)
            finals[i, 0], finals[i, 1] = x, o
            if auto_reset:
                x, o = 0, 0
        states[i, 0], states[i, 1] = x, o
    return -1


def _dihedral_cell_maps() -> np.ndarray:
    """The 8 symmetries of the square as cell permutations: maps[k][c] = image of cell c."""
    maps = []
    for k in range(8):
        m = np.empty(9, dtype=np.int64)
        for c in range(9):
            r, q = divmod(c, 3)
            for _ in range(k % 4):  # rotate 90 degrees clockwise
                r, q = q, 2 - r
            if k >= 4:  # then mirror left-right
                q = 2 - q
            m[c] = 3 * r + q
        maps.append(m)
    return np.array(maps)


CELL_MAPS = _dihedral_cell_maps()


def _map_bits(bits: int, cell_map: np.ndarray) -> int:
    out = 0
    for c in range(9):
        if bits >> c & 1:
            out |= 1 << int(cell_map[c])
    return out


class TicTacToe(DigitNotation, Game):
    game_id = "tictactoe"
    descriptor = GameDescriptor(title="Tic-tac-toe", notation="cell 1-9, row-major", example="159", board="cells",
                                referee="boardrl.solvers.tictactoe:TicTacToeReferee", has_referee=True)
    move_noun = "cells 1-9 written as digits, row-major (1 2 3 / 4 5 6 / 7 8 9)"
    num_actions = 9
    state_type = TicTacToeState
    encoding_shape = (2, 3, 3)

    def initial_state(self) -> TicTacToeState:
        return TicTacToeState(0, 0)

    def legal_moves(self, state: TicTacToeState) -> np.ndarray:
        """Read-only mask of the empty cells (none once the game is over); shared, see ``Game.legal_moves``."""
        memo = self._memo
        if state is memo[0]:
            return _LEGAL_ROWS[memo[1]]
        return _LEGAL_ROWS[legal_bits(state.x, state.o)]

    def play(self, state: TicTacToeState, move: int) -> TicTacToeState:
        """``Game.play`` in one compiled call for an int move; anything else, and every error, via ``Game.play``.

        The successor's legal cells come back from the same call and are kept in ``_memo`` for ``legal_moves``;
        a state this game returned is trusted (base module docstring, "Scalar speed").
        """
        if type(move) is int and 0 <= move < 9:
            if state is self._memo[0]:
                t, bits = _play_trusted(state, move)
            elif type(state) is TicTacToeState:
                t, bits = play_checked(state[0], state[1], move)
            else:
                return Game.play(self, state, move)  # WrongGameError
            if bits >= 0:
                nxt = _new_state(TicTacToeState, t)
                self._memo = (nxt, bits)
                return nxt
        return Game.play(self, state, move)

    def _apply(self, state: TicTacToeState, move: int) -> TicTacToeState:
        return TicTacToeState(*apply(state.x, state.o, move))

    def to_move(self, state: TicTacToeState) -> int:
        return 0 if popcount(state.x) == popcount(state.o) else 1

    def is_over(self, state: TicTacToeState) -> bool:
        return status(state.x, state.o) != -1

    def returns(self, state: TicTacToeState) -> tuple[float, float]:
        s = status(state.x, state.o)
        return (1.0, -1.0) if s == 0 else (-1.0, 1.0) if s == 1 else (0.0, 0.0)

    def encode_batch(self, states: np.ndarray) -> np.ndarray:
        """float32 (N, 2, 3, 3): plane 0 = stones of the player to move, plane 1 = opponent's; cells row-major.

        Side-to-move planes make X and O positions look alike to a network, so it learns one game, not two.
        ``encode`` (base class) is this on a one-row batch.
        """
        rows = np.asarray(states, dtype=np.int64)
        x_moves = self.to_move_batch(rows) == 0
        own = np.where(x_moves, rows[:, 0], rows[:, 1])
        opp = np.where(x_moves, rows[:, 1], rows[:, 0])
        cells = (np.stack([own, opp], axis=1)[:, :, None] >> CELL_BITS) & 1
        return cells.astype(np.float32).reshape((rows.shape[0],) + self.encoding_shape)

    def symmetries(self, state: TicTacToeState) -> list[tuple[TicTacToeState, np.ndarray]]:
        """The 8 dihedral images (rotations, then the same mirrored), identity first; cell maps = action maps."""
        return [(TicTacToeState(_map_bits(state.x, m), _map_bits(state.o, m)), m.copy()) for m in CELL_MAPS]

    def symmetries_batch(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(8, N, 2) images and (8, 9) action maps, in the order of ``symmetries``."""
        rows = np.ascontiguousarray(states, dtype=np.int64)
        images = np.stack([permute_bits_batch(rows[:, f].copy(), CELL_MAPS) for f in range(2)], axis=2)
        return images, CELL_MAPS.copy()

    def state_key(self, state: TicTacToeState) -> int:
        return state.x | (state.o << 9)

    def render(self, state: TicTacToeState) -> str:
        rows = []
        for r in range(3):
            cells = []
            for q in range(3):
                c = 3 * r + q
                cells.append("X" if state.x >> c & 1 else "O" if state.o >> c & 1 else str(c + 1))
            rows.append(" ".join(cells))
        return "\n".join(rows)

    def batched(self, n: int, auto_reset: bool = True) -> "BatchedTicTacToe":
        return BatchedTicTacToe(self, n, auto_reset)

    def legal_mask_batch(self, states: np.ndarray) -> np.ndarray:
        out = np.zeros((states.shape[0], 9), dtype=np.bool_)
        batch_legal(states, out)
        return out

    def to_move_batch(self, states: np.ndarray) -> np.ndarray:
        return (_popcount_array(states[:, 0]) != _popcount_array(states[:, 1])).astype(np.int8)


class BatchedTicTacToe(BatchedGame):
    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        finished = np.zeros(self.n, dtype=np.bool_)
        rets = np.zeros((self.n, 2), dtype=np.float32)
        bad = batch_step(self.states, np.asarray(actions, dtype=np.int64), self.auto_reset, finished, rets, self.final_states)
        if bad >= 0:
            raise IllegalMoveError(f"tictactoe: illegal action {int(actions[bad])} in batch row {bad}")
        return finished, rets


@njit(cache=True)
def _popcount_array(a: np.ndarray) -> np.ndarray:
    out = np.empty(a.shape[0], dtype=np.int64)
    for i in range(a.shape[0]):
        out[i] = popcount(a[i])
    return out
