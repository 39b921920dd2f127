"""The schema of params.yaml: one pydantic model per section (``Params`` is the whole file)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from boardrl.config.errors import ConfigError
from boardrl.config.limits import (
    MAX_GAMES,
    MAX_POSITIONS,
    MAX_SEEDS,
    MAX_TOURNAMENT_AGENTS,
    MAX_TRIALS,
    MAX_UNITS,
    UCI_POSITIONS,
    Flag,
    Number,
    PlyCount,
    Whole,
)
from pydantic import BaseModel, ConfigDict, Field, field_validator

EXPERIMENT_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


# ---------------------------------------------------------------------------------------------- schema
class _Strict(BaseModel):
    """Unknown keys are errors (``extra="forbid"``); models are immutable once validated."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class DataParams(_Strict):
    source: Literal["auto", "online", "vendored"] = Field(description="auto = official URL, else vendored copy")
    url: str = Field(min_length=1, description="official address of the UCI Connect-4 zip")
    timeout_s: Number = Field(gt=0, le=600, description="network timeout of the download")


class PrepareParams(_Strict):
    check_regenerated: Flag = Field(description="compare the data with the 8-ply positions regenerated from the rules")


class Opponent(_Strict):
    """A benchmark opponent: an agent spec (``make_agent``) and, optionally, its own number of games."""

    agent: str = Field(min_length=1)
    games: Whole | None = Field(None, ge=2, le=MAX_GAMES, description="seats alternate, so at least one game per seat")

    @property
    def key(self) -> str:
        """The name results are filed under (the spec itself)."""
        return self.agent


def _as_opponent(value: Any) -> Any:
    """Accept the short form ``"random"`` for ``{agent: random}``."""
    return {"agent": value} if isinstance(value, str) else value


def _opponent_list(v: Any) -> Any:
    return [_as_opponent(o) for o in v] if isinstance(v, list) else v


class CurveParams(_Strict):
    """Learning-curve evaluation points: 0 (optional), then ``first`` * 10^(k / per_decade), then the end."""

    first: Whole = Field(ge=1, le=MAX_UNITS)
    per_decade: Whole = Field(ge=1, le=20)
    include_zero: Flag


class TrainParams(_Strict):
    eval_games: Whole = Field(ge=2, le=MAX_GAMES,
                              description="games per opponent at each curve point (seats alternate)")
    curve: CurveParams
    opponents: dict[str, list[Opponent]] = Field(description="per game: the learning curve's benchmark opponents")

    @field_validator("opponents", mode="before")
    @classmethod
    def _short_opponents(cls, v: Any) -> Any:
        return {g: _opponent_list(lst) for g, lst in v.items()} if isinstance(v, dict) else v


class UciParams(_Strict):
    """Connect 4 agents only: evaluation from the UCI start positions (seed 000's protocol and the full one) and
    the value accuracy on their labels."""

    seed000_games: Whole = Field(ge=1, le=MAX_GAMES,
                                 description="games per label, agent first, fresh random position each")
    full: Flag = Field(description="also play every position of each label with the agent in each seat")
    full_positions: Whole | None = Field(ge=1, le=UCI_POSITIONS,
                                         description="cap on positions per label for the full protocol")
    value_accuracy: Flag = Field(
        True, description="agents with a value (value_batch): read it as win/draw/loss on all 67,557 labels")


class GameEvaluation(_Strict):
    """How agents of one game are judged: the ladder, where positions for the optimal-move rate come from, UCI."""

    opponents: list[Opponent] = Field(description="the ladder, weakest first")
    optimal_plies: tuple[PlyCount, PlyCount] | None = Field(
        None, description="[lo, hi] plies of random play before a position (default: anywhere in a game)")
    uci: UciParams | None = Field(None, description="Connect 4 only: the UCI start-position protocols")

    @field_validator("opponents", mode="before")
    @classmethod
    def _short_opponents(cls, v: Any) -> Any:
        return _opponent_list(v)


class EvaluateParams(_Strict):
    seed: Whole = Field(ge=0, lt=2**63, description="seed of evaluation games and position sets (same for all)")
    games: Whole = Field(ge=2, le=MAX_GAMES, description="games per opponent unless the opponent sets its own")
    optimal_positions: Whole = Field(ge=0, le=MAX_POSITIONS,
                                     description="positions for the optimal-move rate (0 = skip)")
    per_game: dict[str, GameEvaluation]


class Experiment(_Strict):
    """One experiment: a learner trained on a game with one or more seeds, then evaluated."""

    game: str = Field(min_length=1)
    learner: str = Field(min_length=1)
    seeds: list[Whole] = Field(default_factory=lambda: [0], min_length=1, max_length=MAX_SEEDS,
                               description="training seeds")
    params: dict[str, Any] = Field(default_factory=dict, description="learner params that differ from its defaults")
    opponents: list[Opponent] | None = Field(None, description="learning-curve opponents (default: train.opponents)")
    ladder: list[Opponent] | None = Field(None, description="evaluation ladder (default: evaluate.per_game)")
    uci: UciParams | None = Field(None, description="Connect 4: UCI protocol settings for this experiment (default: "
                                  "evaluate.per_game.connect4.uci; e.g. fewer full-protocol positions for agents "
                                  "that search every move)")
    description: str = ""

    @field_validator("opponents", "ladder", mode="before")
    @classmethod
    def _short_opponents(cls, v: Any) -> Any:
        return _opponent_list(v)

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, v: list[int]) -> list[int]:
        if any(s < 0 or s >= 2**63 for s in v):
            raise ValueError("seeds must lie in 0 .. 2^63-1")
        if len(set(v)) != len(v):
            raise ValueError(f"a seed is listed twice in {v}")
        return v


