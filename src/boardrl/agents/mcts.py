"""UCT Monte Carlo tree search with random rollouts, and an optional MCTS-solver backup, for every game.

One simulation: walk down the tree choosing the child with the highest UCB1 score
``mean + c * sqrt(ln N(parent) / N(child))``, expand one untried action (drawn at random), play a rollout to
the end of the game, and add the result (1 win, 0.5 draw, 0 loss, from the view of the player who made the move
into each node) along the path.  The move played is the most visited root action.

MCTS-solver (Winands, Bjornsson and Saito, 2008), switched on with ``solver=True``: a terminal node is proven;
a node whose player to move has a proven winning child is a proven win; a node whose children are all expanded
and proven takes the best of their values.  Selection skips children proven lost for the mover, a proven node
is backed up with its exact result instead of a rollout, search stops once the root is proven, and a proven
root plays a proven-best child.

Why this layout: the tree lives in flat numpy arrays (node table, per-action child table, wins, states) and its
walk, expansion, backup and proving are numba kernels shared by all games.  A node's untried actions are kept in
its row of the node table: for a game of at most 63 actions as the bitmask in the UNTRIED column; for a larger
game as bits of 63-bit words in the columns from MORE on (action ``a`` is bit ``a % 63`` of word ``a // 63``; the
sign bit is never used), UNTRIED then counting them.  Either way UNTRIED is 0 exactly when nothing is left to
expand, all that selection and proving ask, so the tree takes any number of actions and the small games keep
their one-column speed.  One search loop (``uct_search``) drives the kernels.  A Game class plugs its own rule
kernels into it as compiled functions with ``register_kernels`` (tic-tac-toe, Connect 4, Dots and Boxes and
Conniption do, at about a millisecond per 1,000 simulations); the lookup walks the game's class hierarchy, so a
subclass gets its base's kernels.  Any other Game, or ``kernel=False``, runs the same loop in Python with
plug-ins that go through the Game interface, whatever its number of actions.  Randomness comes from one seed
drawn from the caller's Generator, expanded by a splitmix64 stream inside the kernels, so a search is
deterministic given the rng, and both paths consume that stream identically: the tests check that they build
the same tree on every game.
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple

import numpy as np
from numba import njit, types

from boardrl.agents.base import Agent
from boardrl.agents.simple import c4_tactical, nth_set_bit, ttt_tactical
from boardrl.games._kernels import popcount
from boardrl.errors import BoardRLError
from boardrl.games.base import Game
from boardrl.games.connect4 import Connect4
from boardrl.games.connect4 import apply as c4_apply
from boardrl.games.connect4 import legal_columns as c4_legal_columns
from boardrl.games.connect4 import status as c4_status
from boardrl.games.tictactoe import TicTacToe
from boardrl.games.tictactoe import apply as ttt_apply
from boardrl.games.tictactoe import legal_bits as ttt_legal_bits
from boardrl.games.tictactoe import status as ttt_status

try:  # optional fast paths: a broken module of one game must not take MCTS down for the others
    from boardrl.games.dots_and_boxes import DotsAndBoxes
    from boardrl.games.dots_and_boxes import apply as dab_apply
except ImportError:  # pragma: no cover
    DotsAndBoxes = dab_apply = None
try:
    from boardrl.games.conniption import Conniption
    from boardrl.games.conniption import apply as cn_apply
    from boardrl.games.conniption import legal_bits as cn_legal_bits
except ImportError:  # pragma: no cover
    Conniption = cn_apply = cn_legal_bits = None

# columns of the int64 node table; with more than one untried word a node, the words follow from MORE on
PARENT, ACTION, UNTRIED, VISITS, MOVER, TO_MOVE, PROVEN, MORE = range(8)
UNKNOWN = 9  # PROVEN: +1 player 0 wins, -1 player 1 wins, 0 draw, UNKNOWN not proven
ROLLOUTS = ("random", "tactical")
WORD = 63  # actions per untried word: bits 0..62 of an int64, never the sign bit


def untried_words(num_actions: int) -> int:
    """Words of untried-action bits a node needs for ``num_actions`` actions."""
    return max(1, -(-num_actions // WORD))


def node_columns(words: int) -> int:
    """Width of the node table: one word fits the UNTRIED column, several take columns of their own."""
    return MORE if words == 1 else MORE + words


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)


# ---------------------------------------------------------------------------------------------- randomness
@njit(cache=True)
def next_uniform(rs: np.ndarray) -> float:
    """Next number in [0, 1) of the splitmix64 stream whose state is ``rs[0]`` (uint64)."""
    rs[0] += _GOLDEN
    z = rs[0]
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    z = z ^ (z >> _S31)
    return (z >> _S11) * (1.0 / 9007199254740992.0)


# ---------------------------------------------------------------------------------------------- tree kernels
@njit(cache=True)
def rth_set_bit(bits: int, r: int) -> int:
    """Index of the ``r``-th lowest set bit of ``bits`` (r = 0: the lowest); -1 if there are not that many."""
    i = 0
    while bits:
        if bits & 1:
            if r == 0:
                return i
            r -= 1
        bits >>= 1
        i += 1
    return -1


# tree_root, tree_pick_untried and tree_add keep the one-word bitmask in UNTRIED; the loop calls the ``*_words``
# kernels here only when the node table has word columns (games of more than 63 actions).  Why: the one-word
# kernels, and selection, stay as small as they can for LLVM to inline and optimise, which measurably matters at
# a fraction of a microsecond a simulation (even a never-taken word check in selection cost tic-tac-toe 5-20%;
# ``inline="always"`` adds reference counting of the arrays to every simulation, which costs more than a call).
@njit(cache=True)
def set_untried_words(info: np.ndarray, node: int, legal: np.ndarray, keep: bool) -> None:
    """Make the words ``legal`` the untried actions of ``node`` and UNTRIED their count; or clear them."""
    n = 0
    for w in range(legal.shape[0]):
        bits = legal[w] if keep else 0
        info[node, MORE + w] = bits
        n += popcount(bits)
    info[node, UNTRIED] = n


@njit(cache=True)
def pick_untried_words(info: np.ndarray, node: int, rs: np.ndarray) -> int:
    """``tree_pick_untried`` over word columns: the same ``floor(u*k)``-th lowest of the k untried actions."""
    k = info[node, UNTRIED]
    r = int(next_uniform(rs) * k)
    if r >= k:
        r = k - 1
    for w in range(info.shape[1] - MORE):
        bits = info[node, MORE + w]
        c = popcount(bits)
        if r < c:
            a = rth_set_bit(bits, r)
            info[node, MORE + w] = bits & ~(1 << a)
            info[node, UNTRIED] = k - 1
            return w * WORD + a
        r -= c
    return -1


@njit(cache=True)
def tree_root(info: np.ndarray, to_move: int, legal: int, proven: int) -> None:
    """Make node 0 the root; ``legal``: its legal actions as one word."""
    info[0, PARENT] = -1
    info[0, ACTION] = -1
    info[0, UNTRIED] = legal
    info[0, VISITS] = 0
    info[0, MOVER] = -1
    info[0, TO_MOVE] = to_move
    info[0, PROVEN] = proven


@njit(cache=True)
def tree_select(info: np.ndarray, wins: np.ndarray, children: np.ndarray, c: float, solver: bool) -> int:
    """Descend by UCB1 to a node that is proven (terminal) or still has an untried action."""
    node = 0
    while info[node, PROVEN] == UNKNOWN and info[node, UNTRIED] == 0:
        sgn = 1 if info[node, TO_MOVE] == 0 else -1
        log_n = math.log(info[node, VISITS])
        best, best_score = -1, -np.inf
        for a in range(children.shape[1]):
            ch = children[node, a]
            if ch < 0:
                continue
            if solver and info[ch, PROVEN] != UNKNOWN and info[ch, PROVEN] * sgn == -1:
                continue  # proven loss for the player choosing here
            n = info[ch, VISITS]
            score = wins[ch] / n + c * math.sqrt(log_n / n)
            if score > best_score:
                best, best_score = ch, score
        if best < 0:  # every child is a proven loss for the mover (backup normally proves this node first)
            info[node, PROVEN] = -sgn
            return node
        node = best
    return node


@njit(cache=True)
def tree_pick_untried(info: np.ndarray, node: int, rs: np.ndarray) -> int:
    """Remove and return a uniformly random untried action of ``node``: the ``floor(u*k)``-th lowest of its k.

    The one-word bitmask only; ``pick_untried_words`` is the same rule over word columns.
    """
    a = nth_set_bit(info[node, UNTRIED], next_uniform(rs))
    info[node, UNTRIED] &= ~(1 << a)
    return a


@njit(cache=True)
def tree_add(
    info: np.ndarray, children: np.ndarray, parent: int, action: int, new: int, to_move: int, legal: int, proven: int
) -> int:
    """Create node ``new`` as the child of ``parent`` through ``action``; returns ``new``.

    ``legal``: the new state's legal actions as one word; a proven node keeps no untried action.
    """
    info[new, PARENT] = parent
    info[new, ACTION] = action
    info[new, UNTRIED] = legal if proven == UNKNOWN else 0
    info[new, VISITS] = 0
    info[new, MOVER] = info[parent, TO_MOVE]
    info[new, TO_MOVE] = to_move
    info[new, PROVEN] = proven
    children[parent, action] = new
    return new


@njit(cache=True)
def _try_prove(info: np.ndarray, children: np.ndarray, node: int) -> bool:
    """Prove ``node`` from its children if possible (see the module docstring)."""
    sgn = 1 if info[node, TO_MOVE] == 0 else -1
    complete = info[node, UNTRIED] == 0
    best = -2
    for a in range(children.shape[1]):
        ch = children[node, a]
        if ch < 0:
            continue
        v = info[ch, PROVEN]
        if v == UNKNOWN:
            complete = False
            continue
        if v * sgn == 1:
            info[node, PROVEN] = v
            return True
        best = max(best, v * sgn)
    if complete:
        info[node, PROVEN] = best * sgn
        return True
    return False


@njit(cache=True)
def tree_backup(info: np.ndarray, wins: np.ndarray, children: np.ndarray, node: int, r0: float, solver: bool) -> None:
    """Add result ``r0`` (for player 0: 1 win, 0.5 draw, 0 loss) along the path; prove ancestors if asked."""
    if solver:
        p = info[node, PARENT]
        while p >= 0 and info[p, PROVEN] == UNKNOWN and _try_prove(info, children, p):
            p = info[p, PARENT]
    while node >= 0:
        info[node, VISITS] += 1
        m = info[node, MOVER]
        if m == 0:
            wins[node] += r0
        elif m == 1:
            wins[node] += 1.0 - r0
        node = info[node, PARENT]


@njit(cache=True)
def proven_reward(v: int) -> float:
    """Result for player 0 of a proven value (+1 / 0 / -1 for player 0)."""
    return 0.5 * (v + 1)


@njit(cache=True)
def tree_best_action(info: np.ndarray, wins: np.ndarray, children: np.ndarray, solver: bool) -> int:
    """Most visited root action (ties: higher mean, then lower action); a proven root plays a proven-best child.

    With the solver, children proven lost for the root player are avoided whenever another child exists.
    """
    sgn = 1 if info[0, TO_MOVE] == 0 else -1
    target = info[0, PROVEN] if solver else UNKNOWN
    best, best_key_n, best_key_q = -1, -1, -np.inf
    for pass_ in range(2):  # pass 0 applies the solver filters; pass 1 takes any child
        for a in range(children.shape[1]):
            ch = children[0, a]
            if ch < 0:
                continue
            if pass_ == 0 and solver:
                v = info[ch, PROVEN]
                if target != UNKNOWN and v != target:
                    continue
                if v != UNKNOWN and v * sgn == -1:
                    continue
            n = info[ch, VISITS]
            q = wins[ch] / n if n > 0 else 0.0
            if n > best_key_n or (n == best_key_n and q > best_key_q):
                best, best_key_n, best_key_q = a, n, q
        if best >= 0:
            return best
    return best


# ---------------------------------------------------------------------------------------------- the search loop
# A game plugs into the loop with three kernels over the int64 state rows of the tree (``states[i]`` = node i):
#   facts(states, node, arg, aux, legal) -> (player to move, PROVEN value) of node ``node``; writes the node's
#       legal actions as bits into ``legal``, every one of its words (a single word for <= 63 actions)
#   step(states, parent, child, action, arg, aux): write into ``states[child]`` the state after ``action``
#   rollout(states, node, kind, rs, arg, aux) -> result for player 0 of a playout from node ``node``
# ``arg`` and ``aux`` carry what a game's rules need besides the row (Dots and Boxes: the full edge set and the
# edge-box masks; Conniption: the draw rule).  The kernels are passed as numba first-class functions of one fixed
# signature, so the loop compiles once and is cached: a plain dispatcher argument would be part of the cache
# key by its address, and every process would compile the loop again.
_ROWS = types.int64[:, ::1]
_AUX = types.int64[:, ::1]
FACTS = types.FunctionType(types.UniTuple(types.int64, 2)(_ROWS, types.int64, types.int64, _AUX, types.int64[::1]))
STEP = types.FunctionType(types.void(_ROWS, types.int64, types.int64, types.int64, types.int64, _AUX))
ROLLOUT = types.FunctionType(types.float64(_ROWS, types.int64, types.int64, types.uint64[::1], types.int64, _AUX))
NO_AUX = np.zeros((0, 0), dtype=np.int64)


@njit(
    types.int64(
        types.int64[:, ::1], types.float64[::1], types.int64[:, ::1], types.int64[::1], _ROWS, types.int64,
        types.float64, types.boolean, types.int64, types.uint64[::1], FACTS, STEP, ROLLOUT, types.int64, _AUX,
    ),
    cache=True,
)
def uct_search(info, wins, children, legal, states, sims, c, solver, kind, rs, facts, step, rollout, arg, aux):
    """Whole UCT search from ``states[0]`` with a game's plug-in kernels (above); returns the chosen action.

    The Python path runs this same loop (``uct_search.py_func``) with Python versions of the three kernels.
    """
    wide = info.shape[1] > MORE  # untried actions in word columns
    to_move, proven = facts(states, 0, arg, aux, legal)
    tree_root(info, to_move, legal[0], proven)
    if wide:
        set_untried_words(info, 0, legal, True)
    n = 1
    for _ in range(sims):
        if solver and info[0, PROVEN] != UNKNOWN:
            break
        node = tree_select(info, wins, children, c, solver)
        if info[node, PROVEN] == UNKNOWN:
            a = pick_untried_words(info, node, rs) if wide else tree_pick_untried(info, node, rs)
            step(states, node, n, a, arg, aux)
            to_move, proven = facts(states, n, arg, aux, legal)
            node = tree_add(info, children, node, a, n, to_move, legal[0], proven)
            if wide:
                set_untried_words(info, node, legal, proven == UNKNOWN)
            n += 1
        if info[node, PROVEN] != UNKNOWN:
            r0 = proven_reward(info[node, PROVEN])
        else:
            r0 = rollout(states, node, kind, rs, arg, aux)
        tree_backup(info, wins, children, node, r0, solver)
    return tree_best_action(info, wins, children, solver)


@njit(cache=True)
def status_proven(s: int) -> int:
    """PROVEN value of a game status (-1 on, 0 / 1 = that player won, 2 = draw; the kernels' convention)."""
    return UNKNOWN if s == -1 else (1 if s == 0 else (-1 if s == 1 else 0))


# ---------------------------------------------------------------------------------------------- tic-tac-toe
@njit(cache=True)
def ttt_facts(states, node, arg, aux, legal):
    """(player to move, PROVEN) of the row (x, o), legal cells into ``legal``; X moves when the counts are equal."""
    x, o = states[node, 0], states[node, 1]
    legal[0] = ttt_legal_bits(x, o)
    return 0 if popcount(x) == popcount(o) else 1, status_proven(ttt_status(x, o))


@njit(cache=True)
def ttt_step(states, parent, child, a, arg, aux):
    states[child, 0], states[child, 1] = ttt_apply(states[parent, 0], states[parent, 1], a)


@njit(cache=True)
def ttt_rollout(states, node, kind, rs, arg, aux):
    """Play to the end (random, or tactical when ``kind`` == 1); result for player 0."""
    x, o = states[node, 0], states[node, 1]
    s = ttt_status(x, o)
    while s == -1:
        u = next_uniform(rs)
        a = nth_set_bit(ttt_legal_bits(x, o), u) if kind == 0 else ttt_tactical(x, o, u)
        x, o = ttt_apply(x, o, a)
        s = ttt_status(x, o)
    return proven_reward(status_proven(s))


# ---------------------------------------------------------------------------------------------- Connect 4
@njit(cache=True)
def c4_facts(states, node, arg, aux, legal):
    """(player to move, PROVEN) of the row (current, mask, plies); legal columns into ``legal``."""
    cur, mask, plies = states[node, 0], states[node, 1], states[node, 2]
    legal[0] = c4_legal_columns(cur, mask, plies)
    return plies & 1, status_proven(c4_status(cur, mask, plies))


@njit(cache=True)
def c4_step(states, parent, child, a, arg, aux):
    cur, mask, plies = c4_apply(states[parent, 0], states[parent, 1], states[parent, 2], a)
    states[child, 0], states[child, 1], states[child, 2] = cur, mask, plies


@njit(cache=True)
def c4_rollout(states, node, kind, rs, arg, aux):
    """Play to the end (random, or tactical when ``kind`` == 1); result for player 0."""
    cur, mask, plies = states[node, 0], states[node, 1], states[node, 2]
    s = c4_status(cur, mask, plies)
    while s == -1:
        u = next_uniform(rs)
        a = nth_set_bit(c4_legal_columns(cur, mask, plies), u) if kind == 0 else c4_tactical(cur, mask, plies, u)
        cur, mask, plies = c4_apply(cur, mask, plies, a)
        s = c4_status(cur, mask, plies)
    return proven_reward(status_proven(s))


# ---------------------------------------------------------------------------------------------- Dots and Boxes
# arg = the full edge set, aux = the edge-box masks of the board
@njit(cache=True)
def _dab_result(s0: int, s1: int) -> int:
    return 1 if s0 > s1 else (-1 if s1 > s0 else 0)


@njit(cache=True)
def dab_facts(states, node, full, ebm, legal):
    """(player to move, PROVEN) of the row (edges, to_move, score0, score1); undrawn edges into ``legal``."""
    e = states[node, 0]
    legal[0] = full & ~e
    return states[node, 1], UNKNOWN if e != full else _dab_result(states[node, 2], states[node, 3])


@njit(cache=True)
def dab_step(states, parent, child, a, full, ebm):
    r = states[parent]
    states[child, 0], states[child, 1], states[child, 2], states[child, 3] = dab_apply(r[0], r[1], r[2], r[3], a, ebm)


@njit(cache=True)
def dab_rollout(states, node, kind, rs, full, ebm):
    """Random edges to the end; result for player 0."""
    edges, to_move, s0, s1 = states[node, 0], states[node, 1], states[node, 2], states[node, 3]
    while edges != full:
        a = nth_set_bit(full & ~edges, next_uniform(rs))
        edges, to_move, s0, s1 = dab_apply(edges, to_move, s0, s1, a, ebm)
    return proven_reward(_dab_result(s0, s1))


# ---------------------------------------------------------------------------------------------- Conniption
# arg = 1 with the seed's draw rule, else 0; rows are the 8-field state
@njit(cache=True)
def cn_facts(states, node, seed_rule, aux, legal):
    r = states[node]
    legal[0] = cn_legal_bits(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7])
    return r[6], status_proven(r[7])


