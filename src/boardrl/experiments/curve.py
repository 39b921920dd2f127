"""The learning curve: stage curve@<id> plays it against the train stage's snapshots; a sweep measures it in training.

At each curve point the frozen agent plays every benchmark opponent (seats alternate, seeded per training seed,
point and opponent: ``curves.sub_seed(seed, 1, step, i)``), so the numbers do not depend on where or when they
are measured: in training (``CurveEvaluator`` as a learner's ``on_eval``, what a sweep's pruner listens to) or
afterwards from the snapshot saved at that point (``run_curve``, the pipeline's stage curve@<id>).

Why a stage of its own: the curve's opponents and games per point cannot change a model, so changing them must
not retrain it.  The train stage saves a snapshot at each point (experiments/snapshots.py) and measures nothing;
curve@<id> depends on those snapshots and on ``config.curve_slice`` (through build/inputs/<id>.curve.json).  It
writes results/curves/<id>/seed-<k>.tsv for every seed at once (a new folder switched in: all seeds or none) and
logs one MLflow run per execution with a nested run per seed: the curve metrics with ``step`` = training
progress and the curve figure.  Not into the seed's train run: a curve measured again with other opponents or
games would pile a second set of values onto the same steps of the same metric, which MLflow cannot tell apart;
the two runs name each other instead (tags ``train_run_id`` and ``curve_run_id``).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from boardrl.agents import make_agent
from boardrl.agents.base import Agent
from boardrl.config import ExperimentSpec, curve_slice, runtime_processes
from boardrl.errors import BoardRLError
from boardrl.evaluate.stats import SEATS
from boardrl.paths import ExperimentPaths
from boardrl.experiments.publish import Publication, publish_all, recover, remove_stale_beside
from boardrl.experiments.snapshots import read_index
from boardrl.games import make_game
from boardrl.games.base import Game
from boardrl.learn import load_agent, pin_stage_threads
from boardrl.tracking import curve as curves
from boardrl.tracking.figures import curve_figure
from boardrl.tracking.mlflow_runs import (active_run, log_artifact, log_figure, log_metrics, metric_key, set_tag,
                                          stage_run)
from boardrl.tracking.provenance import params_hash

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


def curve_opponents(spec: ExperimentSpec, game: Game) -> list[CurveOpponent]:
    """The experiment's curve opponents as agents, each with its number of games per point."""
    return [CurveOpponent(o.key, make_agent(game, o.agent), o.games or spec.train.eval_games)
            for o in spec.curve_opponents]


def checked_index(directory: Path, game: Game, learner: str, seed: int, needed: bool) -> dict[str, Any]:
    """The snapshot index in ``directory`` after checking it belongs to this seed and, if ``needed``, lists
    snapshots; a one-line ``BoardRLError`` otherwise."""
    index = read_index(directory)
    if int(index["seed"]) != int(seed) or index["game"] != game.game_id or index["learner"] != learner:
        raise BoardRLError(f"{directory}: snapshots of {index['learner']} on {index['game']} seed {index['seed']}, "
                           f"not {learner} on {game.game_id} seed {seed}")
    if needed and not index["snapshots"]:
        raise BoardRLError(f"{directory}: no snapshots (its training ran without curve opponents); rerun the train "
                           f"stage")
    return index


def snapshot_curve(game: Game, learner: str, opponents: list[CurveOpponent], seed: int, directory: Path,
                   processes: int = 1, verbose: bool = True) -> list[list[Any]]:
    """The curve rows of one training seed, played against its snapshots in ``directory`` (snapshots/<id>/seed-<k>).

    Logs each point to the active MLflow run (if any) with ``step`` = the count it was measured at.
    """
    index = checked_index(directory, game, learner, seed, bool(opponents))
    if not opponents:
        return []  # a curve without opponents has no rows (the experiment is judged otherwise, e.g. by a trace)
    evaluator = CurveEvaluator(game, opponents, seed, processes, log_to_mlflow=active_run() is not None,
                               verbose=verbose)
    evaluations = {int(c): evaluator(int(c), load_agent(game, learner, Path(directory) / str(c)))
                   for c in index["snapshots"]}
    return curve_rows(evaluations)


def run_curve(spec: ExperimentSpec, root: Path, *, verbose: bool = True) -> dict[int, list[list[Any]]]:
    """Stage curve@<id> under project ``root``: every seed's curve from its snapshots, written all at once.

    Returns {seed: rows}.  A seed that fails leaves the previous curves of every seed in place.
    """
    exp_id = spec.id
    paths = ExperimentPaths(Path(root), exp_id)
    game = make_game(spec.game)
    opponents = curve_opponents(spec, game)
    sl = curve_slice(spec)
    phash = params_hash(sl)
    labels = spec.labels()
    for seed in spec.seeds:  # every seed's snapshots before any work: a missing one is one line, nothing written
        checked_index(paths.seed_snapshots(seed), game, spec.learner, seed, bool(opponents))
    if recover(paths.stage_journal("curve")):
        print(f"curve: {exp_id}: completed the publication of its curves that an interrupted run left halfway",
              file=sys.stderr, flush=True)
    for target in (paths.curves, paths.stage_journal("curve")):
        remove_stale_beside(target)
    out: dict[int, list[list[Any]]] = {}
    pin_stage_threads(spec.learner, spec.learner_params)

    def play(pub: Publication) -> None:
        folder = pub.stage_directory(paths.curves)
        for seed in spec.seeds:
            with stage_run(root, stage="curve", mlflow_experiment=spec.game, run_name=f"{exp_id} seed {seed} (curve)",
                           params=sl, params_hash=phash, nested=True, seed=seed, **labels) as active:
                out[seed] = snapshot_curve(game, spec.learner, opponents, seed, paths.seed_snapshots(seed),
                                           runtime_processes(), verbose)
                tsv = curves.write_tsv(folder / f"seed-{seed}.tsv", out[seed])
                log_artifact(tsv)
                log_figure(curve_figure(out[seed], f"{exp_id} seed {seed}: learning curve"), "curve.png")
                _link_train_run(paths, seed, active.info.run_id)

    with stage_run(root, stage="curve", mlflow_experiment=spec.game, run_name=f"{exp_id} (curve)", params=sl,
                   params_hash=phash, seeds=",".join(map(str, spec.seeds)), **labels):
        publish_all(paths.stage_journal("curve"), play, f"curve: {exp_id}")
    return out


def _link_train_run(paths: ExperimentPaths, seed: int, curve_run_id: str) -> None:
    """Tag the curve run with the seed's train run (from its summary.json) and the train run with this curve run."""
    try:
        train_run_id = json.loads(paths.summary(seed).read_text()).get("mlflow_run_id")
    except (OSError, ValueError, AttributeError):
        return  # no summary (a library call without the train stage's outputs): nothing to link
    if not isinstance(train_run_id, str) or not train_run_id:
        return
    set_tag("train_run_id", train_run_id)
    # missing_ok: the train run is not in this tracking store (outputs copied from elsewhere): the curve stands alone
    set_tag("curve_run_id", curve_run_id, run_id=train_run_id, missing_ok=True)
