"""Batched PUCT tree search with a pluggable evaluator: AlphaZero's MCTS for every game, many trees at once.

One search runs a tree for each of B root positions.  Each *wave* walks up to ``leaves_per_wave`` paths down
every unfinished tree (a numba kernel), steps the chosen leaf edges on the game's batched engine, hands all new
non-terminal leaves of all trees to the evaluator in **one** batch (a network forward pass, or random
playouts), and backs the values up (a second numba kernel).  So a network sees batches of B x leaves_per_wave
positions even when one game is being played, and self-play of 256 games costs one forward pass per wave.

Selection is PUCT (Silver et al. 2017; seed 003's form):

    a* = argmax_a  Q(s, a) + c_puct * P(s, a) * sqrt(N(s) + 1e-8) / (1 + N(s, a))

with Q the mean value of the edge from the view of the player who chooses at s (``fpu`` for an unvisited
edge), P the evaluator's prior masked to legal actions and renormalised, N(s) the node's visits.  Values are
kept per edge from the chooser's view, so extra turns (Dots and Boxes, Conniption's stages) need no special
case: a leaf value for player p is added with + to every edge chosen by p and with - to the others.

Several walks of one tree in one wave are spread by a **virtual loss**: an edge on a pending path counts one
extra visit with value -1 for its chooser until the walk's value comes back.  A walk that reaches an edge
another walk of the same wave is already expanding is dropped (its virtual loss undone) and retried in the
next wave, so every counted simulation adds exactly one evaluated leaf or one terminal result.

**Evaluators** (OpenSpiel's ``Evaluator`` idea): ``evaluate(states, legal, rng) -> (priors, values)`` for an
(N, width) array of state rows, values in [-1, 1] for each row's player to move.  ``NetworkEvaluator`` (a
policy/value network), ``RolloutEvaluator`` (uniform priors, random playouts on the batched engine) and
``UniformEvaluator`` (uniform priors, value 0: pure visit statistics), ``MixedEvaluator`` (a network's priors,
its value mixed with random playouts) and ``TacticalEvaluator`` (any of them, with exact values where the game's
short-tactics check settles a leaf) are here.  Nothing in this module knows
a game by name: the tree handles any fixed action count, and states move only through the Game interface.
``PUCTAgent`` plays with a network-free evaluator (registry name ``puct``); ``AlphaZeroAgent`` (agents/alphazero.py)
with a network.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numba import njit

from boardrl.agents.base import Agent
from boardrl.agents.output_cache import OutputCache, parameter_versions
from boardrl.errors import BoardRLError
from boardrl.games.base import Game, random_legal_actions

#: The network sees every batch padded to a multiple of ``PAD_ROWS`` rows and to at least ``MIN_ROWS`` (copies of
#: its first row): a position's outputs are then bit-equal whatever batch it came in (``learn/alphazero_selfplay.py``
#: has the measurements; tests/agents/test_output_cache.py checks it).
PAD_ROWS = 8
MIN_ROWS = 32

FREE, PENDING = -1, -2  # child[b, node, a]: not expanded / being expanded in this wave


class Evaluator(Protocol):
    """Priors and values for a batch of positions (module docstring)."""

    def evaluate(self, states: np.ndarray, legal: np.ndarray,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(priors (N, A) >= 0, values (N,) in [-1, 1] for each row's player to move)."""


