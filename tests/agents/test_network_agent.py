"""NetworkAgent: legal moves only, greedy/softmax/epsilon, save/load round trip, load errors, a whole match."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from boardrl.agents import make_agent
from boardrl.agents.base import Agent
from boardrl.agents.learned import ModelError
from boardrl.agents.network import NetworkAgent, encode_states
from boardrl.errors import BoardRLError
from boardrl.evaluate.match import play_match
from boardrl.games import make_game
from boardrl.integrity import seal_directory
from boardrl.games.base import random_legal_actions
from boardrl.learn import load_agent
from boardrl.nn import ConvConfig, MLPConfig, ResidualConfig, build_network

GAMES = ["tictactoe", "connect4", "dots_and_boxes_3x3", "conniption"]
CONFIGS = {
    "mlp-q": MLPConfig(hidden=[16]),
    "conv-dueling": ConvConfig(channels=[4], head="dueling"),
    "residual-pv": ResidualConfig(channels=4, blocks=1, head="policy_value"),
}


def random_positions(game, n: int = 16, steps: int = 12, seed: int = 0) -> np.ndarray:
    """Unfinished state rows reached by random play (auto-reset keeps every row unfinished)."""
    rng = np.random.default_rng(seed)
    batch = game.batched(n)
    rows = [batch.states.copy()]
    for _ in range(steps):
        batch.step(random_legal_actions(batch.legal_mask(), rng))
        rows.append(batch.states.copy())
    return np.concatenate(rows)


def make(game, key: str = "mlp-q", seed: int = 0, **kwargs) -> NetworkAgent:
    torch.manual_seed(seed)
    config = CONFIGS[key]
    return NetworkAgent(game, build_network(config, game.encoding_shape, game.num_actions), config, **kwargs)


@pytest.mark.parametrize("game_id", GAMES)
@pytest.mark.parametrize("key", list(CONFIGS))
@pytest.mark.parametrize("policy", ["greedy", "softmax", "epsilon"])
def test_never_plays_an_illegal_move(game_id, key, policy):
    game = make_game(game_id)
    agent = make(game, key, policy=policy, epsilon=0.5, temperature=0.3)
    states = random_positions(game)
    actions = agent.act_batch(states, np.random.default_rng(1))
    legal = game.legal_mask_batch(states)
    assert actions.shape == (len(states),) and actions.dtype == np.int64
    assert legal[np.arange(len(states)), actions].all()
    s = game.state_type(*(int(v) for v in states[-1]))
    assert game.legal_moves(s)[agent.act(s, np.random.default_rng(2))]


@pytest.mark.parametrize("game_id", GAMES)
def test_greedy_is_the_argmax_of_masked_scores(game_id):
    game = make_game(game_id)
    for key in CONFIGS:
        agent = make(game, key)
        states = random_positions(game, n=8)
        scores = agent.action_scores_batch(states)
        masked = np.where(game.legal_mask_batch(states), scores, -np.inf)
        np.testing.assert_array_equal(agent.act_batch(states, np.random.default_rng(0)), masked.argmax(axis=1))
    assert agent.evaluate_batch(states)[1].shape == (len(states),)  # policy_value: (logits, value)


def test_greedy_ties_go_to_the_first_legal_action():
    game = make_game("tictactoe")
    agent = make(game)
    with torch.no_grad():
        for p in agent.network.parameters():
            p.zero_()  # every action scores 0
    s = game.replay("1")
    assert agent.act(s, np.random.default_rng(0)) == 1


def test_softmax_and_epsilon_are_reproducible_from_the_numpy_seed():
    game = make_game("connect4")
    states = random_positions(game, n=32)
    for policy in ("softmax", "epsilon"):
        agent = make(game, "conv-dueling", policy=policy, temperature=2.0, epsilon=0.3)
        a1 = agent.act_batch(states, np.random.default_rng(5))
        a2 = agent.act_batch(states, np.random.default_rng(5))
        a3 = agent.act_batch(states, np.random.default_rng(6))
        np.testing.assert_array_equal(a1, a2)
        assert not np.array_equal(a1, a3)


def test_softmax_follows_the_scores():
    """With a tiny temperature softmax is greedy; with a huge one it spreads over the legal moves."""
    game = make_game("connect4")
    states = random_positions(game, n=64)
    agent = make(game)
    greedy = agent.act_batch(states, np.random.default_rng(0))
    cold = make(game, policy="softmax", temperature=1e-4).act_batch(states, np.random.default_rng(0))
    top2 = np.sort(np.where(game.legal_mask_batch(states), agent.action_scores_batch(states), -np.inf), axis=1)[:, -2:]
    clear = top2[:, 1] - top2[:, 0] > 2e-3  # rows whose best move is clear at this temperature
    assert clear.mean() > 0.9
    np.testing.assert_array_equal(greedy[clear], cold[clear])
    hot = make(game, policy="softmax", temperature=1e4)
    picks = hot.act_batch(np.repeat(states[:1], 2000, axis=0), np.random.default_rng(0))
    assert np.bincount(picks, minlength=7).min() > 200


@pytest.mark.parametrize("key", list(CONFIGS))
def test_save_load_round_trip(tmp_path, key):
    game = make_game("dots_and_boxes_3x3")
    agent = make(game, key, name="dqn", policy="softmax", temperature=0.5, meta={"games": 10})
    agent.network.train()
    states = random_positions(game)
    agent.save(tmp_path)
    info = json.loads((tmp_path / "agent.json").read_text())
    assert info["kind"] == "network" and info["encoding_shape"] == list(game.encoding_shape)
    loaded = load_agent(game, "dqn", tmp_path)
    assert isinstance(loaded, NetworkAgent) and loaded.meta == {"games": 10} and loaded.settings == agent.settings
    assert loaded.config == agent.config
    out, back = agent.evaluate_batch(states), loaded.evaluate_batch(states)
    for x, y in zip(out if isinstance(out, tuple) else (out,), back if isinstance(back, tuple) else (back,)):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(agent.act_batch(states, np.random.default_rng(3)),
                                  loaded.act_batch(states, np.random.default_rng(3)))
    assert agent.network.training  # acting used eval mode and gave the training mode back


def test_corrupt_or_mismatched_weights_are_refused(tmp_path):
    game = make_game("connect4")
    make(game, name="net").save(tmp_path)
    weights = tmp_path / "network.pt"
    good = weights.read_bytes()
    weights.write_bytes(good[: len(good) // 2])
    with pytest.raises(ModelError, match="network.pt: shorter than written") as exc:
        load_agent(game, "net", tmp_path)  # the content hashes refuse it before torch reads it
    assert "\n" not in str(exc.value)
    # Sealed again, as if saved that way: the loader's own checks, behind the hashes, still hold.
    seal_directory(tmp_path)
    with pytest.raises(ModelError, match="network needs 5,916 bytes of weights but network.pt holds only 4,046"):
        load_agent(game, "net", tmp_path)  # sized before anything is allocated
    weights.write_bytes(np.random.default_rng(0).bytes(len(good)))
    seal_directory(tmp_path)
    with pytest.raises(ModelError, match="cannot read network weights") as exc:
        load_agent(game, "net", tmp_path)
    assert "\n" not in str(exc.value)
    torch.save(build_network(MLPConfig(hidden=[8]), game.encoding_shape, game.num_actions).state_dict(), weights)
    seal_directory(tmp_path)
    with pytest.raises(ModelError, match="does not fit the network config|holds only") as exc:
        load_agent(game, "net", tmp_path)
    assert "\n" not in str(exc.value)
    torch.save(build_network(ConvConfig(), game.encoding_shape, game.num_actions).state_dict(), weights)
    seal_directory(tmp_path)
    with pytest.raises(ModelError, match="parameter names differ"):
        load_agent(game, "net", tmp_path)
    weights.write_bytes(good)
    info = json.loads((tmp_path / "agent.json").read_text())
    (tmp_path / "agent.json").write_text(json.dumps({**info, "network": {"body": "mlp", "width": 3}}))
    seal_directory(tmp_path)
    with pytest.raises(ModelError, match="width"):
        load_agent(game, "net", tmp_path)
    (tmp_path / "agent.json").write_text(json.dumps({**info, "encoding_shape": [3, 6, 7]}))
    seal_directory(tmp_path)
    with pytest.raises(ModelError, match="encoding_shape"):
        load_agent(game, "net", tmp_path)


def test_bad_arguments_are_refused():
    game = make_game("tictactoe")
    with pytest.raises(BoardRLError, match="policy"):
        make(game, policy="boltzmann")
    with pytest.raises(BoardRLError, match="temperature"):
        make(game, policy="softmax", temperature=0)
    agent = make(game)
    with pytest.raises(BoardRLError, match="game is over"):
        agent.act(game.replay("14253"), np.random.default_rng(0))
    with pytest.raises(BoardRLError, match="state array"):
        agent.act_batch(np.zeros((2, 5), dtype=np.int64), np.random.default_rng(0))
    with pytest.raises(BoardRLError, match="no q values"):
        make(game, "residual-pv").q_values_batch(random_positions(game, n=2, steps=1))


@pytest.mark.parametrize("game_id", ["tictactoe", "connect4"])
def test_plays_a_match_against_random(game_id):
    game = make_game(game_id)
    agent = make(game, "conv-dueling", policy="epsilon", epsilon=0.1)
    result = play_match(game, agent, make_agent(game, "random"), 200, seed=0)
    assert result.games == 200
    again = play_match(game, agent, make_agent(game, "random"), 200, seed=0)
    np.testing.assert_array_equal(result.outcomes, again.outcomes)


@pytest.mark.parametrize("game_id", GAMES)
def test_encoding_matches_encode_per_state_and_the_fallback(game_id):
    """encode_batch (or the per-state fallback for a game without it) gives ``encode`` of every row."""
    game = make_game(game_id)
    states = random_positions(game, n=4, steps=5)
    per_state = np.stack([game.encode(game.state_type(*(int(v) for v in row))) for row in states])

    class NoBatch:  # the same game, minus encode_batch
        state_type, encode = game.state_type, game.encode

    np.testing.assert_array_equal(encode_states(NoBatch(), states), per_state)
    np.testing.assert_array_equal(encode_states(game, states), per_state)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_runs_on_cuda_and_matches_cpu(tmp_path):
    game = make_game("connect4")
    cpu = make(game, "residual-pv")
    cpu.save(tmp_path)
    gpu = NetworkAgent.load(game, json.loads((tmp_path / "agent.json").read_text()), tmp_path, device="cuda")
    assert next(gpu.network.parameters()).is_cuda
    states = random_positions(game)
    for x, y in zip(cpu.evaluate_batch(states), gpu.evaluate_batch(states)):
        np.testing.assert_allclose(x, y, atol=1e-4)
    actions = gpu.act_batch(states, np.random.default_rng(0))
    assert game.legal_mask_batch(states)[np.arange(len(states)), actions].all()
    assert play_match(game, gpu, make_agent(game, "random"), 50, seed=0).games == 50


@pytest.mark.parametrize("key", list(CONFIGS))
def test_value_batch_is_the_best_legal_q_or_the_value_output(key):
    """q / dueling: max over *legal* actions of Q (a full column's score never counts); policy_value: its tanh
    value.  Clipped to [-1, 1], float64, one per row."""
    game = make_game("connect4")
    agent = make(game, key)
    states = random_positions(game, n=8, steps=30)
    full = np.flatnonzero(~game.legal_mask_batch(states).all(axis=1))
    assert full.size  # some rows have a full column, so the masking is exercised
    values = agent.value_batch(states)
    assert values.shape == (len(states),) and values.dtype == np.float64
    out = agent.evaluate_batch(states)
    if isinstance(out, tuple):
        expected = out[1]
    else:
        expected = np.where(game.legal_mask_batch(states), out, -np.inf).max(axis=1)
    np.testing.assert_allclose(values, np.clip(expected, -1, 1), rtol=1e-6)


def test_value_batch_masks_illegal_actions_and_clips():
    game = make_game("connect4")
    agent = make(game, "mlp-q")
    row = np.asarray(game.replay("1111112"), dtype=np.int64)[None, :]  # the first column is full
    legal = game.legal_mask_batch(row)[0]
    assert legal.tolist() == [False] + [True] * 6
    last = [m for m in agent.network.modules() if isinstance(m, torch.nn.Linear)][-1]  # the q head's output
    with torch.no_grad():  # Q = its bias: the full column's 100 must not count; legal 5 clips to 1
        last.weight.zero_()
        last.bias.copy_(torch.tensor([100.0 if not ok else 5.0 for ok in legal]))
    assert agent.value_batch(row).tolist() == [1.0]
    with torch.no_grad():
        last.bias.copy_(torch.tensor([100.0 if not ok else -0.25 + 0.01 * a for a, ok in enumerate(legal)]))
    assert agent.value_batch(row)[0] == pytest.approx(-0.25 + 0.01 * int(np.flatnonzero(legal)[-1]))
    with pytest.raises(BoardRLError, match="game is over"):
        agent.value_batch(np.asarray(game.replay("1213141"), dtype=np.int64)[None, :])


class FixedTiesPerfect(Agent):
    """``perfect`` with its ties among optimal moves broken the same way in every call: a deterministic scalar
    opponent, so that the two match paths, which hand out random numbers in different orders, play equal games."""

    def __init__(self, game):
        super().__init__(game, "perfect-fixed-ties")
        self.perfect = make_agent(game, "perfect")

    def act(self, state, rng):
        return self.perfect.act(state, np.random.default_rng(0))


def test_plays_a_scalar_opponent_in_lock_step_with_the_games_of_the_scalar_path(monkeypatch):
    """Against a scalar opponent the network sees many rows per forward pass, and it plays the very games it
    plays one at a time (a greedy network and a deterministic opponent: the path must not change a result)."""
    game = make_game("tictactoe")
    agent, opponent = make(game, "conv-dueling"), FixedTiesPerfect(game)
    assert not make_agent(game, "perfect").batched
    calls: list[int] = []
    forward = agent._forward
    monkeypatch.setattr(agent, "_forward", lambda rows: calls.append(len(rows)) or forward(rows))
    lockstep = play_match(game, agent, opponent, 256, seed=4)
    assert max(calls) == 64 and len(calls) < 256  # LOCKSTEP_CHUNK 128 games, half with the network to move
    monkeypatch.setattr(NetworkAgent, "wants_batches", False)
    calls.clear()
    scalar = play_match(game, agent, opponent, 256, seed=4)
    assert max(calls) == 1 and len(calls) > 256
    assert lockstep.combined.losses > 0  # an untrained network loses to perfect: the games are real games
    np.testing.assert_array_equal(lockstep.lengths, scalar.lengths)
    np.testing.assert_array_equal(lockstep.outcomes, scalar.outcomes)
