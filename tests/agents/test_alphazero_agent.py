"""AlphaZeroAgent: the network evaluator's priors and values, playout values mixed in, the move rule, save/load
with its search and value settings, ``model:...,simulations=N`` overrides, and one-line errors for what cannot
search."""

from __future__ import annotations

import json
from dataclasses import asdict, replace

import numpy as np
import pytest
import torch

import boardrl.agents.alphazero as az
from boardrl.agents import make_agent
from boardrl.agents.alphazero import AlphaZeroAgent
from boardrl.agents.learned import ModelError
from boardrl.agents.models import load_model_agent
from boardrl.agents.network import NetworkAgent
from boardrl.agents.puct import (MIN_ROWS, MixedEvaluator, NetworkEvaluator, RolloutEvaluator, SearchSettings,
                                 TacticalEvaluator, most_visited, search)
from boardrl.errors import BoardRLError
from boardrl.games import make_game
from boardrl.integrity import seal_directory
from boardrl.games.base import random_legal_actions
from boardrl.learn import load_agent
from boardrl.nn import MLPConfig, build_network

TTT = make_game("tictactoe")
PV = MLPConfig(hidden=[32], head="policy_value")
SETTINGS = SearchSettings(simulations=12, c_puct=2.5, fpu=-0.1, leaves_per_wave=3, dirichlet_alpha=0.5, noise=0.25)


def make(seed: int = 0, config=PV, settings: SearchSettings = SETTINGS, name: str = "az") -> AlphaZeroAgent:
    torch.manual_seed(seed)
    net = build_network(config, TTT.encoding_shape, TTT.num_actions)
    return AlphaZeroAgent(TTT, net, config, settings, name=name, meta={"games": 7})


def positions(n: int = 40, seed: int = 0) -> np.ndarray:
    """Unfinished tic-tac-toe rows from random play (auto-reset keeps every row unfinished)."""
    rng = np.random.default_rng(seed)
    env = TTT.batched(8)
    out = [env.states.copy()]
    while sum(len(r) for r in out) < n:
        env.step(random_legal_actions(env.legal_mask(), rng))
        out.append(env.states.copy())
    return np.concatenate(out)[:n]


# ---------------------------------------------------------------------------------------------- the evaluator
def test_network_evaluator_gives_the_softmax_over_legal_logits_and_the_value_head():
    agent = make()
    rows = positions(12)
    legal = TTT.legal_mask_batch(rows)
    agent.network.train()
    ev = NetworkEvaluator(TTT, agent.network)
    priors, values = ev.evaluate(rows, legal, np.random.default_rng(0))
    assert agent.network.training  # the evaluator restores the mode it found
    logits, value = agent.evaluate_batch(rows)
    z = np.where(legal, logits.astype(np.float64), -np.inf)
    expected = np.exp(z - z.max(axis=1, keepdims=True))
    expected /= expected.sum(axis=1, keepdims=True)
    assert priors == pytest.approx(expected, abs=1e-6) and (priors[~legal] == 0).all()
    assert values == pytest.approx(value, abs=1e-7) and (np.abs(values) <= 1).all()
    assert ev.calls == 1 and ev.positions == 12


def test_network_evaluator_under_inference_mode_gives_the_same_bits_as_no_grad():
    """The evaluator runs the network under torch.inference_mode (faster); a trained model's play must not move."""
    import torch

    agent = make()
    rows = positions(12)
    legal = TTT.legal_mask_batch(rows)
    priors, values = NetworkEvaluator(TTT, agent.network).evaluate(rows, legal, np.random.default_rng(0))
    padded = np.concatenate([rows, rows[:1].repeat(MIN_ROWS - 12, axis=0)])  # the evaluator's padding
    with torch.no_grad():
        logits, value = agent.network.eval()(torch.from_numpy(TTT.encode_batch(padded)))
        logits, value = logits[:12], value[:12]
        expected = torch.softmax(logits.masked_fill(~torch.from_numpy(legal), float("-inf")).float(), dim=1)
    assert np.array_equal(priors, expected.numpy()) and np.array_equal(values, value.float().numpy())


