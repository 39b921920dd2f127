"""Seed 002's QT agent: greedy over a QT table with the seed's random tie-break (``learn/qt.py`` trains it).

``greedy_random_ties`` is the seed's ``np.random.choice(flatnonzero(qs == qs.max()))`` among the legal actions,
absent entries (NaN) read as 0; ``_nth_legal`` is its uniform pick, shared with the learner's exploration.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from boardrl.agents.learned import GreedyQAgent


@njit(cache=True)
def _nth_legal(legal: np.ndarray, values: np.ndarray, best: float, use_values: bool, u: float) -> int:
    """Uniform pick (by ``u``) among legal actions, or among legal actions whose value equals ``best``."""
    k = 0
    for a in range(legal.shape[0]):
        if legal[a] and (not use_values or values[a] == best):
            k += 1
    r = min(int(u * k), k - 1)
    for a in range(legal.shape[0]):
        if legal[a] and (not use_values or values[a] == best):
            if r == 0:
                return a
            r -= 1
    return -1


@njit(cache=True)
def greedy_random_ties(values: np.ndarray, legal: np.ndarray, u: float) -> int:
    """argmax over legal actions of ``values`` (NaN = an absent entry = 0), ties uniformly at random by ``u``."""
    q = np.where(np.isnan(values), 0.0, values)
    best = -np.inf
    for a in range(legal.shape[0]):
        if legal[a] and q[a] > best:
            best = q[a]
    return _nth_legal(legal, q, best, True, u)


class QTAgent(GreedyQAgent):
    """Greedy over a QT table with the seed's random tie-break (``np.random.choice`` among the maxima).

    Saved as kind ``qt_table`` (agents/learned.py LOADERS), so a loaded model keeps the seed's random ties: the
    seed evaluated its QT with them, and ties are common in a table that starts at 0.
    """

    kind = "qt_table"

    def act(self, state: Any, rng: np.random.Generator) -> int:
        return int(self.act_batch(np.asarray([state], dtype=np.int64), rng)[0])

    def act_batch(self, states: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        states = np.ascontiguousarray(states, dtype=np.int64)
        q = self.table.q_values(states)
        legal = self.game.legal_mask_batch(states)
        u = rng.random(states.shape[0])
        return np.array([greedy_random_ties(q[i], legal[i], u[i]) for i in range(states.shape[0])],
                        dtype=np.int64)
