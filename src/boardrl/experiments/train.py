"""Train every seed of one experiment: the train stage's work, callable from a library or a sweep as well.

For each training seed: build the learner, train with checkpoints under ``models/<id>/seed-<k>/checkpoint`` (a
killed run resumes there), saving a snapshot of the frozen agent at each learning-curve point
(experiments/snapshots.py; stage curve@<id> plays the curve against them, so the curve's opponents and games per
point retrain nothing), then publish the model, the snapshots (``snapshots/<id>/seed-<k>/``), the provenance and
the learner's per-run records (``Learner.records``: ``<name>.tsv`` beside summary.json) all or nothing
(experiments/publish.py), and only then remove the checkpoint: a failure to write any of them leaves the previous
outputs whole and the training resumable.  One nested MLflow run per seed (params, training metrics with
``step``, the model) under the stage's parent run.  Seed directories of seeds no longer listed are removed, so
the outputs always match the params.

``train_seed`` is the training itself.  By default it measures the learning curve during training (what a
sweep's pruner listens to); the train stage asks it for snapshots instead.
"""

from __future__ import annotations

import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boardrl.atomic_io import atomic_write_json, atomic_write_tsv, remove_stale_temporaries
from boardrl.config import ExperimentSpec, eval_points, runtime_processes, train_slice
from boardrl.errors import BoardRLError
from boardrl.experiments.guard import TrainerLock
from boardrl.paths import ExperimentPaths, seed_dir_name, seeds_in
from boardrl.experiments.publish import Publication, publish_all, recover
from boardrl.experiments.snapshots import SnapshotSaver, snapshot_index, stage_snapshots
from boardrl.games import make_game
from boardrl.learn import make_learner
from boardrl.learn.core.base import MANIFEST
from boardrl.tracking.mlflow_runs import (MetricsBuffer, close_stale_runs, log_agent_model, log_artifact,
                                          log_metric, set_tag, stage_run)
from boardrl.tracking.provenance import collect, params_hash


@dataclass
class TrainedSeed:
    """What training one seed gave: the agent, its evaluation records, and the provenance written."""

    seed: int
    agent: Any
    evaluations: dict[int, Any]
    summary: dict[str, Any]


def train_seed(spec: ExperimentSpec, seed: int, checkpoint_dir: Path, *, processes: int = 1,
               log_to_mlflow: bool = False, progress: bool = False, on_metrics=None, on_eval_extra=None,
               verbose: bool | None = None, snapshots: Path | None = None, keep_checkpoint: bool = False):
    """Train one seed of the experiment; returns (agent, learner).  No files but the checkpoint (and snapshots).

    Without ``snapshots`` the learning curve is measured during training: ``learner.evaluations`` maps each
    measured count to its record (curve rows and metrics), logged to the active MLflow run with
    ``log_to_mlflow``, and ``on_eval_extra(step, record)`` is called after each point (a sweep's pruner listens
    there).  With ``snapshots`` (a folder) nothing is played: the frozen agent of each point is saved as
    ``snapshots/<count>/`` (none when the experiment has no curve opponents), as the train stage does.
    ``keep_checkpoint``: the caller clears ``learner.checkpoint`` once it has published the results.
    """
    game = make_game(spec.game)
    learner = make_learner(spec.learner)
    lp = spec.learner_params
    points = eval_points(learner.budget(lp), spec.train.curve)
    if snapshots is not None:
        on_eval, evaluator = (SnapshotSaver(snapshots) if spec.curve_opponents else None), None
    else:
        evaluator = _curve_evaluator(spec, game, seed, processes, log_to_mlflow,
                                     (not progress) if verbose is None else verbose)

        def on_eval(step: int, agent) -> dict[str, Any]:
            record = evaluator(step, agent)
            if on_eval_extra is not None:
                on_eval_extra(step, record)
            return record

    agent = learner.train(game, lp, seed=seed, checkpoint_dir=checkpoint_dir, eval_points=points,
                          on_eval=on_eval, on_metrics=on_metrics, progress=progress, keep_checkpoint=keep_checkpoint)
    missing = sorted(set(points) - set(learner.curve_points))
    if missing:
        raise BoardRLError(f"learning curve incomplete: no evaluation at {missing} {learner.unit}")
    if evaluator is not None and log_to_mlflow:
        evaluator.log_missing(learner.evaluations)
    return agent, learner


