"""Reference system 000's Connect 4 afterstate learner: its input, network, schedule, the fixed target, the
transitions it stores, its agent's seats, and that it learns to beat random from UCI starts.

Resume identity (kill, resume, curve points, checkpoint periods) is the registry-wide test's
(tests/learn/test_training_invariance.py), which covers this learner through its ``small_run``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from boardrl.agents import make_agent
from boardrl.agents.seed000_afterstate import SHAPE, Seed000Agent, seed000_planes
from boardrl.data import uci_download, uci_table
from boardrl.evaluate.match import play_match
from boardrl.games import make_game
from boardrl.learn import LearnError, learner_params_model, load_agent, make_learner
from boardrl.learn.seed000_afterstate import afterstate_targets, keras_init, resolve_network
from boardrl.nn import build_network

ROOT = Path(__file__).resolve().parents[2]
C4 = make_game("connect4")
#: A small stand-in for the seed's network where a test checks the data flow, not the net (about 10x faster).
SMALL_NET = {"body": "conv_stack", "layers": [{"channels": 16, "kernel": 3}], "dense": [32],
             "dense_activation": "none", "head": "q", "value_activation": "tanh"}


def row(moves: str) -> np.ndarray:
    """The state row after a move string (columns 1-7)."""
    state = C4.initial_state()
    for ch in moves:
        state = C4.play(state, int(ch) - 1)
    return np.asarray(state, dtype=np.int64)


@pytest.fixture(scope="module")
def uci_path(tmp_path_factory) -> Path:
    """The UCI table built from the vendored data set (what the prepare stage writes)."""
    text = uci_download.obtain("vendored", vendor_dir=ROOT / "data" / "vendor").files[uci_download.DATA].decode()
    path = tmp_path_factory.mktemp("uci") / "uci.parquet"
    uci_table.write_parquet(uci_table.uci_frame(text), path)
    return path


# ---------------------------------------------------------------------------------------------- input and network
def test_input_is_the_seeds_plane_x_plus_one_o_minus_one_top_row_first():
    x = seed000_planes(C4, np.stack([row("44"), row("445")]))  # O to move, then X to move: the same colours
    assert x.shape == (2, 1, 6, 7) and x.dtype == np.float32
    for board in x[:, 0]:
        assert board[5, 3] == 1.0 and board[4, 3] == -1.0  # X at the bottom of column 4, O on top of it
    assert x[1, 0, 5, 4] == 1.0 and np.count_nonzero(x[0]) == 2 and np.count_nonzero(x[1]) == 3


def test_the_seed000_preset_is_the_seeds_keras_network():
    net = build_network(resolve_network("seed000"), SHAPE, 1)
    convs = [m for m in net.modules() if isinstance(m, torch.nn.Conv2d)]
    dense = [m for m in net.modules() if isinstance(m, torch.nn.Linear)]
    assert [(c.in_channels, c.out_channels, c.kernel_size, c.padding) for c in convs] == \
        [(1, 64, (3, 3), (0, 0))] + [(64, 64, (3, 3), (1, 1))] * 3  # valid (6x7 -> 4x5), then 3 x same
    assert [(d.in_features, d.out_features) for d in dense] == [(64 * 4 * 5, 256), (256, 1)]
    assert not any(isinstance(m, (torch.nn.ReLU, torch.nn.Tanh)) for m in net.body[-2:])  # dense 256: no activation
    assert sum(p.numel() for p in net.parameters()) == 640 + 3 * 36_928 + 327_936 + 257
    torch.manual_seed(0)
    keras_init(net)
    for layer in convs + dense:
        fan_in = layer.weight[0].numel()
        fan_out = layer.weight.shape[0] * layer.weight[0, 0].numel()
        assert float(layer.weight.detach().abs().max()) <= (6.0 / (fan_in + fan_out)) ** 0.5  # Glorot uniform
        assert not layer.bias.any()  # Keras: zero biases
    x = torch.from_numpy(seed000_planes(C4, np.stack([row(""), row("4")])))
    out = net(x)
    assert out.shape == (2, 1) and torch.equal(out, torch.tanh(net.head.q(net.body(x))))  # dense 1, then tanh


# ---------------------------------------------------------------------------------------------- the fixed target
def test_target_is_the_reward_at_the_end_and_gamma_times_the_best_next_afterstate_otherwise():
    s1, s2 = row("4455"), row("1234")  # X to move in both (not over)
    legal = C4.legal_mask_batch(np.stack([s1, s2]))

    children = {tuple(C4.play(C4.state_type(*p), c)): c / 10  # X's value of a child: its column / 10
                for p in (s1, s2) for c in range(7) if C4.legal_moves(C4.state_type(*p))[c]}

    def value(rows: np.ndarray) -> np.ndarray:
        return np.asarray([children[tuple(int(v) for v in r)] for r in rows], dtype=np.float32)

    reward = np.array([1.0, 0.0, -1.0, 0.0, 0.0])
    nxt = np.stack([s1, s2, s1, s1, s2])
    next_legal = np.stack([legal[0], legal[1], legal[0], legal[0], legal[1]])
    next_legal[4] = False
    next_legal[4, [0, 2]] = True  # only columns 1 and 3 legal: the max is over the legal moves only
    done = np.array([True, True, True, False, False])
    y = afterstate_targets(C4, value, reward, nxt, next_legal, done, 0.99)
    assert y.dtype == np.float32
    assert y.tolist() == pytest.approx([1.0, 0.0, -1.0, 0.99 * 0.6, 0.99 * 0.2])  # r at the end, never bootstrapped


def test_epsilon_falls_linearly_from_one_to_a_tenth_over_5000_episodes_then_stays():
    params = learner_params_model("seed000_afterstate")()
    learner = make_learner("seed000_afterstate")
    learner.p = params
    got = [learner.epsilon(e) for e in (0, 2_500, 5_000, 10_000)]
    assert got == pytest.approx([1.0, 0.55, 0.1, 0.1])
    assert (params.games, params.gamma, params.lr, params.buffer_size, params.batch_size) == \
        (15_000, 0.99, 0.001, 20_000, 32)


# ---------------------------------------------------------------------------------------------- what training stores
def test_each_transition_trains_the_chosen_afterstate_with_the_replys_result(uci_path, tmp_path):
    learner = make_learner("seed000_afterstate")
    params = {"games": 30, "device": "cpu", "uci_path": str(uci_path), "network": SMALL_NET}
    learner.train(C4, params, seed=3, checkpoint_dir=tmp_path / "ck", eval_points=[])
    b = learner.buffer
    n = len(b)
    obs, nxt, done, reward = (b.arrays[k][:n] for k in ("obs", "next_obs", "done", "reward"))
    c = learner.counters
    assert n == c["env_steps"] and int(done.sum()) == c["games_done"] == 30
    assert c["wins"] + c["draws"] + c["losses"] == 30 and c["wins"] == int((reward > 0).sum())
    assert (obs[:, 2] % 2 == 1).all()  # every trained input is an afterstate: X has moved, O to move
    assert (reward[~done] == 0).all()
    ended_by_x = done & (nxt[:, 2] == obs[:, 2])
    replied = ~ended_by_x
    assert (nxt[ended_by_x] == obs[ended_by_x]).all() and (reward[ended_by_x] >= 0).all()  # X cannot lose by moving
    assert (nxt[replied, 2] == obs[replied, 2] + 1).all()  # s' is one opponent move after the afterstate
    assert ((nxt[replied, 1] & ~obs[replied, 1]) != 0).all() and ((obs[replied, 1] & ~nxt[replied, 1]) == 0).all()
    assert (nxt[~done, 2] % 2 == 0).all()  # the agent's next decision: X to move
    first = obs[0]  # the first episode started from a UCI position (8 stones) and the agent moved once
    assert int(first[2]) == 9


# ---------------------------------------------------------------------------------------------- the agent
class BottomLeft(torch.nn.Module):
    """V = the bottom-left cell of the seed's plane (X there: +1, O there: -1)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, 0, 5, 0].reshape(-1, 1)


