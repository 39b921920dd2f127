"""Trained models are agents by name: model:<experiment id>[,seed=K] and model:<directory>, everywhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from boardrl.agents import make_agent
from boardrl.cli import app
from boardrl.errors import BoardRLError
from boardrl.evaluate.match import play_match
from boardrl.paths import ExperimentPaths
from boardrl.games import make_game
from boardrl.learn import make_learner

TTT = make_game("tictactoe")


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A project root holding experiment `ttt_q` trained with seeds 2 and 5 (30,000 self-play games each)."""
    root = tmp_path_factory.mktemp("project")
    paths = ExperimentPaths(root, "ttt_q")
    for seed in (2, 5):
        agent = make_learner("tabular_q").train(TTT, {"games": 30_000}, seed=seed,
                                                checkpoint_dir=paths.checkpoint(seed), eval_points=[])
        agent.save(paths.model(seed))
    return root


def test_experiment_id_loads_the_lowest_seed_or_the_named_one(project, monkeypatch):
    monkeypatch.setenv("BOARDRL_ROOT", str(project))
    first = make_agent(TTT, "model:ttt_q")
    named = make_agent(TTT, "model:ttt_q,seed=5")
    assert first.name == "model:ttt_q" and first.meta["seed"] == 2 and named.meta["seed"] == 5
    rows = np.array([TTT.initial_state(), TTT.replay("15"), TTT.replay("5193")], dtype=np.int64)
    assert first.act_batch(rows, np.random.default_rng(0)).tolist() != [] and first.batched


def test_a_model_directory_is_an_agent_too(project):
    agent = make_agent(TTT, f"model:{ExperimentPaths(project, 'ttt_q').model(5)}")
    assert agent.meta["seed"] == 5


def test_a_model_plays_a_match_against_a_builtin_agent(project, monkeypatch):
    monkeypatch.setenv("BOARDRL_ROOT", str(project))
    res = play_match(TTT, make_agent(TTT, "model:ttt_q"), make_agent(TTT, "random"), 400, seed=1)
    assert res.combined.games == 400 and res.combined.win_rate > 0.7  # 30,000 games of Q-learning beat random


@pytest.mark.parametrize("spec, fragment", [
    ("model:nope", "no saved model at"),
    ("model:ttt_q,seed=3", "trained seeds: 2, 5"),
    ("model:ttt_q,depth=3", "'depth=3' is not seed=<whole number>, simulations=<whole number>, rollouts="),
    ("model:ttt_q,rollout_weight=1.5", "'rollout_weight=1.5' is not seed=<whole number>, simulations="),
    ("model:ttt_q,rollout_weight=x", "rollout_weight=<0 to 1> or tactics=<0 or 1>"),
    ("model:ttt_q,tactics=yes", "'tactics=yes' is not seed=<whole number>"),
    ("model:ttt_q,rollouts=0", "rollouts must be at least 1"),
    ("model:", "name an experiment id or a model directory"),
])
def test_bad_model_specs_are_one_line(project, monkeypatch, spec, fragment):
    monkeypatch.setenv("BOARDRL_ROOT", str(project))
    with pytest.raises(BoardRLError) as info:
        make_agent(TTT, spec)
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_a_model_of_another_game_is_refused(project, monkeypatch):
    monkeypatch.setenv("BOARDRL_ROOT", str(project))
    with pytest.raises(BoardRLError, match="holds an agent for 'tictactoe', not for 'connect4'"):
        make_agent(make_game("connect4"), "model:ttt_q")


def test_boardrl_match_plays_a_trained_model(project):
    """The command line, run from the project directory as a user would: model:<id> against random."""
    res = subprocess.run([sys.executable, "-m", "boardrl.cli", "match", "tictactoe", "model:ttt_q", "random",
                          "--games", "200", "--seed", "3", "--json"], cwd=project, capture_output=True, text=True,
                         env={k: v for k, v in os.environ.items() if k != "BOARDRL_ROOT"}, timeout=120)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["combined"]["games"] == 200 and data["combined"]["win"] > 0.7


def test_unknown_agent_names_the_model_form(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["match", "tictactoe", "tabular_q", "random"])
    assert res.exit_code == 2 and "model:<experiment id>" in res.stderr
