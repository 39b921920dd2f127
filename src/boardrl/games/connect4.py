"""Connect 4: 6 rows x 7 columns, stones fall to the lowest empty cell, four in a row in any direction wins.

Player 0 (X) moves first; a full board (42 stones) without a four is a draw; the game ends at the first four.

State: ``Connect4State(current, mask, plies)`` with Tromp bitboards.  Bit ``7*col + row`` is the cell in
column ``col`` (0 = leftmost) and ``row`` (0 = bottom); each column has 7 bits of which the top one (row 6) is
a sentinel that is always 0, so shifted copies of a board never wrap from one column into the next.
``current`` holds the stones of the player to move, ``mask`` all stones, ``plies`` the number of stones.  Why
this layout: the side-to-move view is what solvers and networks want, a move is two integer operations
(``current ^= mask; mask |= mask + bottom(col)``), and the classic key ``current + mask`` identifies a
position uniquely in 49 bits.  The layout is fixed: the solver and the agents code against it.

Actions are columns 0..6; the notation is columns 1-7 and a move string is digits ("4453"), optionally
separated by spaces or commas.  The UCI data set's cell names (``a1`` .. ``g6``: letter = column, digit = row
from the bottom) are supported by ``from_uci_cells`` / ``to_uci_cells``.
"""

from __future__ import annotations

from typing import NamedTuple, NoReturn, Sequence

import numpy as np
from numba import njit

from boardrl.games._kernels import INT64, popcount, set_returns, trusted_entry_on_first_call, tuple_of
from boardrl.errors import BoardRLError
from boardrl.games.base import BatchedGame, DigitNotation, Game, GameDescriptor, IllegalMoveError, NotationError

ROWS = 6
COLS = 7
H1 = ROWS + 1  # bits per column, including the always-empty sentinel
CELLS = ROWS * COLS
BOTTOM = sum(1 << (H1 * c) for c in range(COLS))  # row 0 of every column
BOARD = BOTTOM * ((1 << ROWS) - 1)  # every real cell (rows 0..5)
COLUMN = (1 << ROWS) - 1  # the 6 real cells of column 0; shift by H1*c for column c
MIRROR_ACTIONS = np.arange(COLS - 1, -1, -1, dtype=np.int64)
UCI_CELLS = tuple(f"{chr(ord('a') + c)}{r + 1}" for c in range(COLS) for r in range(ROWS))  # a1..a6, b1.., g6


class Connect4State(NamedTuple):
    current: int  # stones of the player to move
    mask: int  # all stones
    plies: int  # number of stones on the board (player to move = plies % 2)


# ---------------------------------------------------------------------------------------------- kernels
@njit(cache=True)
def has_four(bits: int) -> bool:
    """True when ``bits`` (one player's stones) contain four in a row in any of the four directions."""
    m = bits & (bits >> 1)  # vertical
    if m & (m >> 2):
        return True
    m = bits & (bits >> 7)  # horizontal
    if m & (m >> 14):
        return True
    m = bits & (bits >> 6)  # diagonal going down to the right
    if m & (m >> 12):
        return True
    m = bits & (bits >> 8)  # diagonal going up to the right
    if m & (m >> 16):
        return True
    return False


@njit(cache=True)
def winning_cells(bits: int, mask: int) -> int:
    """Bitboard of empty cells that would complete a four for ``bits`` (playable now or not).

    For each direction ``s`` a cell completes a four when the three other cells of some window through it
    belong to ``bits``: the window can have the cell at any of its four places, hence the four shift patterns.
    Left shifts may drop bits above bit 63; those are off the board anyway and the result is masked.
    """
    r = (bits << 1) & (bits << 2) & (bits << 3)  # vertical: only the three stones below can count
    for s in (7, 6, 8):
        p = (bits << s) & (bits << (2 * s))
        r |= p & (bits << (3 * s))
        r |= p & (bits >> s)
        p = (bits >> s) & (bits >> (2 * s))
        r |= p & (bits << s)
        r |= p & (bits >> (3 * s))
    return r & (BOARD ^ mask)


@njit(cache=True)
def playable_cells(mask: int) -> int:
    """The lowest empty cell of every column that is not full."""
    return (mask + BOTTOM) & BOARD