def test_x_takes_the_largest_value_o_the_smallest_and_ties_go_to_the_first_move():
    agent = Seed000Agent(C4, BottomLeft(), resolve_network("seed000"))
    states = np.stack([row(""), row("7"), row("1"), row("17")])
    moves = agent.act_batch(states, np.random.default_rng(0))
    # X on the empty board: column 1 gives V = +1; O after X's 7: column 1 gives V = -1, the least for X;
    # after X's 1 every O move leaves V = +1 (a tie: the first); after 1 and 7 likewise for X.
    assert moves.tolist() == [0, 0, 0, 0]
    assert agent.value_batch(states[:2]).tolist() == [1.0, 1.0]  # each mover's best afterstate


def test_saved_agent_loads_by_kind_and_plays_the_same(tmp_path):
    net = build_network(resolve_network("seed000"), SHAPE, 1)
    agent = Seed000Agent(C4, net, resolve_network("seed000"), meta={"games": 0})
    agent.save(tmp_path / "m")
    loaded = load_agent(C4, None, tmp_path / "m")
    assert isinstance(loaded, Seed000Agent) and loaded.kind == "seed000_afterstate"
    states = np.stack([row(""), row("4"), row("4455")])
    assert np.array_equal(loaded.action_scores_batch(states), agent.action_scores_batch(states))
    # a fresh process that never imported the learner loads it too (``model:`` specs, the web page, MLflow)
    script = ("import sys; from boardrl.agents.learned import load_agent; from boardrl.games import make_game; "
              "print(type(load_agent(make_game('connect4'), None, sys.argv[1])).__name__)")
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "m")], capture_output=True, text=True,
                         timeout=120, check=False)
    assert out.returncode == 0 and out.stdout.strip() == "Seed000Agent", out.stderr[-2000:]