@pytest.mark.parametrize("weight", [0.0, 0.25, 1.0])
def test_mixed_evaluator_keeps_the_priors_and_mixes_the_values_with_the_same_playouts(weight):
    """Priors are the network's; the value is (1 - w) * network + w * the playouts a rollout evaluator draws from
    the same generator state; w = 0 runs no playout (the generator is left untouched)."""
    agent, rows = make(), positions(12)
    legal = TTT.legal_mask_batch(rows)
    net, roll = NetworkEvaluator(TTT, agent.network), RolloutEvaluator(TTT, 3)
    priors, values = MixedEvaluator(net, roll, weight).evaluate(rows, legal, rng := np.random.default_rng(4))
    net_priors, net_values = net.evaluate(rows, legal, np.random.default_rng(0))
    played = roll.evaluate(rows, legal, np.random.default_rng(4))[1]
    assert np.array_equal(priors, net_priors)
    assert values == pytest.approx((1 - weight) * net_values + weight * played, abs=1e-6)
    assert values.dtype == np.float32 and (np.abs(values) <= 1).all()
    untouched = np.random.default_rng(4).random() == rng.random()
    assert untouched == (weight == 0.0)


def test_mixed_evaluator_refuses_a_weight_outside_zero_to_one():
    with pytest.raises(BoardRLError, match=r"rollout_weight must be in \[0, 1\], got 1.5"):
        MixedEvaluator(NetworkEvaluator(TTT, make().network), RolloutEvaluator(TTT), 1.5)


# ---------------------------------------------------------------------------------------------- acting
def test_most_visited_breaks_ties_by_prior_then_by_the_lower_action():
    visits = np.array([[3, 5, 5, 0], [2, 2, 2, 2], [0, 1, 0, 0]])
    priors = np.array([[0.1, 0.2, 0.7, -1.0], [0.25, 0.25, 0.25, 0.25], [0.9, 0.0, 0.1, -1.0]])
    assert most_visited(visits, priors).tolist() == [2, 0, 1]


def test_act_is_the_most_visited_root_move_of_a_noise_free_search():
    agent = make()
    assert agent.settings_search == replace(SETTINGS, noise=0.0) and agent.simulations == 12
    rows = positions(30)
    moves = agent.act_batch(rows, np.random.default_rng(0))
    trees = search(TTT, rows, NetworkEvaluator(TTT, agent.network), agent.settings_search, np.random.default_rng(5))
    assert moves.tolist() == most_visited(trees.root_visits(), trees.prior[:, 0]).tolist()
    assert TTT.legal_mask_batch(rows)[np.arange(30), moves].all()
    # no noise and a network evaluator: the generator is never drawn from, so any seed gives the same moves
    assert agent.act_batch(rows, np.random.default_rng(123)).tolist() == moves.tolist()
    s = TTT.state_type(*(int(v) for v in rows[7]))
    assert agent.act(s, np.random.default_rng(0)) == moves[7]


def test_rows_beyond_max_trees_are_searched_in_chunks_with_the_same_moves(monkeypatch):
    agent = make()
    rows = positions(25)
    whole = agent.act_batch(rows, np.random.default_rng(0))
    monkeypatch.setattr(az, "MAX_TREES", 4)
    assert agent.act_batch(rows, np.random.default_rng(0)).tolist() == whole.tolist()


def test_even_an_untrained_network_takes_a_win_when_searching_enough():
    """X (1, 2) against O (4, 5): cell 3 wins at once.  Terminal results are exact, so 200 simulations find it
    whatever the random network's priors and values say."""
    agent = make(seed=3).with_simulations(200)
    assert agent.act(TTT.replay("1425"), np.random.default_rng(0)) == 2


def test_with_simulations_shares_the_network_and_network_agent_plays_the_raw_policy():
    agent = make()
    more = agent.with_simulations(40, name="az40")
    assert more.network is agent.network and more.simulations == 40 and more.name == "az40"
    assert more.settings_search == replace(agent.settings_search, simulations=40)
    raw = agent.network_agent()
    assert type(raw) is NetworkAgent and raw.network is agent.network and raw.name == "az (network)"
    rows = positions(20)
    logits, _ = agent.evaluate_batch(rows)
    legal = TTT.legal_mask_batch(rows)
    assert raw.act_batch(rows, np.random.default_rng(0)).tolist() == np.argmax(np.where(legal, logits, -np.inf),
                                                                                axis=1).tolist()


# ---------------------------------------------------------------------------------------------- saving
def test_save_load_round_trip_keeps_the_search_settings_and_the_moves(tmp_path):
    agent = make()
    agent.save(tmp_path / "model")
    info = json.loads((tmp_path / "model" / "agent.json").read_text())
    assert info["kind"] == "alphazero" and info["search"] == asdict(replace(SETTINGS, noise=0.0))
    assert info["network"]["head"] == "policy_value" and info["meta"] == {"games": 7}
    loaded = load_agent(TTT, "az", tmp_path / "model")
    assert type(loaded) is AlphaZeroAgent and loaded.settings_search == agent.settings_search
    for key, value in agent.network.state_dict().items():
        assert torch.equal(value, loaded.network.state_dict()[key]), key
    rows = positions(40, seed=1)
    assert loaded.act_batch(rows, np.random.default_rng(0)).tolist() == \
        agent.act_batch(rows, np.random.default_rng(0)).tolist()
    assert np.array_equal(loaded.value_batch(rows), agent.value_batch(rows))


