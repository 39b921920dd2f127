"""DVC stage `sweep@<id>` (foreach over params `sweeps`): an Optuna search over an experiment's learner params.

    python pipeline/sweep.py --sweep tictactoe_tabular_q

Writes results/sweeps/<id>/: best_params.yaml (an overlay with the best trial's values for
experiments.<experiment>.params), trials.csv, figures/ (optimisation history, parameter importances, parallel
coordinates, intermediate values), summary.json, and the study journal (study.journal).  The study's name
carries the hash of the sweep's params and of its code fingerprint (build/inputs/<id>.sweep.json): a killed
stage continues the same study; changed params or code start a new one.  MLflow: a parent run per study and a nested run per trial.  The work is ``boardrl.sweeps.run``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from boardrl.atomic_io import atomic_write_json
from boardrl.config import EXIT_BAD_PARAMS, fail, load_params_or_exit, runtime_processes, stage_entry
from boardrl.errors import BoardRLError
from boardrl.sweeps.run import resolve_settings, run_sweep
from boardrl.tracking.provenance import params_hash

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sweep", required=True, help="id of an entry of params `sweeps`")
    ap.add_argument("--params", default=str(ROOT / "params.yaml"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    params = load_params_or_exit(args.params)
    if args.sweep not in params.sweeps:
        fail(f"params.yaml: sweeps: no sweep {args.sweep!r}; configured: {', '.join(params.sweeps)}", EXIT_BAD_PARAMS)
    s = params.sweeps[args.sweep]
    out = ROOT / "results" / "sweeps" / args.sweep
    t0 = time.perf_counter()
    try:
        settings = resolve_settings(params, s.experiment, s.space, s.budget, s.seeds)
        code = ROOT / "build" / "inputs" / f"{args.sweep}.sweep.json"  # the code it runs: new code, new study
        sl = {"sweep": s.model_dump(mode="json"), "experiment": params.experiment(s.experiment).model_dump(mode="json"),
              "train": params.train.model_dump(mode="json"), "code": code.read_text() if code.is_file() else None}
        result = run_sweep(params, settings, root=ROOT, study_name=f"{args.sweep}-{params_hash(sl)}",
                           storage_url=f"journal:{out / 'study.journal'}", n_trials=s.trials,
                           sampler_seed=s.sampler_seed, out_dir=out, processes=runtime_processes())
    except BoardRLError as exc:
        fail(str(exc))
    atomic_write_json(out / "summary.json", {
        "sweep": args.sweep, "experiment": s.experiment, "profile": params.profile, "study": result.study_name,
        "finished_trials": result.finished, "best_trial": result.best_trial, "best_score": result.best_score,
        "budget": s.budget, "seeds": s.seeds, "mlflow_parent_run_id": result.parent_run_id,
        "experiment_params": params.learner_params(s.experiment).model_dump(mode="json"),
        "seconds": round(time.perf_counter() - t0, 3)})
    print(f"sweep: {args.sweep}: {result.finished} trials, best score {result.best_score:.4f} "
          f"(trial {result.best_trial}) in {time.perf_counter() - t0:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    stage_entry(main)
