"""Experience replay: a fixed-size numpy ring buffer of transitions for off-policy learners (DQN and kin).

Why numpy and not torch: the batched games produce numpy arrays; sampling indices with the learner's own
``numpy.random.Generator`` keeps a run reproducible from its seed, and the whole buffer saves into a checkpoint
as plain arrays (``state_dict``), so a resumed run samples exactly what an uninterrupted one would.

``obs`` is whatever the learner stores for a position: input planes (float32, the default) or the game's int64
state rows (``obs_dtype=np.int64``), which DQN keeps so that a sampled position can be mapped by a board symmetry
before it is encoded (and a Connect 4 row is 24 bytes where its planes are 336).

Each transition stores what a negamax TD target needs: ``next_legal`` masks the max over the next state's
actions, ``done`` cuts the bootstrap, and ``same_mover`` says whether the next state's value counts for the
mover (Dots and Boxes extra turn) or against them (the opponent moves next: the sign flips).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from boardrl.errors import BoardRLError

STATE_FORMAT = 2
#: Stored field -> dtype (obs/next_obs: the buffer's ``obs_dtype``); obs/next_obs add obs_shape, next_legal adds
#: num_actions.
FIELDS: dict[str, type] = {
    "obs": np.float32,
    "action": np.int64,
    "reward": np.float32,
    "next_obs": np.float32,
    "next_legal": np.bool_,
    "done": np.bool_,
    "same_mover": np.bool_,
}


class Transitions(NamedTuple):
    """A batch of transitions (numpy arrays, first axis = batch)."""

    obs: np.ndarray  # obs_dtype (B, *obs_shape)
    action: np.ndarray  # int64 (B,)
    reward: np.ndarray  # float32 (B,): the mover's reward for this step
    next_obs: np.ndarray  # obs_dtype (B, *obs_shape), from the view of the player to move next
    next_legal: np.ndarray  # bool (B, num_actions)
    done: np.ndarray  # bool (B,)
    same_mover: np.ndarray  # bool (B,)


class ReplayBuffer:
    """The newest ``capacity`` transitions; adding past capacity overwrites the oldest first."""

    def __init__(self, capacity: int, obs_shape: tuple[int, ...], num_actions: int,
                 obs_dtype: type = np.float32) -> None:
        if int(capacity) < 1 or int(num_actions) < 1:
            raise BoardRLError(f"replay buffer needs capacity and num_actions >= 1, got {capacity} and {num_actions}")
        self.capacity = int(capacity)
        self.obs_shape = tuple(int(d) for d in obs_shape)
        self.num_actions = int(num_actions)
        self.dtypes = {**FIELDS, "obs": obs_dtype, "next_obs": obs_dtype}
        self.arrays = {name: np.zeros(self._shape(name, self.capacity), dtype=dt) for name, dt in self.dtypes.items()}
        self.pos = 0  # next slot to write
        self.size = 0  # filled slots

    def _shape(self, name: str, n: int) -> tuple[int, ...]:
        if name in ("obs", "next_obs"):
            return (n,) + self.obs_shape
        if name == "next_legal":
            return (n, self.num_actions)
        return (n,)

    def __len__(self) -> int:
        return self.size

    def add_batch(
        self,
        obs: np.ndarray,
        action: np.ndarray,
        reward: np.ndarray,
        next_obs: np.ndarray,
        next_legal: np.ndarray,
        done: np.ndarray,
        same_mover: np.ndarray,
    ) -> None:
        """Append N transitions (every argument has first axis N); only the last ``capacity`` are kept."""
        given = dict(obs=obs, action=action, reward=reward, next_obs=next_obs, next_legal=next_legal,
                     done=done, same_mover=same_mover)
        n = int(np.shape(action)[0]) if np.ndim(action) else -1
        batch = {name: self._checked(name, value, n) for name, value in given.items()}
        if n > self.capacity:  # the earlier rows would be overwritten within this very call
            batch = {name: value[n - self.capacity:] for name, value in batch.items()}
            n = self.capacity
        idx = (self.pos + np.arange(n)) % self.capacity
        for name, value in batch.items():
            self.arrays[name][idx] = value
        self.pos = (self.pos + n) % self.capacity
        self.size = min(self.capacity, self.size + n)

    def _checked(self, name: str, value: Any, n: int) -> np.ndarray:
        arr = np.asarray(value)
        want = self._shape(name, n)
        if n < 0 or arr.shape != want:
            raise BoardRLError(f"replay add_batch: {name} has shape {arr.shape}, expected {want}")
        return arr.astype(self.dtypes[name], copy=False)

    def sample(self, batch_size: int, rng: np.random.Generator) -> Transitions:
        """``batch_size`` transitions drawn uniformly with replacement (one ``rng.integers`` call)."""
        if self.size == 0:
            raise BoardRLError("cannot sample from an empty replay buffer")
        if int(batch_size) < 1:
            raise BoardRLError(f"replay sample: batch_size must be >= 1, got {batch_size}")
        idx = rng.integers(0, self.size, size=int(batch_size))
        return Transitions(**{name: arr[idx] for name, arr in self.arrays.items()})

    # ------------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict[str, np.ndarray | int]:
        """Flat dict of numpy arrays and ints (``np.savez``-able, no pickled objects); only filled rows."""
        d: dict[str, np.ndarray | int] = {
            "format": STATE_FORMAT, "capacity": self.capacity, "num_actions": self.num_actions,
            "pos": self.pos, "size": self.size, "obs_shape": np.asarray(self.obs_shape, dtype=np.int64),
            "obs_dtype": np.asarray(np.dtype(self.dtypes["obs"]).str),
        }
        d.update({name: arr[:self.size].copy() for name, arr in self.arrays.items()})
        return d

    def load_state_dict(self, d: dict[str, Any]) -> None:
        """Restore what ``state_dict`` returned (also after an ``np.savez`` / ``np.load`` round trip)."""
        missing = [k for k in ("format", "capacity", "num_actions", "pos", "size", "obs_shape", "obs_dtype", *FIELDS)
                   if k not in d]
        if missing:
            raise BoardRLError(f"replay state is missing {', '.join(missing)}")
        self._check_layout(d)
        size, pos = int(d["size"]), int(d["pos"])
        if not (0 <= size <= self.capacity and 0 <= pos < self.capacity and (size == self.capacity or pos == size)):
            raise BoardRLError(f"replay state has inconsistent pos {pos} and size {size} for capacity {self.capacity}")
        batch = {name: self._checked(name, d[name], size) for name in FIELDS}
        for name, value in batch.items():
            self.arrays[name][:size] = value
            self.arrays[name][size:] = 0
        self.pos, self.size = pos, size

    def _check_layout(self, d: dict[str, Any]) -> None:
        if int(d["format"]) != STATE_FORMAT:
            raise BoardRLError(f"replay state format {int(d['format'])} is not {STATE_FORMAT}")
        layout = (int(d["capacity"]), tuple(int(v) for v in np.asarray(d["obs_shape"]).ravel()), int(d["num_actions"]),
                  str(np.asarray(d["obs_dtype"])))
        mine = (self.capacity, self.obs_shape, self.num_actions, np.dtype(self.dtypes["obs"]).str)
        if layout != mine:
            raise BoardRLError(
                f"replay state of (capacity, obs_shape, num_actions, obs_dtype) {layout} does not fit this buffer's "
                f"{mine}"
            )
