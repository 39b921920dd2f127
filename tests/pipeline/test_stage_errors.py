"""Every stage validates params.yaml first: a bad file is one `error:` line, exit status 2, nothing written."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
OUTPUTS = ("data/raw", "data/processed", "models", "results", "mlflow.db", "mlartifacts", "mlruns")


@pytest.fixture()
def project(tmp_path):
    """Stage scripts and a valid tiny params.yaml (the library comes from the installed package)."""
    shutil.copytree(ROOT / "pipeline", tmp_path / "pipeline")
    shutil.copy(ROOT / "params.tiny.yaml", tmp_path / "params.yaml")
    return tmp_path


def edit(project: Path, fn) -> None:
    data = yaml.safe_load((project / "params.yaml").read_text())
    fn(data)
    (project / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))


def run_stage(project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=project, capture_output=True, text=True, timeout=180)


def assert_refused(res: subprocess.CompletedProcess, project: Path, key: str, problem: str) -> None:
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith(f"error: params.yaml: {key}: ") and problem in lines[0], lines[0]
    assert not [p for p in OUTPUTS if (project / p).exists()]


@pytest.mark.parametrize(
    "script, change, key, problem",
    [
        ("download.py", lambda d: d["data"].update(source="ftp"), "data.source", "'auto', 'online' or 'vendored'"),
        ("prepare.py", lambda d: d["prepare"].update(regen=True), "prepare.regen", "unknown key"),
        ("train.py", lambda d: d["train"]["learners"]["tictactoe"]["tabular_q"].update(games=-10),
         "train.learners.tictactoe.tabular_q.games", "greater than or equal to 1"),
        ("evaluate.py", lambda d: d["evaluate"]["opponents"].update(tictactoe=["random", "deep_blue"]),
         "evaluate.opponents.tictactoe[1]", "unknown agent 'deep_blue'"),
        ("train.py", lambda d: d["train"].update(eval_games="lots"), "train.eval_games", "valid integer"),
    ],
)
def test_bad_params_stop_the_stage(project, script, change, key, problem):
    edit(project, change)
    extra = ["--game", "tictactoe", "--agent", "tabular_q"] if script in ("train.py", "evaluate.py") else []
    assert_refused(run_stage(project, f"pipeline/{script}", *extra), project, key, problem)


def test_an_experiment_not_in_params_is_refused(project):
    res = run_stage(project, "pipeline/train.py", "--game", "conniption", "--agent", "tabular_q")
    assert_refused(res, project, "experiments", "no experiment conniption/tabular_q; configured: tictactoe/tabular_q")
