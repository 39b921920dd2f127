"""DVC stage `evaluate@<id>` (foreach over params `experiments`): judge every seed's model of one experiment.

    python pipeline/evaluate.py --experiment tictactoe_tabular_q

Writes results/eval/<id>.json (per seed: the ladder with W/D/L per seat and 95% Wilson intervals, the
optimal-move rate, the UCI protocols for Connect 4; across seeds: IQM with a bootstrap interval) and
results/metrics/<id>.json (the headline numbers `dvc metrics show` lists).  The work is
``boardrl.experiments.evaluate.run_evaluate``; this script only parses the command line.
"""

from __future__ import annotations

import sys
from pathlib import Path

from boardrl.config import experiment_stage_args, run_experiment_stage, stage_entry
from boardrl.experiments.evaluate import run_evaluate

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> None:
    args = experiment_stage_args(argv, __doc__.splitlines()[0], ROOT / "params.yaml")
    results = run_experiment_stage(args.params, args.experiment,
                                   lambda spec: run_evaluate(spec, ROOT))
    seconds = sum(r["provenance"]["seconds"] for r in results["seeds"].values())
    print(f"evaluate: {args.experiment}: {len(results['seeds'])} seed(s) in {seconds:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    stage_entry(main)
