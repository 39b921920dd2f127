"""Runs left RUNNING by killed stages (issue 34, items 5, 7 and 8), with real processes killed by SIGKILL.

A process opens a ``stage_run`` and is killed; the next ``stage_run`` of the same stage and labels in the same
workspace closes it KILLED.  A live run, in this workspace or in a DVC temp copy of the project, is never touched.
A damaged or unwritable ``mlflow.db`` is one error line.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from boardrl.tracking import mlflow_runs as mr
from boardrl.tracking import owner

pytestmark = pytest.mark.timeout(180)

#: Opens a stage run (root, stage, experiment label from argv), prints its id, then waits to be killed.
HOLDER = """
import sys, time
from boardrl.tracking.mlflow_runs import stage_run
root, stage, exp = sys.argv[1:4]
with stage_run(root, stage=stage, mlflow_experiment="tictactoe", run_name=f"{stage} {exp}", params={},
               params_hash="h", experiment=exp, game="tictactoe") as run:
    print(run.info.run_id, flush=True)
    time.sleep(300)
"""


@pytest.fixture()
def mlflow_env():
    """Restore MLflow's tracking URI after an in-process ``stage_run`` (it sets both of these)."""
    saved = os.environ.get("MLFLOW_TRACKING_URI")
    yield
    import mlflow

    mlflow.set_tracking_uri(None)
    if saved is None:
        os.environ.pop("MLFLOW_TRACKING_URI", None)
    else:
        os.environ["MLFLOW_TRACKING_URI"] = saved


def start_holder(root: Path) -> subprocess.Popen:
    """A process that opens an evaluate run of experiment e1 in workspace ``root`` and waits."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    return subprocess.Popen([sys.executable, "-c", HOLDER, str(root), "evaluate", "e1"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)


def held_run(proc: subprocess.Popen) -> tuple[subprocess.Popen, str]:
    """The holder and the id of its run, once it is open."""
    line = proc.stdout.readline().strip()
    assert line, proc.stderr.read()[-2000:]
    return proc, line


def kill(proc: subprocess.Popen) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


def open_run(root: Path, stage: str = "evaluate", exp: str = "e1") -> str:
    with mr.stage_run(root, stage=stage, mlflow_experiment="tictactoe", run_name=f"{stage} {exp}", params={},
                      params_hash="h", experiment=exp, game="tictactoe") as run:
        return run.info.run_id


def client(root: Path):
    from mlflow import MlflowClient

    return MlflowClient(tracking_uri=mr.tracking_uri(root))


def test_a_killed_stage_run_is_closed_by_the_next_run_of_that_stage(tmp_path, mlflow_env):
    proc, killed = held_run(start_holder(tmp_path))
    kill(proc)
    other_stage = open_run(tmp_path, stage="tournament")  # another stage's run does not close it
    assert client(tmp_path).get_run(killed).info.status == "RUNNING"
    new = open_run(tmp_path)
    old = client(tmp_path).get_run(killed)
    assert old.info.status == "KILLED" and old.data.tags["superseded_by"] == new
    assert f"pid {proc.pid} " in old.data.tags["closed_because"]
    assert old.data.tags["owner_pid"] == str(proc.pid)
    assert old.data.tags[mr.WORKSPACE_TAG] == tmp_path.resolve().as_posix()
    assert client(tmp_path).get_run(new).data.tags["resumes_runs"] == killed
    assert client(tmp_path).get_run(other_stage).info.status == "FINISHED"


def test_live_runs_and_runs_of_other_workspaces_are_left_alone(tmp_path, mlflow_env):
    """Item 8: a stage in a ``dvc exp run --temp`` copy shares the project's mlflow.db but not its runs."""
    temp_copy = tmp_path / ".dvc" / "tmp" / "exps" / "tmpab12cd"
    temp_copy.mkdir(parents=True)
    mr.ensure_experiment(tmp_path, "tictactoe")  # the database made once, not by two holders at once
    starting = [start_holder(tmp_path), start_holder(temp_copy)]
    (live, live_id), (dead, dead_id) = [held_run(p) for p in starting]
    try:
        kill(dead)
        open_run(tmp_path)  # the project: the live run is alive, the dead one belongs to the temp copy
        assert client(tmp_path).get_run(live_id).info.status == "RUNNING"
        assert client(tmp_path).get_run(dead_id).info.status == "RUNNING"
        with mr.stage_run(temp_copy, stage="evaluate", mlflow_experiment="tictactoe", run_name="evaluate e1",
                          params={}, params_hash="h", experiment="e1", game="tictactoe") as run:
            # what the train stage calls on its own: the labels alone match the project's live run
            mr.close_stale_runs(run.info.experiment_id, run.info.run_id, stage="evaluate", experiment="e1")
        assert client(tmp_path).get_run(live_id).info.status == "RUNNING"
        assert client(tmp_path).get_run(dead_id).info.status == "KILLED"  # the temp copy's own dead run
    finally:
        kill(live)
    open_run(tmp_path)
    assert client(tmp_path).get_run(live_id).info.status == "KILLED"  # once its process is gone


