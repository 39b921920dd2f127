"""Depth-limited alpha-beta players: a generic one and the seeds' exact MaxMin (002) and AlphaBeta (000).

Three players share one negamax idea and differ only in what a leaf is worth and how a root tie is broken:

* ``AlphaBetaAgent(game, depth, evaluation)``: negamax over the Game interface searching ``depth`` plies
  (the root move is ply 1).  A finished game is worth ``+-(WIN + plies left)`` (wins sooner, losses later) or 0
  for a draw; a cut-off position is worth ``evaluation(game, state, player to move)``.  Ties among the best
  root moves are broken at random (``tiebreak="random"``) or by action order (``"first"``).
* ``MaxMinAgent(game, max_depth)``: seed 002's MaxMin exactly.  Every root action is scored by a minimiser-first
  search whose leaves are terminal states or nodes ``max_depth`` plies below the root move (so ``max_depth + 1``
  plies in all), always valued by the line heuristic of the ROOT player, even at terminal states (no separate
  win score).  The best root actions are tied exactly and one is drawn at random.  Because the line heuristic is
  antisymmetric, negamax from the side to move gives the seed's root-player values unchanged.
* ``Seed000AlphaBetaAgent(game)``: seed 000's AlphaBeta: fail-soft negamax to the end of the game on terminal
  utility (+1/0/-1 for the player to move), keeping the FIRST best move in legal-move order (strict ``>``), so
  it is deterministic and plays tic-tac-toe perfectly.

Tic-tac-toe and Connect 4 run in numba kernels on the games' bitboards (MaxMin depth 5 at Connect 4 must be a
few milliseconds per move because our protocol plays 1,000 games against it); every other game uses the same
search in Python over the Game interface, which also handles extra turns (Dots and Boxes): a child in which the
same player moves again keeps the sign and the window instead of negating them.

Root ties: to break ties exactly without searching every root move with a full window, each root move is
searched with the window ``(best - 1, +inf)``; values are integers in the kernels, so a result ``>= best`` is
exact and anything below is a bound that is certainly worse.  The Python path does the same with a relative
tolerance of 1e-9 instead of 1: exact unless two different evaluations lie within a billionth of each other.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from numba import njit

from boardrl.agents.base import Agent
from boardrl.agents.heuristics import (
    Evaluation,
    c4_line_score,
    get_evaluation,
    ttt_line_score,
    ttt_sides,
    utility,
)
from boardrl.agents.simple import C4, KERNEL_GAMES, TTT, kernel_position, legal_action_bits
from boardrl.errors import BoardRLError
from boardrl.games.base import Game
from boardrl.games.connect4 import apply as c4_apply
from boardrl.games.connect4 import status as c4_status
from boardrl.games.tictactoe import apply as ttt_apply
from boardrl.games.tictactoe import legal_bits as ttt_legal_bits
from boardrl.games.tictactoe import status as ttt_status

WIN = 1_000_000_000  # a won game outweighs any heuristic total (the line heuristics stay below 10^6)
INF = 1 << 60  # "infinity" for int64 windows; INF - 1 and -INF - 1 must not overflow
NO_MOVE = -(1 << 62)  # score of an illegal root action in a kernel's score array

# leaf modes of the kernels
MODE_WIN = 0  # AlphaBetaAgent: terminal = +-(WIN + plies left) / 0, cut-off = evaluation
MODE_SEED002 = 1  # MaxMin: terminal and cut-off both = line heuristic
# evaluations of the kernels
EVAL_UTILITY = 0
EVAL_LINE = 1
_KERNEL_EVALS = {"utility": EVAL_UTILITY, "line": EVAL_LINE}

SEED002_DEPTHS = {"tictactoe": 4, "connect4": 5}


# ---------------------------------------------------------------------------------------------- the two games
# One negamax serves tic-tac-toe and Connect 4: a position is three ints, (x, o, 0) or (current, mask, plies), and
# the helpers pick the game's rule kernel by the game code ``g`` (codes and positions as in ``agents/simple.py``).
# One kernel keeps the two games' searches from drifting apart.  Cost of the branch on ``g`` (measured): none at
# Connect 4; tic-tac-toe nodes are so small that the whole-tree search takes about 1.4x as long (0.7 ms instead of
# 0.5).  ``g`` stays a runtime int64, never a literal: a recursive kernel compiled for two signatures crashes when
# loaded from numba's cache (numba #6713).
#: Order the children are tried in, -1 ends a row: cells in order; Connect 4 centre first (same values, far
#: fewer nodes).
ORDERS = np.array([[0, 1, 2, 3, 4, 5, 6, 7, 8], [3, 2, 4, 1, 5, 0, 6, -1, -1]], dtype=np.int64)
NUM_ACTIONS = (9, 7)


@njit(cache=True)
def _status(g: int, a: int, b: int, c: int) -> int:
    return ttt_status(a, b) if g == TTT else c4_status(a, b, c)


@njit(cache=True)
def _child(g: int, a: int, b: int, c: int, move: int) -> tuple[int, int, int]:
    if g == TTT:
        x, o = ttt_apply(a, b, move)
        return x, o, c
    return c4_apply(a, b, c, move)


@njit(cache=True)
def _leaf(g: int, a: int, b: int, c: int, s: int, depth: int, mode: int, ev: int) -> int:
    """Value of a leaf for the player to move (``s`` = status, ``depth`` = plies left)."""
    if s != -1 and mode == MODE_WIN:
        return 0 if s == 2 else -(WIN + depth)  # the player to move after a line or a four has lost
    if ev == EVAL_LINE or mode == MODE_SEED002:
        if g == C4:
            return c4_line_score(a, a ^ b)
        own, opp = ttt_sides(a, b)
        return ttt_line_score(own, opp)
    return 0


@njit(cache=True)
def negamax(g: int, a: int, b: int, c: int, depth: int, alpha: int, beta: int, mode: int, ev: int) -> int:
    """Fail-soft negamax value for the player to move, ``depth`` plies left."""
    s = _status(g, a, b, c)
    if s != -1 or depth <= 0:
        return _leaf(g, a, b, c, s, depth, mode, ev)
    legal = legal_action_bits(g, a, b, c)
    best = -INF
    for move in ORDERS[g]:
        if move < 0:
            break
        if (legal >> move) & 1:
            na, nb, nc = _child(g, a, b, c, move)
            v = -negamax(g, na, nb, nc, depth - 1, -beta, -alpha, mode, ev)
            if v > best:
                best = v
                if v > alpha:
                    alpha = v
                    if alpha >= beta:
                        break
    return best


@njit(cache=True)
def kernel_root_scores(g: int, a: int, b: int, c: int, depth: int, mode: int, ev: int, exact: bool) -> np.ndarray:
    """Per-action scores (``NO_MOVE`` for illegal ones); see the module docstring for the tie window."""
    out = np.full(NUM_ACTIONS[g], NO_MOVE, dtype=np.int64)
    legal = legal_action_bits(g, a, b, c)
    best = -INF
    for move in ORDERS[g]:
        if move < 0:
            break
        if (legal >> move) & 1:
            na, nb, nc = _child(g, a, b, c, move)
            alpha = -INF if exact else best - 1
            v = -negamax(g, na, nb, nc, depth - 1, -INF, -alpha, mode, ev)
            out[move] = v
            if v > best:
                best = v
    return out


@njit(cache=True)
def ttt_seed000(x: int, o: int, alpha: float, beta: float) -> tuple[int, float]:
    """Seed 000's AlphaBeta search on tic-tac-toe: (first best move, its value for the player to move)."""
    s = ttt_status(x, o)
    if s != -1:
        return -1, 0.0 if s == 2 else -1.0
    legal = ttt_legal_bits(x, o)
    best_move = -1
    best = -np.inf
    for cell in range(9):
        if (legal >> cell) & 1:
            nx, no = ttt_apply(x, o, cell)
            _, sc = ttt_seed000(nx, no, -beta, -max(alpha, best))
            sc = -sc
            if sc > best:
                best = sc
                best_move = cell
                if best >= beta:
                    return best_move, best
    return best_move, best


