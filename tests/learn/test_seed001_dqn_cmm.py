"""Reference system 001's DQN_CMM: its conditional-minimax target, which transitions it records and when, the frozen
copy's refresh and the seats, TF1's RMSProp, the replay's start and sampling, the saved model in a fresh process.

Resume identity (kill, resume, curve points, checkpoint periods) is the registry-wide test's
(tests/learn/test_training_invariance.py), which covers this learner through its ``small_run``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from boardrl.agents import make_agent
from boardrl.agents.network import NetworkAgent
from boardrl.evaluate.match import play_match
from boardrl.games import make_game
from boardrl.learn import LearnError, learner_params_model, load_agent, make_learner
from boardrl.learn.core.tf1_rmsprop import TF1RMSProp
from boardrl.learn.seed001_dqn_cmm import cmm_targets, greedy_random_ties, record_after_move

D2 = make_game("dots_and_boxes_2x2")
TINY_NET = {"body": "mlp", "hidden": [16], "head": "q", "value_activation": "tanh"}


def tiny(**over) -> dict:
    """Params of a run of a few seconds: a small net, a small replay that starts learning at once."""
    return {"games": 6, "buffer_size": 200, "learning_starts": 20, "batch_size": 8, "update_step": 3, "lr": 1e-3,
            "device": "cpu", "network": TINY_NET, **over}


# ---------------------------------------------------------------------------------------------- the target
def test_target_adds_tanh_reward_and_the_signed_discounted_max_at_the_action_only():
    q = torch.tensor([[0.1, 0.2, 0.3, 0.4], [0.5, -0.5, 0.0, 0.25], [-0.1, 0.0, 0.1, 0.2]])
    q_next = torch.tensor([[0.9, -0.3, 0.2, 0.0], [0.1, 0.6, -0.2, 0.3], [0.7, 0.7, 0.7, 0.7]])
    action = torch.tensor([1, 3, 0])
    reward = torch.tensor([0.0, 0.0, 1.0])
    done = torch.tensor([False, False, True])
    same = torch.tensor([True, False, True])  # row 0: the learner moves again (phi +1); row 1: the opponent (-1)
    legal = torch.tensor([[False, True, True, True], [True, False, True, True], [False] * 4])
    y = cmm_targets(q, q_next, action, reward, done, same, legal, 0.6, "all")
    want = q.clone()
    want[0, 1] += 0.6 * 0.9  # Q(s,a) + tanh(0) + gamma * (+1) * max over all outputs (0.9, on a drawn edge)
    want[1, 3] += -0.6 * 0.6  # Q(s,a) + tanh(0) - gamma * max
    want[2, 0] += float(np.tanh(1.0))  # terminal: q_next counts 0, the win through tanh (0.7616)
    assert torch.allclose(y, want, atol=1e-7)
    assert torch.equal(y[0, [0, 2, 3]], q[0, [0, 2, 3]])  # every other action's target is its prediction
    y_legal = cmm_targets(q, q_next, action, reward, done, same, legal, 0.6, "legal")
    assert y_legal[0, 1] == pytest.approx(0.2 + 0.6 * 0.2)  # the max over undrawn edges only
    assert y_legal[1, 3] == pytest.approx(0.25 - 0.6 * 0.3)
    assert torch.equal(y_legal[2], y[2])
    # the loss is the MSE over all outputs of the minibatch: only the taken action's error is non-zero
    assert torch.count_nonzero(y - q) == 3


# ---------------------------------------------------------------------------------------------- what is recorded
#: A 2x2 game (edges: rows 0-5, columns 6-11): box (0,0) is 0,2,6,7; (0,1) 1,3,7,8; (1,0) 2,4,9,10; (1,1) 3,5,10,11.
SCRIPT = [0, 2, 6, 7, 1, 3, 8, 4, 9, 5, 10, 11]


def scripted(learner: int) -> tuple[list[np.ndarray], list[tuple]]:
    """Play SCRIPT through ``record_after_move``: (the states s0..s12, each record as (obs index, action, next obs
    index, reward, done, same mover) with states given by their index in the game)."""
    state, states, out, pending = D2.initial_state(), [], [], None
    states.append(np.asarray(state, dtype=np.int64))
    for move in SCRIPT:
        before, mover = states[-1], D2.to_move(state)
        state = D2.play(state, move)
        after = np.asarray(state, dtype=np.int64)
        states.append(after)
        over = D2.is_over(state)
        t, pending = record_after_move(pending, learner, mover, before, move, after, D2.to_move(state), over,
                                       D2.returns(state)[learner] if over else 0.0)
        if t is not None:
            index = {tuple(s): i for i, s in enumerate(states)}
            out.append((index[tuple(t.obs)], t.action, index[tuple(t.next_obs)], t.reward, t.done, t.same_mover))
    assert pending is None  # the end consumed the last decision
    return states, out


def test_records_of_the_first_player_pass_score_and_end():
    states, rec = scripted(learner=0)
    movers = [int(s[1]) for s in states[:-1]]
    assert movers == [0, 1, 0, 1, 1, 0, 1, 1, 0, 1, 0, 0]  # P1 scores with 7 and 8, P0 with 10 and 11
    assert rec == [
        (0, 0, 1, 0.0, False, False),  # P1 passed with 2: s' = the state P1 faced (before its move), phi -1
        (2, 6, 4, 0.0, False, False),  # P1 scored with 7 (nothing recorded), passed with 1: s' = s4, not s3
        (5, 3, 7, 0.0, False, False),  # P1 scored with 8, passed with 4
        (8, 9, 9, 0.0, False, False),
        (10, 10, 11, 0.0, False, True),  # P0's scoring move: s' = the new state, phi +1
        (11, 11, 12, 0.0, True, True),  # the last edge: terminal, the result (2-2: a draw)
    ]
    assert len(rec) == movers.count(0)  # every decision of the learner recorded exactly once


def test_records_of_the_second_player_include_the_opponents_last_move_ending_the_game():
    states, rec = scripted(learner=1)
    assert rec == [  # P0's first move passes the turn, but P1 has no decision pending yet: nothing
        (1, 2, 2, 0.0, False, False),
        (3, 7, 4, 0.0, False, True),  # P1 scores with 7
        (4, 1, 5, 0.0, False, False),
        (6, 8, 7, 0.0, False, True),
        (7, 4, 8, 0.0, False, False),
        (9, 5, 12, 0.0, True, True),  # P0 took the last two boxes: P1's pending decision ends the game
    ]
    movers = [int(s[1]) for s in states[:-1]]
    assert len(rec) == movers.count(1)


def test_a_run_records_one_transition_per_learner_decision_with_consistent_movers(tmp_path):
    learner = make_learner("seed001_dqn_cmm")
    learner.train(D2, tiny(games=10, learning_starts=10_000), seed=1, checkpoint_dir=tmp_path / "ck",
                  eval_points=[])
    n = len(learner.buffer)
    a = {k: v[:n] for k, v in learner.buffer.arrays.items()}
    assert n == learner.counters["transitions"] and int(a["done"].sum()) == 10
    assert learner.counters["grad_steps"] == 0  # below learning_starts nothing is trained
    live = ~a["done"]
    obs, nxt = a["obs"][live], a["next_obs"][live]
    same = a["same_mover"][live]
    assert (obs[:, 1][same] == nxt[:, 1][same]).all()  # phi +1: the learner moves again in s'
    assert (obs[:, 1][~same] != nxt[:, 1][~same]).all()  # phi -1: the opponent moves in s'
    assert (nxt[:, 0] & obs[:, 0] == obs[:, 0]).all() and (nxt[:, 0] != obs[:, 0]).all()  # s' later than s
    assert (a["reward"][live] == 0).all() and set(a["reward"][a["done"]].tolist()) <= {-1.0, 0.0, 1.0}
    c = learner.counters
    assert c["wins"] + c["draws"] + c["losses"] == 10


# ---------------------------------------------------------------------------------------------- self-play schedule
def test_frozen_copy_is_refreshed_every_update_step_games_and_seats_alternate(tmp_path):
    learner = make_learner("seed001_dqn_cmm")
    seen: list[tuple[int, int, bool, bool]] = []
    after_game: dict[int, dict] = {}
    play = learner._game

    def watched(index: int, sums: dict) -> None:
        frozen = learner.frozen.state_dict()
        same_as = [g for g, net in after_game.items() if all(torch.equal(net[k], frozen[k]) for k in net)]
        first = int(learner.buffer.arrays["obs"][learner.buffer.pos - 1][1]) if len(learner.buffer) else -1
        play(index, sums)
        seen.append((index, learner.learner_player(index), max(same_as, default=-1), first))
        after_game[index] = {k: v.clone() for k, v in learner.net.state_dict().items()}

    learner._game = watched  # type: ignore[method-assign]
    initial = None

    def keep_initial(game, params, seed, opponent):
        nonlocal initial
        type(learner).setup(learner, game, params, seed, opponent)
        initial = {k: v.clone() for k, v in learner.net.state_dict().items()}
        assert all(torch.equal(initial[k], learner.frozen.state_dict()[k]) for k in initial)  # starts as a copy

    learner.setup = keep_initial  # type: ignore[method-assign]
    learner.train(D2, tiny(games=8, learning_starts=1), seed=2, checkpoint_dir=tmp_path / "ck", eval_points=[])
    assert [s[1] for s in seen] == [0, 1, 0, 1, 0, 1, 0, 1]  # the learner's seat alternates, first in game 0
    # the frozen copy holds the initial weights in games 0-2, the weights after game 2 in games 3-5, after 5 then
    assert [s[2] for s in seen] == [-1, -1, -1, 2, 2, 2, 5, 5]
    assert learner.counters["copies"] == 2
    assert not all(torch.equal(initial[k], after_game[2][k]) for k in initial)  # the learner did change
    assert learner.learner_player(0) == 0 and learner.learner_player(7) == 1


# ---------------------------------------------------------------------------------------------- the optimiser
def test_rmsprop_is_tf1s_ones_start_decay_point_nine_epsilon_inside_the_root_after_value_clipping(tmp_path):
    params = learner_params_model("seed001_dqn_cmm")()
    assert (params.lr, params.rms_decay, params.rms_epsilon, params.clip_grad_value) == (1e-6, 0.9, 1e-10, 1.0)
    assert (params.gamma, params.epsilon, params.buffer_size, params.learning_starts, params.batch_size,
            params.update_step, params.next_max, params.network) == (0.6, 0.05, 20_000, 10_000, 100, 25_000, "all",
                                                                     "seed001")
    learner = make_learner("seed001_dqn_cmm")
    learner.setup(D2, learner.check_params(tiny()), 0, None)
    opt = learner.opt
    assert isinstance(opt, TF1RMSProp) and opt.defaults == {"lr": 1e-3, "decay": 0.9, "momentum": 0.0,
                                                            "epsilon": 1e-10}
    w = torch.nn.Parameter(torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64))
    rms = TF1RMSProp([w], lr=0.01)
    ms = np.ones(3)
    expect = w.detach().numpy().copy()
    for g in ([0.5, -3.0, 0.0], [0.2, 2.0, -0.1]):
        w.grad = torch.tensor(g, dtype=torch.float64)
        torch.nn.utils.clip_grad_value_([w], 1.0)  # as the learner does: -3.0 -> -1.0, 2.0 -> 1.0
        clipped = np.clip(g, -1, 1)
        rms.step()
        ms = 0.9 * ms + 0.1 * clipped ** 2
        expect -= 0.01 * clipped / np.sqrt(ms + 1e-10)
        assert np.allclose(w.detach().numpy(), expect, rtol=0, atol=1e-15)
    torch_rms = torch.optim.RMSprop([torch.nn.Parameter(torch.zeros(1))])
    assert (torch_rms.defaults["alpha"], torch_rms.defaults["eps"]) == (0.99, 1e-8)  # why torch's is not used


# ---------------------------------------------------------------------------------------------- replay
def test_one_minibatch_per_transition_from_learning_starts_drawn_with_replacement(tmp_path):
    learner = make_learner("seed001_dqn_cmm")
    draws: list[int] = []
    def keep_setup(game, params, seed, opponent):
        type(learner).setup(learner, game, params, seed, opponent)
        inner = learner.buffer.sample

        def counted(batch_size, rng):
            draws.append(len(learner.buffer))
            return inner(batch_size, rng)
        learner.buffer.sample = counted

    learner.setup = keep_setup  # type: ignore[method-assign]
    # batches of 50 from a table of at most 20: possible only with replacement
    learner.train(D2, tiny(games=8, buffer_size=20, learning_starts=15, batch_size=50), seed=3,
                  checkpoint_dir=tmp_path / "ck", eval_points=[])
    c = learner.counters
    assert c["grad_steps"] == c["transitions"] - 15 + 1 == len(draws)  # from the 15th record on, one per record
    assert draws[0] == 15 and max(draws) == 20 and len(learner.buffer) == 20
    assert len(learner.buffer.sample(50, np.random.default_rng(0)).action) == 50


def test_greedy_breaks_ties_at_random_among_legal_actions():
    q = np.array([0.5, 0.9, 0.9, 0.9, 0.1])
    legal = np.array([True, True, False, True, True])
    picks = {greedy_random_ties(q, legal, np.random.default_rng(s)) for s in range(40)}
    assert picks == {1, 3}


# ---------------------------------------------------------------------------------------------- the saved model
def test_saved_model_is_a_network_agent_that_a_fresh_process_loads_and_plays_alike(tmp_path):
    learner = make_learner("seed001_dqn_cmm")
    agent = learner.train(D2, tiny(), seed=4, checkpoint_dir=tmp_path / "ck", eval_points=[])
    assert isinstance(agent, NetworkAgent) and agent.kind == "network" and agent.policy == "greedy"
    agent.save(tmp_path / "m")
    loaded = load_agent(D2, "seed001_dqn_cmm", tmp_path / "m")
    rows = np.stack([np.asarray(D2.initial_state(), dtype=np.int64),
                     np.asarray(D2.play(D2.initial_state(), 4), dtype=np.int64)])
    here = agent.action_scores_batch(rows)
    assert np.array_equal(loaded.action_scores_batch(rows), here)
    script = ("import sys, json, numpy as np; from boardrl.agents.learned import load_agent; "
              "from boardrl.games import make_game; g = make_game('dots_and_boxes_2x2'); "
              "a = load_agent(g, 'seed001_dqn_cmm', sys.argv[1]); rows = np.array(json.loads(sys.argv[2])); "
              "print(json.dumps([type(a).__name__, a.action_scores_batch(rows).tolist()]))")
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "m"), json.dumps(rows.tolist())],
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    name, scores = json.loads(out.stdout)
    assert name == "NetworkAgent" and np.array_equal(np.asarray(scores, dtype=np.float32), here)


def test_errors_are_one_line(tmp_path):
    learner = make_learner("seed001_dqn_cmm")
    kw = {"seed": 0, "checkpoint_dir": tmp_path / "ck", "eval_points": []}
    for game, params, match in ((make_game("tictactoe"), {"games": 2}, "plays Dots and Boxes only"),
                                (D2, {"games": 2, "network": {"body": "mlp", "hidden": [8], "head": "dueling"}},
                                 "needs a q head"),
                                (D2, {"games": 2, "network": "nope"}, "unknown network preset"),
                                (D2, {"games": 2, "next_max": "some"}, "next_max")):
        with pytest.raises(LearnError, match=match) as err:
            learner.train(game, params, **kw)
        assert "\n" not in str(err.value)
    with pytest.raises(LearnError, match="takes no opponent"):
        learner.train(D2, tiny(games=1), opponent=make_agent(D2, "random"), **kw)


# ---------------------------------------------------------------------------------------------- it learns
def test_a_short_run_beats_random_on_2x2_better_than_chance(tmp_path):
    """400 games of the system's loop on 2x2 (its target, recording, frozen copy every 50 games, epsilon 0.05), with
    a small MLP at lr 3e-3, learning from the 200th transition in batches of 32 (the system's net at lr 1e-6 needs
    hundreds of thousands of games), then 1,000 games against random, seats alternating.

    An agent no better than random, with seats alternating, wins as many games as it loses: among n decisive games
    its wins are Binomial(n, 1/2).  The agent must win at least 65% of at least 400 decisive games: for an agent no
    better than random that is at least 6 sd above the mean, probability below 1e-9.  Seeded, so the outcome is
    fixed: 585 wins, 276 draws, 139 losses (81% of the decisive games).
    """
    learner = make_learner("seed001_dqn_cmm")
    params = {"games": 400, "learning_starts": 200, "buffer_size": 2000, "batch_size": 32, "update_step": 50,
              "lr": 3e-3, "device": "cpu", "network": {**TINY_NET, "hidden": [64]}}
    agent = learner.train(D2, params, seed=0, checkpoint_dir=tmp_path / "ck", eval_points=[])
    result = play_match(D2, agent, make_agent(D2, "random"), 1000, seats="alternate", seed=7).combined
    decisive = result.wins + result.losses
    assert decisive >= 400 and result.wins / decisive >= 0.65, result.to_dict()