@njit(cache=True)
def non_losing_moves(cur: int, mask: int) -> int:
    """Playable cells that do not hand the opponent an immediate win (0 when every move loses at once).

    Assumes the side to move cannot win now.  A playable opponent winning cell must be taken; with two such
    cells nothing helps.  A cell right under an opponent winning cell would let the opponent play there.
    """
    moves = playable_cells(mask)
    opp_win = winning_cells(cur ^ mask, mask)
    forced = moves & opp_win
    if forced:
        if forced & (forced - 1):
            return 0
        moves = forced
    return moves & ~(opp_win >> 1)


@njit(cache=True)
def status(current: int, mask: int, plies: int) -> int:
    """-1 = game on, 0 = player 0 won, 1 = player 1 won, 2 = draw.

    Only the player who just moved (``current ^ mask``) can have a four, because play stops at the first one.
    """
    if plies > 0 and has_four(current ^ mask):
        return (plies - 1) & 1
    if plies >= CELLS:
        return 2
    return -1


@njit(cache=True)
def legal_bits(current: int, mask: int, plies: int) -> int:
    """Bitboard of the cells a move would fill (one per open column); 0 once the game is over."""
    if status(current, mask, plies) != -1:
        return 0
    return playable_cells(mask)


@njit(cache=True)
def cells_to_columns(cells: int) -> int:
    """7-bit set of the columns that contain any of ``cells``."""
    cols = 0
    for c in range(COLS):
        if (cells >> (H1 * c)) & COLUMN:
            cols |= 1 << c
    return cols


@njit(cache=True)
def legal_columns(current: int, mask: int, plies: int) -> int:
    """7-bit set of the legal columns (bit c = column c)."""
    return cells_to_columns(legal_bits(current, mask, plies))


@njit(cache=True)
def winning_columns(bits: int, mask: int) -> int:
    """7-bit set of the columns where a stone of ``bits`` dropped now would complete a four."""
    return cells_to_columns(winning_cells(bits, mask) & playable_cells(mask))


@njit(cache=True)
def apply(current: int, mask: int, plies: int, col: int) -> tuple[int, int, int]:
    """The position after dropping a stone in ``col`` (which must be legal): the opponent becomes ``current``."""
    return current ^ mask, mask | (mask + (1 << (H1 * col))), plies + 1


@njit(cache=True)
def play_checked(current: int, mask: int, plies: int, col: int) -> tuple[tuple[int, int, int], int]:
    """``(successor, its legal columns)`` when ``col`` is legal, else ``((0, 0, 0), -1)``.

    The scalar ``play`` in one compiled call: the legality check, the move, and the successor's legal columns
    (which ``legal_moves`` of the successor then reads from the game's memo instead of calling again).
    """
    if col < 0 or col >= COLS or not (legal_columns(current, mask, plies) >> col) & 1:
        return (0, 0, 0), -1
    c, m, p = apply(current, mask, plies, col)
    return (c, m, p), legal_columns(c, m, p)


@njit(cache=True)
def try_apply(current: int, mask: int, plies: int, col: int) -> tuple[int, int, int]:
    """``apply`` when ``col`` is legal, else (-1, -1, -1) (``play_checked`` adds the successor's legal columns)."""
    t, cols = play_checked(current, mask, plies, col)
    if cols < 0:
        return -1, -1, -1
    return t


@njit(cache=True)
def play_state(state: tuple[int, int, int], col: int) -> tuple[tuple[int, int, int], int]:
    """``play_checked`` of a whole state tuple: for the trusted entry point, one argument is cheaper than three."""
    return play_checked(state[0], state[1], state[2], col)


@njit(cache=True)
def mirror_bits(bits: int) -> int:
    """Left-right mirror of a bitboard (column c <-> 6 - c); also mirrors the key ``current + mask``."""
    out = 0
    for c in range(COLS):
        out |= ((bits >> (H1 * c)) & 0x7F) << (H1 * (COLS - 1 - c))
    return out