# ---------------------------------------------------------------------------------------------- generic search
class GenericSearch:
    """Negamax alpha-beta in Python over the Game interface (any game, extra turns included).

    ``leaf(state, plies_left) -> value for the player to move`` decides what a terminal or cut-off node is worth.
    """

    def __init__(self, game: Game, leaf: Callable[[Any, int], float]) -> None:
        self.game = game
        self.leaf = leaf

    def value(self, state: Any, depth: float, alpha: float, beta: float) -> float:
        g = self.game
        if depth <= 0 or g.is_over(state):
            return self.leaf(state, depth)
        player = g.to_move(state)
        best = -math.inf
        for a in np.flatnonzero(g.legal_moves(state)):
            v = self.child_value(player, g._apply(state, int(a)), depth - 1, alpha, beta)
            if v > best:
                best = v
                if v > alpha:
                    alpha = v
                    if alpha >= beta:
                        break
        return best

    def child_value(self, player: int, child: Any, depth: float, alpha: float, beta: float) -> float:
        """Value of ``child`` for ``player`` (who moved into it): negated unless ``player`` moves again."""
        if self.game.to_move(child) == player:
            return self.value(child, depth, alpha, beta)
        return -self.value(child, depth, -beta, -alpha)

    def root_scores(self, state: Any, depth: float, exact: bool = True) -> dict[int, float]:
        """Value of every legal root action: all exact, or (``exact=False``) exact only for the best ones.

        The cheap mode searches each root action with the window ``(best - tol, +inf)``: a result above the
        lower edge is exact, one at or below it is an upper bound and certainly below ``best``; ``tol`` is a
        relative 1e-9, far below any real difference of evaluations, so the tied best moves are found exactly.
        """
        player = self.game.to_move(state)
        best = -math.inf
        out: dict[int, float] = {}
        for a in np.flatnonzero(self.game.legal_moves(state)):
            alpha = -math.inf if exact else best - 1e-9 * max(1.0, abs(best))
            v = self.child_value(player, self.game._apply(state, int(a)), depth - 1, alpha, math.inf)
            out[int(a)] = v
            best = max(best, v)
        return out


