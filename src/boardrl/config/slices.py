"""The params slice each stage depends on (its params hash is computed from it) and the curve's points."""

from __future__ import annotations

import math
from typing import Any

from boardrl.config.schema import CurveParams, Params
from boardrl.config.schema import ExperimentSpec


# ---------------------------------------------------------------------------------------------- slices
def download_slice(p: Params) -> dict[str, Any]:
    return {"data": p.data.model_dump(mode="json")}


def prepare_slice(p: Params) -> dict[str, Any]:
    return {"prepare": p.prepare.model_dump(mode="json")}


def _experiment_head(spec: ExperimentSpec) -> dict[str, Any]:
    return {"experiment": spec.id, "game": spec.game, "learner": spec.learner, "seeds": list(spec.seeds),
            "learner_params": spec.learner_params.model_dump(mode="json")}


def train_slice(spec: ExperimentSpec) -> dict[str, Any]:
    """Exactly the params the train stage of an experiment depends on (build/inputs/<id>.train.json carries it).

    Not the curve's opponents or games per point: the train stage saves a snapshot at each curve point and
    stage curve@<id> plays them (``curve_slice``), so changing how the curve is measured retrains nothing.  Only
    whether there is a curve at all (no opponents: no snapshots) and where it is measured.
    """
    return {**_experiment_head(spec), "train": {
        "curve_points": eval_points(spec.budget, spec.train.curve),
        "snapshots": bool(spec.curve_opponents),
    }}


def curve_slice(spec: ExperimentSpec) -> dict[str, Any]:
    """The params of stage curve@<id>: the curve's opponents, each with its resolved number of games."""
    return {**_experiment_head(spec), "curve": {
        "opponents": [{"agent": o.agent, "games": o.games or spec.train.eval_games} for o in spec.curve_opponents],
    }}


def tournament_slice(p: Params, tid: str) -> dict[str, Any]:
    return {"tournament": tid, **p.tournaments[tid].model_dump(mode="json")}


def evaluate_slice(spec: ExperimentSpec) -> dict[str, Any]:
    """The params of the evaluate stage of an experiment: its own keys and the learner params of the model."""
    plies = spec.game_evaluation.optimal_plies
    return {**_experiment_head(spec), "evaluate": {
        "seed": spec.evaluate.seed,
        "games": spec.evaluate.games,
        "optimal_positions": spec.evaluate.optimal_positions,
        "optimal_plies": list(plies) if plies else None,
        "uci": spec.uci.model_dump(mode="json") if spec.uci else None,
        "opponents": [o.model_dump(mode="json") for o in spec.ladder],
    }}


def eval_points(total: int, curve: CurveParams) -> list[int]:
    """Log-spaced training progress points: [0,] first * 10^(k/per_decade) to 2 significant digits, then ``total``.

    With first=100 and per_decade=3: 0, 100, 220, 460, 1000, 2200, 4600, 10000, ..., total.
    """
    points = {0} if curve.include_zero else set()
    k = 0
    while True:
        value = curve.first * 10 ** (k / curve.per_decade)
        digits = 10 ** max(0, int(math.floor(math.log10(value))) - 1)
        point = int(round(value / digits) * digits)
        if point >= total:
            break
        points.add(point)
        k += 1
    points.add(int(total))
    return sorted(points)
