"""What a match sends its workers: numba kernels by name (the module's own compiled dispatchers arrive, not
rebuilt copies), the agents playing the very moves they play here, and the parent's torch thread count."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from boardrl.agents import make_agent
from boardrl.evaluate.match_payload import dumps_kernels_by_reference, dumps_match_payload, load_match_payload
from boardrl.games import make_game

TTT = make_game("tictactoe")


def test_kernels_travel_by_name_and_arrive_as_the_modules_own_dispatchers():
    from boardrl.agents import mcts

    agent = make_agent(TTT, "mcts:simulations=20")
    by_value, by_name = pickle.dumps((TTT, agent)), dumps_kernels_by_reference((TTT, agent))
    assert len(by_name) * 10 < len(by_value)  # 466 against 24,794 bytes today
    game, copy = pickle.loads(by_name)
    assert copy._kernel[:3] == (mcts.ttt_facts, mcts.ttt_step, mcts.ttt_rollout)  # the very objects, by identity
    assert all(a is b for a, b in zip(copy._kernel[:3], agent._kernel[:3]))
    rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)
    state = game.initial_state()
    assert [copy.act(state, rng_a) for _ in range(5)] == [agent.act(state, rng_b) for _ in range(5)]


def test_a_kernel_that_is_not_its_modules_attribute_still_travels_by_value():
    numba = pytest.importorskip("numba")

    def double(x):
        return 2 * x

    kernel = numba.njit(double)  # made at run time: its module has no attribute of that name
    payload = dumps_kernels_by_reference(kernel)
    assert payload == pickle.dumps(kernel, protocol=pickle.HIGHEST_PROTOCOL)  # numba's own by-value form
    assert b"_module_attribute" not in payload and pickle.loads(payload)(21) == 42


def test_the_payload_round_trips_and_gives_torch_the_parents_threads():
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    start_rows = np.arange(6, dtype=np.int64).reshape(2, 3)
    agents = (make_agent(TTT, "maxmin"), make_agent(TTT, "random"))
    try:
        game, copies, rows = load_match_payload(dumps_match_payload(TTT, agents, start_rows, 1))
        assert torch.get_num_threads() == 1
        assert np.array_equal(rows, start_rows) and rows.flags.writeable
        assert type(game) is type(TTT) and [a.name for a in copies] == [a.name for a in agents]
    finally:
        torch.set_num_threads(before)