class WinLeaf:
    """AlphaBetaAgent's leaf: ``+-(WIN + plies left)`` or 0 at the end of the game, else the evaluation.

    A class rather than a closure so that agents pickle into match worker processes.
    """

    def __init__(self, game: Game, evaluate: Evaluation) -> None:
        self.game = game
        self.evaluate = evaluate

    def __call__(self, state: Any, depth: float) -> float:
        game = self.game
        player = game.to_move(state)
        if game.is_over(state):
            r = game.returns(state)[player]
            return 0.0 if r == 0 else math.copysign(WIN + max(depth, 0), r)
        return float(self.evaluate(game, state, player))


def _choose(scores: np.ndarray | dict[int, float], tiebreak: str, rng: np.random.Generator) -> int:
    """A best-scoring action: the first (action order) or a uniformly random one among the ties."""
    if isinstance(scores, dict):
        actions = np.array(sorted(scores), dtype=np.int64)
        values = np.array([scores[a] for a in actions], dtype=float)
    else:
        actions = np.flatnonzero(scores != NO_MOVE)
        values = scores[actions]
    best = actions[values == values.max()]
    return int(best[0] if tiebreak == "first" else best[rng.integers(len(best))])


def _not_over(agent: Agent, state: Any) -> None:
    agent.game.check_state(state)
    if agent.game.is_over(state):
        raise BoardRLError(f"{agent.name}: no legal move, the game is over")


# ---------------------------------------------------------------------------------------------- agents
class AlphaBetaAgent(Agent):
    """Depth-limited alpha-beta: ``depth`` plies (root move included), wins sooner, random root tie-break."""

    def __init__(
        self,
        game: Game,
        depth: int = 4,
        evaluation: str | Evaluation | None = None,
        tiebreak: str = "random",
        name: str = "alphabeta",
    ) -> None:
        super().__init__(game, name)
        if not isinstance(depth, (int, np.integer)) or isinstance(depth, bool) or depth < 1:
            raise BoardRLError(f"{name}: depth must be an integer >= 1, got {depth!r}")
        if tiebreak not in ("random", "first"):
            raise BoardRLError(f"{name}: tiebreak must be 'random' or 'first', got {tiebreak!r}")
        if evaluation is None:
            evaluation = default_evaluation(game)
        self.evaluate = get_evaluation(game, evaluation)
        self.depth = int(depth)
        self.tiebreak = tiebreak
        kernel_ok = isinstance(evaluation, str) and evaluation in _KERNEL_EVALS
        self._kernel = game.game_id if kernel_ok and game.game_id in KERNEL_GAMES else None
        self._ev = _KERNEL_EVALS.get(evaluation, -1) if isinstance(evaluation, str) else -1
        self._search = GenericSearch(game, WinLeaf(game, self.evaluate))

    def root_scores(self, state: Any, exact: bool = True) -> np.ndarray | dict[int, float]:
        """Scores of the root actions (exact ones when ``exact``; else only the best ones are exact)."""
        if self._kernel is not None:
            g = KERNEL_GAMES[self._kernel]
            return kernel_root_scores(g, *kernel_position(state), self.depth, MODE_WIN, self._ev, exact)
        return self._search.root_scores(state, self.depth, exact)

    def act(self, state: Any, rng: np.random.Generator) -> int:
        _not_over(self, state)
        return _choose(self.root_scores(state, exact=False), self.tiebreak, rng)