def _curve_evaluator(spec: ExperimentSpec, game, seed: int, processes: int, log_to_mlflow: bool, verbose: bool):
    """The in-training curve evaluator.  Imported here: the train stage never measures in training, so its code
    fingerprint leaves the curve code out (experiments/inputs.py, ``NOT_FOLLOWED``)."""
    from boardrl.experiments.curve import CurveEvaluator, curve_opponents

    return CurveEvaluator(game, curve_opponents(spec, game), seed, processes, log_to_mlflow=log_to_mlflow,
                          verbose=verbose)


def run_train(spec: ExperimentSpec, root: Path, *, progress: bool = True) -> list[TrainedSeed]:
    """The train stage of an experiment under project ``root``: every seed, outputs, MLflow runs."""
    exp_id, seeds = spec.id, list(spec.seeds)
    paths = ExperimentPaths(Path(root), exp_id)
    sl = train_slice(spec)
    phash = params_hash(sl)
    out = []
    with TrainerLock(paths.models, f"experiment {exp_id}"):
        _recover(paths, exp_id, seeds)
        _remove_other_seeds(paths, seeds)
        with stage_run(root, stage="train", mlflow_experiment=spec.game, run_name=f"{exp_id} (train)", params=sl,
                       params_hash=phash, **spec.labels(), seeds=",".join(map(str, seeds))) as active:
            close_stale_runs(active.info.experiment_id, active.info.run_id, stage="train", experiment=exp_id,
                             seeds=",".join(map(str, seeds)))
            for seed in seeds:
                out.append(_train_one(spec, seed, paths, sl, phash, progress))
            log_metric("seconds", sum(t.summary["seconds"] for t in out))
    return out


def _recover(paths: ExperimentPaths, exp_id: str, seeds: list[int]) -> None:
    """Before anything else: finish the output switches a killed run left halfway, then clear the temporaries."""
    for seed in seeds:
        if recover(paths.publish_journal(seed)):
            print(f"train: {exp_id} seed {seed}: completed the publication of its outputs that an interrupted run "
                  f"left halfway", file=sys.stderr, flush=True)
    for d in (paths.models, paths.snapshots, paths.train_results):
        remove_stale_temporaries(d)


def _train_one(spec: ExperimentSpec, seed: int, paths: ExperimentPaths, sl: dict, phash: str,
               progress: bool) -> TrainedSeed:
    exp_id = spec.id
    t0 = time.perf_counter()
    for d in (paths.model(seed).parent, paths.summary(seed).parent, paths.snapshot_staging(seed)):
        remove_stale_temporaries(d)
    with stage_run(paths.root, stage="train", mlflow_experiment=spec.game, run_name=f"{exp_id} seed {seed} (train)",
                   params=sl, params_hash=phash, nested=True, **spec.labels(), seed=seed) as active:
        set_tag("resumed_from", "0")  # replaced below when training resumed from a checkpoint
        close_stale_runs(active.info.experiment_id, active.info.run_id, stage="train", experiment=exp_id,
                         seed=str(seed))
        metrics = MetricsBuffer()
        agent, learner = train_seed(spec, seed, paths.checkpoint(seed), processes=runtime_processes(),
                                    log_to_mlflow=True, progress=progress, on_metrics=metrics,
                                    snapshots=paths.snapshot_staging(seed), keep_checkpoint=True)
        metrics.flush()
        set_tag("resumed_from", str(learner.resumed_from))
        index = snapshot_index(experiment=exp_id, game=spec.game, learner=spec.learner, seed=seed, unit=spec.unit,
                               budget=spec.budget, curve_points=learner.curve_points, saved=bool(spec.curve_opponents))
        summary = collect(paths.root, **spec.labels(), seed=seed, unit=learner.unit, budget=spec.budget,
                          params_slice=sl, seconds=time.perf_counter() - t0,
                          mlflow_run_id=active.info.run_id).to_dict()
        # `seconds` is this process's time; a resumed run also says where it resumed and the training time of all
        # its processes, so a resumed run's time is never read as a whole run's.
        summary.update(resumed_from=int(learner.resumed_from or 0),
                       training_seconds=round(float(getattr(agent, "stats", {}).get("seconds", 0.0)), 3))
        records = learner.records()
        publish_all(paths.publish_journal(seed),
                    lambda pub: _stage_seed(pub, paths, seed, agent, index, summary, records),
                    f"train: {exp_id} seed {seed}", _checkpoint_left(paths, seed))
        learner.checkpoint.clear()  # only now: the outputs the training produced are in place
        shutil.rmtree(paths.snapshot_staging(seed), ignore_errors=True)
        log_agent_model(spec.game, str(paths.model(seed)))  # an MLflow logged model (pyfunc: state rows -> moves)
        for path in [paths.summary(seed), *sorted(paths.summary(seed).parent.glob("*.tsv"))]:
            log_artifact(path)
        log_metric("seconds", summary["seconds"])
    print(f"train: {exp_id} seed {seed}: {summary['budget']} {summary['unit']} in {summary['seconds']:.1f} s",
          file=sys.stderr, flush=True)
    return TrainedSeed(seed, agent, learner.evaluations, summary)


