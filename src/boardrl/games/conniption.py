"""Conniption: Connect 4 (7 columns x 6 rows) where either player may turn the board upside down.

Rules (seed 004, SEEDS.md; player 0 = X moves first):

* A turn is three stage-moves: stage 0 ``flip`` or ``none``; stage 1 ``place`` in a column with fewer than 6
  pieces; stage 2 ``flip`` or ``none``.  The turn passes after stage 2.
* A flip turns the board upside down and every column falls: each column's stack is reversed and re-anchored
  at the bottom, columns keep their index (no left-right mirror).
* Each player may flip at most 4 times per game, and never right after a flip by either player (so after the
  opponent's post-place flip you cannot flip pre-place; flipping both before and after your own placement is
  allowed because the placement sits in between).
* End: after a place, the placer wins if the piece completes a four; otherwise, once 42 pieces are placed the
  game is a draw at once (no post-place flip).  After a flip the whole board is scanned: a four of the
  flipper wins for the flipper (priority), else a four of the opponent wins for the opponent.  After ``none``
  nothing is checked.  A game can thus end mid-turn.

Deliberate fix of a seed bug: the seed's code tests the 42-piece draw *before* the win test, so a four made
with the 42nd piece is scored as a draw.  This engine follows the real rule (that four wins).  For faithful
reproduction of the seed's numbers, ``Conniption(seed_draw_rule=True)`` applies the seed's order instead.

Actions: a fixed space of 9 whose legality depends on the stage: 0..6 = place in column 1..7, 7 = flip,
8 = none.

State: ``ConniptionState`` (all ints, also the int64 row of the batched array):
``p0`` bitboard of player 0's pieces and ``mask`` bitboard of all pieces, both in the usual 7-bit-per-column
layout (bit ``7*col + row``, row 0 = bottom, bit 6 of each column always 0); ``stage`` 0/1/2; ``flips0`` and
``flips1`` flips used so far; ``last_flip`` 1 when the previous stage-move (by either player) was a flip;
``player`` to move; ``status`` -1 running, 0 or 1 the winner, 2 draw.  The orientation of the physical board
is not stored: it does not affect the rules and equals the parity of ``flips0 + flips1`` (``is_down``).

Notation: one character per stage-move: ``f`` flip, ``n`` none, ``1``-``7`` place in that column.  A move
string is such characters, with optional spaces or commas, e.g. ``"n4n f3n"`` (X: none, place 4, none; O:
flip, place 3, none).  ``format_moves`` groups the characters three by three (one turn per group, assuming the
sequence starts at a stage 0).

Encoding: ``(8, 6, 7)`` float32 planes from the view of the player to move, row 0 = the top row as rendered:
own pieces, opponent pieces, stage 0/1/2 one-hot (3 planes), own flips left / 4, opponent flips left / 4,
and 1 everywhere when the previous stage-move was a flip (so no flip is allowed now).
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np
from numba import njit

from boardrl.games._kernels import BOOLEAN, INT64, set_returns, trusted_entry_on_first_call, tuple_of
from boardrl.errors import BoardRLError
from boardrl.games.base import BatchedGame, Game, GameDescriptor, IllegalMoveError, NotationError

COLS = 7
ROWS = 6
CELLS = COLS * ROWS
MAX_FLIPS = 4
FLIP = 7
NONE = 8
NUM_ACTIONS = 9
RUNNING, DRAW = -1, 2

BOTTOM = np.array([1 << (7 * c) for c in range(COLS)], dtype=np.int64)
TOP = np.array([1 << (7 * c + ROWS - 1) for c in range(COLS)], dtype=np.int64)
COLUMN = np.array([((1 << ROWS) - 1) << (7 * c) for c in range(COLS)], dtype=np.int64)


def _reversal_table() -> np.ndarray:
    """REV[h, x]: the low ``h`` bits of the 6-bit pattern ``x`` in reverse order (a column of height h, flipped).

    Why a table: a flip is then 7 lookups, one per column, instead of a loop over 42 cells.
    """
    rev = np.zeros((ROWS + 1, 1 << ROWS), dtype=np.int64)
    for h in range(ROWS + 1):
        for x in range(1 << ROWS):
            y = 0
            for r in range(h):
                if x >> r & 1:
                    y |= 1 << (h - 1 - r)
            rev[h, x] = y
    return rev


REV = _reversal_table()
#: HEIGHT[pattern] for the 6-bit occupancy pattern of a column (always 2**h - 1 in legal states).
HEIGHT = np.array([bin(x).count("1") for x in range(1 << ROWS)], dtype=np.int64)


class ConniptionState(NamedTuple):
    p0: int
    mask: int
    stage: int
    flips0: int
    flips1: int
    last_flip: int
    player: int
    status: int


INITIAL = ConniptionState(0, 0, 0, 0, 0, 0, 0, RUNNING)


# ---------------------------------------------------------------------------------------------- kernels
@njit(cache=True)
def popcount64(x: int) -> int:
    """Set bits of a non-negative int64 in constant time (SWAR), for piece counts in the hot path."""
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return ((x * 0x0101010101010101) >> 56) & 0xFF


@njit(cache=True)
def has_four(b: int) -> bool:
    """True when the bitboard ``b`` contains four in a row (vertical, horizontal or diagonal)."""
    for s in (1, 7, 6, 8):
        m = b & (b >> s)
        if m & (m >> (2 * s)):
            return True
    return False


@njit(cache=True)
def flip_board(p0: int, mask: int) -> int:
    """Player 0's bitboard after turning the board over; ``mask`` is unchanged because every column falls."""
    out = 0
    for c in range(COLS):
        sh = 7 * c
        h = HEIGHT[(mask >> sh) & 63]
        out |= REV[h, (p0 >> sh) & 63] << sh
    return out