def default_evaluation(game: Game) -> str:
    """Line heuristic where seed 002 defines one, box margin for Dots and Boxes, else terminal utility."""
    if game.game_id in ("tictactoe", "connect4"):
        return "line"
    if game.game_id.startswith("dots_and_boxes"):
        return "margin"
    return "utility"


class MaxMinAgent(Agent):
    """Seed 002's MaxMin (see the module docstring); tic-tac-toe (default depth 4) and Connect 4 (depth 5)."""

    def __init__(self, game: Game, max_depth: int | None = None, name: str = "maxmin") -> None:
        super().__init__(game, name)
        if game.game_id not in SEED002_DEPTHS:
            raise BoardRLError(f"{name}: seed 002's MaxMin exists for tictactoe and connect4, not {game.game_id}")
        if max_depth is None:
            max_depth = SEED002_DEPTHS[game.game_id]
        if not isinstance(max_depth, (int, np.integer)) or isinstance(max_depth, bool) or max_depth < 0:
            raise BoardRLError(f"{name}: max_depth must be an integer >= 0, got {max_depth!r}")
        self.max_depth = int(max_depth)

    def root_scores(self, state: Any, exact: bool = True) -> np.ndarray:
        """Root-player heuristic value of each action (``NO_MOVE`` for illegal ones)."""
        plies = self.max_depth + 1  # the root move plus max_depth plies below it
        g = KERNEL_GAMES[self.game.game_id]
        return kernel_root_scores(g, *kernel_position(state), plies, MODE_SEED002, EVAL_LINE, exact)

    def act(self, state: Any, rng: np.random.Generator) -> int:
        _not_over(self, state)
        return _choose(self.root_scores(state, exact=False), "random", rng)


class Seed000AlphaBetaAgent(Agent):
    """Seed 000's AlphaBeta: full-depth negamax on terminal utility, first best move in legal order.

    Tic-tac-toe runs in a numba kernel; other games use the same algorithm in Python (``max_depth`` limits it
    there, with utility 0 at the cut-off, as the seed's evaluation gives for an unfinished game).
    """

    def __init__(self, game: Game, max_depth: float = math.inf, name: str = "seed000_alphabeta") -> None:
        super().__init__(game, name)
        if not (isinstance(max_depth, (int, float)) and max_depth >= 1):
            raise BoardRLError(f"{name}: max_depth must be >= 1 (or inf), got {max_depth!r}")
        self.max_depth = max_depth

    def act(self, state: Any, rng: np.random.Generator) -> int:
        _not_over(self, state)
        if self.game.game_id == "tictactoe" and self.max_depth >= 9:
            return int(ttt_seed000(state.x, state.o, -np.inf, np.inf)[0])
        return self.search(state, 0, -math.inf, math.inf)[0]

    def search(self, state: Any, depth: int, alpha: float, beta: float) -> tuple[int, float]:
        """The seed's recursion: (first best move, fail-soft value for the player to move)."""
        g = self.game
        if g.is_over(state) or depth == self.max_depth:
            return -1, utility(g, state, g.to_move(state))
        player = g.to_move(state)
        best_move, best = -1, -math.inf
        for a in g.legal_actions(state):
            child = g._apply(state, a)
            if g.to_move(child) == player:  # extra turn (Dots and Boxes): same side, same window
                score = self.search(child, depth + 1, max(alpha, best), beta)[1]
            else:
                score = -self.search(child, depth + 1, -beta, -max(alpha, best))[1]
            if score > best:
                best, best_move = score, a
                if best >= beta:
                    break
        return best_move, best
