"""Sweep benchmarks (measured, not tests): the default sweep stage, pruning savings, two workers on PostgreSQL.

    .venv/bin/python benchmarks/sweeps.py [--only stage|pruning|workers] [--out benchmarks/sweeps.json]

- stage:   wall time of the default `sweep@tictactoe_tabular_q` stage (params.yaml: 12 trials x 2 seeds of 20,000
           games), run by its own script in a copy of the project; target <= 180 s on the 2-core machine.
- pruning: the learner's whole (wide) space, 24 trials of 100,000 games, the same sampler seed, with the median
           pruner and without: trials pruned, training games spent, wall time, best score.
- workers: trials per minute of 12 trials of 400,000 games against a PostgreSQL 15 study (servers from
           tests/servers.py) with one worker process and with two; target >= 1.6x on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the server fixtures of the tests, reused here


def stage() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        proj = Path(tmp)
        shutil.copytree(ROOT / "pipeline", proj / "pipeline")
        shutil.copy(ROOT / "params.yaml", proj / "params.yaml")
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "pipeline/sweep.py", "--sweep", "tictactoe_tabular_q"], cwd=proj, check=True,
                       capture_output=True)
        seconds = time.perf_counter() - t0
        summary = json.loads((proj / "results/sweeps/tictactoe_tabular_q/summary.json").read_text())
    return {"sweep_stage.seconds": round(seconds, 1), "sweep_stage.trials": summary["finished_trials"],
            "sweep_stage.target_seconds": 180, "sweep_stage.pass": seconds <= 180}


def _params():
    from boardrl.config import parse_params

    return parse_params(yaml.safe_load((ROOT / "params.yaml").read_text()))


def pruning() -> dict:
    import optuna

    from boardrl.sweeps.run import resolve_settings, run_sweep

    params = _params()
    settings = resolve_settings(params, "tictactoe_tabular_q", None, budget=100_000, seeds=[0])
    out = {}
    for prune in (True, False):
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            res = run_sweep(params, settings, root=Path(tmp), study_name="b", storage_url=f"journal:{tmp}/b.journal",
                            n_trials=24, sampler_seed=3, prune=prune)
            seconds = time.perf_counter() - t0
            study = optuna.load_study(study_name="b", storage=optuna.storages.JournalStorage(
                optuna.storages.journal.JournalFileBackend(f"{tmp}/b.journal")))
            trials = study.trials
        pruned = [t for t in trials if t.state == optuna.trial.TrialState.PRUNED]
        games = sum(max(t.intermediate_values) if t.intermediate_values else 0 for t in trials)
        key = "pruning.with" if prune else "pruning.without"
        out.update({f"{key}.seconds": round(seconds, 1), f"{key}.pruned": len(pruned),
                    f"{key}.training_games": int(games), f"{key}.best_score": round(res.best_score, 4)})
    out["pruning.time_saved_fraction"] = round(1 - out["pruning.with.seconds"] / out["pruning.without.seconds"], 3)
    return out


def workers() -> dict:
    from servers import postgres_missing, postgres_server

    from boardrl.sweeps.run import resolve_settings, run_sweep

    if postgres_missing():
        return {"workers.skipped": postgres_missing()}
    params = _params()
    settings = resolve_settings(params, "tictactoe_tabular_q", {"gamma": None}, budget=400_000, seeds=[0])
    out = {}
    with postgres_server() as url, tempfile.TemporaryDirectory() as tmp:
        for jobs in (1, 2):
            t0 = time.perf_counter()
            run_sweep(params, settings, root=Path(tmp), study_name=f"w{jobs}", storage_url=url, n_trials=12,
                      sampler_seed=1, jobs=jobs, prune=False)
            out[f"workers.{jobs}.trials_per_min"] = round(12 / ((time.perf_counter() - t0) / 60), 2)
    out["workers.speedup"] = round(out["workers.2.trials_per_min"] / out["workers.1.trials_per_min"], 2)
    out["workers.pass"] = out["workers.speedup"] >= 1.6
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=("stage", "pruning", "workers"))
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "sweeps.json")
    args = ap.parse_args()
    results = {}
    for name, fn in (("stage", stage), ("pruning", pruning), ("workers", workers)):
        if args.only in (None, name):
            results.update(fn())
            print(json.dumps(results, indent=2), file=sys.stderr)
    args.out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