@njit(cache=True)
def encode_into(current: int, mask: int, out: np.ndarray) -> None:
    """Fill ``out`` (2, 6, 7): plane 0 = stones of the player to move, plane 1 = opponent; row 0 = bottom."""
    opp = current ^ mask
    for c in range(COLS):
        for r in range(ROWS):
            b = H1 * c + r
            out[0, r, c] = (current >> b) & 1
            out[1, r, c] = (opp >> b) & 1


@njit(cache=True)
def batch_legal(states: np.ndarray, out: np.ndarray) -> None:
    for i in range(states.shape[0]):
        cols = legal_columns(states[i, 0], states[i, 1], states[i, 2])
        for c in range(COLS):
            out[i, c] = (cols >> c) & 1


@njit(cache=True)
def batch_encode(states: np.ndarray, out: np.ndarray) -> None:
    for i in range(states.shape[0]):
        encode_into(states[i, 0], states[i, 1], out[i])


@njit(cache=True)
def batch_step(states, actions, auto_reset, finished, rets, finals) -> int:
    """Apply actions row-wise; returns the first row with an illegal action (nothing applied then), or -1.

    Rows whose game is already over (possible only without auto-reset) ignore their action.
    """
    for i in range(states.shape[0]):
        a = actions[i]
        if status(states[i, 0], states[i, 1], states[i, 2]) == -1:
            if a < 0 or a >= COLS or not (playable_cells(states[i, 1]) >> (H1 * a)) & COLUMN:
                return i
    for i in range(states.shape[0]):
        cur, msk, ply = states[i, 0], states[i, 1], states[i, 2]
        finished[i] = False
        rets[i, 0] = 0.0
        rets[i, 1] = 0.0
        if status(cur, msk, ply) != -1:
            continue
        cur, msk, ply = apply(cur, msk, ply, actions[i])
        s = status(cur, msk, ply)
        if s != -1:
            finished[i] = True
            set_returns(rets, i, s)
            finals[i, 0], finals[i, 1], finals[i, 2] = cur, msk, ply
            if auto_reset:
                cur, msk, ply = 0, 0, 0
        states[i, 0], states[i, 1], states[i, 2] = cur, msk, ply
    return -1


@njit(cache=True)
def batch_decided_values(states: np.ndarray, out: np.ndarray) -> None:
    """``Connect4.decided_values_batch``: +1 where the mover wins with this stone, -1 where every move lets the
    opponent win with the next (two threats, or the only block under another threat), else 0."""
    for i in range(states.shape[0]):
        cur, mask = states[i, 0], states[i, 1]
        if winning_cells(cur, mask) & playable_cells(mask):
            out[i] = 1.0
        elif non_losing_moves(cur, mask) == 0:
            out[i] = -1.0
        else:
            out[i] = 0.0


@njit(cache=True)
def batch_keys(states: np.ndarray) -> np.ndarray:
    """``current + mask`` for every row: the unique position key."""
    out = np.empty(states.shape[0], dtype=np.int64)
    for i in range(states.shape[0]):
        out[i] = states[i, 0] + states[i, 1]
    return out


@njit(cache=True)
def batch_mirror(states: np.ndarray) -> np.ndarray:
    """Mirror image of every row (plies unchanged)."""
    out = np.empty_like(states)
    for i in range(states.shape[0]):
        out[i, 0] = mirror_bits(states[i, 0])
        out[i, 1] = mirror_bits(states[i, 1])
        out[i, 2] = states[i, 2]
    return out


#: Boolean legal-move masks for every 7-bit column set: read-only rows of one table, in a list (indexing a list
#: is cheaper than indexing the table), handed out by ``legal_moves`` as they are.
_MASK_TABLE = ((np.arange(1 << COLS)[:, None] >> np.arange(COLS)) & 1).astype(bool)
_MASK_TABLE.setflags(write=False)
_LEGAL_MASKS = list(_MASK_TABLE)
_new_state = tuple.__new__


#: ``play_state`` for the states this game's ``play`` returned: its compiled entry point (``_kernels``).
_play_trusted = trusted_entry_on_first_call(globals(), "_play_trusted", play_state, tuple_of(INT64, 3), INT64)


