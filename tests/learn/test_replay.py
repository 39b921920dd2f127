"""The replay ring buffer: wrap-around, sample shapes, checkpoint round trip with identical samples."""

from __future__ import annotations

import io

import numpy as np
import pytest

from boardrl.errors import BoardRLError
from boardrl.learn.core.replay import ReplayBuffer

SHAPE, A = (2, 3, 3), 9


def transitions(start: int, n: int) -> dict[str, np.ndarray]:
    """n distinguishable transitions numbered start..start+n-1 (the number is in reward and obs)."""
    ids = np.arange(start, start + n)
    legal = np.zeros((n, A), dtype=bool)
    legal[np.arange(n), ids % A] = True
    return dict(
        obs=np.broadcast_to(ids[:, None, None, None], (n, *SHAPE)).astype(np.float32),
        action=ids % A,
        reward=ids.astype(np.float32),
        next_obs=np.broadcast_to(-ids[:, None, None, None], (n, *SHAPE)).astype(np.float32),
        next_legal=legal,
        done=ids % 3 == 0,
        same_mover=ids % 2 == 0,
    )


def test_adding_past_capacity_overwrites_the_oldest():
    buf = ReplayBuffer(5, SHAPE, A)
    buf.add_batch(**transitions(0, 3))
    assert len(buf) == 3
    buf.add_batch(**transitions(3, 4))  # 7 added: 0 and 1 are gone
    assert len(buf) == 5
    assert sorted(buf.arrays["reward"].tolist()) == [2, 3, 4, 5, 6]
    buf.add_batch(**transitions(100, 12))  # more than capacity in one call: the last 5 are kept
    assert len(buf) == 5 and sorted(buf.arrays["reward"].tolist()) == [107, 108, 109, 110, 111]


def test_sample_shapes_dtypes_and_consistent_rows():
    buf = ReplayBuffer(50, SHAPE, A)
    buf.add_batch(**transitions(0, 20))
    b = buf.sample(32, np.random.default_rng(1))
    assert b.obs.shape == (32, *SHAPE) and b.obs.dtype == np.float32
    assert b.next_obs.shape == (32, *SHAPE) and b.next_obs.dtype == np.float32
    assert b.action.shape == (32,) and b.action.dtype == np.int64
    assert b.reward.dtype == np.float32 and b.done.dtype == bool and b.same_mover.dtype == bool
    assert b.next_legal.shape == (32, A) and b.next_legal.dtype == bool
    ids = b.reward.astype(int)
    assert (ids < 20).all()
    assert (b.obs[:, 0, 0, 0] == ids).all() and (b.next_obs[:, 1, 2, 2] == -ids).all()
    assert (b.next_legal.argmax(axis=1) == ids % A).all() and (b.next_legal.sum(axis=1) == 1).all()
    assert (b.done == (ids % 3 == 0)).all() and (b.same_mover == (ids % 2 == 0)).all()


@pytest.mark.parametrize("added", [7, 23])  # partly filled, and wrapped around
def test_state_dict_round_trip_samples_identically(added):
    buf = ReplayBuffer(10, SHAPE, A)
    buf.add_batch(**transitions(0, added))
    state = buf.state_dict()
    assert all(isinstance(v, (int, np.ndarray)) for v in state.values())
    stored = io.BytesIO()
    np.savez(stored, **state)  # as a checkpoint would: plain arrays, no pickle
    stored.seek(0)
    with np.load(stored, allow_pickle=False) as data:
        restored = ReplayBuffer(10, SHAPE, A)
        restored.load_state_dict(dict(data))
    assert len(restored) == len(buf)
    r1, r2 = np.random.default_rng(7), np.random.default_rng(7)
    for x, y in zip(buf.sample(16, r1), restored.sample(16, r2)):
        np.testing.assert_array_equal(x, y)
    more = transitions(50, 4)  # and both go on identically
    buf.add_batch(**more)
    restored.add_batch(**more)
    for x, y in zip(buf.sample(16, r1), restored.sample(16, r2)):
        np.testing.assert_array_equal(x, y)


def test_bad_input_is_refused():
    buf = ReplayBuffer(4, SHAPE, A)
    with pytest.raises(BoardRLError, match="empty"):
        buf.sample(2, np.random.default_rng(0))
    bad = transitions(0, 3)
    bad["next_legal"] = bad["next_legal"][:, :5]
    with pytest.raises(BoardRLError, match="next_legal"):
        buf.add_batch(**bad)
    buf.add_batch(**transitions(0, 3))
    with pytest.raises(BoardRLError, match="does not fit"):
        ReplayBuffer(8, SHAPE, A).load_state_dict(buf.state_dict())


def test_int64_state_rows_are_stored_exactly_and_their_dtype_is_checked_on_load():
    """DQN keeps state rows (Connect 4 bitboards need all 64 bits; float32 would round them)."""
    buf = ReplayBuffer(4, (3,), A, obs_dtype=np.int64)
    rows = np.array([[2**49 + 1, 7, 8], [3, 2**40 - 1, 1]], dtype=np.int64)
    buf.add_batch(obs=rows, action=np.array([0, 1]), reward=np.zeros(2, np.float32), next_obs=rows[::-1],
                  next_legal=np.ones((2, A), bool), done=np.zeros(2, bool), same_mover=np.zeros(2, bool))
    b = buf.sample(8, np.random.default_rng(0))
    assert b.obs.dtype == np.int64 and {tuple(r) for r in b.obs} <= {tuple(r) for r in rows}
    restored = ReplayBuffer(4, (3,), A, obs_dtype=np.int64)
    restored.load_state_dict(buf.state_dict())
    np.testing.assert_array_equal(restored.arrays["obs"], buf.arrays["obs"])
    with pytest.raises(BoardRLError, match="obs_dtype"):
        ReplayBuffer(4, (3,), A).load_state_dict(buf.state_dict())