@njit(cache=True)
def legal_bits(p0: int, mask: int, stage: int, flips0: int, flips1: int, last_flip: int, player: int,
               status: int) -> int:
    """Bit a set for each legal action a (0..8); 0 once the game is over."""
    if status != RUNNING:
        return 0
    if stage == 1:
        bits = 0
        for c in range(COLS):
            if mask & TOP[c] == 0:
                bits |= 1 << c
        return bits
    used = flips0 if player == 0 else flips1
    bits = 1 << NONE
    if last_flip == 0 and used < MAX_FLIPS:
        bits |= 1 << FLIP
    return bits


@njit(cache=True)
def apply(p0: int, mask: int, stage: int, flips0: int, flips1: int, last_flip: int, player: int, status: int,
          action: int, seed_draw_rule: bool):
    """The successor state tuple; ``action`` must be legal.  The one rule kernel of scalar and batched play."""
    if stage == 1:
        new = (mask + BOTTOM[action]) & COLUMN[action] & ~mask
        mask |= new
        if player == 0:
            p0 |= new
        mine = p0 if player == 0 else mask ^ p0
        full = popcount64(mask) == CELLS
        if seed_draw_rule and full:
            status = DRAW  # the seed's order: the 42nd piece always draws, even when it makes a four
        elif has_four(mine):
            status = player
        elif full:
            status = DRAW
        return p0, mask, 2, flips0, flips1, 0, player, status
    if action == FLIP:
        p0 = flip_board(p0, mask)
        if player == 0:
            flips0 += 1
        else:
            flips1 += 1
        mine = p0 if player == 0 else mask ^ p0
        theirs = mask ^ mine
        if has_four(mine):
            status = player
        elif has_four(theirs):
            status = 1 - player
        last_flip = 1
    else:
        last_flip = 0
    if stage == 2:
        return p0, mask, 0, flips0, flips1, last_flip, 1 - player, status
    return p0, mask, 1, flips0, flips1, last_flip, player, status


@njit(cache=True)
def turn_reaches(p0, mask, stage, f0, f1, lf, player, status, me, seed_rule, safe) -> bool:
    """Whether ``me`` (to move, or the game already over) has stage-moves to the end of this turn that win
    (``safe`` false), or (``safe`` true) that neither lose nor leave the opponent a win in their next turn.

    One recursion for both questions: at the end of ``me``'s turn a safe line asks the win question for the
    opponent.  ``safe`` is always passed as ``np.bool_(...)`` or a variable, never a bare ``True``/``False``: a
    literal would compile a second signature of this recursive kernel (numba #6713; see ``root_values`` in
    agents/conniption.py).
    """
    if status != RUNNING:
        return status != 1 - me if safe else status == me
    if player != me:  # ``me``'s turn is over: safe when the opponent cannot win in theirs
        return safe and not turn_reaches(
            p0, mask, stage, f0, f1, lf, player, status, player, seed_rule, np.bool_(False)
        )
    bits = legal_bits(p0, mask, stage, f0, f1, lf, player, status)
    for a in range(NUM_ACTIONS):
        if (bits >> a) & 1:
            t = apply(p0, mask, stage, f0, f1, lf, player, status, a, seed_rule)
            if turn_reaches(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], me, seed_rule, safe):
                return True
    return False