def _is_action(move: object) -> bool:
    """An int (not a bool) or numpy integer in 0..6."""
    return (type(move) is int or isinstance(move, np.integer)) and 0 <= move < COLS


def _columns_text(cols: int) -> str:
    return " ".join(str(c + 1) for c in range(COLS) if (cols >> c) & 1) or "none"


# ---------------------------------------------------------------------------------------------- helpers
def mirror_state(state: Connect4State) -> Connect4State:
    """The left-right mirror image of ``state`` (column c <-> 6 - c); same player to move."""
    return Connect4State(mirror_bits(state.current), mirror_bits(state.mask), state.plies)


def to_absolute(state: Connect4State) -> tuple[int, int]:
    """``(player-0 stones, player-1 stones)`` as bitboards, whoever is to move."""
    other = state.current ^ state.mask
    return (state.current, other) if state.plies % 2 == 0 else (other, state.current)


def from_absolute(p0: int, p1: int) -> Connect4State:
    """The state with player-0 stones ``p0`` and player-1 stones ``p1``; the player to move follows from counts.

    ``BoardRLError`` when the stones overlap, leave the board, float above an empty cell, or the counts are not
    equal (player 0 to move) or one more for player 0 (player 1 to move).
    """
    p0, p1 = int(p0), int(p1)
    mask = p0 | p1
    if p0 & p1 or p0 < 0 or p1 < 0 or mask & ~BOARD:
        raise BoardRLError("connect4: stones overlap or lie outside the 6x7 board")
    for c in range(COLS):
        col = (mask >> (H1 * c)) & COLUMN
        if col & (col + 1):
            raise BoardRLError(f"connect4: column {c + 1} has a stone above an empty cell")
    n0, n1 = popcount(p0), popcount(p1)
    if n0 not in (n1, n1 + 1):
        raise BoardRLError(f"connect4: player 0 has {n0} stones and player 1 has {n1}; need equal or one more")
    plies = n0 + n1
    return Connect4State(p0 if plies % 2 == 0 else p1, mask, plies)


def from_columns(columns: Sequence[str]) -> Connect4State:
    """A state from 7 strings, one per column (left to right), listing its stones bottom-up as X/O.

    Example: ``from_columns(["", "", "", "XO", "X", "", ""])`` is the position after "445".
    """
    if len(columns) != COLS:
        raise BoardRLError(f"connect4: from_columns needs 7 column strings, got {len(columns)}")
    p0 = p1 = 0
    for c, text in enumerate(columns):
        if len(text) > ROWS:
            raise BoardRLError(f"connect4: column {c + 1} has {len(text)} stones; at most 6 fit")
        for r, ch in enumerate(text.upper()):
            if ch == "X":
                p0 |= 1 << (H1 * c + r)
            elif ch == "O":
                p1 |= 1 << (H1 * c + r)
            else:
                raise BoardRLError(f"connect4: column {c + 1}: stone {ch!r} is not X or O")
    return from_absolute(p0, p1)