@njit(cache=True)
def cn_step(states, parent, child, a, seed_rule, aux):
    r = states[parent]
    t = cn_apply(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], a, seed_rule != 0)
    for j in range(8):
        states[child, j] = t[j]


@njit(cache=True)
def cn_rollout(states, node, kind, rs, seed_rule, aux):
    """Random stage-moves to the end; result for player 0."""
    s = states[node]
    p0, mask, stage, f0, f1, lf, player, status = s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
    while status == -1:
        a = nth_set_bit(cn_legal_bits(p0, mask, stage, f0, f1, lf, player, status), next_uniform(rs))
        p0, mask, stage, f0, f1, lf, player, status = cn_apply(
            p0, mask, stage, f0, f1, lf, player, status, a, seed_rule != 0
        )
    return proven_reward(status_proven(status))


# ---------------------------------------------------------------------------------------------- the kernel registry
class KernelPlugin(NamedTuple):
    """How a Game class plugs into ``uct_search``: ``build(game)`` -> (facts, step, rollout, arg, aux).

    ``tactical``: the rollout kernel also plays ``kind`` 1, rollouts by the game's tactical player.
    """

    build: Callable[[Game], tuple]
    tactical: bool


_PLUGINS: dict[type, KernelPlugin] = {}


def register_kernels(game_cls: type, build: Callable[[Game], tuple], tactical: bool = False) -> None:
    """Give ``game_cls`` and its subclasses the compiled search; ``build(game)`` returns the kernels and arguments.

    The kernels must have the signatures of the search-loop comment above (first-class numba functions).
    ``build`` returns dispatchers plus plain arguments, not a closure, so the agent pickles into match workers.
    """
    _PLUGINS[game_cls] = KernelPlugin(build, tactical)


