"""kill -9 at random moments of a profile run, rerun until it finishes: the outputs equal an uninterrupted run's.

Two copies of the repository keep one tic-tac-toe tabular Q experiment (long enough that a kill lands inside
training with checkpoints, or in any other stage: download, prepare, inputs, referee, curve, ladder, evaluate,
report).  Each runs a small overlay, `resume`, with ``python -m boardrl.experiments.profiles run resume`` as
``make repro PROFILE=resume`` runs it: in the profile's lasting folder, saved as a DVC experiment at the end.  One
copy runs once.  The other is killed (SIGKILL to the whole process group: the profile command, DVC, the stages,
their workers) at moments drawn from a seeded generator, and the same command runs again after each kill; a rerun
must never fail, and the last one ends the run.  Then:

- every output that carries a number (model files, curve snapshots, curve, evaluation, metrics) is byte-equal
  between the two copies (a trained model is a function of game, params and seed, whatever the kills);
- no MLflow run of the killed copy is left RUNNING;
- the rerun resumed the same DVC experiment, which DVC lists once finished, and the workspace (params.yaml, git)
  was never touched.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from boardrl.experiments.profiles import RUN_STATE, run_dir
from repo_copy import copy_repo, git, run, stage_env

pytestmark = pytest.mark.timeout(900)

EXP = "tictactoe_tabular_q"
PROFILE = "resume"
KILLS = 3
SEED = 34  # any fixed value gives the same kill moments on every run of the test
OVERLAY = {
    "data": {"url": "http://127.0.0.1:9/connect+4.zip", "timeout_s": 2},  # the vendored copy, no network wait
    "prepare": {"check_regenerated": False},
    "train": {"eval_games": 20, "curve": {"first": 100, "per_decade": 1}},
    "evaluate": {"games": 20, "optimal_positions": 10,
                 "per_game": {"tictactoe": {"opponents": ["random", {"agent": "perfect", "games": 10}]}}},
    "experiments": {EXP: {"seeds": [7], "params": {"games": 40000, "checkpoint_every": 4000,
                                                   "parallel_games": 1}}},
}
CMD = [sys.executable, "-m", "boardrl.experiments.profiles", "run", PROFILE]

#: Provenance that differs between any two runs (wall time, MLflow run, the copy's git commit, DVC experiment).
RUN_RECORDS = {"seconds", "mlflow_run_id", "git_commit", "dvc_exp_name"}


def one_experiment(data: dict) -> None:
    data["experiments"] = {EXP: data["experiments"][EXP]}
    data["sweeps"], data["tournaments"] = {}, {}


def add_profile(root: Path) -> None:
    (root / "profiles" / f"{PROFILE}.yaml").write_text(yaml.safe_dump(OVERLAY, sort_keys=False))


def without_run_records(tree):
    if isinstance(tree, dict):
        return {k: without_run_records(v) for k, v in tree.items() if k not in RUN_RECORDS}
    if isinstance(tree, list):
        return [without_run_records(v) for v in tree]
    return tree


def numbers(where: Path) -> dict[str, object]:
    """Every output file that carries a number of the experiment (not timings, run ids or logs)."""
    roots = [where / "models" / EXP, where / "snapshots" / EXP, where / "results" / "curves" / EXP]
    files: dict[str, object] = {str(p.relative_to(where)): p.read_bytes() for r in roots for p in sorted(r.rglob("*"))
                                if p.is_file() and "checkpoint" not in p.parts}
    for rel in (f"results/eval/{EXP}.json", f"results/metrics/{EXP}.json"):
        files[rel] = without_run_records(json.loads((where / rel).read_text()))
    return files


def kill_after(repo: Path, seconds: float, log: Path) -> bool:
    """Run the profile; SIGKILL its process group after ``seconds``; False if it finished first."""
    with log.open("a") as out:
        proc = subprocess.Popen(CMD, cwd=repo, env=stage_env(repo), stdout=out, stderr=subprocess.STDOUT,
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
    reference = copy_repo(tmp_path / "reference", one_experiment, add_profile)
    whole = run(CMD, reference)
    assert whole.returncode == 0, whole.stdout[-3000:] + whole.stderr[-3000:]

    killed = copy_repo(tmp_path / "killed", one_experiment, add_profile)
    params_before = (killed / "params.yaml").read_bytes()
    where = run_dir(killed, PROFILE)
    rng = random.Random(SEED)
    log = tmp_path / "killed.log"
    # Each rerun resumes, so the kills add up: at most 0.3 of the reference run each, the first two stay short of
    # a whole run even where the reruns run twice as fast as the reference (a machine that got less busy).
    moments = [rng.uniform(0.1, 0.3) * whole.seconds for _ in range(KILLS)]
    kills, name, finished = 0, None, False
    for seconds in moments:
        if not kill_after(killed, seconds, log):
            finished = True  # a loaded machine: this rerun reached the end before its kill moment
            break
        kills += 1
        name = name or json.loads(where.joinpath(*RUN_STATE).read_text())["exp_name"]
    assert kills >= 2, f"only {kills} of {KILLS} runs were killed: the experiment is too short to test anything"
    t0 = time.perf_counter()
    if not finished:
        final = run(CMD, killed)
        assert final.returncode == 0, final.stdout[-3000:] + final.stderr[-3000:]
        assert f"profile {PROFILE}: resuming DVC experiment {name}" in final.stderr
    else:
        assert f"profile {PROFILE}: resuming DVC experiment {name}" in log.read_text()

    assert numbers(where) == numbers(run_dir(reference, PROFILE))
    assert running_runs(killed) == []
    shown = run(["dvc", "exp", "show", "--json"], killed)
    assert shown.returncode == 0 and f'"{name}"' in shown.stdout
    assert not where.joinpath(*RUN_STATE).exists()  # finished: the next run is a new experiment
    assert (killed / "params.yaml").read_bytes() == params_before  # the workspace was never touched
    assert git(killed, "status", "--porcelain") == ""
    print(f"uninterrupted {whole.seconds:.0f} s; killed at {[round(s) for s in moments]} s of each rerun; "
          f"last rerun {time.perf_counter() - t0:.0f} s")