class SweepParams(_Strict):
    """One Optuna sweep over an experiment's learner params (boardrl.sweeps): the DVC stage sweep@<id>."""

    experiment: str = Field(min_length=1, description="the experiment whose learner params are searched")
    trials: Whole = Field(ge=1, le=MAX_TRIALS, description="finished trials (complete or pruned) the study should have")
    budget: Whole | None = Field(None, ge=1, le=MAX_UNITS,
                                 description="training budget per trial and seed (default: the experiment's)")
    seeds: list[Whole] = Field(default_factory=lambda: [0], min_length=1, max_length=MAX_SEEDS,
                               description="training seeds averaged per trial")
    sampler_seed: Whole = Field(0, ge=0, lt=2**63, description="seed of the TPE sampler")
    space: dict[str, Any] = Field(default_factory=dict, description="narrowed dimensions: {key: {low, high} | {choices} | null}")


class TournamentParams(_Strict):
    """Stage ``tournament@<id>``: a fixed-seat round robin among fixed players (seed 004's validation table,
    or one agent against itself for a random-vs-random baseline)."""

    game: str = Field(min_length=1, description="game id")
    agents: list[str] = Field(min_length=1, max_length=MAX_TOURNAMENT_AGENTS,
                              description="agent specs; every ordered pair plays, self-pairs too")
    games: Whole = Field(ge=1, le=MAX_GAMES, description="games per ordered pairing, the row agent always first")
    seed: Whole = Field(0, ge=0, lt=2**63, description="seed of the pairings' games")


class StudyLabel(_Strict):
    """Which study variation a DVC experiment runs (set by ``boardrl study`` in the variation's params.yaml): MLflow
    runs carry it as tags, and no stage's numbers depend on it."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", description="the study (studies/<name>.yaml)")
    variation: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", description="the variation of the study")


class Params(_Strict):
    profile: str = Field("default", pattern=r"^[a-z0-9_-]+$", description="the overlay that produced the numbers")
    study: StudyLabel | None = Field(None, description="set only in a study's DVC experiments (boardrl study)")
    data: DataParams
    prepare: PrepareParams
    train: TrainParams
    evaluate: EvaluateParams
    experiments: dict[str, Experiment] = Field(min_length=1)
    sweeps: dict[str, SweepParams] = Field(default_factory=dict)
    tournaments: dict[str, TournamentParams] = Field(default_factory=dict)

    def experiment(self, exp_id: str) -> Experiment:
        """The experiment ``exp_id``; ``ConfigError`` naming the configured ones otherwise."""
        try:
            return self.experiments[exp_id]
        except KeyError:
            known = ", ".join(self.experiments)
            raise ConfigError("experiments", f"no experiment {exp_id!r}; configured: {known}") from None

    def spec(self, exp_id: str) -> ExperimentSpec:
        """Experiment ``exp_id`` resolved once, as the stages take it (``ExperimentSpec``)."""
        return ExperimentSpec.resolve(self, exp_id)

    def learner_params(self, exp_id: str) -> BaseModel:
        """The validated params model of the experiment's learner (its defaults plus the experiment's params)."""
        from boardrl.learn import learner_params_model

        e = self.experiment(exp_id)
        return learner_params_model(e.learner).model_validate(e.params)

    def budget(self, exp_id: str) -> tuple[str, int]:
        """(unit, amount) of the experiment's training budget: its learner's unit ("games" or "steps")."""
        from boardrl.learn import learner_unit

        unit = learner_unit(self.experiment(exp_id).learner)
        return unit, int(getattr(self.learner_params(exp_id), unit))

    def curve_opponents(self, exp_id: str) -> list[Opponent]:
        e = self.experiment(exp_id)
        return list(e.opponents) if e.opponents is not None else list(self.train.opponents[e.game])

    def ladder(self, exp_id: str) -> list[Opponent]:
        e = self.experiment(exp_id)
        return list(e.ladder) if e.ladder is not None else list(self.evaluate.per_game[e.game].opponents)

    def uci(self, exp_id: str) -> UciParams | None:
        """The UCI protocol settings of ``exp_id``: its own, else its game's (None: not measured)."""
        e = self.experiment(exp_id)
        game_uci = self.evaluate.per_game[e.game].uci
        return e.uci if e.uci is not None and game_uci is not None else game_uci


# ---------------------------------------------------------------------------------------------- one experiment
# One experiment of params.yaml resolved once: everything its stages, sweeps and studies read about it.
#
# Why: the stages used to take ``(params, exp_id)`` and look the experiment up again wherever they needed a part
# of it: its entry, its learner params (validated anew each time), its budget, curve opponents, ladder and UCI
# settings.  Fourteen functions did, twenty-six times in all.  A stage now resolves an ``ExperimentSpec`` at its
# entry (``run_experiment_stage``) and hands it down; what it needs of the pipeline-wide sections (the curve's
# points, the evaluation's seed and position counts) travels with it.
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