# ---------------------------------------------------------------------------------------------- evaluators
class UniformEvaluator:
    """Uniform priors and value 0: the search then spreads visits by the exploration term alone."""

    def evaluate(self, states: np.ndarray, legal: np.ndarray,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        return legal.astype(np.float32), np.zeros(len(states), dtype=np.float32)


class RolloutEvaluator:
    """Uniform priors; value = mean result of ``rollouts`` uniformly random playouts (batched engine)."""

    def __init__(self, game: Game, rollouts: int = 1) -> None:
        if rollouts < 1:
            raise BoardRLError(f"rollout evaluator: rollouts must be >= 1, got {rollouts}")
        self.game, self.rollouts = game, int(rollouts)

    def evaluate(self, states: np.ndarray, legal: np.ndarray,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        n = len(states)
        rows = np.repeat(np.asarray(states, dtype=np.int64), self.rollouts, axis=0)
        mover = self.game.to_move_batch(rows).astype(np.int64)
        result = playout_results(self.game, rows, rng)
        values = result[np.arange(len(rows)), mover].reshape(n, self.rollouts).mean(axis=1)
        return legal.astype(np.float32), values.astype(np.float32)


def playout_results(game: Game, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(N, 2) per-player results of uniformly random playouts from unfinished state rows."""
    env = game.batched(len(rows), auto_reset=False)
    env.states[:] = rows
    out = np.zeros((len(rows), 2), dtype=np.float32)
    live = np.ones(len(rows), dtype=bool)
    while live.any():
        actions = np.where(live, random_legal_actions(env.legal_mask(), rng), -1)
        finished, rets = env.step(actions)
        out[finished] = rets[finished]
        live &= ~finished
    return out


class NetworkEvaluator:
    """A policy/value network (``head: policy_value``): softmax of the legal logits and the tanh value.

    Every batch goes to the network padded with copies of its first row to a multiple of ``PAD_ROWS`` rows and to
    at least ``MIN_ROWS``: a position's outputs are then bit-equal whatever batch it came in.  ``cache_entries``
    > 0 remembers outputs by position (``output_cache.py``), which that invariance makes exact.
    """

    def __init__(self, game: Game, network: Any, device: Any = "cpu", cache_entries: int = 0) -> None:
        import torch

        self.game, self.network, self.device = game, network, torch.device(device)
        self.cache = OutputCache(game.num_actions, cache_entries) if cache_entries else None
        self.calls = 0  # forward passes, for throughput figures
        self.positions = 0  # positions the network evaluated (cache hits not counted)

    def evaluate(self, states: np.ndarray, legal: np.ndarray,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        if self.cache is None:
            return self._forward(states, legal)
        keys, slots, fresh = self.cache.lookup(states, parameter_versions(self.network))
        priors = np.empty((len(states), self.game.num_actions), np.float32)
        values = np.empty(len(states), np.float32)
        hit = slots >= 0
        priors[hit], values[hit] = self.cache.outputs(slots[hit])  # before ``store``, which may start over
        if len(fresh):
            new_priors, new_values = self._forward(states[fresh], legal[fresh])
            miss = ~hit
            priors[miss], values[miss] = new_priors[-1 - slots[miss]], new_values[-1 - slots[miss]]
            self.cache.store(keys, fresh, new_priors, new_values)
        return priors, values

    def _forward(self, states: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        import torch

        x = torch.from_numpy(self.game.encode_batch(states)).to(self.device)
        n = len(states)
        pad = max(MIN_ROWS, n + (-n) % PAD_ROWS) - n
        if pad and n:  # copies of the first row: a row's outputs then do not depend on the batch it came in
            x = torch.cat([x, x[:1].expand(pad, *x.shape[1:])])
        was_training = self.network.training
        self.network.eval()
        try:
            with torch.inference_mode():  # no autograd bookkeeping: the same outputs, faster (make bench, alphazero.*)
                logits, value = self.network(x)
                logits, value = logits[:n], value[:n]
                logits = logits.masked_fill(~torch.from_numpy(legal).to(self.device), float("-inf"))
                priors = torch.softmax(logits.float(), dim=1)
        finally:
            self.network.train(was_training)
        self.calls += 1
        self.positions += n
        return priors.cpu().numpy(), value.float().cpu().numpy().reshape(-1)


class MixedEvaluator:
    """A network's priors, and a value that mixes its value head with random playouts (AlphaGo's leaf value).

    value = (1 - ``rollout_weight``) * network value + ``rollout_weight`` * mean of ``rollouts`` playouts.
    Why: a network trained on a short budget can hold useful priors and a misleading value head; the playouts
    give an unbiased (if noisy) value that the priors then focus.  Measured on Conniption (README "AlphaZero"):
    the default run's network searching with its own values won no game as second against the seed-004
    heuristics at 100-1,600 simulations, and with playout values most of them.  ``rollout_weight`` 0 is the
    network alone (no playout is run).
    """

    def __init__(self, network: NetworkEvaluator, rollouts: RolloutEvaluator, rollout_weight: float) -> None:
        if not 0.0 <= rollout_weight <= 1.0:
            raise BoardRLError(f"mixed evaluator: rollout_weight must be in [0, 1], got {rollout_weight}")
        self.network, self.rollouts, self.rollout_weight = network, rollouts, float(rollout_weight)

    def evaluate(self, states: np.ndarray, legal: np.ndarray,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        priors, values = self.network.evaluate(states, legal, rng)
        if self.rollout_weight == 0.0:
            return priors, values
        played = self.rollouts.evaluate(states, legal, rng)[1]
        w = np.float32(self.rollout_weight)
        return priors, ((1 - w) * values + w * played).astype(np.float32)


class TacticalEvaluator:
    """Another evaluator's priors and values, with the exact values of short tactics in place of its estimates
    where the game settles them (``Game.decided_values_batch``: +1 the mover wins before its turn ends, -1 it
    cannot stop the opponent winning in the next turn).

    Why: a leaf one turn before a forced loss is where a young value head errs most, and the tree does not
    reach far enough to correct it.  Measured on Conniption (README "AlphaZero"): the default run's network,
    which won no game as second against the seed-004 heuristics, won sols, cells and hybrid as second with
    this at its leaves; the check costs under a microsecond a leaf (0.45 us on average over Conniption positions
    from random play).  What this is not: a solver; positions the check cannot settle keep the inner
    evaluator's value.
    """

    def __init__(self, game: Game, inner: Evaluator) -> None:
        if not has_tactics(game):
            raise BoardRLError(f"tactics: {game.game_id} has no exact short-tactics check (decided_values_batch)")
        self.game, self.inner = game, inner

    def evaluate(self, states: np.ndarray, legal: np.ndarray,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        priors, values = self.inner.evaluate(states, legal, rng)
        decided = self.game.decided_values_batch(states)
        return priors, np.where(decided != 0, decided, values).astype(np.float32)


def has_tactics(game: Game) -> bool:
    """Whether ``game`` answers ``decided_values_batch`` (a game without the check answers None)."""
    return game.decided_values_batch(np.asarray([game.initial_state()], dtype=np.int64)) is not None


def with_tactics(game: Game, evaluator: Evaluator, tactics: bool) -> Evaluator:
    """``evaluator`` wrapped in a ``TacticalEvaluator`` when ``tactics``, else itself."""
    return TacticalEvaluator(game, evaluator) if tactics else evaluator


# ---------------------------------------------------------------------------------------------- the trees
@dataclass
class Trees:
    """B trees of at most ``capacity`` nodes over ``num_actions`` actions, as flat arrays (node 0 = root)."""

    states: np.ndarray   # (B, M, width) int64 state row of each node
    mover: np.ndarray    # (B, M) int64 player to move at the node
    terminal: np.ndarray  # (B, M) bool
    tvalue: np.ndarray   # (B, M) float64 the node's value for player 0: its result when terminal, else the
    #                      evaluator's estimate when it was expanded
    prior: np.ndarray    # (B, M, A) float64, -1 for illegal actions
    visits: np.ndarray   # (B, M, A) int64 N(s, a) (virtual losses included while a wave is out)
    value: np.ndarray    # (B, M, A) float64 W(s, a), from the view of the node's mover
    child: np.ndarray    # (B, M, A) int64 node index, FREE or PENDING
    size: np.ndarray     # (B,) int64 nodes in use

    @classmethod
    def allocate(cls, b: int, capacity: int, num_actions: int, width: int) -> "Trees":
        return cls(
            states=np.zeros((b, capacity, width), np.int64), mover=np.zeros((b, capacity), np.int64),
            terminal=np.zeros((b, capacity), np.bool_), tvalue=np.zeros((b, capacity), np.float64),
            prior=np.full((b, capacity, num_actions), -1.0), visits=np.zeros((b, capacity, num_actions), np.int64),
            value=np.zeros((b, capacity, num_actions), np.float64),
            child=np.full((b, capacity, num_actions), FREE, np.int64), size=np.ones(b, np.int64),
        )

    def root_visits(self) -> np.ndarray:
        """(B, A) visit counts of the root edges: the search's policy target."""
        return self.visits[:, 0, :].copy()

    def root_values(self) -> np.ndarray:
        """(B,) mean value of the root for its player to move (0 before any visit)."""
        n = self.visits[:, 0, :].sum(axis=1)
        return np.where(n > 0, self.value[:, 0, :].sum(axis=1) / np.maximum(n, 1), 0.0)


@njit(cache=True)
def _pick_edge(prior, visits, value, child, b, node, c_puct, fpu):
    """PUCT argmax over the legal edges of ``node`` (ties: the lowest action); -1 when none is legal."""
    total = 0
    for a in range(prior.shape[2]):
        total += visits[b, node, a]
    root_n = math.sqrt(total + 1e-8)
    best, best_score = -1, -np.inf
    for a in range(prior.shape[2]):
        p = prior[b, node, a]
        if p < 0.0:
            continue
        n = visits[b, node, a]
        q = value[b, node, a] / n if n > 0 else fpu
        score = q + c_puct * p * root_n / (1.0 + n)
        if score > best_score:
            best, best_score = a, score
    return best


@njit(cache=True)
def select_wave(prior, visits, value, child, terminal, active, walks, c_puct, fpu, path_node, path_action,
                path_len, leaf_kind):
    """Walk ``walks[b]`` paths down tree b (for each active b) with virtual losses.

    Walk (b, k) records its edges in ``path_node/path_action[b, k, :path_len[b, k]]`` and its end in
    ``leaf_kind[b, k]``: 1 = a new edge to expand (the last path edge, marked PENDING), 2 = an edge into a
    terminal node (its value is known), 0 = dropped (collided with a pending edge; virtual losses undone).
    """
    for b in range(prior.shape[0]):
        for k in range(path_node.shape[1]):
            leaf_kind[b, k] = 0
            path_len[b, k] = 0
        if not active[b]:
            continue
        for k in range(walks[b]):
            node = 0
            while node >= 0:
                a = _pick_edge(prior, visits, value, child, b, node, c_puct, fpu)
                node = take_edge(visits, value, child, terminal, path_node, path_action, path_len, leaf_kind, b, k,
                                 node, a)


@njit(cache=True)
def take_edge(visits, value, child, terminal, path_node, path_action, path_len, leaf_kind, b, k, node, a):
    """Walk (b, k) takes edge ``a`` of ``node`` with a virtual loss: the next node to choose from, or -1 where the
    walk ends (``leaf_kind`` and ``path_len`` say how; ``select_wave``).  Shared by every selection rule
    (PUCT here, Gumbel's in agents/gumbel.py): only the choice of ``a`` differs between them."""
    depth = path_len[b, k]
    ch = child[b, node, a]
    if ch == PENDING:  # another walk of this wave is expanding this edge: drop this walk
        for d in range(depth):
            visits[b, path_node[b, k, d], path_action[b, k, d]] -= 1
            value[b, path_node[b, k, d], path_action[b, k, d]] += 1.0
        path_len[b, k] = 0
        return -1
    path_node[b, k, depth], path_action[b, k, depth] = node, a
    path_len[b, k] = depth + 1
    visits[b, node, a] += 1  # virtual loss
    value[b, node, a] -= 1.0
    if ch == FREE:
        child[b, node, a] = PENDING
        leaf_kind[b, k] = 1
        return -1
    if terminal[b, ch]:
        leaf_kind[b, k] = 2
        return -1
    return ch


@njit(cache=True)
def backup_wave(states, mover, terminal, tvalue, prior, visits, value, child, size, path_node, path_action,
                path_len, leaf_kind, leaf_b, leaf_k, new_rows, new_mover, new_terminal, new_value0, new_prior,
                done_sims):
    """Add the wave's new nodes (rows i of the ``new_*`` arrays belong to walk (leaf_b[i], leaf_k[i])), then
    back every finished walk's value (for player 0) up its path, replacing the virtual losses."""
    for i in range(leaf_b.shape[0]):
        b, k = leaf_b[i], leaf_k[i]
        d = path_len[b, k] - 1
        parent, a = path_node[b, k, d], path_action[b, k, d]
        node = size[b]
        size[b] += 1
        child[b, parent, a] = node
        states[b, node, :] = new_rows[i, :]
        mover[b, node] = new_mover[i]
        terminal[b, node] = new_terminal[i]
        tvalue[b, node] = new_value0[i]
        for j in range(prior.shape[2]):
            prior[b, node, j] = new_prior[i, j]
    for b in range(path_len.shape[0]):
        for k in range(path_len.shape[1]):
            n = path_len[b, k]
            if n == 0 or leaf_kind[b, k] == 0:
                continue
            last = child[b, path_node[b, k, n - 1], path_action[b, k, n - 1]]
            v0 = tvalue[b, last]
            for d in range(n):
                node, a = path_node[b, k, d], path_action[b, k, d]
                value[b, node, a] += 1.0 + (v0 if mover[b, node] == 0 else -v0)  # undo the virtual -1, add v
            done_sims[b] += 1


def normalised_priors(raw: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Priors over legal actions summing to 1 (uniform where the raw ones vanish), -1 on illegal actions."""
    p = np.where(legal, np.maximum(np.asarray(raw, dtype=np.float64), 0.0), 0.0)
    total = p.sum(axis=1, keepdims=True)
    uniform = legal / np.maximum(legal.sum(axis=1, keepdims=True), 1)
    p = np.where(total > 0, p / np.where(total > 0, total, 1.0), uniform)
    return np.where(legal, p, -1.0)


# ---------------------------------------------------------------------------------------------- the search
@dataclass(frozen=True)
class SearchSettings:
    """``simulations`` per root; ``c_puct``; ``fpu`` (Q of an unvisited edge); ``leaves_per_wave`` walks per tree
    per wave; root Dirichlet noise ``dirichlet_alpha`` mixed with weight ``noise`` (0: none)."""

    simulations: int = 100
    c_puct: float = 1.5
    fpu: float = 0.0
    leaves_per_wave: int = 8
    dirichlet_alpha: float = 0.3
    noise: float = 0.0

    def __post_init__(self) -> None:
        if self.simulations < 1:
            raise BoardRLError(f"search: simulations must be >= 1, got {self.simulations}")
        if self.leaves_per_wave < 1:
            raise BoardRLError(f"search: leaves_per_wave must be >= 1, got {self.leaves_per_wave}")
        if not self.c_puct >= 0 or not 0 <= self.noise <= 1 or not self.dirichlet_alpha > 0:
            raise BoardRLError("search: c_puct must be >= 0, noise in [0, 1] and dirichlet_alpha > 0")


def step_rows(game: Game, rows: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(next rows, finished, per-player returns) of playing ``actions[i]`` in ``rows[i]`` (batched engine)."""
    env = game.batched(len(rows), auto_reset=False)
    env.states[:] = rows
    finished, rets = env.step(np.asarray(actions, dtype=np.int64))
    return env.states.copy(), finished, rets


def search(game: Game, roots: np.ndarray, evaluator: Evaluator, settings: SearchSettings,
           rng: np.random.Generator, clock: dict[str, float] | None = None,
           root_noise: np.ndarray | None = None) -> Trees:
    """Run ``settings.simulations`` simulations from every (unfinished) root row; returns the trees.

    ``clock`` (optional) accumulates seconds spent in the tree kernels (``tree_s``), the game engine
    (``engine_s``) and the evaluator (``evaluator_s``), for throughput figures.  ``root_noise`` (optional, (B, A))
    holds the caller's Dirichlet draws over each root's legal actions, used instead of drawing them from ``rng``:
    self-play draws each game's noise from that game's own generator (learn/alphazero_selfplay.py), so a game's
    noise does not depend on which other games share the batch.
    """
    clock = clock if clock is not None else {}
    for key in ("tree_s", "engine_s", "evaluator_s"):
        clock.setdefault(key, 0.0)
    roots = np.ascontiguousarray(roots, dtype=np.int64)
    b, width = roots.shape
    legal = game.legal_mask_batch(roots)
    if not legal.any(axis=1).all():
        raise BoardRLError(f"search: root row {int(np.argmin(legal.any(axis=1)))} is a finished game")
    s = settings
    trees = Trees.allocate(b, s.simulations + 1, game.num_actions, width)
    trees.states[:, 0] = roots
    trees.mover[:, 0] = game.to_move_batch(roots)
    t = time.perf_counter()
    raw, _ = evaluator.evaluate(roots, legal, rng)
    clock["evaluator_s"] += time.perf_counter() - t
    trees.prior[:, 0] = root_priors(normalised_priors(raw, legal), legal, s, rng, root_noise)
    k_max = s.leaves_per_wave
    path_node = np.zeros((b, k_max, s.simulations + 1), np.int64)
    path_action = np.zeros_like(path_node)
    path_len = np.zeros((b, k_max), np.int64)
    leaf_kind = np.zeros((b, k_max), np.int64)
    done = np.zeros(b, np.int64)
    while (left := s.simulations - done).max() > 0:
        walks = np.minimum(left, k_max)
        t = time.perf_counter()
        select_wave(trees.prior, trees.visits, trees.value, trees.child, trees.terminal, left > 0, walks,
                    s.c_puct, s.fpu, path_node, path_action, path_len, leaf_kind)
        clock["tree_s"] += time.perf_counter() - t
        _expand(game, trees, evaluator, rng, path_node, path_action, path_len, leaf_kind, done, clock)
    return trees


def root_priors(priors: np.ndarray, legal: np.ndarray, s: SearchSettings, rng: np.random.Generator,
                draws: np.ndarray | None = None) -> np.ndarray:
    """Mix Dirichlet(alpha) noise into the legal root priors with weight ``noise`` (AlphaZero's exploration);
    the noise is ``draws[i, legal]`` where given, else drawn from ``rng`` root by root."""
    if s.noise <= 0:
        return priors
    out = priors.copy()
    for i in range(len(priors)):
        idx = np.flatnonzero(legal[i])
        d = draws[i, idx] if draws is not None else rng.dirichlet(np.full(idx.size, s.dirichlet_alpha))
        out[i, idx] = (1 - s.noise) * priors[i, idx] + s.noise * d
    return out


def _expand(game: Game, trees: Trees, evaluator: Evaluator, rng: np.random.Generator, path_node: np.ndarray,
            path_action: np.ndarray, path_len: np.ndarray, leaf_kind: np.ndarray, done: np.ndarray,
            clock: dict[str, float]) -> None:
    """Step the wave's new edges, evaluate the new non-terminal leaves in one batch, back everything up."""
    t0 = time.perf_counter()
    leaf_b, leaf_k = np.nonzero(leaf_kind == 1)
    last = path_len[leaf_b, leaf_k] - 1
    parents = path_node[leaf_b, leaf_k, last]
    actions = path_action[leaf_b, leaf_k, last]
    if leaf_b.size:
        rows, finished, rets = step_rows(game, trees.states[leaf_b, parents], actions)
    else:  # every walk of the wave ended in a known terminal node
        rows, finished = trees.states[leaf_b, parents], np.zeros(0, np.bool_)
        rets = np.zeros((0, 2), np.float32)
    mover = game.to_move_batch(rows).astype(np.int64)
    value0 = rets[:, 0].astype(np.float64)
    prior = np.full((len(rows), game.num_actions), -1.0)
    live = np.flatnonzero(~finished)
    t1 = time.perf_counter()
    clock["engine_s"] += t1 - t0
    if live.size:
        legal = game.legal_mask_batch(rows[live])
        raw, v = evaluator.evaluate(rows[live], legal, rng)
        prior[live] = normalised_priors(raw, legal)
        v = np.clip(np.asarray(v, dtype=np.float64), -1.0, 1.0)
        value0[live] = np.where(mover[live] == 0, v, -v)
    t2 = time.perf_counter()
    clock["evaluator_s"] += t2 - t1
    backup_wave(trees.states, trees.mover, trees.terminal, trees.tvalue, trees.prior, trees.visits, trees.value,
                trees.child, trees.size, path_node, path_action, path_len, leaf_kind, leaf_b.astype(np.int64),
                leaf_k.astype(np.int64), rows, mover, finished.astype(np.bool_), value0, prior, done)
    clock["tree_s"] += time.perf_counter() - t2


# ---------------------------------------------------------------------------------------------- move choice
def visit_policy(visits: np.ndarray, temperature: float) -> np.ndarray:
    """(B, A) move probabilities from root visit counts: N^(1/T) normalised; T = 0 puts all on the most visited
    (ties shared equally)."""
    n = np.asarray(visits, dtype=np.float64)
    if temperature <= 0:
        best = n == n.max(axis=1, keepdims=True)
        return best / best.sum(axis=1, keepdims=True)
    p = n ** (1.0 / temperature)
    return p / p.sum(axis=1, keepdims=True)


def sample_moves(policy: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One action per row drawn from ``policy`` (one uniform per row)."""
    return moves_from_uniforms(policy, rng.random(len(policy)))


def moves_from_uniforms(policy: np.ndarray, u: np.ndarray) -> np.ndarray:
    """One action per row of ``policy`` by inverse CDF at the uniform ``u[i]`` in [0, 1) (``sample_moves``)."""
    cum = np.cumsum(policy, axis=1)
    u = np.asarray(u) * cum[:, -1]
    return np.minimum((cum <= u[:, None]).sum(axis=1), policy.shape[1] - 1).astype(np.int64)


def most_visited(visits: np.ndarray, priors: np.ndarray) -> np.ndarray:
    """Per row the action with the most visits; ties go to the higher prior, then the lower action."""
    key = visits.astype(np.float64) + 0.5 * np.clip(priors, 0.0, 1.0)  # a prior never outweighs one visit
    return np.argmax(key, axis=1).astype(np.int64)


# ---------------------------------------------------------------------------------------------- the agent
class PUCTAgent(Agent):
    """PUCT search with a network-free evaluator: ``evaluator="rollout"`` (uniform priors, ``rollouts`` random
    playouts per leaf) or ``"uniform"`` (value 0).  Batched: a match's rows are searched together."""

    batched = True
    EVALUATORS = ("rollout", "uniform")

    def __init__(self, game: Game, simulations: int = 1000, c_puct: float = 1.5, evaluator: str = "rollout",
                 rollouts: int = 1, leaves_per_wave: int = 8, name: str = "puct") -> None:
        super().__init__(game, name)
        if evaluator not in self.EVALUATORS:
            raise BoardRLError(f"{name}: unknown evaluator {evaluator!r}; choices: {', '.join(self.EVALUATORS)}")
        self.settings = SearchSettings(simulations=int(simulations), c_puct=float(c_puct),
                                       leaves_per_wave=int(leaves_per_wave))
        self.evaluator: Evaluator = RolloutEvaluator(game, rollouts) if evaluator == "rollout" else UniformEvaluator()

    def act_batch(self, states: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        trees = search(self.game, states, self.evaluator, self.settings, rng)
        return most_visited(trees.root_visits(), trees.prior[:, 0, :])

    def act(self, state: Any, rng: np.random.Generator) -> int:
        self.game.check_state(state)
        return int(self.act_batch(np.asarray(state, dtype=np.int64)[None, :], rng)[0])
