"""The evaluate stage's result file, ``results/eval/<id>.json``, as pydantic models.

Why: the evaluate stage writes the file and the report reads it; one typed definition checked on both sides
keeps them from drifting apart.  The stage validates what it is about to publish (a malformed result never
reaches disk), and the report validates what it reads (a file edited or damaged by hand is one line naming the
file and the field).  The models type what the report reads; blocks only some games or agents have
(``network_alone``, ``optimal_move_by_phase``, ``value_accuracy``, ...) pass through as they are.

    {"experiment", "game", "learner", "profile", "unit", "budget",
     "seeds": {"<k>": {"opponents": {<name>: {"as_first", "as_second", "combined": {win, draw, loss, games}}},
                       "optimal_move_rate", "uci", "exact_vs_perfect" (tic-tac-toe), "provenance", ...}},
     "across_seeds": {"seeds", "opponents": {<name>: {win, draw, loss: {iqm, ci, values}}}, "optimal_move_rate"}}
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, ValidationError, model_validator

Rate = float | None  # a share in [0, 1]; null where nothing was measured


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


def _check_rate(value: Rate, what: str) -> None:
    if value is not None and not 0.0 <= value <= 1.0:
        raise ValueError(f"{what} must be a number in [0, 1] or null, found {value!r}")


class Outcomes(_Open):
    """Win, draw and loss rates over ``games`` games (one seat, or both combined)."""

    win: Rate
    draw: Rate
    loss: Rate
    games: NonNegativeInt


class SeatResults(_Open):
    """A match against one opponent: each seat and both combined (``mean_length`` and intervals pass through)."""

    as_first: Outcomes
    as_second: Outcomes
    combined: Outcomes


class Provenance(_Open):
    """Which training run was judged (``tracking/provenance.py`` writes more: commit, MLflow run, seconds...)."""

    experiment: str
    game: str
    learner: str
    seed: int
    unit: Literal["games", "steps"] | None = None
    budget: NonNegativeInt | None = None


class SeatLoss(_Open):
    loss: Rate = None


class ExactVsPerfect(_Open):
    """Tic-tac-toe: the exact loss probability against ``perfect`` per seat (null: not measured)."""

    as_first: SeatLoss | None = None
    as_second: SeatLoss | None = None


class UCIResults(_Open):
    full: dict[str, SeatResults] | None = None


class SeedEvaluation(_Open):
    """One training seed's evaluation."""

    opponents: dict[str, SeatResults]
    optimal_move_rate: Rate = None
    exact_vs_perfect: ExactVsPerfect | None = None
    uci: UCIResults | None = None
    provenance: Provenance | None = None

    @model_validator(mode="after")
    def _rate(self) -> "SeedEvaluation":
        _check_rate(self.optimal_move_rate, "optimal_move_rate")
        return self


class Spread(_Open):
    """An across-seeds statistic: interquartile mean, a two-sided interval and one value per seed."""

    iqm: float | None
    ci: tuple[float | None, float | None]
    values: list[float | None]


class OutcomeSpreads(_Open):
    win: Spread | None
    draw: Spread | None
    loss: Spread | None


class AcrossSeeds(_Open):
    seeds: list[int]
    opponents: dict[str, OutcomeSpreads]
    optimal_move_rate: Spread | None = None

    @model_validator(mode="after")
    def _one_value_per_seed(self) -> "AcrossSeeds":
        n = len(self.seeds)
        spreads = [(f"opponents.{name}.{out}", getattr(block, out)) for name, block in self.opponents.items()
                   for out in ("win", "draw", "loss")] + [("optimal_move_rate", self.optimal_move_rate)]
        for where, s in spreads:
            if s is not None and len(s.values) != n:
                raise ValueError(f"{where}.values must hold one value per seed ({n})")
        return self


class EvaluationFile(_Open):
    """``results/eval/<id>.json``."""

    experiment: str
    game: str
    learner: str
    profile: str | None = None
    unit: Literal["games", "steps"] | None = None
    budget: NonNegativeInt | None = None
    seeds: dict[int, SeedEvaluation] = Field(min_length=1)
    across_seeds: AcrossSeeds

    @model_validator(mode="after")
    def _consistent(self) -> "EvaluationFile":
        stray = [k for k in self.across_seeds.seeds if k not in self.seeds]
        if stray:
            raise ValueError(f"across_seeds.seeds must list seeds of 'seeds' ({sorted(self.seeds)}), found "
                             f"{self.across_seeds.seeds!r}")
        for k, block in self.seeds.items():
            if block.provenance is not None and block.provenance.seed != k:
                raise ValueError(f"seeds.{k}.provenance: seed is {block.provenance.seed!r}, expected {k}")
        return self


def validation_line(exc: ValidationError) -> str:
    """The first problem of a validation error in one line: ``<dotted field>: <what is wrong>``."""
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    what = str(err["msg"]).removeprefix("Value error, ")
    return f"{where}: {what}" if where else what


def check_evaluation(data: dict[str, Any]) -> EvaluationFile:
    """``data`` as an ``EvaluationFile``; ``ValueError`` with one line naming the first bad field."""
    try:
        return EvaluationFile.model_validate(data)
    except ValidationError as exc:
        raise ValueError(validation_line(exc)) from None
