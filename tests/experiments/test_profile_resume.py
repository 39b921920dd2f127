"""A profile run killed during training and run again continues, and ends with the outputs of an uninterrupted run.

Slow (about a minute): a copy of the repository runs a small overlay, `resume` (one tic-tac-toe tabular Q
experiment of 20,000 games with checkpoints), with `python -m boardrl.experiments.profiles run resume` as `make
repro PROFILE=resume` runs it.  The whole process group is SIGKILLed as soon as the training stage has written a
checkpoint, then the same command runs again.  A trained model is a function of (game, params, seed) whatever the
kills (tests/learn/test_training_invariance.py), so the resumed run's model and learning curve must equal, byte for
byte, those of the same experiment trained in one go in this process (``train_seed``, the train stage's own
training, measuring the curve as it goes: the pipeline's curve@<id> plays the snapshots saved before and after the
kill and must find the same numbers); MLflow shows that training resumed from the checkpoint and that the
finished stages did not run again.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from boardrl.experiments.profiles import RUN_STATE, run_dir
from repo_copy import copy_repo, git, run, stage_env

pytestmark = pytest.mark.timeout(600)

EXP = "tictactoe_tabular_q"
PROFILE = "resume"
OVERLAY = {
    "data": {"url": "http://127.0.0.1:9/connect+4.zip", "timeout_s": 2},  # the vendored copy, no network wait
    "prepare": {"check_regenerated": False},
    "train": {"eval_games": 20, "curve": {"first": 100, "per_decade": 1}},
    "evaluate": {"games": 20, "optimal_positions": 10,
                 "per_game": {"tictactoe": {"opponents": ["random", {"agent": "perfect", "games": 10}]}}},
    "experiments": {EXP: {"seeds": [7], "params": {"games": 20000, "checkpoint_every": 2000,
                                                   "parallel_games": 1}}},
}
CMD = [sys.executable, "-m", "boardrl.experiments.profiles", "run", PROFILE]


def one_experiment(data: dict) -> None:
    data["experiments"] = {EXP: data["experiments"][EXP]}
    data["sweeps"], data["tournaments"] = {}, {}


def add_profile(root: Path) -> None:
    (root / "profiles" / f"{PROFILE}.yaml").write_text(yaml.safe_dump(OVERLAY, sort_keys=False))


def start(repo: Path, log: Path) -> subprocess.Popen:
    return subprocess.Popen(CMD, cwd=repo, env=stage_env(repo), stdout=log.open("w"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def kill_once_checkpointed(proc: subprocess.Popen, checkpoint: Path, log: Path, timeout_s: float = 300) -> float:
    """SIGKILL ``proc``'s process group (dvc, the stage, the trainer) once ``checkpoint`` holds a checkpoint."""
    t0 = time.monotonic()
    while not (checkpoint / "checkpoint.json").is_file():
        assert proc.poll() is None, f"the run ended before a checkpoint was written:\n{log.read_text()[-3000:]}"
        assert time.monotonic() - t0 < timeout_s, "no checkpoint"
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    return time.monotonic() - t0


def outputs(directory: Path) -> dict[str, bytes]:
    """What the run's numbers are: the model files, the metrics file and the learning curve."""
    model = directory / "models" / EXP / "seed-7" / "model"
    files = {f"model/{p.relative_to(model)}": p.read_bytes() for p in sorted(model.rglob("*")) if p.is_file()}
    files["metrics"] = (directory / "results" / "metrics" / f"{EXP}.json").read_bytes()
    files["curve"] = (directory / "results" / "curves" / EXP / "seed-7.tsv").read_bytes()
    return files


def runs(repo: Path, experiment: str) -> list:
    import mlflow

    client = mlflow.MlflowClient(f"sqlite:///{repo / 'mlflow.db'}")
    exp = client.get_experiment_by_name(experiment)
    return client.search_runs([exp.experiment_id]) if exp else []


def uninterrupted(repo: Path, work: Path) -> dict[str, bytes]:
    """The experiment trained in one go in this process, as the train stage does it: model files, and the curve
    measured in training."""
    from boardrl.config import parse_params
    from boardrl.experiments.curve import curve_rows
    from boardrl.experiments.profiles import merge
    from boardrl.experiments.train import train_seed
    from boardrl.tracking import curve as curves

    params = parse_params(merge(yaml.safe_load((repo / "params.yaml").read_text()), {**OVERLAY, "profile": PROFILE}))
    agent, learner = train_seed(params, EXP, 7, work / "checkpoint", verbose=False)
    agent.save(work / "model")
    curves.write_tsv(work / "curve.tsv", curve_rows(learner.evaluations))
    files = {f"model/{p.relative_to(work / 'model')}": p.read_bytes()
             for p in sorted((work / "model").rglob("*")) if p.is_file()}
    files["curve"] = (work / "curve.tsv").read_bytes()
    return files


def test_a_killed_profile_run_resumes_and_equals_an_uninterrupted_one(tmp_path):
    killed = copy_repo(tmp_path / "killed", one_experiment, add_profile)
    params_before = (killed / "params.yaml").read_bytes()
    first = start(killed, tmp_path / "killed.log")
    where = run_dir(killed, PROFILE)
    seconds = kill_once_checkpointed(first, where / "models" / EXP / "seed-7" / "checkpoint", tmp_path / "killed.log")
    assert not (where / "models" / EXP / "seed-7" / "model").exists(), "killed too late: training had finished"
    name = json.loads(where.joinpath(*RUN_STATE).read_text())["exp_name"]

    again = run(CMD, killed, timeout=400)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-3000:]
    assert f"profile {PROFILE}: resuming DVC experiment {name}" in again.stderr

    resumed = outputs(where)
    assert json.loads(resumed.pop("metrics"))  # the evaluate stage finished too
    assert resumed == uninterrupted(killed, tmp_path / "reference")
    train = [r for r in runs(killed, "tictactoe") if r.data.tags.get("stage") == "train" and r.data.tags.get("seed")]
    assert sorted(r.info.status for r in train) == ["FINISHED", "KILLED"]
    done = next(r for r in train if r.info.status == "FINISHED")
    assert int(done.data.tags["resumed_from"]) > 0  # from the checkpoint, not from zero
    assert {r.data.tags["dvc_exp_name"] for r in train} == {name}  # one experiment across the kill
    assert len([r for r in runs(killed, "connect4") if r.data.tags.get("stage") == "prepare"]) == 1  # not rerun

    shown = run(["dvc", "exp", "show", "--json"], killed)
    assert shown.returncode == 0 and f'"{name}"' in shown.stdout
    assert not where.joinpath(*RUN_STATE).exists()  # finished: the next run is a new experiment
    assert (killed / "params.yaml").read_bytes() == params_before  # the workspace was never touched
    assert git(killed, "status", "--porcelain") == ""
    print(f"killed after {seconds:.0f} s; rerun {again.seconds:.0f} s")