@njit(cache=True)
def play_checked(p0: int, mask: int, stage: int, flips0: int, flips1: int, last_flip: int, player: int,
                 status: int, action: int, seed_draw_rule: bool):
    """``(successor, its legal-action bits)`` when ``action`` is legal, else ``(state, -1)``.

    The scalar ``play`` in one compiled call; ``legal_moves`` of the successor reads the bits from the memo.
    """
    if action < 0 or action >= NUM_ACTIONS or not (
        legal_bits(p0, mask, stage, flips0, flips1, last_flip, player, status) >> action
    ) & 1:
        return (p0, mask, stage, flips0, flips1, last_flip, player, status), -1
    t = apply(p0, mask, stage, flips0, flips1, last_flip, player, status, action, seed_draw_rule)
    return t, legal_bits(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7])


@njit(cache=True)
def play_state(state, action: int, seed_draw_rule: bool):
    """``play_checked`` of a whole state tuple: for the trusted entry point, one argument is cheaper than eight."""
    return play_checked(state[0], state[1], state[2], state[3], state[4], state[5], state[6], state[7], action,
                        seed_draw_rule)


#: ``play_state`` for the states this game's ``play`` returned: its compiled entry point (``_kernels``).
_play_trusted = trusted_entry_on_first_call(
    globals(), "_play_trusted", play_state, tuple_of(INT64, 8), INT64, BOOLEAN
)


@njit(cache=True)
def batch_legal(states: np.ndarray, out: np.ndarray) -> None:
    for i in range(states.shape[0]):
        s = states[i]
        bits = legal_bits(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7])
        for a in range(NUM_ACTIONS):
            out[i, a] = (bits >> a) & 1


@njit(cache=True)
def batch_step(states, actions, auto_reset, seed_draw_rule, finished, rets, finals) -> int:
    """Apply actions row-wise; returns the first row with an illegal action (nothing applied then), or -1."""
    n = states.shape[0]
    for i in range(n):
        s = states[i]
        if s[7] != RUNNING:
            continue
        a = actions[i]
        if a < 0 or a >= NUM_ACTIONS or not (legal_bits(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]) >> a) & 1:
            return i
    for i in range(n):
        finished[i] = False
        rets[i, 0] = 0.0
        rets[i, 1] = 0.0
        s = states[i]
        if s[7] != RUNNING:
            continue
        t = apply(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], actions[i], seed_draw_rule)
        st = t[7]
        if st != RUNNING:
            finished[i] = True
            set_returns(rets, i, st)
            for k in range(8):
                finals[i, k] = t[k]
            if auto_reset:
                for k in range(8):
                    states[i, k] = 0
                states[i, 7] = RUNNING
                continue
        for k in range(8):
            states[i, k] = t[k]
    return -1


@njit(cache=True)
def batch_decided_values(states: np.ndarray, seed_rule: bool, out: np.ndarray) -> None:
    """``Conniption.decided_values_batch``: +1 where the mover has stage-moves that win before its turn ends,
    -1 where no line of its turn is safe (each loses during the turn or leaves the opponent a winning turn)."""
    for i in range(states.shape[0]):
        r = states[i]
        me = r[6]
        if turn_reaches(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], me, seed_rule, np.bool_(False)):
            out[i] = 1.0
        elif not turn_reaches(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], me, seed_rule, np.bool_(True)):
            out[i] = -1.0
        else:
            out[i] = 0.0