def kernel_plugin(game: Game) -> KernelPlugin | None:
    """The plug-in registered for the nearest class of ``game`` in its MRO; None: the Python path."""
    for cls in type(game).__mro__:
        plugin = _PLUGINS.get(cls)
        if plugin is not None:
            return plugin
    return None


def _dab_kernels(game: Game) -> tuple:
    """arg = the full edge set, aux = the edge-box masks of the board."""
    ebm = np.ascontiguousarray(game.geo.edge_box_masks, dtype=np.int64)
    return dab_facts, dab_step, dab_rollout, int(game.full), ebm


def _cn_kernels(game: Game) -> tuple:
    """arg = 1 with the seed's draw rule, else 0."""
    return cn_facts, cn_step, cn_rollout, int(bool(game.seed_draw_rule)), NO_AUX


register_kernels(TicTacToe, lambda game: (ttt_facts, ttt_step, ttt_rollout, 0, NO_AUX), tactical=True)
register_kernels(Connect4, lambda game: (c4_facts, c4_step, c4_rollout, 0, NO_AUX), tactical=True)
if DotsAndBoxes is not None:
    register_kernels(DotsAndBoxes, _dab_kernels)
if Conniption is not None:
    register_kernels(Conniption, _cn_kernels)


# ---------------------------------------------------------------------------------------------- the agent
class MCTSAgent(Agent):
    """UCT with random rollouts; ``simulations`` per move, exploration ``c``, optional MCTS-solver backup.

    ``rollout="tactical"`` (games registered with ``tactical=True``: tic-tac-toe, Connect 4) plays rollouts with
    the tactical player instead of at random.  ``kernel=False`` forces the generic Python path (same tree,
    slower; it exists to cross-check the kernels).  After ``act``, ``last_tree`` holds the node table, wins and
    child table of the search (for inspection and tests).
    """

    def __init__(
        self,
        game: Game,
        simulations: int = 1000,
        c: float = 1.4,
        solver: bool = False,
        rollout: str = "random",
        kernel: bool = True,
        name: str = "mcts",
    ) -> None:
        super().__init__(game, name)
        if not isinstance(simulations, (int, np.integer)) or isinstance(simulations, bool) or simulations < 1:
            raise BoardRLError(f"{name}: simulations must be an integer >= 1, got {simulations!r}")
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not c >= 0:
            raise BoardRLError(f"{name}: c must be a number >= 0, got {c!r}")
        if not isinstance(solver, (bool, np.bool_)):
            raise BoardRLError(f"{name}: solver must be true or false, got {solver!r}")
        plugin = kernel_plugin(game) if kernel else None
        self._kernel = plugin.build(game) if plugin is not None else None
        rollouts = ROLLOUTS if plugin is not None and plugin.tactical else ("random",)
        if rollout not in rollouts:
            choices = ", ".join(rollouts)
            raise BoardRLError(f"{name}: unknown rollout {rollout!r} for {game.game_id}; choices: {choices}")
        self.simulations = int(simulations)
        self.c = float(c)
        self.solver = bool(solver)
        self.rollout = rollout
        self._words = untried_words(game.num_actions)
        self.last_tree: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def act(self, state: Any, rng: np.random.Generator) -> int:
        self.game.check_state(state)
        legal = np.flatnonzero(self.game.legal_moves(state))
        if len(legal) == 0:
            raise BoardRLError(f"{self.name}: no legal move, the game is over")
        rs = np.array([rng.integers(0, 2**63)], dtype=np.uint64)
        size = self.simulations + 1
        info = np.zeros((size, node_columns(self._words)), dtype=np.int64)
        legal_words = np.zeros(self._words, dtype=np.int64)  # scratch: where ``facts`` reports the legal actions
        wins = np.zeros(size, dtype=np.float64)
        children = np.full((size, self.game.num_actions), -1, dtype=np.int64)
        if self._kernel is not None:
            facts, step, rollout, arg, aux = self._kernel
            states = np.zeros((size, len(state)), dtype=np.int64)
            states[0] = state
            kind = ROLLOUTS.index(self.rollout)
            move = uct_search(
                info, wins, children, legal_words, states, self.simulations, self.c, self.solver, kind, rs, facts, step,
                rollout, arg, aux,
            )
        else:  # the same loop in Python, over the Game interface
            move = uct_search.py_func(
                info, wins, children, legal_words, [state], self.simulations, self.c, self.solver, 0, rs, self._facts,
                self._step, self._rollout, 0, None,
            )
        self.last_tree = (info, wins, children)
        return int(move)

    # -------------------------------------------------------------------------------- any game: Python plug-ins
    def _facts(self, states: list, node: int, arg: int, aux: None, legal: np.ndarray) -> tuple[int, int]:
        """(player to move, proven value or UNKNOWN) of ``states[node]``; its legal actions as bits into ``legal``."""
        g, state = self.game, states[node]
        legal[:] = 0
        if g.is_over(state):
            return g.to_move(state), int(round(g.returns(state)[0]))
        for a in np.flatnonzero(g.legal_moves(state)):
            legal[a // WORD] |= 1 << int(a % WORD)
        return g.to_move(state), UNKNOWN

    def _step(self, states: list, parent: int, child: int, a: int, arg: int, aux: None) -> None:
        """Append the child state (nodes are numbered in creation order, so ``child == len(states)``)."""
        states.append(self.game._apply(states[parent], a))

    def _rollout(self, states: list, node: int, kind: int, rs: np.ndarray, arg: int, aux: None) -> float:
        """Uniformly random play to the end (same choice rule as the kernels); result for player 0."""
        g, state = self.game, states[node]
        while not g.is_over(state):
            legal = np.flatnonzero(g.legal_moves(state))
            k = len(legal)
            state = g._apply(state, int(legal[min(int(next_uniform(rs) * k), k - 1)]))
        return 0.5 * (g.returns(state)[0] + 1.0)

    def root_visits(self) -> np.ndarray:
        """Visit count of every root action in the last search (0 for actions never expanded)."""
        if self.last_tree is None:
            raise BoardRLError(f"{self.name}: no search yet; call act first")
        info, _, children = self.last_tree
        out = np.zeros(children.shape[1], dtype=np.int64)
        for a, ch in enumerate(children[0]):
            if ch >= 0:
                out[a] = info[ch, VISITS]
        return out

    def root_proven(self) -> int | None:
        """Proven value of the last root for the player to move there (+1/0/-1), None when not proven."""
        if self.last_tree is None:
            raise BoardRLError(f"{self.name}: no search yet; call act first")
        info = self.last_tree[0]
        v = int(info[0, PROVEN])
        if v == UNKNOWN:
            return None
        return v if info[0, TO_MOVE] == 0 else -v
