"""Sweep workers killed with SIGKILL on the default journal storage (issue 34, items 4 and 7).

A killed worker's trial must not stay RUNNING: it is FAILED (with its MLflow run KILLED) by the next worker or
command that looks, and made up, so the study reaches ``--trials``.  A permission problem on ``sweeps/`` and a
damaged ``mlflow.db`` are one line each, named as what they are.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import optuna
import pytest
import yaml
from optuna.trial import TrialState

from boardrl.sweeps.journal import BEAT_ATTR, stale_reason
from boardrl.sweeps.storage import SweepError, fail_stale_trials, make_storage
from boardrl.tracking import owner
from mlflow_store import seed_store

ROOT = Path(__file__).resolve().parents[2]
EXP = "tictactoe_tabular_q"
pytestmark = pytest.mark.timeout(400)


@pytest.fixture()
def project(tmp_path, monkeypatch) -> Path:
    """params.yaml with a cheap learning curve (the sweep's objective)."""
    data = yaml.safe_load((ROOT / "params.yaml").read_text())
    data["train"]["eval_games"] = 40
    data["train"]["curve"] = {"first": 100, "per_decade": 1, "include_zero": True}
    data["train"]["opponents"]["tictactoe"] = ["random"]
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    seed_store(tmp_path)  # the sweep's processes open it: no schema migrations there (tests/mlflow_store.py)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "BOARDRL_"))}


def sweep_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "boardrl.cli", "sweep", EXP, *args]


def trials(project: Path) -> list[optuna.trial.FrozenTrial]:
    journal = project / "sweeps" / f"{EXP}.journal"
    if not journal.is_file():
        return []
    try:
        return optuna.load_study(study_name=EXP, storage=make_storage(f"journal:{journal}")).trials
    except KeyError:  # the study is not created yet
        return []


def wait_for(what, proc: subprocess.Popen, timeout_s: float = 180):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = what()
        if found:
            return found
        assert proc.poll() is None, f"exit status {proc.returncode}"
        time.sleep(0.1)
    pytest.fail("timed out")


def beating(project: Path, not_number: int | None = None, with_params: bool = False) -> optuna.trial.FrozenTrial | None:
    """A RUNNING trial whose worker has recorded its heartbeat (and, ``with_params``, drawn its params)."""
    return next((t for t in trials(project) if t.state == TrialState.RUNNING and BEAT_ATTR in t.system_attrs
                 and t.number != not_number and (t.params or not with_params)), None)


