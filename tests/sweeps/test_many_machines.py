"""Many machines, for real: one PostgreSQL, one MLflow tracking server, two workers sharing one study.

The workers are two separate `boardrl sweep` processes (as on two machines) after the study was created once
with `--create-only`; together they finish exactly the requested trials, each with one nested MLflow run on the
server.  A dead worker's trial is marked FAILED by the heartbeat instead of staying RUNNING.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import optuna
import pytest
import yaml
from optuna.trial import TrialState

from servers import mlflow_server, postgres_missing, postgres_server

pytestmark = [pytest.mark.timeout(600),
              pytest.mark.skipif(postgres_missing() is not None, reason=str(postgres_missing()))]
ROOT = Path(__file__).resolve().parents[2]
EXP = "tictactoe_tabular_q"
TRIALS = 4  # two a worker: six took 37 s here (about 12 s a trial), far longer than a worker takes to start


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("servers")
    with postgres_server() as pg_url, mlflow_server(tmp) as mlflow_uri:
        yield {"pg": pg_url, "mlflow": mlflow_uri}


@pytest.fixture()
def project(tmp_path) -> Path:
    data = yaml.safe_load((ROOT / "params.yaml").read_text())
    data["train"]["eval_games"] = 40
    data["train"]["curve"] = {"first": 100, "per_decade": 1, "include_zero": True}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return tmp_path


def sweep_cmd(servers, study: str, *extra: str, budget: int = 500) -> list[str]:
    return [sys.executable, "-m", "boardrl.cli", "sweep", EXP, "--storage", servers["pg"], "--study", study,
            "--tracking-uri", servers["mlflow"], "--budget", str(budget), *extra]


def env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "BOARDRL_"))}


def worker_error(stderr: str) -> str:
    """The part of a worker's stderr that says why it failed: its last traceback, or its last 40 lines.

    Why: progress bars fill the stream, so its plain tail once showed nothing of the cause."""
    lines = [line.rsplit("\r", 1)[-1] for line in stderr.splitlines()]
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback")]
    return "\n".join(lines[starts[-1]:] if starts else lines[-40:])


def test_two_workers_share_one_study_and_finish_exactly_the_trials(servers, project):
    created = subprocess.run(sweep_cmd(servers, "pg-two", "--trials", str(TRIALS), "--create-only", budget=600_000),
                             cwd=project,
                             env=env(), capture_output=True, text=True, timeout=120)
    assert created.returncode == 0, created.stderr
    # 600,000 games a trial (about 2 s): long enough that a worker still starting up (imports take seconds on a
    # busy machine) finds trials left to run, so both take part
    workers = [subprocess.Popen(sweep_cmd(servers, "pg-two", "--trials", str(TRIALS), "--seed", str(i),
                                          budget=600_000), cwd=project,
                                env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for i in range(2)]
    outs = [w.communicate(timeout=400) for w in workers]
    assert [w.returncode for w in workers] == [0, 0], "\n\n".join(worker_error(o[1]) for o in outs)
    study = optuna.load_study(study_name="pg-two", storage=servers["pg"])
    finished = [t for t in study.trials if t.state in (TrialState.COMPLETE, TrialState.PRUNED)]
    assert len(finished) == TRIALS and not [t for t in study.trials if t.state == TrialState.RUNNING]
    done_by = [sum(" trial " in line and ("complete" in line or "pruned" in line) for line in o[1].splitlines())
               for o in outs]
    assert sum(done_by) == TRIALS and min(done_by) >= 1, done_by  # both workers did trials

    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=servers["mlflow"])
    runs = client.search_runs([client.get_experiment_by_name("tictactoe").experiment_id],
                              filter_string="tags.study = 'pg-two'")
    parent_id = study.user_attrs["mlflow_parent_run_id"]
    trials = [r for r in runs if r.data.tags.get("trial") is not None]
    assert sorted(int(r.data.tags["trial"]) for r in trials) == sorted(t.number for t in finished)
    assert all(r.data.tags["mlflow.parentRunId"] == parent_id for r in trials)
    assert client.get_run(parent_id).data.metrics["best_score"] == study.best_value


def _a_running_trial_has_beaten(url: str, study_name: str) -> bool:
    """Whether a RUNNING trial of the study has its first heartbeat row.

    Optuna marks the trial RUNNING before its heartbeat thread records the first beat; a worker killed in between
    leaves a trial with no beat, which no heartbeat protocol can tell from a live one (the CI flake of stop 65).
    """
    import sqlalchemy

    storage = optuna.storages.RDBStorage(url)
    try:
        study = optuna.load_study(study_name=study_name, storage=storage)
    except KeyError:
        return False
    running = [t._trial_id for t in study.trials if t.state == TrialState.RUNNING]
    if not running:
        return False
    with storage.engine.connect() as conn:
        beats = conn.execute(sqlalchemy.text("SELECT trial_id FROM trial_heartbeats")).scalars().all()
    return bool(set(running) & set(beats))


def test_a_killed_workers_trial_is_failed_by_the_heartbeat(servers, project, monkeypatch):
    monkeypatch.setattr("boardrl.sweeps.storage.GRACE_S", 2)  # this process reaps; the dead worker beat every 10 s
    cmd = sweep_cmd(servers, "pg-kill", "--trials", "3", budget=200_000)  # a trial long enough to be killed in
    worker = subprocess.Popen(cmd, cwd=project, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if _a_running_trial_has_beaten(servers["pg"], "pg-kill"):
                break
            time.sleep(0.5)
        else:
            pytest.fail("the worker never started a trial and beat for it")
    finally:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()
    time.sleep(3)
    from boardrl.sweeps.storage import make_storage

    study = optuna.load_study(study_name="pg-kill", storage=make_storage(servers["pg"]))
    optuna.storages.fail_stale_trials(study)
    states = [t.state for t in optuna.load_study(study_name="pg-kill", storage=servers["pg"]).trials]
    assert TrialState.RUNNING not in states and TrialState.FAIL in states
