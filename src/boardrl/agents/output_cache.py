"""A network's outputs remembered by position, so a search never pays twice for the same position.

Why: a search of hundreds of simulations a move revisits most of the positions that the previous move's search
evaluated, the games of one match or self-play batch share their openings, and Connect 4's trees transpose.
Measured on the default ``connect4_alphazero`` (2026-12-01; ``make bench``, ``output_cache.*``): 87% of the
positions its 800-simulation search sends the network in 20 games against ``maxmin`` had been evaluated before in
the same match, and 54% of those of a 256-game self-play batch of 16-simulation Gumbel searches; the cache made
them 2.00 and 1.97 times as fast.  The network is nearly all of a search's time (``make bench``: 97%).

Why a hit changes no bit: the evaluator pads every batch (``agents/puct.py`` ``PAD_ROWS``, ``MIN_ROWS``), and then a
position's outputs are bit-equal whatever batch it came in (``learn/alphazero_selfplay.py`` says how that was
measured).  A remembered output is therefore the one a new forward pass would give, and a search, a match and a
self-play game come out the same with the cache, without it, and at any cache size.

Why the cache checks the parameters' versions: an evaluator may hold a network that is still training (a learner's
own agent).  torch bumps a tensor's ``_version`` on every in-place write -- an optimizer step, ``load_state_dict``,
batch norm's running statistics -- so when any parameter's or buffer's version has moved, every remembered output
is dropped before the next lookup.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Remembered positions at most; past it the cache starts empty again (a simple bound: which entries survive
#: changes no output, only how many forward passes are saved).  2**18 Connect 4 entries take about 40 MB.
DEFAULT_ENTRIES = 1 << 18


def parameter_versions(network: Any) -> tuple[int, ...]:
    """The in-place write counters of every parameter and buffer of a torch module: equal while none changed."""
    return tuple(t._version for t in (*network.parameters(), *network.buffers()))


class OutputCache:
    """Priors and values of a network by state row (int64 rows, compared byte for byte)."""

    def __init__(self, num_actions: int, max_entries: int = DEFAULT_ENTRIES) -> None:
        if max_entries < 1:
            raise ValueError(f"an output cache needs at least one entry, got {max_entries}")
        self.max_entries, self.num_actions = int(max_entries), int(num_actions)
        self.priors = np.empty((0, num_actions), np.float32)  # max_entries rows once something is stored
        self.values = np.empty(0, np.float32)
        self.index: dict[bytes, int] = {}
        self.stamp: tuple[int, ...] | None = None
        self.hits = 0
        self.lookups = 0

    def clear(self) -> None:
        self.index.clear()

    def lookup(self, states: np.ndarray, stamp: tuple[int, ...]) -> tuple[list[bytes], np.ndarray, np.ndarray]:
        """Each row's key; each row's cache slot, or ``-1 - j`` when it is the j-th distinct position not
        remembered; and the rows to evaluate, the first row of each such position (a position twice in one batch
        is evaluated once).  ``stamp`` (``parameter_versions``) empties the cache when the network changed."""
        if stamp != self.stamp:
            self.clear()
            self.stamp = stamp
        rows = np.ascontiguousarray(states, dtype=np.int64)
        width = rows.shape[1] * 8
        raw = rows.tobytes()
        keys = [raw[i:i + width] for i in range(0, len(raw), width)]
        slots = np.fromiter((self.index.get(k, -1) for k in keys), dtype=np.int64, count=len(keys))
        self.lookups += len(keys)
        self.hits += int((slots >= 0).sum())
        fresh: dict[bytes, int] = {}
        first: list[int] = []
        for i in np.flatnonzero(slots < 0):
            j = fresh.setdefault(keys[i], len(fresh))
            if j == len(first):
                first.append(int(i))
            slots[i] = -1 - j
        return keys, slots, np.asarray(first, dtype=np.int64)

    def store(self, keys: list[bytes], rows: np.ndarray, priors: np.ndarray, values: np.ndarray) -> None:
        """Remember the outputs of ``rows`` (indices into ``keys``); starts over when the bound would be passed."""
        if len(rows) > self.max_entries:
            return  # a batch larger than the whole cache: nothing worth keeping
        if len(self.index) + len(rows) > self.max_entries:
            self.clear()
        if not len(self.values):
            self.priors = np.empty((self.max_entries, self.num_actions), np.float32)
            self.values = np.empty(self.max_entries, np.float32)
        base = len(self.index)
        self.priors[base:base + len(rows)] = priors
        self.values[base:base + len(rows)] = np.asarray(values).reshape(-1)
        for j, i in enumerate(rows):
            self.index[keys[int(i)]] = base + j

    def outputs(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The remembered priors and values at ``slots``."""
        return self.priors[slots], self.values[slots]
