"""Optuna sweeps: the objective, a whole sweep with nested MLflow runs, pruning, resume, --apply, bad input."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import optuna
import pytest
import yaml
from optuna.trial import TrialState

from boardrl.config import parse_params
from boardrl.experiments.profiles import merge
from boardrl.sweeps.objective import Objective
from boardrl.sweeps.run import resolve_settings, run_sweep
from boardrl.sweeps.storage import SweepError
from repo_copy import free_port, stop_group, wait_for_answer
from mlflow_store import seed_store, template

ROOT = Path(__file__).resolve().parents[2]
EXP = "tictactoe_tabular_q"


def small_params() -> dict:
    """params.yaml with a cheap learning curve (it is the sweep's objective): 40 games per point, 1 per decade."""
    data = yaml.safe_load((ROOT / "params.yaml").read_text())
    data["train"]["eval_games"] = 40
    data["train"]["curve"] = {"first": 100, "per_decade": 1, "include_zero": True}
    data["train"]["opponents"]["tictactoe"] = ["random", "perfect"]
    return data


@pytest.fixture()
def project(tmp_path, monkeypatch) -> Path:
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(small_params(), sort_keys=False))
    seed_store(tmp_path)  # the sweep's processes open it: no schema migrations there (tests/mlflow_store.py)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def cli(project: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "BOARDRL_"))}
    return subprocess.run([sys.executable, "-m", "boardrl.cli", "sweep", *args], cwd=project, env=env,
                          capture_output=True, text=True, timeout=timeout)


def load(project: Path, name: str):
    from boardrl.sweeps.storage import make_storage

    return optuna.load_study(study_name=name, storage=make_storage(f"journal:{project}/sweeps/{name}.journal"))


def running_trials(project: Path, name: str) -> int:
    """Trials RUNNING in the sweep's journal; 0 before the sweep has written its study there (the file comes
    first, the study's record a moment later: loading it then is Optuna's KeyError)."""
    if not (project / "sweeps" / f"{name}.journal").is_file():
        return 0
    try:
        return sum(t.state == TrialState.RUNNING for t in load(project, name).trials)
    except KeyError:
        return 0


def test_objective_with_a_fixed_trial_is_deterministic_and_scores_in_range():
    params = parse_params(small_params())
    settings = resolve_settings(params, EXP, {"gamma": None}, budget=300, seeds=[0, 1])
    values = {"alpha": 0.3, "init_std": 0.1, "exploration.schedule": "linear", "exploration.start": 1.0,
              "exploration.end/exploration.start": 0.1, "exploration.decay_games/budget": 0.5}
    trial = optuna.trial.FixedTrial(values)
    first = Objective(params, settings)(trial)
    again = Objective(params, settings)(optuna.trial.FixedTrial(values))
    other = Objective(params, settings)(optuna.trial.FixedTrial({**values, "alpha": 0.02}))
    assert 0.0 <= first <= 1.0 and first == again and other != first
    learned = trial.user_attrs["learner_values"]  # fractions multiplied out: of start, of the 300-game budget
    assert learned["exploration.end"] == pytest.approx(0.1) and learned["exploration.decay_games"] == 150


def test_three_trial_sweep_end_to_end_with_two_workers(project):
    """Two worker processes on MLflow's default SQLite store: exactly 3 trials, each with a nested run."""
    res = cli(project, EXP, "--trials", "3", "--budget", "300", "--jobs", "2", "--seed", "4")
    assert res.returncode == 0, res.stderr[-3000:]
    study = load(project, EXP)
    finished = [t for t in study.trials if t.state in (TrialState.COMPLETE, TrialState.PRUNED)]
    assert len(finished) == 3 and all(t.state != TrialState.RUNNING for t in study.trials)
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{project}/mlflow.db")
    runs = client.search_runs([client.get_experiment_by_name("tictactoe").experiment_id])
    parent = [r for r in runs if r.info.run_name == f"sweep {EXP}"]
    trials = [r for r in runs if r.data.tags.get("trial") is not None]
    assert len(parent) == 1 and parent[0].data.metrics["best_score"] == study.best_value
    assert sorted(int(r.data.tags["trial"]) for r in trials) == sorted(t.number for t in finished)
    for r in trials:
        assert r.data.tags["mlflow.parentRunId"] == parent[0].info.run_id
        assert r.data.tags["study"] == EXP and r.data.tags["experiment"] == EXP and r.data.tags["git_commit"]
        assert r.data.tags["state"] in ("complete", "pruned") and r.info.status == "FINISHED"
        assert "alpha" in r.data.params
        assert client.get_metric_history(r.info.run_id, "intermediate_score")
    best = yaml.safe_load((project / "sweeps" / EXP / "best_params.yaml").read_text())
    assert best["sweep"]["best_score"] == study.best_value and best["sweep"]["finished_trials"] == 3
    merged = merge(small_params(), {"experiments": best["experiments"]})
    assert parse_params(merged).learner_params(EXP).alpha == study.best_params["alpha"]  # the train stage takes it
    assert (project / "sweeps" / EXP / "trials.csv").read_text().count("\n") == len(study.trials) + 1
    header = (project / "sweeps" / EXP / "trials.csv").read_text().splitlines()[0].split(",")
    assert header[:3] == ["number", "value", "state"] and "params_alpha" in header
    assert not any("/" in c for c in header)  # learner params, not the fractions Optuna drew
    assert study.metric_names == ["score (win + draw/2)"]  # the dashboard's label, not "Objective 0"
    assert (project / "sweeps" / EXP / "figures" / "history.png").is_file()


