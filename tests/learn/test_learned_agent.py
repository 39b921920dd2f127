"""The greedy Q agent and its table: tie-breaking, unseen states, save/load round trip, load errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from boardrl.agents.learned import (
    GreedyQAgent,
    ModelError,
    QTable,
    row_hash,
    init_value,
    table_find_or_insert,
    _INIT_SALT,
)
from boardrl.games import make_game
from boardrl.integrity import seal_directory
from boardrl.learn import load_agent, make_learner

TTT = make_game("tictactoe")


def test_greedy_takes_the_first_of_equal_best_legal_values():
    table = QTable(2, 9, init_seed=1, init_std=0.0)
    s = TTT.replay("5")  # O to move, cell 5 taken
    table.set_row(s, [0.2, 0.7, 0.7, 0.1, 9.0, 0.7, 0, 0, 0])  # cell 5 (index 4) is illegal despite 9.0
    agent = GreedyQAgent(TTT, table)
    rng = np.random.default_rng(0)
    assert agent.act(s, rng) == 1
    assert agent.act_batch(np.array([s, s]), rng).tolist() == [1, 1]


def test_unseen_states_use_the_same_initial_values_training_would_store():
    table = QTable(2, 9, init_seed=12345, init_std=0.3)
    s = TTT.replay("19")
    before = table.q_values(np.array(s))[0]
    slot, inserted = table_find_or_insert(table.keys, table.used, table.vals, np.array(s, dtype=np.int64),
                                          table.init_seed, table.init_std)
    assert inserted and np.array_equal(table.vals[slot], before)
    assert len(set(before.tolist())) == 9  # a distinct draw per action


def test_initial_values_are_normal_with_the_given_spread():
    """20,000 draws: sample sd within 0.3 +- 0.01 (its standard error is 0.0015, so this is a 6-sigma bound)."""
    hashes = [np.uint64(row_hash(np.array([i, 0], dtype=np.int64), _INIT_SALT)) for i in range(2_500)]
    draws = np.array([init_value(h, a, np.uint64(7), 0.3) for h in hashes for a in range(8)])
    assert abs(draws.mean()) < 0.01 and abs(draws.std() - 0.3) < 0.01
    assert abs(np.mean(np.abs(draws) < 0.3) - 0.6827) < 0.015  # share within one sd, as for a normal


def test_table_grows_and_keeps_every_entry():
    table = QTable(2, 3, init_seed=0, init_std=0.0, capacity=16)
    rows = [(i, i * 7) for i in range(1_000)]
    for i, r in enumerate(rows):
        table.set_row(r, [i, -i, 0.5])
    assert len(table) == 1_000 and table.capacity >= 2_000
    got = table.q_values(np.array(rows))
    assert np.array_equal(got[:, 0], np.arange(1_000)) and np.array_equal(got[:, 1], -np.arange(1_000))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    return make_learner("tabular_q").train(
        TTT, {"games": 5_000}, seed=3, checkpoint_dir=tmp_path_factory.mktemp("ck"), eval_points=[],
        on_eval=lambda n, a: None,
    )


def all_states():
    seen, stack = set(), [TTT.initial_state()]
    while stack:
        s = stack.pop()
        if s not in seen:
            seen.add(s)
            stack.extend(TTT.play(s, a) for a in TTT.legal_actions(s))
    return [s for s in seen if not TTT.is_over(s)]


def test_save_load_round_trip(trained, tmp_path):
    trained.save(tmp_path / "model")
    info = json.loads((tmp_path / "model" / "agent.json").read_text())
    assert info["game"] == "tictactoe" and info["agent"] == "tabular_q" and info["kind"] == "q_table"
    assert info["meta"]["params"]["games"] == 5_000 and info["meta"]["seed"] == 3
    loaded = load_agent(TTT, "tabular_q", tmp_path / "model")
    rows = np.array(all_states(), dtype=np.int64)
    rng = np.random.default_rng(0)
    assert np.array_equal(loaded.table.q_values(rows), trained.table.q_values(rows))
    assert np.array_equal(loaded.act_batch(rows, rng), trained.act_batch(rows, rng))
    assert loaded.batched and loaded.name == "tabular_q"
    unseen = np.array([[0b111, 0b111000]], dtype=np.int64)  # not reachable, so never trained on
    assert np.array_equal(loaded.table.q_values(unseen), trained.table.q_values(unseen))


def test_saving_twice_gives_identical_files(trained, tmp_path):
    trained.save(tmp_path / "a")
    trained.save(tmp_path / "b")
    for name in ("agent.json", "q_table.npz"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_load_errors_name_the_problem(trained, tmp_path):
    with pytest.raises(ModelError, match="agent.json is missing"):
        load_agent(TTT, "tabular_q", tmp_path / "nothing")
    trained.save(tmp_path / "m")
    with pytest.raises(ModelError, match="holds an agent for 'tictactoe', not for 'connect4'"):
        load_agent(make_game("connect4"), "tabular_q", tmp_path / "m")
    with pytest.raises(ModelError, match="holds agent 'tabular_q', not 'dqn'"):
        load_agent(TTT, "dqn", tmp_path / "m")
    info = json.loads((tmp_path / "m" / "agent.json").read_text())
    (tmp_path / "m" / "agent.json").write_text(json.dumps({**info, "kind": "brain"}))
    with pytest.raises(ModelError, match="agent.json: longer than written|agent.json: shorter than written"):
        load_agent(TTT, "tabular_q", tmp_path / "m")  # edited after saving: the hashes refuse it
    seal_directory(tmp_path / "m")  # as if saved that way: the loader's own checks come next
    with pytest.raises(ModelError, match="unknown agent kind 'brain'; known kinds: q_table"):
        load_agent(TTT, "tabular_q", tmp_path / "m")
    (tmp_path / "m" / "agent.json").write_text(json.dumps(info))
    (tmp_path / "m" / "q_table.npz").write_bytes(b"garbage")
    seal_directory(tmp_path / "m")
    with pytest.raises(ModelError, match="cannot read Q table"):
        load_agent(TTT, "tabular_q", tmp_path / "m")


def test_table_of_another_game_is_refused():
    with pytest.raises(ModelError, match="does not fit connect4"):
        GreedyQAgent(make_game("connect4"), QTable(2, 9, 0, 0.0))