def test_save_load_keeps_the_playout_share_and_old_models_read_as_the_network_alone(tmp_path):
    agent = make()
    mixed = AlphaZeroAgent(TTT, agent.network, PV, agent.settings_search, name="az", rollout_weight=0.5, rollouts=2)
    mixed.save(tmp_path / "mixed")
    info = json.loads((tmp_path / "mixed" / "agent.json").read_text())
    assert info["value"] == {"rollout_weight": 0.5, "rollouts": 2, "tactics": False}
    loaded = load_agent(TTT, "az", tmp_path / "mixed")
    assert (loaded.rollout_weight, loaded.rollouts) == (0.5, 2)
    assert (loaded.with_simulations(5).rollout_weight, loaded.with_simulations(5).rollouts) == (0.5, 2)
    rows = positions(16, seed=2)
    assert loaded.act_batch(rows, np.random.default_rng(3)).tolist() == \
        mixed.act_batch(rows, np.random.default_rng(3)).tolist()
    agent.save(tmp_path / "old")
    path = tmp_path / "old" / "agent.json"
    path.write_text(json.dumps({k: v for k, v in json.loads(path.read_text()).items() if k != "value"}))
    seal_directory(tmp_path / "old")
    assert load_agent(TTT, "az", tmp_path / "old").rollout_weight == 0.0


@pytest.mark.parametrize("value,fragment", [
    ({"rollout_weight": 2}, "rollout_weight must be in [0, 1]"),
    ({"rollouts": 0}, "rollouts >= 1"),
    ({"rollout_weight": "lots"}, "could not convert"),
    ({"tactics": "yes"}, "tactics must be true or false, got 'yes'"),
])
def test_bad_value_settings_in_agent_json_are_a_model_error(tmp_path, value, fragment):
    make().save(tmp_path / "m")
    path = tmp_path / "m" / "agent.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "value": value}))
    seal_directory(tmp_path / "m")  # as if saved that way: the hashes pass, the settings are checked
    with pytest.raises(ModelError, match="bad value settings in agent.json") as err:
        load_agent(TTT, None, tmp_path / "m")
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_a_model_spec_overrides_the_simulations_of_a_saved_directory(tmp_path):
    make().save(tmp_path / "model")
    spec = f"model:{tmp_path / 'model'},simulations=5"
    for agent in (load_model_agent(TTT, spec), make_agent(TTT, spec)):
        assert type(agent) is AlphaZeroAgent and agent.name == spec
        assert agent.settings_search == replace(SETTINGS, noise=0.0, simulations=5)
    plain = make_agent(TTT, f"model:{tmp_path / 'model'}")
    assert plain.simulations == 12
    rows = positions(16)
    assert make_agent(TTT, spec).act_batch(rows, np.random.default_rng(0)).tolist() == \
        plain.with_simulations(5).act_batch(rows, np.random.default_rng(0)).tolist()


def test_a_model_spec_sets_playout_values_and_keeps_the_rest(tmp_path):
    make().save(tmp_path / "model")
    spec = f"model:{tmp_path / 'model'},rollout_weight=0.25,rollouts=3"
    agent = make_agent(TTT, spec)
    assert (agent.rollout_weight, agent.rollouts, agent.name) == (0.25, 3, spec)
    assert agent.settings_search == replace(SETTINGS, noise=0.0) and agent.evaluator.rollout_weight == 0.25
    only_weight = make_agent(TTT, f"model:{tmp_path / 'model'},rollout_weight=1,simulations=7")
    assert (only_weight.rollout_weight, only_weight.rollouts, only_weight.simulations) == (1.0, 1, 7)
    rows = positions(16, seed=4)
    direct = AlphaZeroAgent(TTT, agent.network, PV, agent.settings_search, rollout_weight=0.25, rollouts=3)
    assert agent.act_batch(rows, np.random.default_rng(5)).tolist() == \
        direct.act_batch(rows, np.random.default_rng(5)).tolist()


def test_simulations_for_a_model_that_does_not_search_is_one_line(tmp_path):
    torch.manual_seed(0)
    config = MLPConfig(hidden=[8])
    NetworkAgent(TTT, build_network(config, TTT.encoding_shape, TTT.num_actions), config).save(tmp_path / "q")
    spec = f"model:{tmp_path / 'q'},simulations=5"
    with pytest.raises(BoardRLError) as err:
        load_model_agent(TTT, spec)
    assert str(err.value) == (f"agent spec {spec!r}: simulations= applies to agents that search (AlphaZero); "
                              "this model is a network agent")
    with pytest.raises(BoardRLError, match="simulations must be at least 1"):
        load_model_agent(TTT, f"model:{tmp_path / 'q'},simulations=0")
    with pytest.raises(BoardRLError, match="rollout_weight= and rollouts= apply to agents that search"):
        load_model_agent(TTT, f"model:{tmp_path / 'q'},rollout_weight=1,rollouts=2")