def test_a_killed_workers_trial_is_failed_and_made_up_and_no_run_stays_running(project):
    """Kill one of two workers mid-trial; the other fails its trial and goes on; then kill the whole command
    mid-trial.  The same command again ends with exactly the requested trials and nothing RUNNING."""
    args = ("--trials", "3", "--jobs", "2", "--budget", "300000", "--no-prune", "--seed", "2")  # trials of seconds
    with open(project / "first.log", "w") as log:
        proc = subprocess.Popen(sweep_cmd(*args), cwd=project, env=env(), stdout=log, stderr=log,
                                start_new_session=True)
    try:
        victim = wait_for(lambda: beating(project, with_params=True), proc)
        time.sleep(0.5)  # into its training, past the trial's first writes (a kill inside one costs 10 s of lock)
        os.kill(int(victim.system_attrs[BEAT_ATTR]["pid"]), signal.SIGKILL)
        # the surviving worker fails the dead worker's trial before its next trial, and starts one
        failed = lambda: [t for t in trials(project) if t.number == victim.number and t.state == TrialState.FAIL]
        wait_for(lambda: failed() and beating(project, not_number=victim.number), proc)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert TrialState.RUNNING in [t.state for t in trials(project)]  # the survivor's trial, killed as well

    again = subprocess.run(sweep_cmd(*args), cwd=project, env=env(), capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "it will be made up" in again.stderr
    states = [t.state for t in trials(project)]
    assert states.count(TrialState.COMPLETE) == 3 and TrialState.RUNNING not in states
    assert states.count(TrialState.FAIL) == 2 and states[victim.number] == TrialState.FAIL

    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{project}/mlflow.db")
    runs = client.search_runs([client.get_experiment_by_name("tictactoe").experiment_id])
    assert [r.info.run_name for r in runs if r.info.status == "RUNNING"] == []
    killed = [r for r in runs if r.data.tags.get("trial") == str(victim.number)]
    assert len(killed) == 1 and killed[0].info.status == "KILLED" and killed[0].data.tags["state"] == "killed"
    assert f"pid {victim.system_attrs[BEAT_ATTR]['pid']} " in killed[0].data.tags["closed_because"]
    parent = [r for r in runs if r.info.run_name == f"sweep {EXP}"]
    assert len(parent) == 1 and parent[0].info.status == "FINISHED"  # the killed command's, taken over


#: A worker that runs one endless trial of study "s" in the journal argv[1] (Optuna's own optimize loop).
ENDLESS_TRIAL = """
import sys, time, optuna
from boardrl.sweeps.storage import make_storage
study = optuna.load_study(study_name="s", storage=make_storage(sys.argv[1]))
study.optimize(lambda trial: time.sleep(300), n_trials=1)
"""


def test_journal_heartbeats_fail_only_the_trials_of_dead_workers(tmp_path):
    url = f"journal:{tmp_path / 's.journal'}"
    optuna.create_study(study_name="s", storage=make_storage(url))
    workers = [subprocess.Popen([sys.executable, "-c", ENDLESS_TRIAL, url], start_new_session=True) for _ in "ab"]
    try:
        def beats():
            study = optuna.load_study(study_name="s", storage=make_storage(url))
            found = {t.system_attrs[BEAT_ATTR]["pid"]: t.number for t in study.trials if BEAT_ATTR in t.system_attrs}
            return found if len(found) == 2 else None

        numbers = wait_for(beats, workers[0], timeout_s=120)
        os.kill(workers[0].pid, signal.SIGKILL)
        workers[0].wait()
        seen = []
        study = optuna.load_study(study_name="s", storage=make_storage(url, on_stale=lambda s, t: seen.append(t)))
        fail_stale_trials(study)
        states = {t.number: t.state for t in study.trials}
        assert states[numbers[str(workers[0].pid)]] == TrialState.FAIL
        assert states[numbers[str(workers[1].pid)]] == TrialState.RUNNING  # its worker lives
        assert [t.number for t in seen] == [numbers[str(workers[0].pid)]]
    finally:
        for w in workers:
            if w.poll() is None:
                os.kill(w.pid, signal.SIGKILL)
                w.wait()


def test_stale_rule_for_other_hosts_and_trials_without_a_beat():
    now = time.time()
    remote = {**owner.identity(), owner.HOST: "elsewhere", "at": now - 5}
    assert stale_reason(remote, None, now, grace_s=40) is None
    assert "has not beaten for 60 s" in stale_reason({**remote, "at": now - 60}, None, now, grace_s=40)
    started = datetime.now() - timedelta(seconds=100)
    assert stale_reason(None, started, now, grace_s=40) == "no heartbeat in 100 s"
    assert stale_reason(None, datetime.now(), now, grace_s=40) is None
    assert stale_reason({**owner.identity(), "at": now}, None, now, grace_s=40) is None  # this very process


def test_a_permission_error_on_sweeps_is_named_as_such(tmp_path, monkeypatch):
    """Tests may run as root, whom chmod 000 does not stop: the file system's refusals are raised by mocks."""
    journal = tmp_path / "sweeps" / "s.journal"
    journal.parent.mkdir()
    journal.write_text("")

    def refuse(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    import boardrl.sweeps.storage as storage

    monkeypatch.setattr(storage, "open", refuse, raising=False)  # reading the journal (check_journal)
    with pytest.raises(SweepError) as info:
        make_storage(f"journal:{journal}")
    assert "permission denied" in str(info.value) and "not an Optuna journal" not in str(info.value)
    monkeypatch.undo()

    monkeypatch.setattr(os, "symlink", refuse)  # Optuna's journal lock file, made on the first write
    from boardrl.sweeps.study import SweepJob, open_study

    job = SweepJob(params=None, settings=None, study_name="s", storage_url=f"journal:{journal}", n_trials=1,
                   prune=False)
    with pytest.raises(SweepError) as info:
        open_study(job, create=True)
    message = str(info.value)
    assert "\n" not in message and "permission denied" in message and "not an Optuna journal" not in message


def test_a_damaged_mlflow_db_stops_a_sweep_with_one_line(project):
    (project / "mlflow.db").write_bytes(b"garbage " * 200)
    res = subprocess.run(sweep_cmd("--trials", "1", "--budget", "100"), cwd=project, env=env(),
                         capture_output=True, text=True, timeout=120)
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: the MLflow database "), res.stderr
    assert "is damaged" in lines[0] and (project / "mlflow.db").read_bytes() == b"garbage " * 200
