"""Dots and Boxes on any rows x cols of boxes, with the edge numbering and extra-turn rule of seed 001.

Geometry (R rows, C columns of boxes; (R+1) x (C+1) dots).  Seed 001 numbers a square board of side s; we use
the same formula with the number of columns C where it multiplies a row and C+1 where it counts dots in a row:

* horizontal edges ``row * C + col`` for line rows ``row = 0..R`` from the top and ``col = 0..C-1``;
  there are ``R_h = (R+1) * C`` of them;
* vertical edges ``R_h + r * (C+1) + c`` for box rows ``r = 0..R-1`` and dot columns ``c = 0..C``.

For R = C = s this is exactly seed 001's numbering (3x3: top row 0 1 2, verticals 12-15, row 3 4 5, ...).
Box ``(r, c)`` (index ``r * C + c``) has walls N = ``r*C + c``, S = ``(r+1)*C + c``,
E = ``R_h + r*(C+1) + c + 1`` and W = ``R_h + r*(C+1) + c``.

Rules: players alternate drawing one undrawn edge; an edge that completes one or two boxes scores them for
the mover, who then moves again; otherwise the turn passes.  The game ends when every edge is drawn; the higher
score wins (+1/0/-1; a draw needs an even number of boxes).

State: ``DotsAndBoxesState(edges, to_move, score0, score1)`` with ``edges`` a bitmask (bit e = edge e drawn).
Each board size has its own subclass of that NamedTuple (``game.state_type``, e.g. ``DotsAndBoxesState3x3``),
so a state of a 2x2 game handed to a 3x3 game is refused as a state of another game instead of being
silently reinterpreted.  Notation: edge numbers ``0..E-1``; a move string is numbers separated by spaces or
commas ("0 12 3").
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from boardrl.errors import BoardRLError
from boardrl.games._kernels import INT64, permute_bits_batch, trusted_entry_on_first_call, tuple_of
from boardrl.games.base import BatchedGame, Game, GameDescriptor, IllegalMoveError, NotationError, WrongGameError

#: Edge sets are int64 bitmasks, and bit ``E`` serves as the "no box" sentinel, so E <= 62.
MAX_EDGES = 62
#: The largest board the exact referee (``solvers/dots_and_boxes.py``) solves: its table has 2^edges int8 entries,
#: and 2^24 = 16 MiB fits 3x3 boxes, 2x4 (22 edges) and 1x7 (22 edges); 4x4 (40 edges) does not.
MAX_REFEREE_EDGES = 24


class DotsAndBoxesState(NamedTuple):
    edges: int  # bitmask of drawn edges
    to_move: int  # 0 or 1
    score0: int  # boxes completed by player 0
    score1: int  # boxes completed by player 1


_STATE_TYPES: dict[tuple[int, int], type] = {}


def _rebuild_state(rows: int, cols: int, fields: tuple[int, ...]) -> DotsAndBoxesState:
    """Unpickling hook: states of dynamically made per-size classes must survive process boundaries."""
    return state_type_for(rows, cols)(*fields)


def state_type_for(rows: int, cols: int) -> type:
    """The state class of a rows x cols board (one class per size, made once and shared)."""
    key = (rows, cols)
    if key not in _STATE_TYPES:

        def __reduce__(self):  # noqa: N807 - pickle protocol
            return (_rebuild_state, (rows, cols, tuple(int(v) for v in self)))

        _STATE_TYPES[key] = type(
            f"DotsAndBoxesState{rows}x{cols}",
            (DotsAndBoxesState,),
            {"__slots__": (), "rows": rows, "cols": cols, "__reduce__": __reduce__, "__module__": __name__},
        )
    return _STATE_TYPES[key]


# ---------------------------------------------------------------------------------------------- kernels
@njit(cache=True)
def legal_edges(edges: int, full: int) -> int:
    """Bit set of the legal moves: the undrawn edges (none once every edge of ``full`` is drawn)."""
    return full & ~edges


@njit(cache=True)
def completed_walls(edges: int, walls0: int, walls1: int) -> int:
    """How many of the two wall sets ``walls0``, ``walls1`` (an edge's adjacent boxes) ``edges`` completes."""
    k = 0
    if edges & walls0 == walls0:
        k += 1
    if edges & walls1 == walls1:
        k += 1
    return k


@njit(cache=True)
def completed_by(edges: int, e: int, edge_box_masks: np.ndarray) -> int:
    """How many boxes edge ``e`` completes in the edge set ``edges`` (which already contains ``e``).

    ``edge_box_masks[e]`` holds the 4 walls of each box next to ``e``, or the unreachable sentinel bit E.
    """
    return completed_walls(edges, edge_box_masks[e, 0], edge_box_masks[e, 1])


@njit(cache=True)
def apply_walls(edges: int, to_move: int, s0: int, s1: int, e: int, walls0: int, walls1: int) -> tuple:
    """``apply`` with the wall sets of ``e``'s two boxes given (``edge_box_masks[e]``): the one rule kernel."""
    edges |= np.int64(1) << e
    k = completed_walls(edges, walls0, walls1)
    if k == 0:
        to_move = 1 - to_move
    elif to_move == 0:
        s0 += k
    else:
        s1 += k
    return edges, to_move, s0, s1


@njit(cache=True)
def apply(edges: int, to_move: int, s0: int, s1: int, e: int, edge_box_masks: np.ndarray) -> tuple:
    """Draw edge ``e``; the mover scores completed boxes and keeps the turn, otherwise the turn passes."""
    return apply_walls(edges, to_move, s0, s1, e, edge_box_masks[e, 0], edge_box_masks[e, 1])


@njit(cache=True)
def play_checked(edges: int, to_move: int, s0: int, s1: int, e: int, walls0: int, walls1: int, full: int) -> tuple:
    """``(successor, its legal edges)`` when edge ``e`` is legal, else ``((0, 0, 0, 0), -1)``.

    The scalar ``play`` in one compiled call, with int arguments only (passing an array into numba costs more
    than these rules): the caller passes ``edge_box_masks[e]`` as ``walls0, walls1``.  ``legal_moves`` of the
    successor reads the returned bits from the game's memo.
    """
    if e < 0 or e >= 63 or not (legal_edges(edges, full) >> e) & 1:
        return (np.int64(0), np.int64(0), np.int64(0), np.int64(0)), np.int64(-1)
    t = apply_walls(edges, to_move, s0, s1, e, walls0, walls1)
    return t, legal_edges(t[0], full)


@njit(cache=True)
def count_completed(edges: int, box_masks: np.ndarray) -> int:
    """Number of boxes with all four walls drawn (used to check that a state's scores add up)."""
    n = 0
    for m in box_masks:
        if edges & m == m:
            n += 1
    return n


@njit(cache=True)
def play_state(state: tuple, edge: tuple) -> tuple:
    """``play_checked`` of a whole state tuple and ``edge = (e, walls0, walls1, full)``, for the trusted entry
    point: two tuple arguments are cheaper than eight ints."""
    return play_checked(state[0], state[1], state[2], state[3], edge[0], edge[1], edge[2], edge[3])


#: ``play_state`` for the states this game's ``play`` returned: its compiled entry point (``_kernels``).
_play_trusted = trusted_entry_on_first_call(
    globals(), "_play_trusted", play_state, tuple_of(INT64, 4), tuple_of(INT64, 4)
)


@njit(cache=True)
def batch_legal(states: np.ndarray, full: int, num_edges: int, out: np.ndarray) -> None:
    for i in range(states.shape[0]):
        free = legal_edges(states[i, 0], full)
        for e in range(num_edges):
            out[i, e] = (free >> e) & 1


@njit(cache=True)
def batch_step(states, actions, auto_reset, finished, rets, finals, full, num_edges, edge_box_masks) -> int:
    """Apply actions row-wise; returns the first row with an illegal action (nothing applied then), or -1."""
    for i in range(states.shape[0]):
        edges = states[i, 0]
        a = actions[i]
        if edges != full and (a < 0 or a >= num_edges or not (legal_edges(edges, full) >> a) & 1):
            return i
    for i in range(states.shape[0]):
        finished[i] = False
        rets[i, 0] = 0.0
        rets[i, 1] = 0.0
        edges = states[i, 0]
        if edges == full:
            continue
        edges, to_move, s0, s1 = apply(edges, states[i, 1], states[i, 2], states[i, 3], actions[i], edge_box_masks)
        if edges == full:
            finished[i] = True
            if s0 > s1:
                rets[i, 0], rets[i, 1] = 1.0, -1.0
            elif s1 > s0:
                rets[i, 0], rets[i, 1] = -1.0, 1.0
            finals[i, 0], finals[i, 1], finals[i, 2], finals[i, 3] = edges, to_move, s0, s1
            if auto_reset:
                edges, to_move, s0, s1 = 0, 0, 0, 0
        states[i, 0], states[i, 1], states[i, 2], states[i, 3] = edges, to_move, s0, s1
    return -1


@njit(cache=True)
def map_edges(edges: int, perm: np.ndarray) -> int:
    """Image of an edge set under an edge permutation (``perm[e]`` = image of edge e)."""
    out = np.int64(0)
    for e in range(perm.shape[0]):
        if (edges >> e) & 1:
            out |= np.int64(1) << perm[e]
    return out


# ---------------------------------------------------------------------------------------------- scalar path helpers
#: ``legal_edges`` in Python (the same definition, not compiled) for states of any int size on the checked path.
_legal_edges_py = getattr(legal_edges, "py_func", legal_edges)
_BOOL = np.dtype(np.bool_)
_frombuffer = np.frombuffer
_new_state = tuple.__new__
#: A legal mask is made from the legal-edge bits by joining, for each 12-bit chunk, its bytes of 0/1 (little end
#: first) from a table, and reading the result as a bool array (read-only: bytes are immutable): the cheapest way
#: from a bit set to a numpy mask, about a fifth of the time of numpy's own bit unpacking.
_CHUNK = 12
_CHUNK_MASK = (1 << _CHUNK) - 1
_CHUNK_BITS = ((np.arange(1 << _CHUNK)[:, None] >> np.arange(_CHUNK)) & 1).astype(np.uint8)
#: _CHUNK_BYTES[b]: the 12-bit set ``b`` as 12 bytes.
_CHUNK_BYTES = [row.tobytes() for row in _CHUNK_BITS]
_MASK_TABLES: dict[int, tuple[list[bytes], list[bytes]]] = {}


def _mask_tables(num_edges: int) -> tuple[list[bytes], list[bytes]] | None:
    """``(low, high)`` byte tables for boards of at most 24 edges: ``low[b]`` is the 12-bit chunk ``b`` of edges
    0..11 and ``high[b]`` that of edges 12.., each only as long as the board has edges, so ``low + high`` is the
    whole mask and needs no trimming.  None for bigger boards (``legal_moves`` joins 12-bit chunks there)."""
    if num_edges > 2 * _CHUNK:
        return None
    if num_edges not in _MASK_TABLES:
        n_low, n_high = min(num_edges, _CHUNK), max(num_edges - _CHUNK, 0)
        low = _CHUNK_BYTES if n_low == _CHUNK else [row[:n_low].tobytes() for row in _CHUNK_BITS]
        high = _CHUNK_BYTES if n_high == _CHUNK else [row[:n_high].tobytes() for row in _CHUNK_BITS[: 1 << n_high]]
        _MASK_TABLES[num_edges] = (low, high)
    return _MASK_TABLES[num_edges]


def _joined_mask(free: int, num_edges: int) -> np.ndarray:
    """The mask of the bit set ``free`` on a board of more than 24 edges: its 12-bit chunks' bytes joined.

    A function of its own: a comprehension inside ``legal_moves`` would make ``free`` a closure cell there,
    allocated on every call of the hot path.
    """
    buf = b"".join([_CHUNK_BYTES[(free >> i) & _CHUNK_MASK] for i in range(0, num_edges, _CHUNK)])
    return _frombuffer(buf, _BOOL, num_edges)


# ---------------------------------------------------------------------------------------------- geometry
class Geometry:
    """Per-edge and per-box tables of one board size, built once in numpy and handed to the kernels."""

    def __init__(self, rows: int, cols: int) -> None:
        self.rows, self.cols = rows, cols
        self.num_h = (rows + 1) * cols
        self.num_edges = self.num_h + rows * (cols + 1)
        self.num_boxes = rows * cols
        if self.num_edges > MAX_EDGES:
            raise BoardRLError(
                f"dots_and_boxes_{rows}x{cols}: {self.num_edges} edges; at most {MAX_EDGES} fit the int64 edge mask"
            )
        #: box_edges[b] = (N, S, E, W) edge numbers of box b, the order of seed 001's wall tensor.
        self.box_edges = np.array(
            [
                [r * cols + c, (r + 1) * cols + c, self.num_h + r * (cols + 1) + c + 1, self.num_h + r * (cols + 1) + c]
                for r in range(rows)
                for c in range(cols)
            ],
            dtype=np.int64,
        ).reshape(self.num_boxes, 4)
        self.box_masks = np.array([sum(1 << int(e) for e in walls) for walls in self.box_edges], dtype=np.int64)
        #: edge_boxes[e] = the (up to two) boxes edge e borders, -1 for none.
        self.edge_boxes = np.full((self.num_edges, 2), -1, dtype=np.int64)
        for b, walls in enumerate(self.box_edges):
            for e in walls:
                slot = 0 if self.edge_boxes[e, 0] < 0 else 1
                self.edge_boxes[e, slot] = b
        sentinel = np.int64(1) << self.num_edges  # a bit no edge set contains: "no box here" never completes
        self.edge_box_masks = np.where(self.edge_boxes >= 0, self.box_masks[self.edge_boxes], sentinel)
        self.edge_box_masks = np.ascontiguousarray(self.edge_box_masks, dtype=np.int64)
        # Position of every edge and box on the (2R+1) x (2C+1) grid of dots, edges and box centres.
        self.edge_yx = np.array([self._edge_yx(e) for e in range(self.num_edges)], dtype=np.int64)
        self.box_yx = np.array([(2 * r + 1, 2 * c + 1) for r in range(rows) for c in range(cols)], dtype=np.int64)
        self.incidence = np.zeros((self.num_edges, self.num_boxes), dtype=np.float32)
        for b, walls in enumerate(self.box_edges):
            self.incidence[walls, b] = 1.0

    def _edge_yx(self, e: int) -> tuple[int, int]:
        if e < self.num_h:
            row, col = divmod(e, self.cols)
            return 2 * row, 2 * col + 1
        r, c = divmod(e - self.num_h, self.cols + 1)
        return 2 * r + 1, 2 * c

    def symmetry_maps(self) -> np.ndarray:
        """Edge permutations of the board's symmetries, identity first: 8 for square boards, 4 otherwise.

        Computed on the grid of dots and edges, so a symmetry maps each edge to the edge at the image position.
        """
        h, w = 2 * self.rows + 1, 2 * self.cols + 1
        at = {(int(y), int(x)): e for e, (y, x) in enumerate(self.edge_yx)}
        if self.rows == self.cols:
            transforms = []
            for k in range(8):
                def t(y: int, x: int, k: int = k) -> tuple[int, int]:
                    for _ in range(k % 4):  # rotate 90 degrees clockwise
                        y, x = x, h - 1 - y
                    return (y, w - 1 - x) if k >= 4 else (y, x)  # then mirror left-right
                transforms.append(t)
        else:
            transforms = [
                lambda y, x: (y, x),
                lambda y, x: (y, w - 1 - x),
                lambda y, x: (h - 1 - y, x),
                lambda y, x: (h - 1 - y, w - 1 - x),
            ]
        maps = [[at[t(int(y), int(x))] for y, x in self.edge_yx] for t in transforms]
        return np.array(maps, dtype=np.int64)


# ---------------------------------------------------------------------------------------------- the game
class DotsAndBoxes(Game):
    """Dots and Boxes on ``rows x cols`` boxes (seed 001 numbering; see the module docstring)."""

    def __init__(self, rows: int, cols: int) -> None:
        ints = all(isinstance(v, (int, np.integer)) for v in (rows, cols))
        if not (ints and rows >= 1 and cols >= 1):
            raise BoardRLError(f"dots_and_boxes: rows and cols must be positive integers, got {rows!r} x {cols!r}")
        geo = Geometry(int(rows), int(cols))
        self.rows, self.cols = int(rows), int(cols)
        self.geo = geo
        self.num_edges = geo.num_edges
        self.num_boxes = geo.num_boxes
        self.full = (1 << geo.num_edges) - 1
        self.game_id = f"dots_and_boxes_{self.rows}x{self.cols}"  # type: ignore[misc]
        self.num_actions = geo.num_edges  # type: ignore[misc]
        self.state_type = state_type_for(self.rows, self.cols)  # type: ignore[misc]
        #: Planes: drawn edges, undrawn edges, walls per box / 4, mover's score / boxes, opponent's / boxes,
        #: on the (2R+1) x (2C+1) grid of dots (even, even), edges and box centres (odd, odd).
        self.encoding_shape = (5, 2 * self.rows + 1, 2 * self.cols + 1)  # type: ignore[misc]
        self._bits = np.arange(geo.num_edges, dtype=np.int64)
        self._sym_maps = geo.symmetry_maps()
        #: ``_edge_args[e] = (e, walls0, walls1, full)``: edge ``e``'s arguments of ``play_checked`` as ints, the
        #: wall sets of its two boxes (``edge_box_masks[e]``) included, so no array crosses into numba per move.
        self._edge_args = [(e, int(m0), int(m1), self.full) for e, (m0, m1) in enumerate(geo.edge_box_masks)]
        self._mask_tables = _mask_tables(self.num_edges)
        self.descriptor = GameDescriptor(  # type: ignore[misc]
            title=f"Dots and Boxes {self.rows}x{self.cols}", notation="edge number (seed 001's numbering)",
            example="0,12,3", board="dots", referee="boardrl.solvers.dots_and_boxes:DotsAndBoxesReferee",
            has_referee=self.num_edges <= MAX_REFEREE_EDGES)

    def __reduce__(self):
        """Pickle by board size: the per-size state class is made at run time, so rebuild rather than copy."""
        return (DotsAndBoxes, (self.rows, self.cols))

    # ------------------------------------------------------------------ rules
    def initial_state(self) -> DotsAndBoxesState:
        return self.state_type(0, 0, 0, 0)

    def check_state(self, state: DotsAndBoxesState) -> None:
        """Type check (one class per board size) plus field ranges and scores that add up to the boxes drawn."""
        super().check_state(state)
        edges, to_move, s0, s1 = state
        if not (0 <= edges <= self.full and to_move in (0, 1) and s0 >= 0 and s1 >= 0):
            raise WrongGameError(f"{self.game_id}: malformed state {state!r} (edges must lie in 0..{self.full})")
        done = count_completed(edges, self.geo.box_masks)
        if s0 + s1 != done:
            raise WrongGameError(f"{self.game_id}: state {state!r} has scores {s0}+{s1} but {done} boxes complete")

    def legal_moves(self, state: DotsAndBoxesState) -> np.ndarray:
        """Read-only mask of the undrawn edges (a new array per call, read-only like every game's masks)."""
        memo = self._memo
        free = memo[1] if state is memo[0] else _legal_edges_py(state.edges, self.full)
        tables = self._mask_tables
        if tables is not None:  # literals: this is the hot path of every scalar step (_CHUNK = 12)
            return _frombuffer(tables[0][free & 4095] + tables[1][free >> 12], _BOOL)
        return _joined_mask(free, self.num_edges)

    def play(self, state: DotsAndBoxesState, move: int) -> DotsAndBoxesState:
        """``Game.play`` in one compiled call for an int move; anything else, and every error, via ``Game.play``.

        A state this game returned is trusted; any other is checked in full (``check_state``) first.  The
        successor's legal edges come back from the same call and are kept in ``_memo`` for ``legal_moves``.
        """
        if type(move) is int and 0 <= move < self.num_edges:
            if state is self._memo[0]:
                t, free = _play_trusted(state, self._edge_args[move])
            else:
                self.check_state(state)
                t, free = play_checked(*state, *self._edge_args[move])
            if free >= 0:
                nxt = _new_state(self.state_type, t)
                self._memo = (nxt, free)
                return nxt
        return Game.play(self, state, move)

    def _apply(self, state: DotsAndBoxesState, move: int) -> DotsAndBoxesState:
        edges, to_move, s0, s1 = state
        return self.state_type(*apply(edges, to_move, s0, s1, move, self.geo.edge_box_masks))

    def to_move(self, state: DotsAndBoxesState) -> int:
        return state.to_move

    def is_over(self, state: DotsAndBoxesState) -> bool:
        return state.edges == self.full

    def returns(self, state: DotsAndBoxesState) -> tuple[float, float]:
        if state.edges != self.full or state.score0 == state.score1:
            return (0.0, 0.0)
        return (1.0, -1.0) if state.score0 > state.score1 else (-1.0, 1.0)

    def score_margin(self, state: DotsAndBoxesState) -> int:
        """Player 0's score minus player 1's, at any point of the game."""
        return state.score0 - state.score1

    def boxes_completed(self, state: DotsAndBoxesState, move: int) -> int:
        """How many boxes ``move`` would complete in ``state`` (0, 1 or 2); the move must be undrawn."""
        return int(completed_by(state.edges | (1 << move), move, self.geo.edge_box_masks))

    def state_key(self, state: DotsAndBoxesState) -> int:
        # score1 follows from edges and score0 (they add up to the completed boxes), so it is left out.
        return state.edges | (state.to_move << self.num_edges) | (state.score0 << (self.num_edges + 1))

    # ------------------------------------------------------------------ tensors for networks
    def box_walls(self, state: DotsAndBoxesState) -> np.ndarray:
        """Seed 001's state tensor: (R, C, 4) float32 with each box's N, S, E, W walls as 0/1.

        A shared edge is set in both boxes it borders.
        """
        return self.box_walls_batch(np.asarray([state], dtype=np.int64))[0]

    def box_walls_batch(self, states: np.ndarray) -> np.ndarray:
        """(N, R, C, 4) float32 ``box_walls`` for an (N, 4) int64 array of state rows."""
        walls = (states[:, 0:1] >> self.geo.box_edges.reshape(1, -1)) & 1
        return walls.reshape(-1, self.rows, self.cols, 4).astype(np.float32)

    def encode_batch(self, states: np.ndarray) -> np.ndarray:
        """(N, 5, 2R+1, 2C+1) float32 planes (see ``encoding_shape``) from the view of each row's mover.

        Edges alone decide the rest of the game; the scores are included because they decide who wins.
        ``encode`` (base class) is this on a one-row batch.
        """
        states = np.asarray(states, dtype=np.int64)
        n = states.shape[0]
        geo = self.geo
        drawn = ((states[:, 0:1] >> self._bits) & 1).astype(np.float32)
        out = np.zeros((n,) + self.encoding_shape, dtype=np.float32)
        ey, ex = geo.edge_yx[:, 0], geo.edge_yx[:, 1]
        out[:, 0, ey, ex] = drawn
        out[:, 1, ey, ex] = 1.0 - drawn
        by, bx = geo.box_yx[:, 0], geo.box_yx[:, 1]
        out[:, 2, by, bx] = (drawn @ geo.incidence) / 4.0
        mover = states[:, 1] == 0
        own = np.where(mover, states[:, 2], states[:, 3]).astype(np.float32) / self.num_boxes
        opp = np.where(mover, states[:, 3], states[:, 2]).astype(np.float32) / self.num_boxes
        out[:, 3] = own[:, None, None]
        out[:, 4] = opp[:, None, None]
        return out

    def symmetries(self, state: DotsAndBoxesState) -> list[tuple[DotsAndBoxesState, np.ndarray]]:
        """The 8 dihedral images on square boards, 4 (identity, mirrors, half-turn) on rectangles."""
        return [
            (self.state_type(int(map_edges(state.edges, m)), state.to_move, state.score0, state.score1), m.copy())
            for m in self._sym_maps
        ]

    def symmetries_batch(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(S, N, 4) images and (S, E) edge maps (S = 8 or 4), in the order of ``symmetries``.

        A symmetry moves the edges only: the player to move and the scores stay as they are.
        """
        rows = np.ascontiguousarray(states, dtype=np.int64)
        images = np.repeat(rows[None], len(self._sym_maps), axis=0)
        images[:, :, 0] = permute_bits_batch(rows[:, 0].copy(), self._sym_maps)
        return images, self._sym_maps.copy()

    # ------------------------------------------------------------------ notation and display
    def render(self, state: DotsAndBoxesState) -> str:
        """Drawn edges as lines, undrawn edges as their numbers; then the scores and the player to move."""
        geo = self.geo
        width = 4 * self.cols + 2  # dot column c sits at x = 4c + 1; two-digit numbers end on it
        lines = []
        for row in range(self.rows + 1):
            chars = [" "] * width
            for col in range(self.cols + 1):
                chars[4 * col + 1] = "+"
            for col in range(self.cols):
                e = row * self.cols + col
                chars[4 * col + 2 : 4 * col + 5] = "---" if state.edges >> e & 1 else f"{e:^3}"
            lines.append("".join(chars).rstrip())
            if row == self.rows:
                break
            chars = [" "] * width
            for c in range(self.cols + 1):
                e = geo.num_h + row * (self.cols + 1) + c
                chars[4 * c : 4 * c + 2] = " |" if state.edges >> e & 1 else f"{e:>2}"
            lines.append("".join(chars).rstrip())
        lines.append(f"score: P0 {state.score0} - P1 {state.score1}; P{state.to_move} to move")
        return "\n".join(lines)

    def format_move(self, move: int) -> str:
        return str(int(move))

    def parse_move(self, text: str) -> int:
        t = str(text).strip()
        if not t.isdigit() or int(t) >= self.num_edges:
            raise NotationError(f"{self.game_id}: bad move {text!r}; moves are edge numbers 0-{self.num_edges - 1}")
        return int(t)

    # ------------------------------------------------------------------ batched
    def batched(self, n: int, auto_reset: bool = True) -> "BatchedDotsAndBoxes":
        return BatchedDotsAndBoxes(self, n, auto_reset)

    def legal_mask_batch(self, states: np.ndarray) -> np.ndarray:
        out = np.empty((states.shape[0], self.num_edges), dtype=np.bool_)
        batch_legal(states, self.full, self.num_edges, out)
        return out

    def to_move_batch(self, states: np.ndarray) -> np.ndarray:
        return states[:, 1].astype(np.int8)

    def score_margin_batch(self, states: np.ndarray) -> np.ndarray:
        """(N,) int64 player 0's score minus player 1's (absolute sign, not the mover's view).

        Equal to ``score_margin`` row by row; negate where player 1 is the one being trained.
        """
        rows = np.asarray(states, dtype=np.int64)
        return rows[:, 2] - rows[:, 3]


class BatchedDotsAndBoxes(BatchedGame):
    game: DotsAndBoxes

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        g = self.game
        finished = np.zeros(self.n, dtype=np.bool_)
        rets = np.zeros((self.n, 2), dtype=np.float32)
        acts = np.asarray(actions, dtype=np.int64)
        bad = batch_step(
            self.states, acts, self.auto_reset, finished, rets, self.final_states, g.full, g.num_edges,
            g.geo.edge_box_masks,
        )
        if bad >= 0:
            raise IllegalMoveError(
                f"{g.game_id}: illegal action {int(acts[bad])} in batch row {bad}; "
                f"actions are undrawn edges in 0-{g.num_edges - 1}"
            )
        return finished, rets