def _stage_seed(pub: Publication, paths: ExperimentPaths, seed: int, agent: Any, index: dict[str, Any],
                summary: dict[str, Any], records: dict[str, list[dict[str, Any]]]) -> None:
    """Write every output of one seed beside its target: snapshots, model, summary and records."""
    stage_snapshots(paths.snapshot_staging(seed), pub.stage_directory(paths.seed_snapshots(seed)), index)
    agent.save(pub.stage_directory(paths.model(seed)))
    results = pub.stage_directory(paths.summary(seed).parent)
    atomic_write_json(results / paths.summary(seed).name, summary)
    write_records(results, records)


def _checkpoint_left(paths: ExperimentPaths, seed: int) -> str:
    """What a failed publication leaves to resume from, said truly."""
    if (paths.checkpoint(seed) / MANIFEST).is_file():
        return f"the checkpoint is kept ({paths.checkpoint(seed)}): a rerun resumes from it"
    return "there is no checkpoint (the run was shorter than checkpoint_every): a rerun trains from the start"


RECORD_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


def write_records(directory: Path, records: dict[str, list[dict[str, Any]]]) -> list[Path]:
    """Write each of a learner's per-run tables as ``directory/<name>.tsv`` (atomically); returns the paths.

    Columns are the keys of the first row, in order; every row must have the same keys.  An empty table writes
    no file.  Other ``*.tsv`` files in ``directory`` are tables of an earlier run with other params (a trace
    turned off) and are removed, so the outputs always match the params.
    """
    written = []
    for name, rows in records.items():
        if not RECORD_NAME.match(name):
            raise BoardRLError(f"learner record name {name!r}: use letters, digits, '_' and '-' only")
        if not rows:
            continue
        header = list(rows[0])
        bad = next((i for i, r in enumerate(rows) if list(r) != header), None)
        if bad is not None:
            raise BoardRLError(f"learner record {name!r}: row {bad} has columns {list(rows[bad])}, "
                               f"expected {header}")
        written.append(atomic_write_tsv(directory / f"{name}.tsv", header, [list(r.values()) for r in rows]))
    for old in directory.glob("*.tsv") if directory.is_dir() else []:
        if old not in written:
            old.unlink()
    return written


def _remove_other_seeds(paths: ExperimentPaths, seeds: list[int]) -> None:
    """Outputs of seeds no longer in the experiment go, so results always match the params (the curve stage
    writes the curves of the listed seeds only)."""
    for base in (paths.models, paths.snapshots, paths.train_results):
        for s in seeds_in(base):
            if s not in seeds:
                shutil.rmtree(base / seed_dir_name(s))
