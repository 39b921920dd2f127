"""One experiment of params.yaml resolved once: everything its stages, sweeps and studies read about it.

Why: the stages used to take ``(params, exp_id)`` and look the experiment up again wherever they needed a part
of it: its entry, its learner params (validated anew each time), its budget, curve opponents, ladder and UCI
settings.  Fourteen functions did, twenty-six times in all.  A stage now resolves an ``ExperimentSpec`` at its
entry (``run_experiment_stage``) and hands it down; what it needs of the pipeline-wide sections (the curve's
points, the evaluation's seed and position counts) travels with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from boardrl.config.schema import EvaluateParams, GameEvaluation, Opponent, Params, TrainParams, UciParams


@dataclass(frozen=True)
class ExperimentSpec:
    """Experiment ``id`` of a validated ``Params``, with its learner params and settings resolved."""

    id: str
    game: str
    learner: str
    seeds: tuple[int, ...]
    learner_params: BaseModel  # the learner's own params model: its defaults plus the experiment's params
    unit: str  # what the budget counts: "games" or "steps" (the learner's unit)
    budget: int
    curve_opponents: tuple[Opponent, ...]  # the experiment's own, else its game's (params `train.opponents`)
    ladder: tuple[Opponent, ...]  # the experiment's own, else its game's (params `evaluate.per_game`)
    uci: UciParams | None  # its UCI protocol settings (None: not measured)
    profile: str
    train: TrainParams  # the pipeline's train section: curve points, games per curve point
    evaluate: EvaluateParams  # the pipeline's evaluate section: seed, games, position sets

    @classmethod
    def resolve(cls, params: Params, exp_id: str) -> ExperimentSpec:
        """The spec of ``exp_id``; ``ConfigError`` naming the configured experiments for an unknown id."""
        e = params.experiment(exp_id)
        unit, budget = params.budget(exp_id)
        return cls(id=exp_id, game=e.game, learner=e.learner, seeds=tuple(e.seeds),
                   learner_params=params.learner_params(exp_id), unit=unit, budget=budget,
                   curve_opponents=tuple(params.curve_opponents(exp_id)), ladder=tuple(params.ladder(exp_id)),
                   uci=params.uci(exp_id), profile=params.profile, train=params.train, evaluate=params.evaluate)

    @property
    def game_evaluation(self) -> GameEvaluation:
        """The evaluate section's settings of this experiment's game (ladder default, optimal plies, UCI)."""
        return self.evaluate.per_game[self.game]

    def labels(self) -> dict[str, Any]:
        """The MLflow tags every run of this experiment carries."""
        return {"experiment": self.id, "game": self.game, "learner": self.learner, "profile": self.profile}