def test_errors_are_one_line(tmp_path):
    learner = make_learner("seed000_afterstate")
    kw = {"seed": 0, "checkpoint_dir": tmp_path / "ck", "eval_points": []}
    with pytest.raises(LearnError, match="plays connect4 only") as err:
        learner.train(make_game("tictactoe"), {"games": 2}, **kw)
    assert "\n" not in str(err.value)
    with pytest.raises(LearnError, match="UCI table not found") as err:
        learner.train(C4, {"games": 2, "uci_path": str(tmp_path / "none.parquet")}, **kw)
    assert "\n" not in str(err.value)
    with pytest.raises(LearnError, match="needs a q head"):
        learner.train(C4, {"games": 2, "network": {"body": "mlp", "hidden": [8], "head": "dueling"}}, **kw)
    with pytest.raises(LearnError, match="unknown network preset"):
        learner.train(C4, {"games": 2, "network": "nope"}, **kw)


# ---------------------------------------------------------------------------------------------- it learns
def test_a_short_run_beats_random_from_uci_starts_better_than_chance(uci_path, tmp_path):
    """200 episodes of the seed's protocol (a small network at lr 0.01 to keep the test short: the seed's net at
    lr 0.001 needs several hundred, docs/learners/seed000_afterstate.md) then 1,000 games as X against random from
    uniformly drawn UCI positions.

    Random play as X from these positions wins 55% (40,000 games measured; the seed: 56/50/45% from win/draw/loss
    positions); the same 1,000 games with random in the agent's place must stay near that.  The agent must win at
    least 64%: an agent no better than random (p <= 0.56) reaches 640 wins in 1,000 games with probability below
    1e-6 (mean 560, sd 15.7: 5.1 sd).  Seeded, so the outcome is fixed: 69.8% (random in its place: 57.8%).
    """
    learner = make_learner("seed000_afterstate")
    params = {"games": 200, "device": "cpu", "uci_path": str(uci_path), "network": SMALL_NET, "lr": 0.01,
              "exploration": {"schedule": "linear", "start": 1.0, "end": 0.1, "decay_games": 66}}
    agent = learner.train(C4, params, seed=0, checkpoint_dir=tmp_path / "ck", eval_points=[])
    starts = [C4.state_type(*r) for r in uci_table.frame_states(uci_table.read_parquet(uci_path)).tolist()]
    random = make_agent(C4, "random")
    trained = play_match(C4, agent, random, 1000, seats="a_first", starts=starts, start_order="random", seed=11)
    baseline = play_match(C4, random, random, 1000, seats="a_first", starts=starts, start_order="random", seed=11)
    assert baseline.as_first.to_dict()["win"] <= 0.60
    assert trained.as_first.to_dict()["win"] >= 0.64