@njit(cache=True)
def batch_encode(states: np.ndarray, out: np.ndarray) -> None:
    """Fill ``out`` (N, 8, 6, 7) with the planes described in the module docstring."""
    for i in range(states.shape[0]):
        p0, mask, stage, f0, f1, lastf, player = (states[i, 0], states[i, 1], states[i, 2], states[i, 3],
                                                  states[i, 4], states[i, 5], states[i, 6])
        own = p0 if player == 0 else mask ^ p0
        opp = mask ^ own
        own_left = (MAX_FLIPS - (f0 if player == 0 else f1)) / MAX_FLIPS
        opp_left = (MAX_FLIPS - (f1 if player == 0 else f0)) / MAX_FLIPS
        for r in range(ROWS):
            for c in range(COLS):
                bit = 1 << (7 * c + r)
                y = ROWS - 1 - r
                out[i, 0, y, c] = 1.0 if own & bit else 0.0
                out[i, 1, y, c] = 1.0 if opp & bit else 0.0
                out[i, 2, y, c] = 1.0 if stage == 0 else 0.0
                out[i, 3, y, c] = 1.0 if stage == 1 else 0.0
                out[i, 4, y, c] = 1.0 if stage == 2 else 0.0
                out[i, 5, y, c] = own_left
                out[i, 6, y, c] = opp_left
                out[i, 7, y, c] = 1.0 if lastf else 0.0


@njit(cache=True)
def batch_to_move(states: np.ndarray) -> np.ndarray:
    out = np.empty(states.shape[0], dtype=np.int8)
    for i in range(states.shape[0]):
        out[i] = states[i, 6]
    return out


def mirror_bits(b: int) -> int:
    """The bitboard reflected left-right (column c -> 6 - c)."""
    out = 0
    for c in range(COLS):
        out |= ((b >> (7 * c)) & 127) << (7 * (COLS - 1 - c))
    return out


_COLUMN_SHIFTS = 7 * np.arange(COLS, dtype=np.int64)


def mirror_bits_batch(b: np.ndarray) -> np.ndarray:
    """``mirror_bits`` of every entry of an (N,) int64 array of bitboards."""
    columns = (b[:, None] >> _COLUMN_SHIFTS) & 127
    return (columns << _COLUMN_SHIFTS[::-1]).sum(axis=1)


#: _ACTIONS[bits]: the legal actions of a legal-action bit set, as a tuple of Python ints.
_ACTIONS = tuple(tuple(a for a in range(NUM_ACTIONS) if (b >> a) & 1) for b in range(1 << NUM_ACTIONS))
#: _MASKS[bits]: the boolean action mask of a legal-action bit set (saves building it per call); read-only.
_MASKS = np.array([[(b >> a) & 1 for a in range(NUM_ACTIONS)] for b in range(1 << NUM_ACTIONS)], dtype=bool)
_MASKS.setflags(write=False)
#: Its rows (read-only views) in a list, handed out by ``legal_moves`` as they are: indexing a list is cheaper.
_MASK_ROWS = list(_MASKS)
_new_state = tuple.__new__
MIRROR_ACTIONS = np.array([6, 5, 4, 3, 2, 1, 0, FLIP, NONE], dtype=np.int64)