def from_uci_cells(cells: str | Sequence[str]) -> Connect4State:
    """A state from the 42 UCI cells (``x``/``o``/``b`` in order a1..a6, b1..b6, ..., g1..g6).

    ``cells`` is either a sequence of 42 one-letter strings or the comma-separated text of them (a UCI row
    without its label).  ``x`` is player 0.
    """
    seq = cells.split(",") if isinstance(cells, str) else list(cells)
    if len(seq) != CELLS:
        raise NotationError(f"connect4: a UCI position has 42 cells (a1..g6), got {len(seq)}")
    p0 = p1 = 0
    for i, v in enumerate(seq):
        bit = 1 << (H1 * (i // ROWS) + i % ROWS)
        v = v.strip()
        if v == "x":
            p0 |= bit
        elif v == "o":
            p1 |= bit
        elif v != "b":
            raise NotationError(f"connect4: UCI cell {UCI_CELLS[i]} is {v!r}; cells are x, o or b")
    return from_absolute(p0, p1)


def to_uci_cells(state: Connect4State) -> str:
    """The 42 comma-separated UCI cells of ``state`` (inverse of ``from_uci_cells``)."""
    p0, p1 = to_absolute(state)
    out = []
    for c in range(COLS):
        for r in range(ROWS):
            b = H1 * c + r
            out.append("x" if (p0 >> b) & 1 else "o" if (p1 >> b) & 1 else "b")
    return ",".join(out)


# ---------------------------------------------------------------------------------------------- the game
class Connect4(DigitNotation, Game):
    """Connect 4 on the Tromp bitboard; see the module docstring for the state layout and notation."""

    game_id = "connect4"
    descriptor = GameDescriptor(title="Connect 4", notation="column 1-7 (1 = leftmost)", example="4453",
                                board="columns", referee="boardrl.solvers.connect4:Connect4Referee", has_referee=True)
    move_noun = "columns 1-7 written as digits (1 = leftmost), e.g. '4453'"
    num_actions = COLS
    state_type = Connect4State
    encoding_shape = (2, ROWS, COLS)

    def initial_state(self) -> Connect4State:
        return Connect4State(0, 0, 0)

    def legal_moves(self, state: Connect4State) -> np.ndarray:
        """Read-only mask of the legal columns (shared between calls; see ``Game.legal_moves``)."""
        memo = self._memo
        if state is memo[0]:
            return _LEGAL_MASKS[memo[1]]
        return _LEGAL_MASKS[legal_columns(state[0], state[1], state[2])]

    def play(self, state: Connect4State, move: int) -> Connect4State:
        """``Game.play`` in one compiled call; errors name the column and the legal columns.

        The successor's legal columns come back from the same call and are kept in ``_memo`` for
        ``legal_moves``; a state this game returned is trusted (base module docstring, "Scalar speed").
        """
        if type(move) is int and 0 <= move < COLS:
            if state is self._memo[0]:
                t, cols = _play_trusted(state, move)
            else:
                if type(state) is not Connect4State:
                    self.check_state(state)
                t, cols = play_checked(state[0], state[1], state[2], move)
            if cols >= 0:
                nxt = _new_state(Connect4State, t)
                self._memo = (nxt, cols)
                return nxt
        elif isinstance(move, np.integer) and 0 <= move < COLS:
            return self.play(state, int(move))
        if type(state) is not Connect4State:
            self.check_state(state)
        self._raise_illegal(state, move)

    def _raise_illegal(self, state: Connect4State, move: object) -> NoReturn:
        cols = legal_columns(state[0], state[1], state[2])
        legal = f"legal columns: {_columns_text(cols)}"
        if status(state[0], state[1], state[2]) != -1:
            shown = f"column {int(move) + 1}" if _is_action(move) else repr(move)
            raise IllegalMoveError(f"connect4: move {shown} is illegal: the game is over")
        if not _is_action(move):
            raise IllegalMoveError(f"connect4: action {move!r} is not a column (actions 0-6); {legal}")
        raise IllegalMoveError(f"connect4: column {int(move) + 1} is full; {legal}")

    def _apply(self, state: Connect4State, move: int) -> Connect4State:
        return tuple.__new__(Connect4State, apply(state[0], state[1], state[2], move))

    def to_move(self, state: Connect4State) -> int:
        return state[2] & 1

    def is_over(self, state: Connect4State) -> bool:
        return status(state[0], state[1], state[2]) != -1

    def returns(self, state: Connect4State) -> tuple[float, float]:
        s = status(state[0], state[1], state[2])
        return (1.0, -1.0) if s == 0 else (-1.0, 1.0) if s == 1 else (0.0, 0.0)

    def encode(self, state: Connect4State) -> np.ndarray:
        """float32 (2, 6, 7): plane 0 = stones of the player to move, plane 1 = opponent; row index 0 = bottom."""
        out = np.zeros(self.encoding_shape, dtype=np.float32)
        encode_into(state[0], state[1], out)
        return out

    def encode_batch(self, states: np.ndarray) -> np.ndarray:
        """``encode`` for every row of an (N, 3) state array: float32 (N, 2, 6, 7)."""
        out = np.zeros((states.shape[0],) + self.encoding_shape, dtype=np.float32)
        batch_encode(np.ascontiguousarray(states, dtype=np.int64), out)
        return out

    def symmetries(self, state: Connect4State) -> list[tuple[Connect4State, np.ndarray]]:
        """Identity and the left-right mirror (action c -> 6 - c)."""
        return [(state, np.arange(COLS)), (mirror_state(state), MIRROR_ACTIONS.copy())]

    def symmetries_batch(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(2, N, 3) images (identity, mirror) and (2, 7) action maps, in the order of ``symmetries``."""
        rows = np.ascontiguousarray(states, dtype=np.int64)
        images = np.stack([rows, batch_mirror(rows)])
        return images, np.stack([np.arange(COLS, dtype=np.int64), MIRROR_ACTIONS])

    def decided_values_batch(self, states: np.ndarray) -> np.ndarray:
        """+1 / -1 / 0 per unfinished row: the mover wins now / cannot stop a win next move / neither."""
        rows = np.ascontiguousarray(states, dtype=np.int64)
        out = np.empty(rows.shape[0], dtype=np.float32)
        batch_decided_values(rows, out)
        return out

    def state_key(self, state: Connect4State) -> int:
        """``current + mask``: unique because per column it lies in [2^h - 1, 2^(h+1) - 2] for h stones."""
        return state[0] + state[1]

    def state_keys_batch(self, states: np.ndarray) -> np.ndarray:
        return batch_keys(np.ascontiguousarray(states, dtype=np.int64))

    def winning_moves(self, state: Connect4State) -> list[int]:
        """Columns where the player to move completes a four right now (empty when the game is over)."""
        if self.is_over(state):
            return []
        cols = winning_columns(state[0], state[1])
        return [c for c in range(COLS) if (cols >> c) & 1]

    def render(self, state: Connect4State) -> str:
        """Six rows top-down, X = player 0, O = player 1, '.' = empty, then the column numbers 1-7."""
        p0, p1 = to_absolute(state)
        lines = []
        for r in range(ROWS - 1, -1, -1):
            cells = []
            for c in range(COLS):
                b = H1 * c + r
                cells.append("X" if (p0 >> b) & 1 else "O" if (p1 >> b) & 1 else ".")
            lines.append(" ".join(cells))
        lines.append(" ".join(str(c + 1) for c in range(COLS)))
        return "\n".join(lines)

    def batched(self, n: int, auto_reset: bool = True) -> "BatchedConnect4":
        return BatchedConnect4(self, n, auto_reset)

    def legal_mask_batch(self, states: np.ndarray) -> np.ndarray:
        out = np.zeros((states.shape[0], COLS), dtype=np.bool_)
        batch_legal(states, out)
        return out

    def to_move_batch(self, states: np.ndarray) -> np.ndarray:
        return (states[:, 2] & 1).astype(np.int8)


class BatchedConnect4(BatchedGame):
    """N Connect 4 games on an (N, 3) int64 array of ``(current, mask, plies)`` rows."""

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        finished = np.zeros(self.n, dtype=np.bool_)
        rets = np.zeros((self.n, 2), dtype=np.float32)
        acts = np.asarray(actions, dtype=np.int64)
        if acts.shape != (self.n,):
            raise IllegalMoveError(f"connect4: expected {self.n} actions, got shape {acts.shape}")
        bad = batch_step(self.states, acts, self.auto_reset, finished, rets, self.final_states)
        if bad >= 0:
            row = self.states[bad]
            cols = legal_columns(row[0], row[1], row[2])
            raise IllegalMoveError(
                f"connect4: illegal action {int(acts[bad])} in batch row {bad}; legal actions there: "
                + (" ".join(str(c) for c in range(COLS) if (cols >> c) & 1) or "none")
                + " (actions are columns 0-6)"
            )
        return finished, rets


__all__ = [
    "BOARD", "BOTTOM", "CELLS", "COLS", "ROWS", "Connect4", "BatchedConnect4", "Connect4State", "apply",
    "batch_keys", "batch_mirror", "from_absolute", "from_columns", "from_uci_cells", "has_four", "legal_bits",
    "legal_columns", "mirror_bits", "mirror_state", "play_checked", "playable_cells", "status", "to_absolute",
    "to_uci_cells", "try_apply", "winning_cells", "winning_columns",
]
