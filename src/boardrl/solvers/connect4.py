"""Exact Connect 4 referee: numba bitboard negamax with alpha-beta, a transposition table and null windows.

Board layout (shared with ``games/connect4.py``): Tromp bitboards, bit ``7*col + row`` (row 0 = bottom); the 7th
bit of each column is a sentinel that is always empty, so shifted lines never wrap from one column into the
next.  ``current`` holds the stones of the player to move, ``mask`` all stones, ``plies`` their number.  The
rule kernels (``has_four``, ``winning_cells``, ``playable_cells``) are the game's own: numba compiles them into
the search, which runs as fast as with private copies (measured: ``benchmarks/run.py --only connect4_solver``).

Score convention (the usual one): a position is worth ``22 - k`` to the side to move when it wins with its
``k``-th stone of the game under perfect play, ``-(22 - k)`` when the opponent wins with its ``k``-th stone,
and 0 for a draw.  So the empty board scores +1 (the first player wins with its 21st stone at the latest) and
a win available right now in a position with ``p`` stones scores ``(43 - p) // 2``.

Search techniques (from their published descriptions):

* negamax with alpha-beta, the window clamped to the scores still reachable from the position;
* only "non-losing" moves are searched: an opponent's playable winning cell must be blocked (two of them
  lose at once) and a cell directly under an opponent's winning cell is never played;
* move order: moves that create the most winning cells first, ties broken centre-first;
* a transposition table holding both bounds per position under the full key ``current + mask`` (unique),
  kept across calls so that a referee judging many related positions reuses its work, plus enhanced
  transposition cutoffs (a child whose stored bound already refutes the parent ends the node unsearched);
* the exact score by a sequence of null-window searches that bisect the score interval, the first one at 0
  (the sign is what a referee needs most); the game value alone takes one search with the window (-1, 1);
* once a position's value is known, which moves keep it takes one null-window search per move (and none in a
  lost position, where every move keeps it), instead of the sign of every move.

The precondition of the inner search is that the side to move cannot win at once; every entry point checks
finished games and immediate wins first, so they never reach the search.

Opening book (``solvers/connect4_book.py``): when the packaged book file exists, ``Connect4Solver`` answers the
score and value of a position with at most D stones by a lookup, and ``move_values`` looks up the children with
at most D stones (searching any that are missing); the book holds exactly the scores a search gives.  A position
with D + 1 stones starts its search from the lower bound its parents in the book give (``book_lower_bound``):
exact when it is a parent's best move, so one null window settles it.
``Connect4Solver(book=False)`` (and ``Connect4Referee(book=False)``) always search.
"""

from __future__ import annotations

from typing import Any, Sequence

import llvmlite.binding as llvm_binding
import llvmlite.ir as llvm_ir
import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from boardrl.errors import BoardRLError
from boardrl.games.base import Game, IllegalMoveError
from boardrl.games.connect4 import BOARD, CELLS, COLS, ROWS, has_four, non_losing_moves, winning_cells
from boardrl.games.connect4 import playable_cells as playable
from boardrl.solvers.base import Referee, Verdict

WIDTH = COLS
HEIGHT = ROWS
COLUMN_MASKS = np.array([((1 << HEIGHT) - 1) << (7 * c) for c in range(WIDTH)], dtype=np.int64)
#: Columns searched centre-first: central columns take part in more lines of four.
CENTRE_ORDER = np.array([3, 2, 4, 1, 5, 0, 6], dtype=np.int64)
ETC_PLIES = 30  # enhanced transposition cutoffs are tried at nodes with fewer stones (deep subtrees)
MAX_SCORE = 22  # above any reachable score (the fastest win, with the 4th stone, scores 18)
NO_BOUND = -MAX_SCORE - 1  # "no lower bound known" for ``solve_kernel``

_BOUND_OFFSET = 32  # table bounds are stored as value + 32 in 6 bits; -32 / +31 mean "no bound"
_NO_LOWER = -_BOUND_OFFSET
_NO_UPPER = 63 - _BOUND_OFFSET


