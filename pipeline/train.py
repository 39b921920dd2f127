"""DVC stage `train@<id>` (foreach over params `experiments`): train every seed of one experiment.

    python pipeline/train.py --experiment tictactoe_tabular_q

Writes models/<id>/seed-<k>/model/, snapshots/<id>/seed-<k>/ (the frozen agent at each learning-curve point,
which stage curve@<id> plays) and results/train/<id>/seed-<k>/summary.json; checkpoints go to
models/<id>/seed-<k>/checkpoint/ (a persistent DVC output), so a killed run resumes there.  The work is
``boardrl.experiments.train.run_train``; this script only parses the command line.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from boardrl.config import experiment_stage_args, run_experiment_stage, stage_entry
from boardrl.experiments.guard import exit_with_parent
from boardrl.experiments.train import run_train

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> None:
    args = experiment_stage_args(argv, __doc__.splitlines()[0], ROOT / "params.yaml")
    progress = os.environ.get("BOARDRL_PROGRESS", "1") != "0"
    exit_with_parent()  # no orphan trainer when dvc is killed
    trained = run_experiment_stage(args.params, args.experiment,
                                   lambda spec: run_train(spec, ROOT, progress=progress))
    seconds = sum(t.summary["seconds"] for t in trained)
    print(f"train: {args.experiment}: {len(trained)} seed(s) in {seconds:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    stage_entry(main)
