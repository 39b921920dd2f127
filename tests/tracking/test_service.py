"""The tracking service: one process per MLflow store serves the writes of every stage process.

Real processes throughout: stage-like scripts open runs through ``stage_run`` and the test reads the database
with MLflow's own client.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from boardrl.tracking import mlflow_runs as mr
from boardrl.tracking import service

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(autouse=True)
def _service_on(monkeypatch):
    """The suite runs MLflow writes in-process (tests/conftest.py); these tests are about the service."""
    monkeypatch.setenv(service.SERVICE_ENV, "on")

#: Opens one run in workspace argv[1] with label argv[2], logs a metric, prints its run id and the service's pid.
STAGE = """
import sys
from boardrl.tracking import mlflow_runs as mr, service
root, exp = sys.argv[1:3]
with mr.stage_run(root, stage="evaluate", mlflow_experiment="tictactoe", run_name=f"{exp} (evaluate)",
                  params={"games": 10}, params_hash="h", experiment=exp, game="tictactoe") as run:
    mr.log_metrics({"vs:random/first/win": 0.75}, step=10)
    print(run.info.run_id, service.call(run.info.uri, "ping")["pid"], flush=True)
"""


def run_stage(root: Path, exp: str, **env: str) -> tuple[str, int]:
    out = subprocess.run([sys.executable, "-c", STAGE, str(root), exp], capture_output=True, text=True,
                         env={**os.environ, **env}, timeout=200)
    assert out.returncode == 0, out.stderr[-2000:]
    run_id, pid = out.stdout.split()
    return run_id, int(pid)


def client(root: Path):
    from mlflow import MlflowClient

    return MlflowClient(tracking_uri=mr.tracking_uri(root))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_stages_share_one_service_that_exits_when_idle(tmp_path):
    env = {service.IDLE_ENV: "3"}
    first, pid = run_stage(tmp_path, "e1", **env)
    second, pid2 = run_stage(tmp_path, "e2", **env)
    assert pid == pid2 and pid != os.getpid()  # the second stage found the service the first one started
    c = client(tmp_path)
    for run_id in (first, second):
        run = c.get_run(run_id)
        assert run.info.status == "FINISHED" and run.data.metrics == {"vs:random/first/win": 0.75}
        assert run.data.params == {"games": "10"} and run.data.tags["mlflow.source.type"] == "LOCAL"
    deadline = time.monotonic() + 30
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not alive(pid), "the service did not exit after its idle time"
    assert not service.socket_path(mr.tracking_uri(tmp_path)).exists()


def test_a_replaced_database_gets_the_next_runs_not_the_old_file(tmp_path):
    """A user moves mlflow.db away while the service runs: the next stage's run goes into the new file."""
    env = {service.IDLE_ENV: "20"}
    run_stage(tmp_path, "e1", **env)
    (tmp_path / "mlflow.db").rename(tmp_path / "old.db")
    run_id, _ = run_stage(tmp_path, "e2", **env)
    assert (tmp_path / "mlflow.db").is_file()
    assert client(tmp_path).get_run(run_id).data.tags["experiment"] == "e2"


def test_a_damaged_database_is_one_line_from_the_service(tmp_path):
    (tmp_path / "mlflow.db").write_bytes(b"not a database, just garbage " * 100)
    out = subprocess.run([sys.executable, "-c", STAGE, str(tmp_path), "e1"], capture_output=True, text=True,
                         timeout=200)
    assert out.returncode != 0
    last = out.stderr.strip().splitlines()[-1]
    assert "is damaged" in last and str(tmp_path / "mlflow.db") in last


def test_an_unknown_operation_is_refused_in_one_line(tmp_path):
    with pytest.raises(mr.TrackingError, match="no operation 'drop_everything'"):
        service.call(mr.tracking_uri(tmp_path), "drop_everything")


def test_logging_outside_a_stage_run_is_one_line():
    with pytest.raises(mr.TrackingError, match="no stage run is open"):
        mr.log_metrics({"x": 1.0})


def test_the_socket_name_follows_store_and_code(tmp_path):
    a = service.socket_path(mr.tracking_uri(tmp_path / "a"))
    assert a == service.socket_path(mr.tracking_uri(tmp_path / "a"))
    assert a != service.socket_path(mr.tracking_uri(tmp_path / "b"))
    assert len(str(a)) < 100  # AF_UNIX paths are limited to 107 bytes


#: Opens a run in workspace argv[1] and logs directory argv[2] as its agent model (MLflow's Model.log).
LOG_MODEL = """
import sys
from boardrl.tracking import mlflow_runs as mr
root, model_dir = sys.argv[1:3]
with mr.stage_run(root, stage="train", mlflow_experiment="tictactoe", run_name="m (train)", params={},
                  params_hash="h", experiment="m", game="tictactoe"):
    print(mr.log_agent_model("tictactoe", model_dir), flush=True)
"""


def test_the_service_outlives_the_copy_of_the_project_that_started_it(tmp_path):
    """DVC's queue runs each variation of a study in a temporary copy of the project and deletes it afterwards.
    The service that copy's first stage started, importing boardrl from that copy, serves the next variation's
    stages too.  So it must need nothing of the copy once started: MLflow's Model.log failed with
    FileNotFoundError once the directory was gone, then with "model path does not exist" for the agent model's
    code file, which was the copy's."""
    project, first_copy, second_copy = tmp_path / "project", tmp_path / "copy1", tmp_path / "copy2"
    for d in (project, first_copy, second_copy):
        d.mkdir()
    shutil.copytree(Path(service.__file__).parents[1], first_copy / "src" / "boardrl",
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, service.IDLE_ENV: "30"}
    out = subprocess.run([sys.executable, "-c", STAGE, str(project), "e1"], cwd=first_copy, capture_output=True,
                         text=True, env={**env, "PYTHONPATH": str(first_copy / "src")}, timeout=200)
    assert out.returncode == 0, out.stderr[-2000:]
    pid = int(out.stdout.split()[1])
    assert Path(os.readlink(f"/proc/{pid}/cwd")) == service.socket_path(mr.tracking_uri(project)).parent
    assert str(first_copy / "src") in Path(f"/proc/{pid}/environ").read_text()  # its boardrl is the copy's
    shutil.rmtree(first_copy)
    model = second_copy / "model"
    model.mkdir()
    (model / "agent.json").write_text("{}")
    out = subprocess.run([sys.executable, "-c", LOG_MODEL, str(project), str(model)], cwd=second_copy,
                         capture_output=True, text=True, env=env, timeout=200)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip()
    assert service.call(mr.tracking_uri(project), "ping")["pid"] == pid  # the same service served both