class InvalidPositionError(BoardRLError):
    """A Connect 4 state whose bitboards cannot arise in a game (bad mask, wrong counts, two fours...)."""


# ---------------------------------------------------------------------------------------------- bitboard kernels
@intrinsic
def _ctpop(typingctx, x):
    """Set bits of an int64 via LLVM's ``ctpop`` (one POPCNT instruction on x86-64)."""
    sig = types.int64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return sig, codegen


@njit(cache=True)
def popcount64(x: int) -> int:
    """Number of set bits of an int64."""
    return _ctpop(x)


# LLVM >= 15 names the prefetch intrinsic by the opaque pointer type "p0", older versions by "p0i8"
_PREFETCH_NAME = "llvm.prefetch.p0" if llvm_binding.llvm_version_info[0] >= 15 else "llvm.prefetch.p0i8"


@intrinsic
def _prefetch(typingctx, arr, idx):
    """Hint the CPU to start loading ``arr[idx]`` into cache (no effect on results)."""
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, value=args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]])
        i8p = llvm_ir.IntType(8).as_pointer()
        i32 = llvm_ir.IntType(32)
        fnty = llvm_ir.FunctionType(llvm_ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, _PREFETCH_NAME)
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])  # read, keep in all levels, data
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True)
def can_win_now(cur: int, mask: int) -> bool:
    return (winning_cells(cur, mask) & playable(mask)) != 0


@njit(cache=True)
def move_bit(mask: int, col: int) -> int:
    """The cell a stone dropped in ``col`` lands on (0 when the column is full)."""
    return playable(mask) & COLUMN_MASKS[col]


# ---------------------------------------------------------------------------------------------- transposition table
# A slot holds ``key << 12 | (lower + 32) << 6 | (upper + 32)``: both bounds known for the position (the
# null-window re-searches need each kind) under the full key, so a probe never takes another position's bounds.
# Keys are below 2**49 (7 bits per column, no carries) so the word fits; 0 means empty (a stored upper bound is
# at least -21, never encoded as 0).  The slot of a key is the top k bits of key * odd constant (Fibonacci
# hashing): cheap, and it spreads the very regular keys.  Replacement: always the newest.
#
# The table array has room for 2**max slots but only the first 2**k are in use; k starts small so that short
# searches stay in the CPU caches (a cold 64 MiB table costs a memory miss per node), and grows by 4x, entries
# rehashed, whenever half of the slots in use are filled.  ``counters`` = [nodes, slots filled, k, max].
_HASH_MUL = 0x9E3779B97F4A7C15 - (1 << 64)  # the 64-bit golden-ratio constant, as a signed int64
_NODES, _FILLED, _LOG2, _MAX_LOG2 = 0, 1, 2, 3


@njit(cache=True)
def _tt_slot(key: int, shift: int, size_mask: int) -> int:
    return ((key * _HASH_MUL) >> shift) & size_mask


@njit(cache=True)
def _grow_threshold(counters: np.ndarray) -> int:
    """Filled-slot count that triggers growth; never reached once the table is at its maximum size."""
    if counters[_LOG2] >= counters[_MAX_LOG2]:
        return 1 << 62
    return 1 << (counters[_LOG2] - 1)


@njit(cache=True)
def _grow(tt: np.ndarray, counters: np.ndarray) -> None:
    """Use 4x as many slots (at most all of ``tt``) and rehash the stored entries into them."""
    old = tt[: 1 << counters[_LOG2]].copy()
    tt[: old.shape[0]] = 0
    counters[_LOG2] = min(counters[_LOG2] + 2, counters[_MAX_LOG2])
    size_mask = (1 << counters[_LOG2]) - 1
    shift = 64 - counters[_LOG2]
    filled = 0
    for e in old:
        if e != 0:
            i = _tt_slot(e >> 12, shift, size_mask)
            if tt[i] == 0:
                filled += 1
            tt[i] = e
    counters[_FILLED] = filled