def test_resume_continues_the_trial_count(project):
    params = parse_params(small_params())
    settings = resolve_settings(params, EXP, None, budget=200, seeds=[0])
    kw = dict(root=project, study_name="s", storage_url=f"journal:{project}/s.journal", sampler_seed=1)
    first = run_sweep(params, settings, n_trials=2, **kw)
    again = run_sweep(params, settings, n_trials=4, **kw)
    assert first.finished == 2 and again.finished == 4
    study = optuna.load_study(study_name="s", storage=optuna.storages.JournalStorage(
        optuna.storages.journal.JournalFileBackend(str(project / "s.journal"))))
    assert [t.number for t in study.trials] == [0, 1, 2, 3]
    with pytest.raises(SweepError, match="already searches other settings"):
        run_sweep(params, resolve_settings(params, EXP, None, budget=300, seeds=[0]), n_trials=5, **kw)


def test_a_bad_range_is_pruned(project):
    """alpha either sensible or absurdly small: the median rule stops the absurd trials early.

    Against random (200 games a point, points from 2,200 to 10,000 games) alpha 0.5 scores about 0.6 by 2,200
    games and 0.86 at the end, alpha 0.0005 stays near 0.5: a trial of the latter started after three finished is
    pruned.  Why the curve starts at 2,200: at 1,000 games the two overlap (alpha 0.5 scored 0.46 to 0.61 over six
    training seeds, 400 games each), so a pruning decision there depends on the seed's luck.
    """
    data = small_params()
    data["train"].update(eval_games=200, curve={"first": 2200, "per_decade": 3, "include_zero": True})
    data["train"]["opponents"]["tictactoe"] = ["random"]
    params = parse_params(data)
    space = {"alpha": {"choices": [0.5, 0.0005]}, "init_std": None, "gamma": None, "exploration.schedule": None,
             "exploration.start": None, "exploration.end": None, "exploration.decay_games": None}
    settings = resolve_settings(params, EXP, space, budget=10_000, seeds=[0])
    run_sweep(params, settings, root=project, study_name="p", storage_url=f"journal:{project}/p.journal",
              n_trials=10, sampler_seed=0)
    study = optuna.load_study(study_name="p", storage=optuna.storages.JournalStorage(
        optuna.storages.journal.JournalFileBackend(str(project / "p.journal"))))
    pruned = [t for t in study.trials if t.state == TrialState.PRUNED]
    assert pruned and all(t.params["alpha"] == 0.0005 for t in pruned)
    assert study.best_params["alpha"] == 0.5


def test_apply_prints_a_command_dvc_accepts(project):
    res = cli(project, EXP, "--trials", "2", "--budget", "200")
    assert res.returncode == 0, res.stderr[-2000:]
    shown = cli(project, "--apply", EXP)
    assert shown.returncode == 0, shown.stderr
    import shlex

    line = shown.stdout.split("    #")[0]
    assert "'\"'\"'" not in line and "exploration.schedule=" in line  # pastes as printed: no '"'"' quoting
    cmd = shlex.split(line)
    assert cmd[:3] == ["dvc", "exp", "run"] and cmd[3] == "-S"
    from dvc.utils.hydra import apply_overrides

    from boardrl.learn.core.space import get_dotted, trial_values

    before = yaml.safe_load((project / "params.yaml").read_text())
    apply_overrides(project / "params.yaml", cmd[4::2])
    after = yaml.safe_load((project / "params.yaml").read_text())
    learner = parse_params(after).learner_params(EXP).model_dump()
    best = trial_values(load(project, EXP).best_trial)
    assert best and {k: get_dotted(learner, k) for k in best} == best
    assert after["experiments"][EXP]["params"]["games"] == before["experiments"][EXP]["params"]["games"]


@pytest.mark.parametrize("args, fragment", [
    ([EXP, "--trials", "0"], "--trials must be at least 1"),
    (["no_such", "--trials", "2"], "no experiment 'no_such'"),
    ([EXP, "--storage", "postgresql+psycopg://u@127.0.0.1:1/x"], "cannot open the study storage"),
    ([EXP, "--storage", "notadriver://x"], "cannot open the study storage"),
    ([EXP, "--seeds", "0"], "--seeds must be at least 1"),
])
def test_bad_input_is_one_line_and_writes_nothing(project, args, fragment):
    res = cli(project, *args, timeout=120)
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert fragment in lines[0]
    assert not (project / "sweeps").exists()
    assert (project / "mlflow.db").read_bytes() == template().read_bytes()  # the fixture's empty store, untouched


