"""A train stage killed midway resumes from its checkpoint and ends exactly where an uninterrupted run ends: the
same model, the same snapshots, so stage curve@<id> plays the same curve."""

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

from mlflow_store import seed_store
from repo_copy import ROOT, stage_env

pytestmark = pytest.mark.timeout(400)
GAMES = 100_000  # four checkpoints: the kill lands after the first, with three quarters still to train
EVERY = 25_000


EXP = "tictactoe_tabular_q"
SEED = 7


def make_project(path: Path, games: int = GAMES) -> Path:
    """A project with one tic-tac-toe experiment of ``games`` games, checkpointed every 25,000."""
    shutil.copytree(ROOT / "pipeline", path / "pipeline")
    data = yaml.safe_load((ROOT / "params.yaml").read_text())
    data["experiments"] = {EXP: {"game": "tictactoe", "learner": "tabular_q", "seeds": [SEED],
                                 "params": {"games": games, "checkpoint_every": EVERY}}}
    data["train"]["opponents"] = {"tictactoe": ["random"]}
    data["train"]["eval_games"] = 20
    (path / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    seed_store(path)  # the stages' processes open it: no schema migrations there (tests/mlflow_store.py)
    return path


def train_cmd() -> list[str]:
    return [sys.executable, "pipeline/train.py", "--experiment", EXP]


def run_train(project: Path) -> subprocess.CompletedProcess:
    res = subprocess.run(train_cmd(), cwd=project, env=stage_env(), capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    return res


def run_curve(project: Path) -> subprocess.CompletedProcess:
    res = subprocess.run([sys.executable, "pipeline/curve.py", "--experiment", EXP], cwd=project, env=stage_env(),
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    return res


def kill_after_first_checkpoint(project: Path) -> int:
    """Start training, SIGKILL it once a checkpoint past the first segment exists; returns its game count."""
    manifest = project / f"models/{EXP}/seed-{SEED}/checkpoint/checkpoint.json"
    proc = subprocess.Popen(train_cmd(), cwd=project, env=stage_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            assert proc.poll() is None, "training finished before it could be interrupted"
            try:
                done = json.loads(manifest.read_text())["done"]
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
    run_curve(whole)

    cut = make_project(tmp_path / "cut")
    done = kill_after_first_checkpoint(cut)
    assert EVERY <= done < GAMES
    curve = f"results/curves/{EXP}/seed-{SEED}.tsv"
    snapshots = f"snapshots/{EXP}/seed-{SEED}"
    assert not (cut / snapshots).exists()  # killed before any final output
    checkpoint = cut / f"models/{EXP}/seed-{SEED}/checkpoint"
    kept = json.loads((checkpoint / "checkpoint.json").read_text())["extra"]["evaluations"]
    # curve points measured before the kill, kept: 100, 1,000 and 10,000 at the end of their waves of 256 games,
    # each with the snapshot saved beside the checkpoint (the resumed run does not measure them again)
    assert {0, 256, 1024, 10240} <= {int(s) for s in kept}
    staged = {p.name for p in (checkpoint.parent / "snapshots").iterdir()}
    assert {str(s) for s in kept} <= staged

    run_train(cut)
    assert not (checkpoint.parent / "snapshots").exists()  # published, then removed with the checkpoint
    whole_files = {p.relative_to(whole / snapshots): p.read_bytes() for p in (whole / snapshots).rglob("*")
                   if p.is_file()}
    assert whole_files == {p.relative_to(cut / snapshots): p.read_bytes() for p in (cut / snapshots).rglob("*")
                           if p.is_file()}
    run_curve(cut)
    assert (cut / curve).read_bytes() == (whole / curve).read_bytes()
    tables = [np.load(p / f"models/{EXP}/seed-{SEED}/model/q_table.npz") for p in (whole, cut)]
    assert np.array_equal(tables[0]["keys"], tables[1]["keys"])
    assert np.array_equal(tables[0]["values"], tables[1]["values"])
    assert not checkpoint.exists()

    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{cut}/mlflow.db")
    exp = client.get_experiment_by_name("tictactoe")
    runs = client.search_runs([exp.experiment_id], filter_string="tags.seed = '7' and tags.stage = 'train'",
                              order_by=["attributes.start_time ASC"])
    assert [r.info.status for r in runs] == ["KILLED", "FINISHED"]  # the resumed stage closed the killed run
    assert runs[0].data.tags["superseded_by"] == runs[1].info.run_id
    assert runs[0].data.tags["resumed_from"] == "0" and int(runs[1].data.tags["resumed_from"]) == done
    # the curve run of the resumed training holds the whole curve, the points measured before the kill included
    curve_run = runs[1].data.tags["curve_run_id"]
    steps = [m.step for m in client.get_metric_history(curve_run, "curve/random/combined/win")]
    curve_steps = sorted({int(line.split("\t")[0]) for line in (whole / curve).read_text().splitlines()[1:]})
    assert sorted(steps) == curve_steps and min(curve_steps) == 0 and max(curve_steps) == GAMES


def _wait_for_checkpoint(project: Path, proc: subprocess.Popen) -> None:
    manifest = project / f"models/{EXP}/seed-{SEED}/checkpoint/checkpoint.json"
    deadline = time.monotonic() + 240
    while not manifest.exists():
        assert proc.poll() is None and time.monotonic() < deadline, "no checkpoint appeared"
        time.sleep(0.05)


def test_a_second_trainer_is_refused_and_a_trainer_stops_with_its_parent(tmp_path):
    """The lock names the running trainer; killing the process that started a trainer (dvc) stops the trainer,
    which ends its MLflow runs FAILED and releases the lock."""
    project = make_project(tmp_path / "p", games=20_000_000)  # a minute or more: it is killed long before
    starter = ("import subprocess, sys, time\n"
               f"subprocess.Popen({train_cmd()!r})\n"
               "time.sleep(600)\n")
    parent = subprocess.Popen([sys.executable, "-c", starter], cwd=project, env=stage_env(),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for_checkpoint(project, parent)
        second = subprocess.run(train_cmd(), cwd=project, env=stage_env(), capture_output=True, text=True, timeout=120)
        lines = second.stderr.strip().splitlines()
        assert second.returncode == 1 and len(lines) == 1, second.stderr
        assert "is being trained by another process (pid" in lines[0]
        holder = int((project / f"models/{EXP}/.trainer.lock").read_text())
        os.kill(parent.pid, signal.SIGKILL)  # what killing only `dvc` does
        parent.wait()
        deadline = time.monotonic() + 30
        while Path(f"/proc/{holder}").exists() and "Z" not in Path(f"/proc/{holder}/stat").read_text().split()[2]:
            assert time.monotonic() < deadline, "the trainer outlived its parent"
            time.sleep(0.2)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
    assert not (project / f"models/{EXP}/.trainer.lock").exists()
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{project}/mlflow.db")
    runs = client.search_runs([client.get_experiment_by_name("tictactoe").experiment_id])
    assert runs and {r.info.status for r in runs} == {"FAILED"}