# frame columns of the search workspace ``ws`` (one row per ply): sorted moves, their ordering scores, state
_MOVES, _SCORES = 0, WIDTH
_CUR, _MASK, _ALPHA, _BETA, _KEY, _N, _J = range(2 * WIDTH, 2 * WIDTH + 7)
WS_COLUMNS = 2 * WIDTH + 7


def new_workspace() -> np.ndarray:
    """Scratch rows for ``search`` (one per ply), so the search itself allocates nothing."""
    return np.zeros((CELLS + 1, WS_COLUMNS), dtype=np.int64)


# ---------------------------------------------------------------------------------------------- search
@njit(cache=True)
def search(cur, mask, plies, alpha, beta, tt, ws, counters) -> int:
    """Alpha-beta negamax score of a position whose mover cannot win at once; fail-soft outside (alpha, beta).

    Written as a loop over an explicit stack (rows of ``ws`` indexed by ply) rather than recursion: numba
    passes every array argument of a call as a struct with reference counting, which costs more than a node.
    ``counters`` holds the node count and the table's state (see the transposition table notes above).
    """
    size_mask = (1 << counters[_LOG2]) - 1
    shift = 64 - counters[_LOG2]
    grow_at = _grow_threshold(counters)
    root = plies
    d = plies
    r = 0
    key = 0
    entering = True
    while True:
        if entering:
            # ---- a new node: settle it without search when possible, else set up its frame
            counters[_NODES] += 1
            entering = False
            if counters[_FILLED] > grow_at:  # the table in use is getting full: spread it over 4x the slots
                _grow(tt, counters)
                size_mask = (1 << counters[_LOG2]) - 1
                shift = 64 - counters[_LOG2]
                grow_at = _grow_threshold(counters)
            settled = True
            nxt = non_losing_moves(cur, mask)
            if nxt == 0:  # the opponent wins with its next stone
                r = -((CELLS - d) // 2)
            elif d >= CELLS - 2:  # two cells left: neither side can make a four any more
                r = 0
            else:
                lo = -((CELLS - 2 - d) // 2)  # the opponent cannot win before its second stone from now
                hi = (CELLS - 1 - d) // 2  # nor can we before our second stone from now
                key = cur + mask
                e = tt[_tt_slot(key, shift, size_mask)]
                if e != 0 and (e >> 12) == key:
                    v = ((e >> 6) & 63) - _BOUND_OFFSET
                    if v > lo:
                        lo = v
                    v = (e & 63) - _BOUND_OFFSET
                    if v < hi:
                        hi = v
                # lo <= score <= hi; when that interval leaves the window (or is one value) we are done
                if lo >= beta:
                    r = lo
                elif hi <= alpha:
                    r = hi
                elif lo >= hi:
                    r = lo
                else:
                    settled = False
                    if alpha < lo:
                        alpha = lo
                    if beta > hi:
                        beta = hi
            if not settled:
                # start loading the children's table slots now; ordering the moves hides the latency
                opp = cur ^ mask
                rest = nxt
                while rest:
                    mv = rest & -rest
                    rest ^= mv
                    _prefetch(tt, _tt_slot(opp + (mask | mv), shift, size_mask))
                # order the moves: most new winning cells first; insertion keeps centre-first among equals
                n = 0
                for i in range(WIDTH):
                    mv = nxt & COLUMN_MASKS[CENTRE_ORDER[i]]
                    if mv:
                        sc = popcount64(winning_cells(cur | mv, mask | mv))
                        j = n
                        while j > 0 and ws[d, _SCORES + j - 1] < sc:
                            ws[d, _MOVES + j] = ws[d, _MOVES + j - 1]
                            ws[d, _SCORES + j] = ws[d, _SCORES + j - 1]
                            j -= 1
                        ws[d, _MOVES + j] = mv
                        ws[d, _SCORES + j] = sc
                        n += 1
                if d < ETC_PLIES:
                    # enhanced transposition cutoff: a child already known to be bad enough for the opponent
                    # proves the cutoff without searching any child
                    for j in range(n):
                        ck = opp + (mask | ws[d, _MOVES + j])
                        e = tt[_tt_slot(ck, shift, size_mask)]
                        if e != 0 and (e >> 12) == ck:
                            v = _BOUND_OFFSET - (e & 63)  # minus the child's upper bound
                            if v >= beta:
                                _tt_store(tt, key, v, _NO_UPPER, counters, shift, size_mask)
                                r = v
                                settled = True
                                break
            if not settled:
                ws[d, _CUR] = cur
                ws[d, _MASK] = mask
                ws[d, _ALPHA] = alpha
                ws[d, _BETA] = beta
                ws[d, _KEY] = key
                ws[d, _N] = n
                ws[d, _J] = 0
        else:
            # ---- a child of frame d returned r (from its own view): update frame d
            v = -r
            if v >= ws[d, _BETA]:
                _tt_store(tt, ws[d, _KEY], v, _NO_UPPER, counters, shift, size_mask)
                r = v
                settled = True
            else:
                if v > ws[d, _ALPHA]:
                    ws[d, _ALPHA] = v
                settled = False
        if settled:
            if d == root:
                return r
            d -= 1  # hand r to the parent frame
            continue
        j = ws[d, _J]
        if j == ws[d, _N]:  # every move failed low: alpha is an upper bound
            r = ws[d, _ALPHA]
            _tt_store(tt, ws[d, _KEY], _NO_LOWER, r, counters, shift, size_mask)
            if d == root:
                return r
            d -= 1
            continue
        ws[d, _J] = j + 1
        mv = ws[d, _MOVES + j]
        cur = ws[d, _CUR] ^ ws[d, _MASK]
        mask = ws[d, _MASK] | mv
        alpha = -ws[d, _BETA]
        beta = -ws[d, _ALPHA]
        d += 1
        entering = True


@njit(cache=True)
def _tt_store(tt, key, lower, upper, counters, shift, size_mask) -> None:
    """Record ``lower <= score <= upper`` for ``key``, tightening the bounds already held for the same key."""
    i = _tt_slot(key, shift, size_mask)
    e = tt[i]
    if e == 0:
        counters[_FILLED] += 1
    elif (e >> 12) == key:
        old_lower = ((e >> 6) & 63) - _BOUND_OFFSET
        old_upper = (e & 63) - _BOUND_OFFSET
        if old_lower > lower:
            lower = old_lower
        if old_upper < upper:
            upper = old_upper
    tt[i] = (key << 12) | ((lower + _BOUND_OFFSET) << 6) | (upper + _BOUND_OFFSET)


@njit(cache=True)
def _terminal_score(cur: int, mask: int, plies: int) -> int:
    """Score of a position settled without search, or ``MAX_SCORE + 1`` when a search is needed."""
    opp = cur ^ mask
    if has_four(opp):  # the previous player completed a four with its stone number popcount(opp)
        return -(22 - popcount64(opp))
    if plies >= CELLS:
        return 0
    if can_win_now(cur, mask):
        return (CELLS + 1 - plies) // 2
    return MAX_SCORE + 1


@njit(cache=True)
def solve_kernel(cur, mask, plies, lower, tt, ws, counters) -> int:
    """Exact score by null-window bisection of the interval of reachable scores.

    ``lower`` is a score the position is known to reach (``NO_BOUND`` when none is known).  When it is above
    the reachable minimum the first probe asks whether it is exact: a position reached by an optimal move of a
    parent whose score the book holds scores exactly minus that score, and one null window then settles it.
    """
    t = _terminal_score(cur, mask, plies)
    if t <= MAX_SCORE:
        return t
    lo = -((CELLS - plies) // 2)
    hi = (CELLS - 1 - plies) // 2
    # the first probe asks for the sign (the question a referee needs most, and the cheapest to settle), or
    # whether the known lower bound is the score; after that plain bisection: each probe "is the score > med?"
    # shrinks [lo, hi] strictly
    med = 0
    if lower > lo:
        lo = lower
        med = lower
    while lo < hi:
        if med < lo or med >= hi:
            med = lo + (hi - lo) // 2
        r = search(cur, mask, plies, med, med + 1, tt, ws, counters)
        if r <= med:
            hi = r
        else:
            lo = r
        med = lo + (hi - lo) // 2
    return lo


@njit(cache=True)
def sign_kernel(cur, mask, plies, tt, ws, counters) -> int:
    """+1 / 0 / -1: the game value only, from one search with the window (-1, 1)."""
    t = _terminal_score(cur, mask, plies)
    if t <= MAX_SCORE:
        return (t > 0) - (t < 0)
    r = search(cur, mask, plies, -1, 1, tt, ws, counters)
    return (r > 0) - (r < 0)


@njit(cache=True)
def move_values_kernel(cur, mask, plies, exact, tt, ws, counters, out) -> None:
    """For each column: the mover's score (``exact``) or value sign after playing there; ``MAX_SCORE+1`` if full.

    A move that completes a four scores the win at once; otherwise the child position (opponent to move) is
    solved and its result negated.
    """
    for col in range(WIDTH):
        mv = move_bit(mask, col)
        if mv == 0:
            out[col] = MAX_SCORE + 1
            continue
        if has_four(cur | mv):
            s = (CELLS + 1 - plies) // 2
            out[col] = s if exact else 1
            continue
        child_cur = cur ^ mask
        child_mask = mask | mv
        if exact:
            out[col] = -solve_kernel(child_cur, child_mask, plies + 1, NO_BOUND, tt, ws, counters)
        else:
            out[col] = -sign_kernel(child_cur, child_mask, plies + 1, tt, ws, counters)


@njit(cache=True)
def keeps_value_kernel(cur, mask, plies, value, lowers, tt, ws, counters, out) -> None:
    """For each column, given the position's game value (+1 / 0 / -1): 1 when the move keeps it, 0 when it
    does not, -1 when the column is full.  ``lowers[col]`` is a known lower bound on the child's score
    (``NO_BOUND`` if none): a bound above the question's answers it without search.

    Knowing the value turns each move's question into one null-window search: in a won position "does the
    child lose for the opponent?" (is its score <= -1), in a drawn one "is the child no better than a draw for
    the opponent?" (no move can win, so that is "is its score <= 0"); in a lost position every move keeps the
    value and nothing is searched.  A sign search per move (window (-1, 1)) costs more and answers more.
    """
    for col in range(WIDTH):
        mv = move_bit(mask, col)
        if mv == 0:
            out[col] = -1
        elif value < 0 or has_four(cur | mv):
            out[col] = 1  # every move of a lost position keeps its value; a winning move keeps any value
        else:
            child_cur = cur ^ mask
            child_mask = mask | mv
            t = _terminal_score(child_cur, child_mask, plies + 1)
            bound = -1 if value > 0 else 0
            if t > MAX_SCORE and lowers[col] > bound:
                t = lowers[col]
            elif t > MAX_SCORE:  # not settled without search: one null window at the child's bound
                t = search(child_cur, child_mask, plies + 1, bound, bound + 1, tt, ws, counters)
            out[col] = 1 if (t <= -1 if value > 0 else t <= 0) else 0


# ---------------------------------------------------------------------------------------------- helpers
def position_from_columns(columns: Sequence[int]) -> tuple[int, int, int]:
    """``(current, mask, plies)`` after dropping stones in ``columns`` (0-based) from the empty board.

    A solver-side helper so solver code and tests need not depend on the game module; it checks that each
    column has room but not whether the game ended on the way.
    """
    cur, mask = 0, 0
    for i, col in enumerate(columns):
        if not 0 <= int(col) < WIDTH:
            raise IllegalMoveError(f"connect4: column index {col} (move {i + 1}) is not in 0..6")
        mv = int(move_bit(mask, int(col)))
        if mv == 0:
            raise IllegalMoveError(f"connect4: column {int(col) + 1} is full at move {i + 1}")
        cur, mask = cur ^ mask, mask | mv
    return cur, mask, len(columns)


def check_position(cur: int, mask: int, plies: int) -> None:
    """``InvalidPositionError`` unless the bitboards describe a position that can arise in play."""
    if not (0 <= mask <= BOARD and mask & ~BOARD == 0):
        raise InvalidPositionError(f"connect4: mask {mask:#x} has bits outside the 6x7 board")
    for c in range(WIDTH):
        col = (mask >> (7 * c)) & 0x7F
        if col & (col + 1):  # stones must fill a column from the bottom without gaps
            raise InvalidPositionError(f"connect4: column {c + 1} of mask {mask:#x} has a gap under a stone")
    if cur & ~mask:
        raise InvalidPositionError(f"connect4: current {cur:#x} has stones outside mask {mask:#x}")
    n = int(popcount64(mask))
    if plies != n:
        raise InvalidPositionError(f"connect4: plies={plies} but the mask holds {n} stones")
    if int(popcount64(cur)) != plies // 2:
        raise InvalidPositionError(
            f"connect4: the player to move has {int(popcount64(cur))} stones, expected {plies // 2} after {plies} plies"
        )
    if has_four(cur):
        raise InvalidPositionError("connect4: the player to move already has four in a row (the game ended earlier)")


def _sign(x: int) -> int:
    return (x > 0) - (x < 0)


# ---------------------------------------------------------------------------------------------- solver object
class Connect4Solver:
    """Owns the transposition table and scratch buffers; every public call goes through here.

    ``tt_log2`` caps the table at 2**tt_log2 int64 slots (23 -> 64 MiB); it starts at 2**start_log2 slots and
    grows as searches fill it (see the transposition table notes).  Entries are kept between calls (positions
    of one game share most of their subtrees); once the full-size table has more than ``max_fill`` of its
    slots in use it is cleared before the next query, and ``clear()`` empties it (and shrinks it) on demand.

    ``book``: True (default) consults the packaged opening book when its file exists (loaded and checked once
    per process, on the first query that can use it); False always searches; an ``OpeningBook`` is used as is.
    A book answer costs no nodes and leaves the table untouched.
    """

    def __init__(self, tt_log2: int = 23, start_log2: int = 20, max_fill: float = 0.9,
                 book: bool | Any = True) -> None:
        if not 10 <= tt_log2 <= 30:
            raise BoardRLError(f"connect4 solver: tt_log2={tt_log2} is out of range; choose 10..30")
        self.tt_size = 1 << tt_log2
        self.start_log2 = min(start_log2, tt_log2)
        self.max_fill = max_fill
        self._tt: np.ndarray | None = None
        self._ws = new_workspace()
        self._counters = np.array([0, 0, self.start_log2, tt_log2], dtype=np.int64)
        self.nodes = 0  # nodes searched since creation (or reset_nodes)
        # True: the packaged opening book when it exists (loaded once per process); False: always search;
        # or an ``OpeningBook`` object
        self.book = book

    def __getstate__(self) -> dict:
        """Pickle without the table (up to GiBs; worker processes rebuild their own as they search)."""
        state = self.__dict__.copy()
        state["_tt"] = None
        state["_counters"] = np.array([0, 0, self.start_log2, self._counters[_MAX_LOG2]], dtype=np.int64)
        return state

    # ---- table management
    def clear(self) -> None:
        """Forget every stored bound and go back to the small starting table (e.g. to time cold searches)."""
        if self._tt is not None:
            self._tt[: 1 << int(self._counters[_LOG2])] = 0
        self._counters[_FILLED] = 0
        self._counters[_LOG2] = self.start_log2

    def reset_nodes(self) -> None:
        self.nodes = 0

    @property
    def tt_slots(self) -> int:
        """Number of table slots in use now (grows from 2**start_log2 up to ``tt_size``)."""
        return 1 << int(self._counters[_LOG2])

    @property
    def tt_fill(self) -> float:
        """Share of the slots in use that hold an entry."""
        return float(self._counters[_FILLED]) / self.tt_slots

    def _prepare(self) -> np.ndarray:
        if self._tt is None:
            self._tt = np.zeros(self.tt_size, dtype=np.int64)  # pages are only touched as slots come in use
        elif self._counters[_LOG2] == self._counters[_MAX_LOG2] and self.tt_fill > self.max_fill:
            self.clear()
        self._counters[_NODES] = 0
        return self._tt

    def _finish(self) -> None:
        self.nodes += int(self._counters[_NODES])

    # ---- the opening book: exact scores of every unfinished position with at most ``book.plies`` stones
    def _book(self, plies: int) -> Any:
        """The opening book when it may hold positions with ``plies`` stones, else None."""
        if self.book is False or self.book is None:
            return None
        if self.book is True:
            from boardrl.solvers.connect4_book import default_book

            book = default_book()
        else:
            book = self.book
        return book if book is not None and plies <= book.plies else None

    def _book_score(self, cur: int, mask: int, plies: int) -> int | None:
        book = self._book(plies)
        return None if book is None else book.score(cur, mask)

    def book_lower_bound(self, cur: int, mask: int, plies: int) -> int:
        """A score the position reaches, from its parents in the book (``NO_BOUND`` when none is there).

        A parent's mover could have played into this position, so its score is at least minus the position's:
        the position scores at least ``-score(parent)``, exactly that when the move was one of the parent's best.
        The parents are the positions without the top stone of a column, where that stone is the last mover's.
        """
        if plies == 0 or self._book(plies - 1) is None:
            return NO_BOUND
        last_mover = cur ^ mask
        bound = NO_BOUND
        for col in range(WIDTH):
            column = mask & int(COLUMN_MASKS[col])
            top = 1 << (column.bit_length() - 1) if column else 0
            if top & last_mover:
                s = self._book_score(last_mover ^ top, mask ^ top, plies - 1)
                if s is not None and -s > bound:
                    bound = -s
        return bound

    # ---- queries on raw bitboards (checked)
    def score(self, cur: int, mask: int, plies: int) -> int:
        check_position(cur, mask, plies)
        s = self._book_score(cur, mask, plies)
        if s is not None:
            return s
        lower = self.book_lower_bound(cur, mask, plies)
        tt = self._prepare()
        s = int(solve_kernel(cur, mask, plies, lower, tt, self._ws, self._counters))
        self._finish()
        return s

    def value(self, cur: int, mask: int, plies: int) -> int:
        check_position(cur, mask, plies)
        s = self._book_score(cur, mask, plies)
        if s is not None:
            return _sign(s)
        if self.book_lower_bound(cur, mask, plies) > 0:
            return 1  # a parent in the book is lost: every move from it leaves a won position
        tt = self._prepare()
        v = int(sign_kernel(cur, mask, plies, tt, self._ws, self._counters))
        self._finish()
        return v

    def move_values(self, cur: int, mask: int, plies: int, exact: bool) -> list[int | None]:
        """Per column: exact score (or value sign) for the mover after playing there; None if not playable."""
        check_position(cur, mask, plies)
        if has_four(cur ^ mask) or plies >= CELLS:
            return [None] * WIDTH  # the game is over: no legal moves
        tt = self._prepare()
        out = np.zeros(WIDTH, dtype=np.int64)
        if self._book(plies) is None:
            move_values_kernel(cur, mask, plies, exact, tt, self._ws, self._counters, out)
        else:  # the children are in the book, or one past it: the kernel's loop with lookups, or with the lower
            # bound their book parents give (a search where one is missing)
            for col in range(WIDTH):
                mv = int(move_bit(mask, col))
                if mv == 0:
                    out[col] = MAX_SCORE + 1
                elif has_four(cur | mv):
                    out[col] = (CELLS + 1 - plies) // 2 if exact else 1
                else:
                    s = self._book_score(cur ^ mask, mask | mv, plies + 1)
                    if s is None and exact:
                        lower = self.book_lower_bound(cur ^ mask, mask | mv, plies + 1)
                        s = int(solve_kernel(cur ^ mask, mask | mv, plies + 1, lower, tt, self._ws, self._counters))
                    elif s is None:
                        s = int(sign_kernel(cur ^ mask, mask | mv, plies + 1, tt, self._ws, self._counters))
                    out[col] = -s if exact else -_sign(s)
        self._finish()
        return [None if v > MAX_SCORE else int(v) for v in out]

    def value_keeping_moves(self, cur: int, mask: int, plies: int, value: int) -> tuple[int, ...]:
        """The columns whose move keeps the position's game ``value`` (+1 / 0 / -1, as ``value`` gives it).

        ``value`` must be the position's true value: the answer is only as right as it is.
        """
        check_position(cur, mask, plies)
        if has_four(cur ^ mask) or plies >= CELLS:
            return ()  # the game is over: no legal moves
        if self._book(plies + 1) is not None:  # the children are in the book: their signs are lookups
            signs = self.move_values(cur, mask, plies, exact=False)
            return tuple(c for c, v in enumerate(signs) if v is not None and v == value)
        lowers = np.full(WIDTH, NO_BOUND, dtype=np.int64)
        if self._book(plies) is not None:  # the children are one past the book: their parents there bound them
            for col in range(WIDTH):
                mv = int(move_bit(mask, col))
                if mv and not has_four(cur | mv):
                    lowers[col] = self.book_lower_bound(cur ^ mask, mask | mv, plies + 1)
        tt = self._prepare()
        out = np.zeros(WIDTH, dtype=np.int64)
        keeps_value_kernel(cur, mask, plies, value, lowers, tt, self._ws, self._counters, out)
        self._finish()
        return tuple(c for c in range(WIDTH) if out[c] == 1)


# ---------------------------------------------------------------------------------------------- referee
class Connect4Referee(Referee):
    """Exact Connect 4 judge: score, value and every value-keeping move of a position.

    ``optimal_moves`` are all moves that keep the game value (win, draw or loss), not only the fastest win:
    for a lost position every legal move is optimal.  Exact per-move scores come from ``move_scores``.
    """

    def __init__(self, game: Game | None = None, tt_log2: int = 23, book: bool | Any = True) -> None:
        if game is None:
            from boardrl.games import make_game

            game = make_game("connect4")
        super().__init__(game)
        self.solver = Connect4Solver(tt_log2=tt_log2, book=book)

    @property
    def nodes(self) -> int:
        """Nodes searched by this referee so far (for benchmarks)."""
        return self.solver.nodes

    def clear(self) -> None:
        self.solver.clear()

    def _bits(self, state: Any) -> tuple[int, int, int]:
        self.game.check_state(state)
        return int(state.current), int(state.mask), int(state.plies)

    def solve_score(self, state: Any) -> int:
        """Exact score of ``state`` for the side to move (see the module docstring for the convention)."""
        return self.solver.score(*self._bits(state))

    def value(self, state: Any) -> int:
        """+1 / 0 / -1 for the side to move, from one (-1, 1) window search: cheaper than the exact score."""
        return self.solver.value(*self._bits(state))

    def move_scores(self, state: Any) -> list[int | None]:
        """Exact score for the mover of each of the 7 moves (None where the column is full or the game over)."""
        return self.solver.move_values(*self._bits(state), exact=True)

    def solve(self, state: Any) -> Verdict:
        cur, mask, plies = self._bits(state)
        score = self.solver.score(cur, mask, plies)
        value = _sign(score)
        optimal = self.solver.value_keeping_moves(cur, mask, plies, value)
        return Verdict(value=value, optimal_moves=optimal, score=score)
