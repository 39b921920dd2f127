"""Gumbel AlphaZero search (Danihelka et al., "Policy improvement by planning with Gumbel", ICLR 2022) on the
batched trees of agents/puct.py.

Why: PUCT needs many simulations before its visit counts improve on the prior, and its exploration (Dirichlet
noise, a temperature) can make the played move and the policy target worse than the network's own.  Gumbel's
search is a policy improvement with as few as 2 simulations: at the root it samples without replacement the top
``m`` actions by g + logits (g ~ Gumbel(0) per action; Gumbel-top-k) and spends the budget on them by
**sequential halving**; the policy target is the **completed-Q improved policy** softmax(logits + sigma(q)).

Everything else is puct.py's: the ``Trees`` arrays, the evaluators, ``_expand`` and ``backup_wave`` (values per
edge from the chooser's view, so extra turns need no special case).  Only the tree walk differs
(``gumbel_select_wave``, numba like PUCT's), and every wave still hands all leaves of all trees to one evaluator
call.

**Completed Q** at a node (the paper's Appendix D; mctx ``qtransform_completed_by_mix_value``): q(a) is the edge's
mean value for the node's mover where visited, else v_mix = (v + N * sum_visited p(a) q(a) / sum_visited p(a)) /
(1 + N), the interpolation of the evaluator's value v of the node and the prior-weighted mean of the visited Qs
(N the node's visits).  The completed qs are min-max rescaled to [0, 1] over the legal actions (mctx takes the
min and max over all actions, its illegal ones completed with v_mix too; here illegal actions do not exist), and
sigma(q) = (c_visit + max_b N(b)) * c_scale * q.  ``c_visit`` 50 and ``c_scale`` 1.0 are the paper's values
(its section 4 / Appendix); mctx's defaults are ``maxvisit_init`` 50 and ``value_scale`` 0.1.

**Root**: the simulation with index j (the root's visits so far) may only enter an action whose visits equal the
j-th entry of the considered-visit sequence (``considered_visits``) and takes the argmax of g + logits +
sigma(q) among those; the first m simulations thus visit the Gumbel-top-m actions, and each halving keeps the best
half by that score.  **Interior nodes**: the deterministic rule argmax_a pi'(a) - N(a) / (1 + sum_b N(b)) with
pi' = softmax(logits + sigma(q)).  **The move**: among the actions with the most root visits, the argmax of
g + logits + sigma(q); with g = 0 (``noise=False``) the search is deterministic given the evaluator.

``leaves_per_wave`` k > 1: the walks of one tree in one wave carry PUCT's virtual loss (a pending edge counts a
visit with value -1).  The schedule's visit counts stay exact, because a walk's index is the root's visits with the
pending walks counted; but the choices inside a wave see virtual losses where results are not yet back, so which
actions survive a halving can differ from k = 1.  Self-play uses k = 1.

A caution: with noisy leaf values (random playouts) the node-wise min-max makes the non-root rule nearly greedy
(an action whose Q leads v_mix by any margin gets sigma's whole range, about 50 logits), so a refutation below it
may never be tried, and on tic-tac-toe Gumbel then misses optimal moves that PUCT with the same values finds;
with values from finished games only it agrees with the exact referee (tests/agents/test_gumbel.py).  mctx's
smaller default scale (0.1) did not change that much.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass

import numpy as np
from numba import njit

from boardrl.agents.puct import Evaluator, Trees, _expand, normalised_priors, take_edge
from boardrl.errors import BoardRLError
from boardrl.games.base import Game

TINY = 1e-30  # floor of a prior before its log: a legal action with prior 0 keeps a finite logit


# ---------------------------------------------------------------------------------------------- settings
@dataclass(frozen=True)
class GumbelSettings:
    """``simulations`` per root; ``considered_actions`` m of the root's sequential halving; ``c_visit`` and
    ``c_scale`` of sigma (the paper's 50 and 1.0); ``leaves_per_wave`` walks per tree per wave."""

    simulations: int = 100
    considered_actions: int = 16
    c_visit: float = 50.0
    c_scale: float = 1.0
    leaves_per_wave: int = 1

    def __post_init__(self) -> None:
        if self.simulations < 1:
            raise BoardRLError(f"gumbel search: simulations must be >= 1, got {self.simulations}")
        if self.considered_actions < 1:
            raise BoardRLError(f"gumbel search: considered_actions must be >= 1, got {self.considered_actions}")
        if self.leaves_per_wave < 1:
            raise BoardRLError(f"gumbel search: leaves_per_wave must be >= 1, got {self.leaves_per_wave}")
        if not self.c_visit >= 0 or not self.c_scale > 0:
            raise BoardRLError(f"gumbel search: c_visit must be >= 0 and c_scale > 0, got {self.c_visit} and "
                               f"{self.c_scale}")


# ---------------------------------------------------------------------------------------------- sequential halving
@functools.lru_cache(maxsize=256)
def considered_visits(m: int, n: int) -> tuple[int, ...]:
    """The visit count the root's j-th simulation must find on the action it enters, j = 0..n-1 (mctx's
    ``get_sequence_of_considered_visits``): log2(m) phases, each giving every surviving action
    max(1, n // (ceil(log2 m) * survivors)) more visits, survivors halving (at least 2) until n is spent."""
    if m <= 1:
        return tuple(range(n))
    phases = math.ceil(math.log2(m))
    seq: list[int] = []
    visits = [0] * m
    alive = m
    while len(seq) < n:
        for _ in range(max(1, int(n / (phases * alive)))):
            seq.extend(visits[:alive])
            for i in range(alive):
                visits[i] += 1
        alive = max(2, alive // 2)
    return tuple(seq[:n])


def considered_visits_table(m: int, n: int) -> np.ndarray:
    """(m + 1, n) int64: row c is ``considered_visits(c, n)``, for a root with c considered actions."""
    return np.array([considered_visits(c, n) for c in range(m + 1)], dtype=np.int64).reshape(m + 1, n)


# ---------------------------------------------------------------------------------------------- completed Q
@njit(cache=True)
def completed_sigma(prior, visits, value, tvalue, mover, b, node, c_visit, c_scale, out):
    """``out[a]`` = sigma(completed q(a)) for the legal actions of ``node`` in tree b (0 for illegal ones)."""
    total, most, sum_p, weighted = 0, 0, 0.0, 0.0
    for a in range(prior.shape[2]):
        n = visits[b, node, a]
        if prior[b, node, a] < 0.0:
            continue
        total += n
        most = max(most, n)
        if n > 0:
            p = max(prior[b, node, a], TINY)
            sum_p += p
            weighted += p * value[b, node, a] / n
    raw = tvalue[b, node] if mover[b, node] == 0 else -tvalue[b, node]
    v_mix = raw if sum_p == 0.0 else (raw + total * weighted / sum_p) / (total + 1)
    lo, hi = np.inf, -np.inf
    for a in range(prior.shape[2]):
        if prior[b, node, a] < 0.0:
            out[a] = 0.0
            continue
        n = visits[b, node, a]
        q = value[b, node, a] / n if n > 0 else v_mix
        out[a] = q
        lo, hi = min(lo, q), max(hi, q)
    scale = (c_visit + most) * c_scale / max(hi - lo, 1e-8)
    for a in range(prior.shape[2]):
        if prior[b, node, a] >= 0.0:
            out[a] = scale * (out[a] - lo)


@njit(cache=True)
def _interior_edge(prior, visits, value, tvalue, mover, b, node, c_visit, c_scale, buf):
    """argmax_a pi'(a) - N(a) / (1 + sum N) over the legal edges (ties: the lowest action)."""
    completed_sigma(prior, visits, value, tvalue, mover, b, node, c_visit, c_scale, buf)
    top, total = -np.inf, 0
    for a in range(prior.shape[2]):
        if prior[b, node, a] >= 0.0:
            buf[a] += math.log(max(prior[b, node, a], TINY))
            top = max(top, buf[a])
            total += visits[b, node, a]
    z = 0.0
    for a in range(prior.shape[2]):
        if prior[b, node, a] >= 0.0:
            buf[a] = math.exp(buf[a] - top)
            z += buf[a]
    best, best_score = -1, -np.inf
    for a in range(prior.shape[2]):
        if prior[b, node, a] >= 0.0:
            score = buf[a] / z - visits[b, node, a] / (1.0 + total)
            if score > best_score:
                best, best_score = a, score
    return best


@njit(cache=True)
def _root_edge(prior, visits, value, tvalue, mover, gumbel, b, target, c_visit, c_scale, buf):
    """argmax of g + logits + sigma(q) over the legal root edges with ``target`` visits (ties: the lowest
    action); over every legal edge if none has them (not reached when the schedule is followed)."""
    completed_sigma(prior, visits, value, tvalue, mover, b, 0, c_visit, c_scale, buf)
    best, best_score, fallback, fallback_score = -1, -np.inf, -1, -np.inf
    for a in range(prior.shape[2]):
        if prior[b, 0, a] < 0.0:
            continue
        score = gumbel[b, a] + math.log(max(prior[b, 0, a], TINY)) + buf[a]
        if visits[b, 0, a] == target and score > best_score:
            best, best_score = a, score
        if score > fallback_score:
            fallback, fallback_score = a, score
    return best if best >= 0 else fallback


@njit(cache=True)
def gumbel_select_wave(prior, visits, value, child, terminal, tvalue, mover, active, walks, gumbel, considered,
                       table, c_visit, c_scale, path_node, path_action, path_len, leaf_kind):
    """puct.select_wave with Gumbel's choices: the root follows sequential halving (``table[considered[b]]``
    indexed by the root's visits, pending walks included), other nodes the deterministic rule.  Same outputs."""
    buf = np.zeros(prior.shape[2])
    for b in range(prior.shape[0]):
        for k in range(path_node.shape[1]):
            leaf_kind[b, k] = 0
            path_len[b, k] = 0
        if not active[b]:
            continue
        for k in range(walks[b]):
            node = 0
            while node >= 0:
                if node == 0:
                    done = 0
                    for a in range(prior.shape[2]):
                        done += visits[b, 0, a]
                    a = _root_edge(prior, visits, value, tvalue, mover, gumbel, b, table[considered[b], done],
                                   c_visit, c_scale, buf)
                else:
                    a = _interior_edge(prior, visits, value, tvalue, mover, b, node, c_visit, c_scale, buf)
                node = take_edge(visits, value, child, terminal, path_node, path_action, path_len, leaf_kind, b, k,
                                 node, a)


@njit(cache=True)
def _root_outputs(prior, visits, value, tvalue, mover, gumbel, c_visit, c_scale, policy, action):
    """Per tree: the improved policy softmax(logits + sigma(q)) over legal root actions, and the move (the
    argmax of g + logits + sigma(q) among the most visited root actions)."""
    buf = np.zeros(prior.shape[2])
    for b in range(prior.shape[0]):
        completed_sigma(prior, visits, value, tvalue, mover, b, 0, c_visit, c_scale, buf)
        most, top = 0, -np.inf
        for a in range(prior.shape[2]):
            if prior[b, 0, a] >= 0.0:
                buf[a] += math.log(max(prior[b, 0, a], TINY))
                top = max(top, buf[a])
                most = max(most, visits[b, 0, a])
        z, best, best_score = 0.0, -1, -np.inf
        for a in range(prior.shape[2]):
            policy[b, a] = 0.0
            if prior[b, 0, a] < 0.0:
                continue
            policy[b, a] = math.exp(buf[a] - top)
            z += policy[b, a]
            score = gumbel[b, a] + buf[a]
            if visits[b, 0, a] == most and score > best_score:
                best, best_score = a, score
        for a in range(prior.shape[2]):
            policy[b, a] /= z
        action[b] = best


# ---------------------------------------------------------------------------------------------- the search
@dataclass
class GumbelResult:
    """The searched trees, the Gumbel draws g (B, A) (zeros without noise), the completed-Q improved policy (B, A)
    (the policy target) and the chosen move per root."""

    trees: Trees
    gumbel: np.ndarray
    policy: np.ndarray
    actions: np.ndarray


def gumbel_search(game: Game, roots: np.ndarray, evaluator: Evaluator, settings: GumbelSettings,
                  rng: np.random.Generator, noise: bool = True, clock: dict[str, float] | None = None,
                  gumbel: np.ndarray | None = None) -> GumbelResult:
    """Run ``settings.simulations`` Gumbel simulations from every (unfinished) root row.

    ``noise`` draws g ~ Gumbel(0) per root action from ``rng`` (self-play); without it g = 0 and the result is
    a function of the evaluator alone (evaluation).  ``gumbel`` (optional, (B, A)) is the caller's g, used instead
    of drawing it (with ``noise``): self-play draws each game's g from that game's own generator.  ``clock`` as
    in ``puct.search``.
    """
    clock = clock if clock is not None else {}
    for key in ("tree_s", "engine_s", "evaluator_s"):
        clock.setdefault(key, 0.0)
    s = settings
    trees, legal = _root_trees(game, roots, evaluator, s.simulations, rng, clock)
    b = len(legal)
    if not noise:
        g = np.zeros(legal.shape)
    else:
        g = rng.gumbel(size=legal.shape) if gumbel is None else np.asarray(gumbel, dtype=np.float64)
    considered = np.minimum(s.considered_actions, legal.sum(axis=1)).astype(np.int64)
    table = considered_visits_table(int(considered.max()), s.simulations)
    k_max = s.leaves_per_wave
    path_node = np.zeros((b, k_max, s.simulations + 1), np.int64)
    path_action = np.zeros_like(path_node)
    path_len = np.zeros((b, k_max), np.int64)
    leaf_kind = np.zeros((b, k_max), np.int64)
    done = np.zeros(b, np.int64)
    while (left := s.simulations - done).max() > 0:
        t = time.perf_counter()
        gumbel_select_wave(trees.prior, trees.visits, trees.value, trees.child, trees.terminal, trees.tvalue,
                           trees.mover, left > 0, np.minimum(left, k_max), g, considered, table, s.c_visit,
                           s.c_scale, path_node, path_action, path_len, leaf_kind)
        clock["tree_s"] += time.perf_counter() - t
        _expand(game, trees, evaluator, rng, path_node, path_action, path_len, leaf_kind, done, clock)
    policy, actions = root_outputs(trees, g, s)
    return GumbelResult(trees, g, policy, actions)


def _root_trees(game: Game, roots: np.ndarray, evaluator: Evaluator, simulations: int, rng: np.random.Generator,
                clock: dict[str, float]) -> tuple[Trees, np.ndarray]:
    """Trees holding the evaluated roots (priors, and the value for player 0 that v_mix needs); the legal mask."""
    roots = np.ascontiguousarray(roots, dtype=np.int64)
    legal = game.legal_mask_batch(roots)
    if not legal.any(axis=1).all():
        raise BoardRLError(f"search: root row {int(np.argmin(legal.any(axis=1)))} is a finished game")
    trees = Trees.allocate(len(roots), simulations + 1, game.num_actions, roots.shape[1])
    trees.states[:, 0] = roots
    trees.mover[:, 0] = game.to_move_batch(roots)
    t = time.perf_counter()
    raw, v = evaluator.evaluate(roots, legal, rng)
    clock["evaluator_s"] += time.perf_counter() - t
    trees.prior[:, 0] = normalised_priors(raw, legal)
    v = np.clip(np.asarray(v, dtype=np.float64), -1.0, 1.0)
    trees.tvalue[:, 0] = np.where(trees.mover[:, 0] == 0, v, -v)
    return trees, legal


def root_outputs(trees: Trees, gumbel: np.ndarray, settings: GumbelSettings) -> tuple[np.ndarray, np.ndarray]:
    """(improved policy (B, A), move (B,)) of searched trees (``_root_outputs``)."""
    b, _, a = trees.prior.shape
    policy, actions = np.zeros((b, a)), np.zeros(b, np.int64)
    _root_outputs(trees.prior, trees.visits, trees.value, trees.tvalue, trees.mover,
                  np.ascontiguousarray(gumbel, dtype=np.float64), float(settings.c_visit), float(settings.c_scale),
                  policy, actions)
    return policy, actions


def root_sigma(trees: Trees, settings: GumbelSettings) -> np.ndarray:
    """(B, A) sigma(completed q) at every root (0 on illegal actions): what the policy target adds to the logits."""
    out = np.zeros((trees.prior.shape[0], trees.prior.shape[2]))
    buf = np.zeros(trees.prior.shape[2])
    for b in range(len(out)):
        completed_sigma(trees.prior, trees.visits, trees.value, trees.tvalue, trees.mover, b, 0,
                        float(settings.c_visit), float(settings.c_scale), buf)
        out[b] = buf
    return out
