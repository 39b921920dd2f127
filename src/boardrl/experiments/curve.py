"""The learning-curve evaluator: what a learner's ``on_eval`` does in the pipeline (and in a sweep objective).

At each evaluation point the frozen agent plays every benchmark opponent (seats alternate, seeded per point and
opponent so a resumed run measures exactly what an uninterrupted one does).  The returned record (curve rows
and flat metrics) is kept by the learner base in its checkpoints, so a resumed run still has every point; the
evaluator logs each new point to the active MLflow run with ``step`` = training progress, and ``log_missing``
logs the points measured before an interruption, so the whole curve is in the run that finished.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

from boardrl.agents.base import Agent
from boardrl.evaluate.stats import SEATS
from boardrl.games.base import Game
from boardrl.tracking import curve as curves
from boardrl.tracking.mlflow_runs import log_metrics, metric_key

OUTCOMES = ("win", "draw", "loss")


@dataclass
class CurveOpponent:
    key: str
    agent: Agent
    games: int


@dataclass
class CurveEvaluator:
    """``on_eval`` of a training run: plays the snapshot against each opponent and returns the record."""

    game: Game
    opponents: list[CurveOpponent]
    seed: int
    processes: int = 1
    log_to_mlflow: bool = True
    verbose: bool = True
    logged: set[int] = field(default_factory=set)

    def __call__(self, step: int, agent: Agent) -> dict[str, Any]:
        from boardrl.evaluate.match import play_match

        rows: list[list[Any]] = []
        metrics: dict[str, float | None] = {}
        for i, opp in enumerate(self.opponents):
            result = play_match(self.game, agent, opp.agent, opp.games, seats="alternate",
                                seed=curves.sub_seed(self.seed, 1, step, i), processes=self.processes)
            d = result.to_dict()
            rows += curves.seat_rows(step, opp.key, d)
            for seat in SEATS:
                for out in OUTCOMES:
                    metrics[metric_key("curve", opp.key, seat, out)] = d[seat][out]
        record = {"rows": rows, "metrics": metrics}
        self._log(step, record)
        if self.verbose:
            combined = " ".join(f"{r[1]} W{r[3]:.3f}/D{r[4]:.3f}/L{r[5]:.3f}" for r in rows if r[2] == "combined")
            print(f"curve: {step}: {combined}", file=sys.stderr, flush=True)
        return record

    def _log(self, step: int, record: dict[str, Any]) -> None:
        if self.log_to_mlflow:
            log_metrics(record["metrics"], step=step)
        self.logged.add(int(step))

    def log_missing(self, evaluations: dict[int, Any]) -> None:
        """Log the records of points this process did not measure (from before a resume)."""
        for step, record in sorted(evaluations.items()):
            if step not in self.logged and record is not None:
                self._log(step, record)


def curve_rows(evaluations: dict[int, Any]) -> list[list[Any]]:
    """All curve rows of a run's evaluation records, in step order."""
    return [row for step in sorted(evaluations) for row in (evaluations[step] or {}).get("rows", [])]


def score(record: dict[str, Any]) -> float:
    """The game score of one evaluation record: mean over opponents of win + draw/2 (both seats together).

    Why not the win rate: against a perfect tic-tac-toe player the best result is a draw, and a sweep that
    maximised wins would not see the difference between drawing and losing.
    """
    rates = [float(r[3]) + 0.5 * float(r[4]) for r in record["rows"] if r[2] == "combined"]
    return sum(rates) / len(rates) if rates else 0.0
