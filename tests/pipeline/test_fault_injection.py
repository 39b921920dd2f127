"""kill -9 at random moments of a pipeline run, rerun until it finishes: the outputs equal an uninterrupted run's.

Two copies of the repository keep one tic-tac-toe tabular Q experiment (long enough to be killed inside every
stage kind: download, prepare, inputs, referee, train with checkpoints, curve, ladder, evaluate, report).  One runs
``dvc repro`` once.  The other is killed (SIGKILL to the whole process group: DVC, the stage, its workers) at
moments drawn from a seeded generator, then ``dvc repro`` runs again until it ends; a rerun must never fail.
Then every output that carries a number (model files, curve snapshots, curve, evaluation, metrics) must be
byte-equal between the two copies, and no MLflow run of the killed copy may be left RUNNING.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from repo_copy import VENV_BIN, copy_repo, run, stage_env

pytestmark = pytest.mark.timeout(900)

EXP = "tictactoe_tabular_q"
KILLS = 3
SEED = 34  # the number: any fixed value gives the same kill moments on every run of the test


def one_experiment(data: dict) -> None:
    data["experiments"] = {EXP: {**data["experiments"][EXP], "seeds": [7],
                                 "params": {"games": 40000, "checkpoint_every": 4000, "parallel_games": 1}}}
    data["sweeps"], data["tournaments"] = {}, {}
    data["data"].update(url="http://127.0.0.1:9/connect+4.zip", timeout_s=2)  # the vendored copy, no network
    data["prepare"]["check_regenerated"] = False
    data["train"].update(eval_games=20, curve={"first": 100, "per_decade": 1, "include_zero": True})
    data["evaluate"].update(games=20, optimal_positions=10)
    data["evaluate"]["per_game"] = {"tictactoe": {**data["evaluate"]["per_game"]["tictactoe"],
                                                  "opponents": ["random", {"agent": "perfect", "games": 10}]}}


REPRO = [str(VENV_BIN / "dvc"), "repro"]


def numbers(repo: Path) -> dict[str, object]:
    """Every output file that carries a number of the experiment (not timings, run ids or logs)."""
    roots = [repo / "models" / EXP, repo / "snapshots" / EXP, repo / "results" / "curves" / EXP]
    files = {str(p.relative_to(repo)): p.read_bytes() for r in roots for p in sorted(r.rglob("*"))
             if p.is_file() and "checkpoint" not in p.parts}
    for rel in (f"results/eval/{EXP}.json", f"results/metrics/{EXP}.json"):
        files[rel] = without_run_records(json.loads((repo / rel).read_text()))
    return files


#: Provenance that differs between any two runs (wall time, MLflow run, the copy's own git commit).
RUN_RECORDS = {"seconds", "mlflow_run_id", "git_commit"}


def without_run_records(tree):
    if isinstance(tree, dict):
        return {k: without_run_records(v) for k, v in tree.items() if k not in RUN_RECORDS}
    if isinstance(tree, list):
        return [without_run_records(v) for v in tree]
    return tree


def kill_after(repo: Path, seconds: float, log: Path) -> bool:
    """Start ``dvc repro``; SIGKILL its process group after ``seconds``; False if it finished first."""
    with log.open("a") as out:
        proc = subprocess.Popen(REPRO, cwd=repo, env=stage_env(repo), stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return True
    assert proc.returncode == 0, f"a rerun after a kill failed:\n{log.read_text()[-4000:]}"
    return False


def running_runs(repo: Path) -> list[str]:
    import mlflow

    client = mlflow.MlflowClient(f"sqlite:///{repo / 'mlflow.db'}")
    return [f"{r.data.tags.get('mlflow.runName')} ({r.info.run_id})"
            for e in client.search_experiments() for r in client.search_runs([e.experiment_id])
            if r.info.status == "RUNNING"]


def test_random_kills_change_no_number_and_leave_no_running_run(tmp_path):
    reference = copy_repo(tmp_path / "reference", one_experiment)
    whole = run(REPRO, reference, timeout=600)
    assert whole.returncode == 0, whole.stdout[-3000:] + whole.stderr[-3000:]

    killed = copy_repo(tmp_path / "killed", one_experiment)
    rng = random.Random(SEED)
    log = tmp_path / "killed.log"
    moments = [rng.uniform(0.1, 0.5) * whole.seconds for _ in range(KILLS)]
    kills = sum(kill_after(killed, s, log) for s in moments)
    t0 = time.perf_counter()
    final = run(REPRO, killed, timeout=600)
    assert final.returncode == 0, final.stdout[-3000:] + final.stderr[-3000:]
    assert kills >= 2, f"only {kills} of {KILLS} runs were killed: the experiment is too short to test anything"

    assert numbers(killed) == numbers(reference)
    assert running_runs(killed) == []
    print(f"uninterrupted {whole.seconds:.0f} s; killed at {[round(s) for s in moments]} s of each rerun; "
          f"last rerun {time.perf_counter() - t0:.0f} s")
