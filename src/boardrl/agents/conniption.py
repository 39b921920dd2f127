"""Conniption players: seed 004's minimax ``AI`` with its five evaluation functions, and a tactical player.

Seed 004's ``AI`` (SEEDS.md, "Benchmark agents"), as reproduced by ``ConniptionAI``:

* Scores are from player 0's view (P1 in the seed): player 0 maximises, player 1 minimises.
* Every stage-move is a search node.  ``depth`` starts at 0 at the root and grows by 1 at every node where the
  root player's *opponent* is to move, so a full opponent turn adds 3.  A node is evaluated when it is a
  stage-0 node with ``depth > max_depth`` or a finished game, with the same evaluation function either way
  (there is no separate win score: Cells cannot see wins).  With ``max_depth = 3`` a search from stage 0
  covers own turn, opponent turn, own turn; with 1 (the seed's Random player) own turn and opponent turn.
* Alpha-beta cuts when ``alpha > beta`` strictly; each root child is searched with an open window, so its
  value is the exact depth-limited minimax value (the order children are tried in changes speed only, which
  is why this implementation is free to try ``none``, ``flip`` and the centre columns first).
* The AI searches again at each of its three stage decisions.
* Ties among the best root children (``tieChoice_priority``): ``none`` (weight -1) beats ``flip`` (weight 7);
  place moves get independent random weights 0..7 and the smallest wins.  At a stage only places or only
  flip/none are legal, so this is: prefer ``none`` to ``flip``, and pick uniformly among tied places (i.i.d.
  random weights with a fair break of equal weights give exactly the uniform choice, which is what we draw).
* Deliberately NOT reproduced: the seed's final version caches root children in a global dict keyed by
  (board, flips, stage), shared by all AI players and evaluation functions, so one player could reuse values
  computed with another's evaluation or depth.  That is a correctness hazard; every search here is fresh.
* Evaluations (final ``evaluation.py`` of the seed): Random = uniform integer 0..10 inclusive per evaluated
  node; Sols = over the 69 windows of four cells, a window holding only one player's pieces (n = 1..4) adds
  [1, 4, 16, 1024][n-1] to that player, value P1 total - P2 total; Cells = sum over occupied cells of the
  number of windows through the cell (+ for P1, - for P2); Hybrid = Cells + Sols; Flip = Hybrid - 10 * P1 flips
  used + 10 * P2 flips used.  Random draws come from a small generator inside the compiled search, seeded from
  the ``rng`` passed to ``act``, so games stay reproducible from one seed.

The search runs in numba on the game's own rule kernels (``boardrl.games.conniption.apply``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from boardrl.agents import CONNIPTION_AI_AGENTS
from boardrl.agents.base import Agent
from boardrl.agents.heuristics import C4_WINDOWS, line_score
from boardrl.errors import BoardRLError
from boardrl.games.base import Game
from boardrl.games.conniption import (
    COLS,
    FLIP,
    NONE,
    NUM_ACTIONS,
    ROWS,
    RUNNING,
    Conniption,
    ConniptionState,
    apply,
    legal_bits,
    turn_reaches,
)

EVALUATIONS = ("random", "sols", "cells", "hybrid", "flip")
_CODE = {name: i for i, name in enumerate(EVALUATIONS)}
RANDOM_EVAL, SOLS_EVAL, CELLS_EVAL, HYBRID_EVAL, FLIP_EVAL = range(5)
#: Agent names (as the match runner and CLI know them) of the seed's five benchmark AIs: evaluation -> name.
AGENT_NAMES = {evaluation: name for name, evaluation in CONNIPTION_AI_AGENTS.items()}
SOLS_WEIGHTS = np.array([0, 1, 4, 16, 1024], dtype=np.int64)
FLIP_PENALTY = 10
INF = 1 << 60
#: Order children are tried in: none and flip first (cheap, often best), then centre-first columns.
SEARCH_ORDER = np.array([NONE, FLIP, 3, 2, 4, 1, 5, 0, 6], dtype=np.int64)


#: The 69 windows of four cells.  Conniption's board uses Connect 4's layout (bit ``7*col + row``), so these are
#: the windows of seed 002's Connect 4 heuristic (their order does not matter: every use sums over them).
WINDOWS = C4_WINDOWS


def _cell_weights() -> np.ndarray:
    """CELL_WEIGHTS[row, col]: number of windows through the cell (seed's Cells table: 3 4 5 7 5 4 3 / ...)."""
    w = np.zeros((ROWS, COLS), dtype=np.int64)
    for win in WINDOWS:
        for c in range(COLS):
            for r in range(ROWS):
                if int(win) >> (7 * c + r) & 1:
                    w[r, c] += 1
    return w


CELL_WEIGHTS = _cell_weights()


def _column_sums() -> np.ndarray:
    """COLUMN_SUMS[c, x]: Cells weight of the pieces given by the 6-bit pattern x in column c (one lookup)."""
    out = np.zeros((COLS, 1 << ROWS), dtype=np.int64)
    for c in range(COLS):
        for x in range(1 << ROWS):
            out[c, x] = sum(CELL_WEIGHTS[r, c] for r in range(ROWS) if x >> r & 1)
    return out


COLUMN_SUMS = _column_sums()


# ---------------------------------------------------------------------------------------------- evaluation
@njit(cache=True)
def sols_score(p0: int, mask: int) -> int:
    """Seed's Sols evaluation (player 0's windows minus player 1's)."""
    return line_score(p0, mask ^ p0, WINDOWS, SOLS_WEIGHTS)


@njit(cache=True)
def cells_score(p0: int, mask: int) -> int:
    """Seed's Cells evaluation: window counts of player 0's cells minus those of player 1's."""
    p1 = mask ^ p0
    v = 0
    for c in range(COLS):
        sh = 7 * c
        v += COLUMN_SUMS[c, (p0 >> sh) & 63] - COLUMN_SUMS[c, (p1 >> sh) & 63]
    return v


@njit(cache=True)
def _next_random(rng_state: np.ndarray) -> np.uint64:
    """xorshift64*: a tiny generator usable inside compiled recursion, seeded from the agent's numpy rng."""
    x = rng_state[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rng_state[0] = x
    return x * np.uint64(0x2545F4914F6CDD1D)


@njit(cache=True)
def evaluate(p0: int, mask: int, flips0: int, flips1: int, code: int, rng_state: np.ndarray) -> int:
    """The seed evaluation ``code`` (index into EVALUATIONS) of a position, from player 0's view."""
    if code == RANDOM_EVAL:
        return np.int64((_next_random(rng_state) >> np.uint64(32)) % np.uint64(11))
    v = 0
    if code != CELLS_EVAL:
        v += sols_score(p0, mask)
    if code != SOLS_EVAL:
        v += cells_score(p0, mask)
    if code == FLIP_EVAL:
        v += FLIP_PENALTY * (flips1 - flips0)
    return v


# ---------------------------------------------------------------------------------------------- search
@njit(cache=True)
def _node_value(p0, mask, stage, f0, f1, lf, player, status, depth, root, max_depth, code, alpha, beta,
                seed_rule, rng_state, counter):
    """Seed-semantics alpha-beta value of a node (see module docstring); counter[0] counts evaluations."""
    if status != RUNNING or (stage == 0 and depth > max_depth):
        counter[0] += 1
        return evaluate(p0, mask, f0, f1, code, rng_state)
    bits = legal_bits(p0, mask, stage, f0, f1, lf, player, status)
    maximize = player == 0
    best = -INF if maximize else INF
    for k in range(NUM_ACTIONS):
        a = SEARCH_ORDER[k]
        if not (bits >> a) & 1:
            continue
        t = apply(p0, mask, stage, f0, f1, lf, player, status, a, seed_rule)
        d = depth + (1 if t[6] != root else 0)
        v = _node_value(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], d, root, max_depth, code, alpha, beta,
                        seed_rule, rng_state, counter)
        if maximize:
            if v > best:
                best = v
            if best > alpha:
                alpha = best
        else:
            if v < best:
                best = v
            if best < beta:
                beta = best
        if alpha > beta:
            break
    return best


@njit(cache=True)
def root_values(p0, mask, stage, f0, f1, lf, player, status, max_depth, code, seed_rule, rng_state, counter):
    """Exact depth-limited minimax value of every legal root action (open window each); 0 for illegal ones."""
    out = np.zeros(NUM_ACTIONS, dtype=np.int64)
    bits = legal_bits(p0, mask, stage, f0, f1, lf, player, status)
    for a in range(NUM_ACTIONS):
        if (bits >> a) & 1:
            t = apply(p0, mask, stage, f0, f1, lf, player, status, a, seed_rule)
            d = 1 if t[6] != player else 0
            # np.int64(...) keeps the bounds' type equal to the recursive calls' (numba #6713: a second,
            # literal-typed specialisation of a cached recursive function crashes when loaded from the cache).
            out[a] = _node_value(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], d, player, max_depth, code,
                                 np.int64(-INF), np.int64(INF), seed_rule, rng_state, counter)
    return out


