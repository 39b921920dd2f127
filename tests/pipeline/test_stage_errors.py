"""Every stage validates params.yaml first: a bad file is one `error:` line, exit status 2, nothing written."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from boardrl.experiments.profiles import effective_params

ROOT = Path(__file__).resolve().parents[2]
OUTPUTS = ("data/raw", "data/processed", "build", "models", "snapshots", "results", "reports", "mlflow.db",
           "mlartifacts", "mlruns")
TTT = "tictactoe_tabular_q"
DAB = "dots_and_boxes_3x3_seed001"  # the tiny profile's second experiment


@pytest.fixture()
def project(tmp_path):
    """Stage scripts and a valid params.yaml (the tiny profile applied; the library is the installed package)."""
    shutil.copytree(ROOT / "pipeline", tmp_path / "pipeline")
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(effective_params(ROOT, "tiny"), sort_keys=False))
    return tmp_path


def edit(project: Path, fn) -> None:
    data = yaml.safe_load((project / "params.yaml").read_text())
    fn(data)
    (project / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))


def run_stage(project: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "DVC_", "BOARDRL_"))}
    return subprocess.run([sys.executable, *args], cwd=project, capture_output=True, text=True, timeout=180,
                          env={**base, "BOARDRL_PROGRESS": "0", **env})


def assert_refused(res: subprocess.CompletedProcess, project: Path, key: str, problem: str,
                   file: str = "params.yaml") -> None:
    assert res.returncode == 2, res.stderr
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith(f"error: {file}: {key}: ") and problem in lines[0], lines[0]
    assert not [p for p in OUTPUTS if (project / p).exists()]


def set_exp(exp_id: str, **fields):
    return lambda d: d["experiments"][exp_id].update(fields)


def set_exp_params(exp_id: str, **params):
    return lambda d: d["experiments"][exp_id].setdefault("params", {}).update(params)


@pytest.mark.parametrize(
    "script, change, key, problem",
    [
        ("download.py", lambda d: d["data"].update(source="ftp"), "data.source", "'auto', 'online' or 'vendored'"),
        ("prepare.py", lambda d: d["prepare"].update(regen=True), "prepare.regen", "unknown key"),
        ("inputs.py", set_exp(TTT, learner="dqn9000"), f"experiments.{TTT}.learner", "unknown learner 'dqn9000'"),
        ("train.py", set_exp_params(TTT, games=-10), f"experiments.{TTT}.params.games", "greater than or equal to 1"),
        ("train.py", set_exp_params(TTT, alphaa=0.2), f"experiments.{TTT}.params.alphaa",
         "unknown key; known keys here: "),
        ("train.py", set_exp_params(TTT, opponent=f"model:{TTT}"), f"experiments.{TTT}.params.opponent",
         "not a training or learning-curve opponent"),
        ("train.py", lambda d: d["train"].update(eval_games="lots"), "train.eval_games", "valid integer"),
        ("curve.py", lambda d: d["train"].update(eval_games="lots"), "train.eval_games", "valid integer"),
        ("curve.py", set_exp(TTT, opponents=["random", "deep_blue"]), f"experiments.{TTT}.opponents[1]",
         "unknown agent 'deep_blue'"),
        ("evaluate.py", lambda d: d["evaluate"]["per_game"]["tictactoe"].update(opponents=["random", "deep_blue"]),
         "evaluate.per_game.tictactoe.opponents[1]", "unknown agent 'deep_blue'"),
        ("evaluate.py", set_exp(TTT, ladder=["random", "model:nope"]), f"experiments.{TTT}.ladder[1]",
         "no experiment 'nope'"),
        ("evaluate.py", set_exp(TTT, seeds=[1, 1]), f"experiments.{TTT}.seeds", "a seed is listed twice"),
        # another experiment's mistake in its id, game or tables stops this one too (its learner and ladder are
        # checked by its own stages and by `make repro` before any work)
        ("train.py", set_exp(DAB, game="chess"), f"experiments.{DAB}.game", "unknown game 'chess'"),
    ],
)
def test_bad_params_stop_the_stage(project, script, change, key, problem):
    edit(project, change)
    extra = ["--experiment", TTT] if script in ("train.py", "curve.py", "evaluate.py") else []
    assert_refused(run_stage(project, f"pipeline/{script}", *extra), project, key, problem)


@pytest.mark.parametrize("script", ["train.py", "curve.py", "evaluate.py"])
def test_an_experiment_not_in_params_is_refused(project, script):
    res = run_stage(project, f"pipeline/{script}", "--experiment", "no_such_experiment")
    assert_refused(res, project, "experiments", f"no experiment 'no_such_experiment'; configured: {TTT}, {DAB}, ")


def test_bad_worker_processes_stop_the_stage(project):
    res = run_stage(project, "pipeline/train.py", "--experiment", TTT, BOARDRL_PROCESSES="abc")
    assert res.returncode == 2, res.stderr
    assert res.stderr.strip().splitlines() == [
        "error: environment: $BOARDRL_PROCESSES must be a whole number from 1 to 64, got 'abc'"]
    assert not [p for p in OUTPUTS if (project / p).exists()]


def test_a_file_system_error_is_one_line_naming_the_path(project):
    """An output folder that cannot be written (here `build` is a file; root ignores permission bits, so a
    read-only folder cannot stand in for it in this test) gives one `error:` line naming the path, no traceback."""
    (project / "build").write_text("not a directory")
    res = run_stage(project, "pipeline/inputs.py")
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 1 and len(lines) == 1, res.stderr
    assert lines[0].startswith("error: ") and "build" in lines[0] and "Traceback" not in res.stderr
    assert (project / "build").read_text() == "not a directory"


def test_a_file_system_error_while_training_is_one_line(project):
    (project / "models").write_text("not a directory")
    res = run_stage(project, "pipeline/train.py", "--experiment", DAB)
    lines = [ln for ln in res.stderr.strip().splitlines() if not ln.startswith(("curve:", "20"))]
    assert res.returncode == 1 and len(lines) == 1 and lines[0].startswith("error: ") and "models" in lines[0], \
        res.stderr[-2000:]


def test_the_curve_stage_without_snapshots_is_one_line(project):
    """curve@<id> before train@<id> (run by hand): one line saying what is missing, no curve written."""
    res = run_stage(project, "pipeline/curve.py", "--experiment", TTT)
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 1 and len(lines) == 1, res.stderr[-2000:]
    assert lines[0] == (f"error: no snapshots in {project}/snapshots/{TTT}/seed-7: index.json is missing (run the "
                        f"train stage first)")
    assert not (project / "results").exists()
