"""Seed 003's four tic-tac-toe learners on the Learner base: resume, params, saving, and that they learn."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from boardrl.agents import make_agent
from boardrl.agents.afterstate import AfterstateAgent
from boardrl.agents.network import NetworkAgent
from boardrl.evaluate.match import play_match
from boardrl.games import make_game
from boardrl.learn import learner_class
from boardrl.learn.core.base import LearnError

TTT = make_game("tictactoe")
NAMES = ["td0", "td_lambda", "qnet", "dqn_lambda"]
#: Epochs of 50 games, checkpoints asked every 130 games: each falls inside an epoch, which is played whole first.
SMALL = {"games": 400, "games_per_epoch": 50, "updates_per_epoch": 20, "checkpoint_every": 130, "device": "cpu",
         "buffer": 500}
POINTS = [0, 200, 400]


class Kill(Exception):
    """Stands for the process dying."""


def run(name: str, ckpt, kill_at: int | None = None, extra: dict | None = None):
    def on_eval(done, agent):
        if done == kill_at:
            raise Kill
        states = np.array([TTT.replay(m) for m in ("", "5", "51")], dtype=np.int64)
        return agent.act_batch(states, np.random.default_rng(0)).tolist()

    learner = learner_class(name)()
    agent = learner.train(TTT, {**SMALL, **(extra or {})}, seed=3, checkpoint_dir=ckpt, eval_points=POINTS,
                          on_eval=on_eval)
    return learner, agent


@pytest.mark.parametrize("name,extra", [(n, None) for n in NAMES] + [("td0", {"lr_end": 1e-4})],
                         ids=NAMES + ["td0-lr_end"])
def test_killed_run_resumes_to_the_uninterrupted_result(tmp_path, name, extra):
    ref, _ = run(name, tmp_path / "ref", extra=extra)
    with pytest.raises(Kill):
        run(name, tmp_path / "ck", kill_at=400, extra=extra)  # checkpoints at 150, 200, 300; 390 ran on to 400
    resumed, _ = run(name, tmp_path / "ck", extra=extra)
    assert resumed.resumed_from == 300
    for key, value in ref.net.state_dict().items():
        assert torch.equal(value, resumed.net.state_dict()[key]), key
    assert np.array_equal(ref.memory.arrays["obs"], resumed.memory.arrays["obs"])
    assert resumed.evaluations == ref.evaluations


def test_learning_rate_falls_linearly_to_lr_end_at_the_epochs_ends(tmp_path):
    """lr 1e-3 -> 1e-4 over 400 games: the updates after game 200 run at 5.5e-4, the last epoch's at 1e-4; without
    lr_end the rate stays."""
    learner = learner_class("td0")()
    p = learner.check_params({**SMALL, "optimizer": "adam", "lr": 1e-3, "lr_end": 1e-4})
    learner.setup(TTT, p, 0, None)
    learner.train_segment(0, 200)
    assert learner.opt.param_groups[0]["lr"] == pytest.approx(5.5e-4)
    learner.train_segment(200, 400)
    assert learner.opt.param_groups[0]["lr"] == pytest.approx(1e-4)
    constant = learner_class("td0")()
    constant.setup(TTT, constant.check_params({**SMALL, "optimizer": "adam", "lr": 1e-3}), 0, None)
    constant.train_segment(0, 200)
    assert constant.opt.param_groups[0]["lr"] == pytest.approx(1e-3)


@pytest.mark.parametrize("params, message", [
    ({"lam": 1.5}, "td_lambda params: lam: Input should be less than or equal to 1"),
    ({"network": {"head": "policy_value"}}, "td_lambda params: network: Value error, seed 003's learners need"),
    ({"games": 0}, "td_lambda params: games: Input should be greater than or equal to 1"),
    ({"gamma": 2}, "td_lambda params: gamma:"),
])
def test_bad_params_are_one_line_errors(params, message):
    with pytest.raises(LearnError) as err:
        learner_class("td_lambda")().check_params(params)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_lambda_is_refused_by_one_step_learners():
    with pytest.raises(LearnError, match="td0 params: lam: Extra inputs are not permitted"):
        learner_class("td0")().check_params({"lam": 0.5})


def test_self_play_only(tmp_path):
    with pytest.raises(LearnError, match="self-play only"):
        learner_class("qnet")().train(TTT, {"games": 10}, seed=0, checkpoint_dir=tmp_path, eval_points=[],
                                      opponent=make_agent(TTT, "random"))


@pytest.mark.parametrize("name, kind", [("td_lambda", AfterstateAgent), ("dqn_lambda", NetworkAgent)])
def test_trained_agents_save_and_load(tmp_path, name, kind):
    _, agent = run(name, tmp_path / "ck")
    assert type(agent) is kind
    agent.save(tmp_path / "m")
    info = json.loads((tmp_path / "m" / "agent.json").read_text())
    assert info["kind"] == kind.kind and info["meta"]["games"] == 400
    back = kind.load(TTT, info, tmp_path / "m")
    states = np.array([TTT.replay(m) for m in ("", "1", "15", "159")], dtype=np.int64)
    rng = np.random.default_rng(0)
    assert np.array_equal(agent.act_batch(states, rng), back.act_batch(states, rng))


def test_td_lambda_beats_random_after_3000_games(tmp_path):
    """Random play scores about 0.65 as first player (SEEDS.md seed 003).  After 3,000 games TD(lambda) must
    score > 0.80 over 1,000 games as first: a score that high has probability far below 1e-9 for an agent whose
    true score is 0.65 (binomial-like sd of a 1,000-game mean <= 0.016, so 0.80 is > 9 sd away)."""
    learner = learner_class("td_lambda")()
    agent = learner.train(TTT, {"games": 3000, "device": "cpu"}, seed=0, checkpoint_dir=tmp_path / "ck",
                          eval_points=[])
    result = play_match(TTT, agent, make_agent(TTT, "random"), 1000, seats="a_first", seed=7)
    first = result.as_first
    assert (first.wins + 0.5 * first.draws) / first.games > 0.80


def test_the_four_learners_are_discovered_and_the_helpers_are_not():
    from boardrl.learn import learner_names

    names = set(learner_names())
    assert set(NAMES) <= names and not names & {"afterstate", "lambda_returns", "value_selfplay"}


def test_epsilon_follows_a_decaying_schedule(tmp_path):
    """Our configuration decays epsilon (seed 003: constant 0.1): each epoch plays at the schedule's epsilon
    for the games done when it starts, here linear 1.0 -> 0.0 over 200 games in epochs of 50."""
    seen: dict[int, float] = {}
    params = {**SMALL, "games": 300, "checkpoint_every": 1000,
              "exploration": {"schedule": "linear", "start": 1.0, "end": 0.0, "decay_games": 200}}
    learner_class("td_lambda")().train(TTT, params, seed=0, checkpoint_dir=tmp_path, eval_points=[],
                                       on_metrics=lambda m, step: seen.update({step: m["epsilon"]}
                                                                              if "epsilon" in m else {}))
    assert seen == pytest.approx({50: 1.0, 100: 0.75, 150: 0.5, 200: 0.25, 250: 0.0, 300: 0.0})


def test_symmetry_stores_eight_images_of_every_game(tmp_path):
    params = {**SMALL, "games": 50, "buffer": 100_000, "updates_per_epoch": 0}
    plain = learner_class("qnet")()
    plain.train(TTT, {**params, "store_exploratory": True}, seed=1, checkpoint_dir=tmp_path / "a", eval_points=[])
    sym = learner_class("qnet")()
    sym.train(TTT, {**params, "store_exploratory": True, "symmetry": True}, seed=1, checkpoint_dir=tmp_path / "b",
              eval_points=[])
    n = len(plain.memory)
    assert len(sym.memory) == 8 * n  # the same 50 games (same seed, no updates), each stored 8 times
    for key in ("obs", "action", "reward", "next_index"):  # the identity images come first: the original games
        assert np.array_equal(sym.memory.arrays[key][:n], plain.memory.arrays[key][:n]), key


def test_updates_wait_for_the_end_of_an_epoch_whatever_the_segments():
    """Curve points and checkpoints end segments inside epochs; the updates of an epoch all come at its end."""
    from types import SimpleNamespace

    from boardrl.learn.value_selfplay import SelfPlayValueLearner

    learner = SimpleNamespace(p=SimpleNamespace(games_per_epoch=100, updates_per_epoch=300, games=1050))
    due = lambda g, end: SelfPlayValueLearner._updates_due(learner, g, end)  # noqa: E731
    assert [due(200, 220), due(220, 300), due(0, 100)] == [0, 300, 300]
    assert due(1000, 1050) == 150  # the last, partial epoch of the run: its pro-rated share
    cuts = [0, 100, 220, 460, 1000, 1050]  # segment ends of a real curve
    flat = [(g, min(1050, g + 100)) for g in range(0, 1050, 100)]
    pieces = []
    for a, b in zip(cuts, cuts[1:]):
        g = a
        while g < b:
            end = min(b, (g // 100 + 1) * 100)
            pieces.append((g, end))
            g = end
    assert sum(due(*c) for c in pieces) == sum(due(*c) for c in flat) == 10 * 300 + 150