def priority_tie_break(tied: list[int], rng: np.random.Generator) -> int:
    """Seed's ``tieChoice_priority`` among equally valued actions: none, else a uniform place, else flip."""
    if NONE in tied:
        return NONE
    places = [a for a in tied if a < COLS]
    if places:
        return int(places[rng.integers(len(places))])
    return FLIP


def _require_conniption(game: Game, who: str) -> None:
    if not isinstance(game, Conniption):
        raise BoardRLError(f"{who} plays conniption only, got game {game.game_id!r}")


class ConniptionAI(Agent):
    """Seed 004's minimax benchmark player with one of its evaluation functions (module docstring).

    ``evaluation`` is one of random, sols, cells, hybrid, flip; ``max_depth`` defaults to the seed's: 3, or 1
    for the Random evaluation.  The agent's name is ``conniption_random`` for Random, else the evaluation name.
    """

    def __init__(self, game: Game, evaluation: str = "flip", max_depth: int | None = None,
                 name: str | None = None) -> None:
        _require_conniption(game, "ConniptionAI")
        key = evaluation
        if isinstance(key, str) and key.startswith("conniption_"):  # the agent name of the Random evaluation
            key = key[len("conniption_"):]
        if key not in _CODE:
            raise BoardRLError(f"unknown conniption evaluation {evaluation!r}; choose from {', '.join(EVALUATIONS)}")
        if max_depth is None:
            max_depth = 1 if key == "random" else 3
        if isinstance(max_depth, bool) or not isinstance(max_depth, (int, np.integer)) or max_depth < 0:
            raise BoardRLError(f"max_depth must be an integer >= 0, got {max_depth!r}")
        super().__init__(game, name or AGENT_NAMES[key])
        self.evaluation = key
        self.code = _CODE[key]
        self.max_depth = int(max_depth)
        #: Evaluated nodes of the last search (for benchmarks).
        self.last_evaluations = 0

    def action_values(self, state: ConniptionState, rng: np.random.Generator) -> dict[int, int]:
        """Depth-limited minimax value (player 0's view) of every legal action."""
        self.game.check_state(state)
        rng_state = np.array([rng.integers(1, 2**63, dtype=np.int64)], dtype=np.uint64)
        counter = np.zeros(1, dtype=np.int64)
        vals = root_values(*state, self.max_depth, self.code, self.game.seed_draw_rule, rng_state, counter)
        self.last_evaluations = int(counter[0])
        return {a: int(vals[a]) for a in self.game.legal_actions(state)}

    def act(self, state: ConniptionState, rng: np.random.Generator) -> int:
        legal = self.game.legal_actions(state)
        if len(legal) == 1:  # nothing to decide: skip the search
            return legal[0]
        values = self.action_values(state, rng)
        best = (max if state.player == 0 else min)(values.values())
        return priority_tie_break([a for a, v in values.items() if v == best], rng)