@pytest.mark.parametrize("search_info,fragment", [
    ({"simulations": 0}, "simulations must be >= 1"),
    ({"simulations": 5, "depth": 2}, "depth"),
])
def test_bad_search_settings_in_agent_json_are_a_model_error(tmp_path, search_info, fragment):
    make().save(tmp_path / "m")
    path = tmp_path / "m" / "agent.json"
    info = json.loads(path.read_text())
    path.write_text(json.dumps({**info, "search": search_info}))
    seal_directory(tmp_path / "m")
    with pytest.raises(ModelError, match="bad search settings in agent.json") as err:
        load_agent(TTT, None, tmp_path / "m")
    assert fragment in str(err.value) and "\n" not in str(err.value)


# ---------------------------------------------------------------------------------------------- errors
def test_a_network_without_a_policy_value_head_is_refused():
    with pytest.raises(BoardRLError, match="AlphaZero needs a policy_value network, not a dueling head") as err:
        make(config=MLPConfig(hidden=[8], head="dueling"))
    assert "\n" not in str(err.value)


def test_a_finished_position_is_refused_by_the_search():
    agent = make()
    rows = np.array([TTT.replay("15"), TTT.replay("14253")], dtype=np.int64)
    with pytest.raises(BoardRLError, match="search: root row 1 is a finished game"):
        agent.act_batch(rows, np.random.default_rng(0))


def test_tactics_are_saved_and_a_model_spec_turns_them_off_or_on(tmp_path):
    """A Connect 4 agent with exact short-tactics leaf values keeps them through save/load; ``tactics=0`` and
    ``tactics=1`` override them; the evaluator is the tactical wrapper exactly when they are on."""
    torch.manual_seed(0)
    c4 = make_game("connect4")
    net = build_network(PV, c4.encoding_shape, c4.num_actions)
    agent = AlphaZeroAgent(c4, net, PV, SETTINGS, name="az", tactics=True)
    assert isinstance(agent.evaluator, TacticalEvaluator)
    agent.save(tmp_path / "m")
    assert json.loads((tmp_path / "m" / "agent.json").read_text())["value"]["tactics"] is True
    assert load_agent(c4, "az", tmp_path / "m").tactics is True
    off = make_agent(c4, f"model:{tmp_path / 'm'},tactics=0")
    assert off.tactics is False and not isinstance(off.evaluator, TacticalEvaluator)
    assert make_agent(c4, f"model:{tmp_path / 'm'},tactics=0,tactics=1").tactics is True


def test_tactics_for_a_game_without_a_check_is_one_line():
    with pytest.raises(BoardRLError) as err:
        AlphaZeroAgent(TTT, make().network, PV, SETTINGS, tactics=True)
    assert str(err.value) == "tactics: tictactoe has no exact short-tactics check (decided_values_batch)"


@pytest.mark.parametrize("extra,fragment", [
    ({"method": "mcts"}, "method must be one of puct, gumbel, got 'mcts'"),
    ({"method": "gumbel", "gumbel": {"considered_actions": 0}}, "considered_actions must be >= 1"),
    ({"method": "gumbel", "gumbel": {"c_puct": 1}}, "c_puct"),
])
def test_bad_gumbel_settings_in_agent_json_are_a_model_error(tmp_path, extra, fragment):
    make().save(tmp_path / "m")
    path = tmp_path / "m" / "agent.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **extra}))
    seal_directory(tmp_path / "m")
    with pytest.raises(ModelError, match="bad gumbel settings in agent.json") as err:
        load_agent(TTT, None, tmp_path / "m")
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_a_gumbel_agent_plays_the_searchs_noise_free_move():
    from boardrl.agents.gumbel import GumbelSettings, gumbel_search

    agent = make().with_search(search="gumbel")
    rows = positions(20)
    expected = gumbel_search(TTT, rows, NetworkEvaluator(TTT, agent.network),
                             GumbelSettings(simulations=12, leaves_per_wave=3), np.random.default_rng(9), noise=False)
    assert agent.act_batch(rows, np.random.default_rng(0)).tolist() == expected.actions.tolist()
    with pytest.raises(BoardRLError, match="unknown search 'uct'; choices: puct, gumbel"):
        make().with_search(search="uct")