def test_a_corrupted_journal_is_one_line_and_left_alone(project):
    journal = project / "sweeps" / f"{EXP}.journal"
    journal.parent.mkdir()
    journal.write_text("this is not a journal\n")
    res = cli(project, EXP, "--trials", "1", "--budget", "100", timeout=120)
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "cannot read the study journal" in res.stderr
    assert journal.read_text() == "this is not a journal\n"


def test_a_space_with_low_above_high_is_refused_in_params():
    data = small_params()
    data["sweeps"]["tictactoe_tabular_q"]["space"] = {"alpha": {"low": 0.5, "high": 0.1}}
    from boardrl.config import ConfigError

    with pytest.raises(ConfigError) as info:
        parse_params(data)
    assert info.value.key == "sweeps.tictactoe_tabular_q" and "low 0.5 > high 0.1" in str(info.value)


def test_mlflow_database_is_never_the_study_storage(project):
    res = cli(project, EXP, "--storage", f"sqlite:///{project}/mlflow.db", timeout=120)
    assert res.returncode == 2 and "MLflow's own database" in res.stderr


def test_ctrl_c_leaves_the_study_resumable_and_no_run_stuck(project):
    """SIGINT during a trial: the sweep stops (exit 130), no trial or MLflow run is left RUNNING, and the same
    command continues the study afterwards.  The interrupted trial is FAILED with its run KILLED; only if the
    signal lands in a garbage-collector callback (where Python drops the exception) does that trial finish
    first, and the sweep stops after it."""
    import signal
    import time

    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "BOARDRL_"))}
    cmd = [sys.executable, "-m", "boardrl.cli", "sweep", EXP, "--trials", "2", "--budget", "800000"]
    proc = subprocess.Popen(cmd, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not running_trials(project, EXP):
        time.sleep(0.3)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "error: interrupted" in err.splitlines(), err[-2000:]
    states = [t.state for t in load(project, EXP).trials]
    assert len(states) == 1 and states[0] in (TrialState.FAIL, TrialState.COMPLETE)
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{project}/mlflow.db")
    runs = client.search_runs([client.get_experiment_by_name("tictactoe").experiment_id])
    status = {r.info.status for r in runs if r.data.tags.get("trial") is not None}
    assert status == ({"KILLED"} if states[0] == TrialState.FAIL else {"FINISHED"})
    again = cli(project, EXP, "--trials", "2", "--budget", "800000")
    assert again.returncode == 0, again.stderr[-2000:]
    finished_before = int(states[0] == TrialState.COMPLETE)
    assert [t.state for t in load(project, EXP).trials][1:] == [TrialState.COMPLETE] * (2 - finished_before)


def test_optuna_dashboard_serves_the_study(project):
    """`make dashboard`'s command over a study journal: its REST API lists the study and its trials."""
    import json as _json
    import urllib.request

    params = parse_params(small_params())
    settings = resolve_settings(params, EXP, None, budget=200, seeds=[0])
    run_sweep(params, settings, root=project, study_name="dash", storage_url=f"journal:{project}/dash.journal",
              n_trials=2)
    port = free_port()
    proc = subprocess.Popen([str(Path(sys.executable).parent / "optuna-dashboard"), str(project / "dash.journal"),
                             "--host", "127.0.0.1", "--port", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        def studies() -> dict:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/studies", timeout=5) as resp:
                return _json.loads(resp.read())

        found = wait_for_answer(proc, studies, "optuna-dashboard", timeout_s=60)
    finally:
        stop_group(proc)
    assert [s["study_name"] for s in found["study_summaries"]] == ["dash"]


@pytest.mark.parametrize("message", [
    "BAD_REQUEST: (sqlite3.IntegrityError) UNIQUE constraint failed: tags.key, tags.run_uuid",  # seen in .ci/run
    'duplicate key value violates unique constraint "tag_pk"',  # PostgreSQL's wording
    "database is locked",
])
def test_a_racing_insert_or_a_lock_is_retried_and_other_errors_are_not(monkeypatch, message):
    """Two workers setting the same tag of the parent run at once: the loser's insert hits the unique key, and
    a retry (which finds the row and updates it) succeeds; an error no retry mends is raised at once."""
    import boardrl.sweeps.tracking as tracking

    monkeypatch.setattr(tracking.time, "sleep", lambda s: None)
    calls = []

    def flaky(value):
        calls.append(value)
        if len(calls) < 3:
            raise RuntimeError(message)
        return value

    assert tracking.retry(flaky, "v") == "v" and calls == ["v"] * 3
    calls.clear()

    def invalid():
        calls.append(1)
        raise RuntimeError("INVALID_PARAMETER_VALUE: Changing param values is not allowed")

    with pytest.raises(RuntimeError, match="INVALID_PARAMETER_VALUE"):
        tracking.retry(invalid)
    assert calls == [1]