def test_runs_without_an_owner_are_closed_only_when_old_and_other_hosts_are_left_alone(tmp_path, mlflow_env):
    c = client(tmp_path)
    exp = mr.ensure_experiment(tmp_path, "tictactoe")
    labels = {"stage": "evaluate", "experiment": "e1", "game": "tictactoe"}
    now_ms = int(time.time() * 1000)
    old = c.create_run(exp, start_time=now_ms - (mr.LEGACY_AGE_S + 60) * 1000, tags=labels).info.run_id
    recent = c.create_run(exp, start_time=now_ms - 3600 * 1000, tags=labels).info.run_id
    remote = c.create_run(exp, tags={**labels, mr.WORKSPACE_TAG: tmp_path.resolve().as_posix(),
                                     "owner_host": "elsewhere", "owner_pid": "1", "owner_started": "1.0"}).info.run_id
    open_run(tmp_path)
    assert c.get_run(old).info.status == "KILLED" and "no owner recorded" in c.get_run(old).data.tags["closed_because"]
    assert c.get_run(recent).info.status == "RUNNING" and c.get_run(remote).info.status == "RUNNING"


def test_owner_liveness_sees_dead_and_reused_pids():
    me = owner.identity()
    assert owner.alive(me) is True
    assert owner.alive({**me, owner.STARTED: str(float(me[owner.STARTED]) - 100)}) is False  # pid reused
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert owner.alive({**me, owner.PID: str(gone.pid)}) is False
    assert owner.alive({**me, owner.HOST: me[owner.HOST] + "-other"}) is None


def test_a_damaged_mlflow_db_is_one_line(tmp_path, mlflow_env):
    (tmp_path / "mlflow.db").write_bytes(b"not a database, just garbage " * 100)
    with pytest.raises(mr.TrackingError) as info:
        open_run(tmp_path)
    message = str(info.value)
    assert "\n" not in message and "is damaged" in message and str(tmp_path / "mlflow.db") in message


def test_an_unwritable_mlflow_db_is_one_line(tmp_path, mlflow_env, monkeypatch):
    """Tests may run as root, whom chmod does not stop: the write fails as SQLite fails on a read-only file.

    The failure is patched into this process, so the writes run here instead of in the tracking service (whose
    errors reach the stage as the same line: see test_service.py's damaged database).
    """
    import sqlite3

    import mlflow
    from sqlalchemy.exc import OperationalError

    from boardrl.tracking.service import SERVICE_ENV

    monkeypatch.setenv(SERVICE_ENV, "off")

    def refuse(*args, **kwargs):
        raise OperationalError("INSERT INTO runs", {}, sqlite3.OperationalError("attempt to write a readonly database"))

    mr.ensure_experiment(tmp_path, "tictactoe")
    monkeypatch.setattr(mlflow.MlflowClient, "create_run", refuse)
    with pytest.raises(mr.TrackingError) as info:
        open_run(tmp_path)
    assert str(info.value) == (f"cannot write the MLflow database {tmp_path.resolve() / 'mlflow.db'} (attempt to "
                               "write a readonly database): check the permissions of it and its folder")
