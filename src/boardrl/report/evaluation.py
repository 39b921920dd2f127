"""The evaluation file as the report reads it: the evaluate stage's models, with the blocks the report relies on
typed too.

Why subclasses here rather than fields in ``evaluate/schema.py``: the stage's models type what both sides need and
let blocks only some games or agents have pass through as they are.  The report reads several of those (a seat's
counts and intervals, the optimal-move detail, the network alone, the phases, value accuracy, the exact loss and
its aggregate, the across-seeds method, the run ids of the provenance) and relies on their shape, so it types them
on its side.  Each model subclasses the stage's, so whatever the stage checks is still checked, and a block of the
wrong shape is one line naming its field instead of a strange figure; the stage's file and its fingerprint (every
evaluate stage of the pipeline depends on schema.py) stay as they are.

Where the report picks a number by its name (``win``, ``as_first``), the models say which attribute that is
(``SeatReading.rate``, ``MatchReading.seats``), so no caller indexes a raw dict.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    NonNegativeInt,
    field_validator,
)

from boardrl.evaluate.schema import (
    AcrossSeeds,
    EvaluationFile,
    ExactVsPerfect,
    Outcomes,
    OutcomeSpreads,
    Provenance,
    SeatResults,
    SeedEvaluation,
    Spread,
    UCIResults,
)


def _share(value: float | None) -> float | None:
    if value is not None and not 0.0 <= value <= 1.0:
        raise ValueError(f"must be a number in [0, 1] or null, found {value!r}")
    return value


#: A rate the report prints as a percentage: a share in [0, 1], null where nothing was measured.
Share = Annotated[float | None, AfterValidator(_share)]
#: A two-sided interval as the evaluate stage writes it (a bound may be null).
Interval = tuple[float | None, float | None]


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


# ---------------------------------------------------------------------------------------------- one seat, one match
class SeatReading(Outcomes):
    """W/D/L in one seat: the rates (checked to be shares), and the counts and 95% intervals the stage adds."""

    win: Share
    draw: Share
    loss: Share
    wins: NonNegativeInt | None = None
    draws: NonNegativeInt | None = None
    losses: NonNegativeInt | None = None
    win_ci: Interval | None = None
    draw_ci: Interval | None = None
    loss_ci: Interval | None = None

    def rate(self, out: str) -> float | None:
        """The rate of outcome ``out`` (win, draw, loss)."""
        return {"win": self.win, "draw": self.draw, "loss": self.loss}[out]

    def count(self, out: str) -> int | None:
        """The stored count of outcome ``out``; None in files written before counts."""
        return {"win": self.wins, "draw": self.draws, "loss": self.losses}[out]

    def interval(self, out: str) -> Interval | None:
        """The 95% Wilson interval of outcome ``out``'s rate, where the stage wrote one."""
        return {"win": self.win_ci, "draw": self.draw_ci, "loss": self.loss_ci}[out]


class MatchReading(SeatResults):
    """A match against one opponent: each seat and both combined."""

    as_first: SeatReading
    as_second: SeatReading
    combined: SeatReading

    @property
    def seats(self) -> dict[str, SeatReading]:
        """The seat blocks by seat name (``evaluate.stats.SEATS``)."""
        return {"as_first": self.as_first, "as_second": self.as_second, "combined": self.combined}


# ---------------------------------------------------------------------------------------------- pass-through blocks
class CountedRate(_Open):
    """A share of judged positions with what it was counted from: an optimal-move rate (overall or of one phase of
    the game), or a value accuracy."""

    rate: Share = None
    n: NonNegativeInt | None = None
    optimal: NonNegativeInt | None = None
    ci: Interval | None = None
    plies: int | tuple[int, int] | None = None  # the plies of random play its positions come from
    unjudged: str | None = None  # why a phase could not be judged (no opening book)


class ExactLoss(ExactVsPerfect):
    """Tic-tac-toe: the exact loss against ``perfect`` per seat, whether the seed is flawless, or why not measured."""

    flawless: bool | None = None
    value_losing_moves: NonNegativeInt | None = None
    not_measured: str | None = None


class NetworkAlone(_Open):
    """A searching agent's network playing greedily without search, judged on the same positions."""

    optimal_move_rate: Share = None
    optimal_move: CountedRate | None = None
    optimal_move_by_phase: dict[str, CountedRate] | None = None


class FittedAccuracy(_Open):
    accuracy: Share = None


class ValueAccuracy(_Open):
    """Connect 4: win/draw/loss read from the agent's value on the UCI positions (``evaluate/value_accuracy.py``)."""

    positions: NonNegativeInt | None = None
    thresholds: list[float] = Field(default_factory=list)
    accuracy: CountedRate | None = None
    per_label: dict[str, CountedRate] = Field(default_factory=dict)
    balanced_accuracy: Share = None
    majority_baseline: Share = None
    fitted: FittedAccuracy | None = None


class UCIReading(UCIResults):
    """Connect 4 from the UCI start positions: reference system 000's protocol by label, and the full protocol."""

    seed000: dict[str, SeatReading] | None = None
    full: dict[str, MatchReading] | None = None


class EvalProvenance(Provenance):
    """The evaluate run behind a seed's numbers (``tracking/provenance.py``); the report links to it."""

    profile: str | None = None
    mlflow_run_id: str | None = None
    git_commit: str | None = None
    params_hash: str | None = None
    dvc_exp_name: str | None = None


class SeedReading(SeedEvaluation):
    """One training seed's evaluation."""

    opponents: dict[str, MatchReading]
    optimal_move: CountedRate | None = None
    optimal_move_rate_ci: Interval | None = None
    optimal_move_by_phase: dict[str, CountedRate] | None = None
    exact_vs_perfect: ExactLoss | None = None
    uci: UCIReading | None = None
    provenance: EvalProvenance | None = None
    network_alone: NetworkAlone | None = None
    value_accuracy: ValueAccuracy | None = None


# ---------------------------------------------------------------------------------------------- across seeds
class SpreadReading(Spread):
    """An across-seeds statistic, with the method and confidence the stage states beside it."""

    confidence: float | None = None
    method: str | None = None


class SpreadsReading(OutcomeSpreads):
    win: SpreadReading | None
    draw: SpreadReading | None
    loss: SpreadReading | None

    def spread(self, out: str) -> SpreadReading | None:
        """The statistic of outcome ``out`` (win, draw, loss); None where a seed lacked the number."""
        return {"win": self.win, "draw": self.draw, "loss": self.loss}[out]


class ExactAcross(_Open):
    """How many seeds' exact loss was measured, and how many of them never lose to ``perfect``."""

    flawless_seeds: NonNegativeInt | None = None
    measured_seeds: NonNegativeInt | None = None


class AcrossReading(AcrossSeeds):
    opponents: dict[str, SpreadsReading]
    optimal_move_rate: SpreadReading | None = None
    exact_vs_perfect: ExactAcross | None = None


# ---------------------------------------------------------------------------------------------- the file
class EvaluationReading(EvaluationFile):
    """``results/eval/<id>.json`` as the report reads it, its seeds in seed order."""

    seeds: dict[int, SeedReading] = Field(min_length=1)
    across_seeds: AcrossReading

    @field_validator("seeds", mode="after")
    @classmethod
    def _in_seed_order(cls, seeds: dict[int, SeedReading]) -> dict[int, SeedReading]:
        return dict(sorted(seeds.items()))