# ---------------------------------------------------------------------------------------------- the game
class Conniption(Game):
    """Conniption rules; ``seed_draw_rule=True`` reproduces the seed's draw-before-win order (see module doc)."""

    game_id = "conniption"
    descriptor = GameDescriptor(title="Conniption", notation="`f` flip, `n` none, `1`-`7` (a comma between turns)",
                                example="n4n,f3n", board="conniption")  # no exact referee: the game is too big
    num_actions = NUM_ACTIONS
    state_type = ConniptionState
    encoding_shape = (8, ROWS, COLS)

    def __init__(self, seed_draw_rule: bool = False) -> None:
        if not isinstance(seed_draw_rule, (bool, np.bool_)):
            raise BoardRLError(f"conniption: seed_draw_rule must be True or False, got {seed_draw_rule!r}")
        self.seed_draw_rule = bool(seed_draw_rule)

    # ------------------------------------------------------------------ rules
    def initial_state(self) -> ConniptionState:
        return INITIAL

    def legal_moves(self, state: ConniptionState) -> np.ndarray:
        """Read-only mask of the legal stage-moves (shared between calls; see ``Game.legal_moves``)."""
        memo = self._memo
        if state is memo[0]:
            return _MASK_ROWS[memo[1]]
        self.check_state(state)
        return _MASK_ROWS[legal_bits(*state)]

    def legal_actions(self, state: ConniptionState) -> list[int]:
        memo = self._memo
        if state is memo[0]:
            return list(_ACTIONS[memo[1]])
        self.check_state(state)
        return list(_ACTIONS[legal_bits(*state)])

    def play(self, state: ConniptionState, move: int) -> ConniptionState:
        """As ``Game.play``, in one compiled call for an int move (the base class words the errors).

        The successor's legal actions come back from the same call and are kept in ``_memo`` for
        ``legal_moves``; a state this game returned is trusted (base module docstring, "Scalar speed").
        """
        if type(move) is int and 0 <= move < NUM_ACTIONS:
            if state is self._memo[0]:
                t, bits = _play_trusted(state, move, self.seed_draw_rule)
            elif type(state) is ConniptionState:
                t, bits = play_checked(*state, move, self.seed_draw_rule)
            else:
                return super().play(state, move)  # WrongGameError
            if bits >= 0:
                nxt = _new_state(ConniptionState, t)
                self._memo = (nxt, bits)
                return nxt
        return super().play(state, move)

    def _apply(self, state: ConniptionState, move: int) -> ConniptionState:
        return ConniptionState(*apply(*state, move, self.seed_draw_rule))

    def to_move(self, state: ConniptionState) -> int:
        return state.player

    def is_over(self, state: ConniptionState) -> bool:
        return state.status != RUNNING

    def returns(self, state: ConniptionState) -> tuple[float, float]:
        s = state.status
        return (1.0, -1.0) if s == 0 else (-1.0, 1.0) if s == 1 else (0.0, 0.0)

    @staticmethod
    def is_down(state: ConniptionState) -> bool:
        """Whether the physical board is upside down (odd number of flips so far); the seed keys tables on it."""
        return (state.flips0 + state.flips1) % 2 == 1

    @staticmethod
    def pieces(state: ConniptionState) -> int:
        return int(popcount64(state.mask))

    def flips_left(self, state: ConniptionState, player: int) -> int:
        return MAX_FLIPS - (state.flips0 if player == 0 else state.flips1)

    # ------------------------------------------------------------------ views
    def encode(self, state: ConniptionState) -> np.ndarray:
        self.check_state(state)
        return self.encode_batch(np.asarray([state], dtype=np.int64))[0]

    def encode_batch(self, states: np.ndarray) -> np.ndarray:
        """(N, 8, 6, 7) float32 planes for an (N, 8) int64 array of state rows (numba kernel).

        The planes are the module docstring's, from the view of each row's player to move; ``encode`` is this
        kernel on one checked row.
        """
        out = np.empty((states.shape[0],) + self.encoding_shape, dtype=np.float32)
        batch_encode(np.ascontiguousarray(states, dtype=np.int64), out)
        return out

    def symmetries(self, state: ConniptionState) -> list[tuple[ConniptionState, np.ndarray]]:
        """Identity and the left-right mirror (flips act per column, so they commute with the mirror)."""
        self.check_state(state)
        mirrored = state._replace(p0=mirror_bits(state.p0), mask=mirror_bits(state.mask))
        return [(state, np.arange(NUM_ACTIONS)), (mirrored, MIRROR_ACTIONS.copy())]

    def symmetries_batch(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(2, N, 8) images (identity, mirror) and (2, 9) action maps, in the order of ``symmetries``.

        Only the two bitboards move; stage, flip counts, player and status are mirror-invariant.
        """
        rows = np.asarray(states, dtype=np.int64)
        mirrored = rows.copy()
        mirrored[:, 0] = mirror_bits_batch(rows[:, 0])
        mirrored[:, 1] = mirror_bits_batch(rows[:, 1])
        return np.stack([rows, mirrored]), np.stack([np.arange(NUM_ACTIONS, dtype=np.int64), MIRROR_ACTIONS])

    def decided_values_batch(self, states: np.ndarray) -> np.ndarray:
        """+1 / -1 / 0 per unfinished row: the mover wins within its turn / has no safe line / neither (the
        questions of the ``tactical`` agent, ``turn_reaches``)."""
        rows = np.ascontiguousarray(states, dtype=np.int64)
        out = np.empty(rows.shape[0], dtype=np.float32)
        batch_decided_values(rows, self.seed_draw_rule, out)
        return out

    def state_key(self, state: ConniptionState) -> int:
        """Unique int < 2**62: p0 + mask identifies the board (7-bit columns), then the small fields."""
        s = state
        key = s.p0 + s.mask
        for v, w in ((s.stage, 2), (s.flips0, 3), (s.flips1, 3), (s.last_flip, 1), (s.player, 1),
                     (s.status + 1, 2)):
            key = (key << w) | v
        return key

    def render(self, state: ConniptionState) -> str:
        self.check_state(state)
        lines = [" ".join(str(c + 1) for c in range(COLS))]
        for r in range(ROWS - 1, -1, -1):
            row = []
            for c in range(COLS):
                bit = 1 << (7 * c + r)
                row.append("X" if state.p0 & bit else "O" if state.mask & bit else ".")
            lines.append(" ".join(row))
        left = f"flips left X {self.flips_left(state, 0)}, O {self.flips_left(state, 1)}"
        if state.status == RUNNING:
            what = ("flip or none", "place", "flip or none")[state.stage]
            extra = " (no flip: the last stage-move was a flip)" if state.last_flip and state.stage != 1 else ""
            lines.append(f"{'XO'[state.player]} to move, stage {state.stage}: {what}{extra}; {left}")
        else:
            result = "draw" if state.status == DRAW else f"{'XO'[state.status]} wins"
            lines.append(f"game over: {result}; {left}")
        return "\n".join(lines)

    # ------------------------------------------------------------------ notation
    def format_move(self, move: int) -> str:
        m = int(move)
        if m == FLIP:
            return "f"
        if m == NONE:
            return "n"
        if 0 <= m < COLS:
            return str(m + 1)
        raise NotationError(
            f"conniption: no stage-move for action {move!r}; actions are 0-6 (place), 7 (flip), 8 (none)"
        )

    def parse_move(self, text: str) -> int:
        t = str(text).strip().lower()
        if t == "f":
            return FLIP
        if t == "n":
            return NONE
        if len(t) == 1 and t in "1234567":
            return int(t) - 1
        raise NotationError(
            f"conniption: bad stage-move {text!r}; stage-moves are f (flip), n (none), 1-7 (place in column)"
        )

    def parse_moves(self, text: str) -> list[int]:
        if not isinstance(text, str):
            raise NotationError(f"conniption: a move string must be text, got {type(text).__name__}")
        return [self.parse_move(ch) for ch in text if ch not in " ,"]

    def format_moves(self, moves: Sequence[int]) -> str:
        chars = "".join(self.format_move(m) for m in moves)
        return " ".join(chars[i:i + 3] for i in range(0, len(chars), 3))

    # ------------------------------------------------------------------ batched
    def batched(self, n: int, auto_reset: bool = True) -> "BatchedConniption":
        return BatchedConniption(self, n, auto_reset)

    def legal_mask_batch(self, states: np.ndarray) -> np.ndarray:
        out = np.zeros((states.shape[0], NUM_ACTIONS), dtype=np.bool_)
        batch_legal(states, out)
        return out

    def to_move_batch(self, states: np.ndarray) -> np.ndarray:
        return batch_to_move(states)

    def __repr__(self) -> str:
        return f"Conniption(seed_draw_rule={self.seed_draw_rule})"


class BatchedConniption(BatchedGame):
    """N Conniption games; one ``step`` is one stage-move in every running game."""

    game: Conniption

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        finished = np.zeros(self.n, dtype=np.bool_)
        rets = np.zeros((self.n, 2), dtype=np.float32)
        acts = np.asarray(actions, dtype=np.int64)
        if acts.shape != (self.n,):
            raise IllegalMoveError(f"conniption: expected {self.n} actions, got shape {acts.shape}")
        bad = batch_step(self.states, acts, self.auto_reset, self.game.seed_draw_rule, finished, rets,
                         self.final_states)
        if bad >= 0:
            st = self.state(bad)
            legal = " ".join(str(a) for a in np.flatnonzero(self.game.legal_moves(st)))
            raise IllegalMoveError(
                f"conniption: illegal action {int(acts[bad])} in batch row {bad}; legal actions there: {legal}"
            )
        return finished, rets
