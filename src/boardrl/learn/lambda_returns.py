"""Episode replay with lambda-returns: the memory of seed 003's value learners (SEEDS.md, "Seed 003").

Each stored row is one training sample of an episode: an input position (encoded), the action taken there
(Q learners; ignored by V learners), and how the position's value continues:

    G = r                                               if done (the next position is terminal)
    G = gamma * sign * (lam * G_next + (1 - lam) * v')  otherwise

``r`` is the result for the row's player to move, ``v'`` the value of the next position for *its* player to
move (V(s'), or max over legal Q(s', a')), and ``sign`` is +1 when the same player moves in both positions and
-1 when the opponent does (negamax: one network serves both seats, no white-max / black-min halves).  With
``lam = 0`` this is the one-step target; with ``lam = 1`` the discounted Monte-Carlo result.  It is seed 003's
G_t = r_t + gamma [lam G_{t+1} + (1 - lam) V(s_{t+1})] written from the mover's side, and each row bootstraps
from **its own** successor (the seed used the first sample's successor for every row: the bug SEEDS.md lists).

Rows of one episode are linked by ``next_index`` (-1: no stored successor, e.g. it was overwritten or not
stored; then G_next falls back to v').  ``depth`` (steps to the last stored row of the chain) lets
``lambda_returns`` run the backward recursion for the whole buffer in a handful of vectorised passes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from boardrl.errors import BoardRLError


def lambda_returns(
    reward: np.ndarray, done: np.ndarray, sign: np.ndarray, next_value: np.ndarray, next_index: np.ndarray,
    depth: np.ndarray, gamma: float, lam: float,
) -> np.ndarray:
    """The lambda-return of every row (see the module docstring); rows are processed by increasing depth.

    ``next_value`` is ignored where ``done``; ``next_index`` must point to a row of depth one less.
    """
    out = np.zeros(reward.shape[0], dtype=np.float64)
    has_next = next_index >= 0
    safe_next = np.where(has_next, next_index, 0)
    for d in range(int(depth.max(initial=-1)) + 1):
        rows = np.flatnonzero(depth == d)
        g_next = np.where(has_next[rows], out[safe_next[rows]], next_value[rows])
        boot = gamma * sign[rows] * (lam * g_next + (1.0 - lam) * next_value[rows])
        out[rows] = np.where(done[rows], reward[rows], boot)
    return out


class EpisodeBuffer:
    """The newest ``capacity`` rows (a ring); whole chunks of episodes are added at once.

    Arrays: obs / next_obs (float32 encodings), next_legal (bool, the next position's legal actions, for max Q),
    action, reward, done, sign, next_index, depth, and ret (the lambda-returns, refreshed by the learner).
    """

    def __init__(self, capacity: int, obs_shape: tuple[int, ...], num_actions: int) -> None:
        if capacity < 1:
            raise BoardRLError(f"episode buffer capacity must be >= 1, got {capacity}")
        self.capacity = int(capacity)
        c = self.capacity
        self.arrays: dict[str, np.ndarray] = {
            "obs": np.zeros((c, *obs_shape), np.float32), "next_obs": np.zeros((c, *obs_shape), np.float32),
            "next_legal": np.zeros((c, num_actions), np.bool_), "action": np.zeros(c, np.int64),
            "reward": np.zeros(c, np.float32), "done": np.zeros(c, np.bool_), "sign": np.zeros(c, np.int8),
            "next_index": np.full(c, -1, np.int64), "depth": np.zeros(c, np.int64), "ret": np.zeros(c, np.float32),
        }
        self.pos = 0
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def add(self, rows: dict[str, np.ndarray]) -> None:
        """Append rows (``next_index`` relative to the first new row, -1 for none); the oldest are overwritten."""
        n = rows["obs"].shape[0]
        if n == 0:
            return
        if n > self.capacity:  # keep the newest rows only; links into the dropped part are cut
            keep = n - self.capacity
            rows = {k: v[keep:] for k, v in rows.items()}
            rows["next_index"] = np.where(rows["next_index"] >= keep, rows["next_index"] - keep, -1)
            n = self.capacity
        slots = (self.pos + np.arange(n)) % self.capacity
        a = self.arrays
        a["next_index"][np.isin(a["next_index"], slots)] = -1  # successors about to be overwritten
        for key, value in rows.items():
            if key == "next_index":
                value = np.where(value >= 0, slots[np.maximum(value, 0)], -1)
            a[key][slots] = value
        self.pos = int((self.pos + n) % self.capacity)
        self.size = min(self.size + n, self.capacity)

    def refresh_returns(self, next_value: np.ndarray, gamma: float, lam: float) -> None:
        """Recompute every stored row's lambda-return from ``next_value`` (one value per stored row)."""
        a, n = self.arrays, self.size
        a["ret"][:n] = lambda_returns(a["reward"][:n], a["done"][:n], a["sign"][:n].astype(np.float64),
                                      next_value, a["next_index"][:n], a["depth"][:n], gamma, lam)

    def batch(self, idx: np.ndarray, keys: tuple[str, ...]) -> dict[str, np.ndarray]:
        """The named arrays at rows ``idx``."""
        return {k: self.arrays[k][idx] for k in keys}

    def state_dict(self) -> dict[str, Any]:
        return {"arrays": {k: v.copy() for k, v in self.arrays.items()}, "pos": self.pos, "size": self.size}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        for key, value in state["arrays"].items():
            self.arrays[key][...] = value
        self.pos, self.size = int(state["pos"]), int(state["size"])