# ---------------------------------------------------------------------------------------------- tactical
@njit(cache=True)
def tactical_classes(p0, mask, stage, f0, f1, lf, player, status, seed_rule):
    """Bit sets (winning actions, safe actions) for the player to move; see TacticalConniptionAgent."""
    wins = 0
    safe = 0
    bits = legal_bits(p0, mask, stage, f0, f1, lf, player, status)
    for a in range(NUM_ACTIONS):
        if (bits >> a) & 1:
            t = apply(p0, mask, stage, f0, f1, lf, player, status, a, seed_rule)
            if turn_reaches(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], player, seed_rule, np.bool_(False)):
                wins |= 1 << a
            elif turn_reaches(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], player, seed_rule, np.bool_(True)):
                safe |= 1 << a
    return wins, safe, bits


class TacticalConniptionAgent(Agent):
    """Win if you can this turn, else stop the opponent winning in their next turn, else random.

    Exactly, at each stage decision of player P:

    1. *Win.* An action is winning when some sequence of P's stage-moves starting with it, within the current
       turn, ends the game as a win for P (a placed four; or a flip after which P has a four, which wins even
       when the opponent has one too).  If any exist, play one uniformly at random.
    2. *Block.* Otherwise an action is safe when some continuation of it to the end of P's turn neither loses
       during the turn (e.g. a flip that makes only the opponent's four) nor leaves the opponent any sequence
       of stage-moves in their next turn (flip or none, place, flip or none) that wins; a draw counts as safe.
       If any exist, play one uniformly at random.
    3. Otherwise (every line loses to a reply) play uniformly among the legal actions.

    Because the classes are recomputed at every stage decision and a chosen action always keeps a winning or
    safe continuation, the three decisions of a turn stay consistent.  Cost: at most ~28 own sequences x ~28
    opponent sequences of bitboard steps per decision (numba; tens of microseconds).
    """

    def __init__(self, game: Game, name: str | None = None) -> None:
        _require_conniption(game, "TacticalConniptionAgent")
        super().__init__(game, name or "tactical")

    def classify(self, state: ConniptionState) -> tuple[list[int], list[int]]:
        """(winning actions, safe actions) as defined in the class docstring."""
        self.game.check_state(state)
        wins, safe, _ = tactical_classes(*state, self.game.seed_draw_rule)
        return ([a for a in range(NUM_ACTIONS) if wins >> a & 1], [a for a in range(NUM_ACTIONS) if safe >> a & 1])

    def act(self, state: ConniptionState, rng: np.random.Generator) -> int:
        self.game.check_state(state)
        wins, safe, bits = tactical_classes(*state, self.game.seed_draw_rule)
        pool = wins or safe or bits
        choices = [a for a in range(NUM_ACTIONS) if pool >> a & 1]
        return int(choices[rng.integers(len(choices))])

