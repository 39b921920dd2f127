"""DVC stage `curve@<id>` (foreach over params `experiments`): the learning curve of every seed of one experiment.

    python pipeline/curve.py --experiment tictactoe_tabular_q

Plays the curve's opponents (train.opponents.<game> or the experiment's own `opponents`, train.eval_games games
each unless an opponent says otherwise) against the snapshots train@<id> saved at each curve point
(snapshots/<id>/seed-<k>/<count>/) and writes results/curves/<id>/seed-<k>.tsv for every seed at once.  Changing
the opponents or the games per point reruns this stage only, never the training.  The work is
``boardrl.experiments.curve.run_curve``; this script only parses the command line.
"""

from __future__ import annotations

import sys
from pathlib import Path

from boardrl.config import experiment_stage_args, run_experiment_stage, stage_entry
from boardrl.experiments.curve import run_curve

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> None:
    args = experiment_stage_args(argv, __doc__.splitlines()[0], ROOT / "params.yaml")
    curves = run_experiment_stage(args.params, args.experiment,
                                  lambda spec: run_curve(spec, ROOT))
    points = sum(len({row[0] for row in rows}) for rows in curves.values())
    print(f"curve: {args.experiment}: {len(curves)} seed(s), {points} point(s)", file=sys.stderr)


if __name__ == "__main__":
    stage_entry(main)
