"""A train stage killed midway resumes from its checkpoint and ends exactly where an uninterrupted run ends."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from repo_copy import ROOT, stage_env

pytestmark = pytest.mark.timeout(400)
GAMES = 300_000
EVERY = 25_000


def make_project(path: Path) -> Path:
    shutil.copytree(ROOT / "pipeline", path / "pipeline")
    data = yaml.safe_load((ROOT / "params.tiny.yaml").read_text())
    data["experiments"] = [{"game": "tictactoe", "agent": "tabular_q"}]
    data["train"]["opponents"] = {"tictactoe": ["random"]}
    data["train"]["eval_games"] = 20
    data["train"]["learners"] = {"tictactoe": {"tabular_q": {"games": GAMES, "checkpoint_every": EVERY}}}
    data["evaluate"]["opponents"] = {"tictactoe": ["random"]}
    (path / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def train_cmd() -> list[str]:
    return [sys.executable, "pipeline/train.py", "--game", "tictactoe", "--agent", "tabular_q"]


def run_train(project: Path) -> subprocess.CompletedProcess:
    res = subprocess.run(train_cmd(), cwd=project, env=stage_env(), capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    return res


def kill_after_first_checkpoint(project: Path) -> int:
    """Start training, SIGKILL it once a checkpoint past the first segment exists; returns its game count."""
    manifest = project / "models/tictactoe/tabular_q/checkpoint/checkpoint.json"
    proc = subprocess.Popen(train_cmd(), cwd=project, env=stage_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            assert proc.poll() is None, "training finished before it could be interrupted"
            try:
                done = json.loads(manifest.read_text())["games_done"]
            except (OSError, ValueError, KeyError):
                done = 0
            if done >= EVERY:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
                return done
            time.sleep(0.02)
        raise AssertionError("no checkpoint appeared within 240 s")
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()


def test_killed_training_resumes_to_the_same_result(tmp_path):
    whole = make_project(tmp_path / "whole")
    run_train(whole)

    cut = make_project(tmp_path / "cut")
    done = kill_after_first_checkpoint(cut)
    assert EVERY <= done < GAMES
    assert not (cut / "results/train/tictactoe-tabular_q/curve.tsv").exists()  # killed before any final output
    progress = json.loads((cut / "models/tictactoe/tabular_q/checkpoint/pipeline_curve.json").read_text())
    assert {0, 100, 1000, 10000} <= {int(s) for s in progress["rows"]}  # measured before the kill, kept

    run_train(cut)
    rel = "results/train/tictactoe-tabular_q/curve.tsv"
    assert (cut / rel).read_bytes() == (whole / rel).read_bytes()
    tables = [np.load(p / "models/tictactoe/tabular_q/model/q_table.npz") for p in (whole, cut)]
    assert np.array_equal(tables[0]["keys"], tables[1]["keys"])
    assert np.array_equal(tables[0]["values"], tables[1]["values"])
    assert not (cut / "models/tictactoe/tabular_q/checkpoint").exists()

    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{cut}/mlflow.db")
    exp = client.get_experiment_by_name("tictactoe")
    runs = client.search_runs([exp.experiment_id], order_by=["attributes.start_time ASC"])
    assert [r.info.status for r in runs] == ["RUNNING", "FINISHED"]  # the killed run never got to end itself
    assert runs[1].data.tags["resumed"] == "true" and runs[0].data.tags["resumed"] == "false"
