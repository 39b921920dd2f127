"""One sweep from start to outputs: what ``boardrl sweep`` and the pipeline's ``sweep@<id>`` stage both call.

Checks everything first (experiment, space, counts, storage) so a mistake is one line and nothing is written;
creates or continues the study, opens its MLflow parent run, runs the workers, then writes
``best_params.yaml``, ``trials.csv`` and the figures and logs them (with the best params and score) to the
parent run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boardrl.config import Params
from boardrl.sweeps.objective import SweepSettings
from boardrl.learn.core.space import SpaceError, experiment_space
from boardrl.sweeps.storage import SweepError, describe, fail_stale_trials
from boardrl.sweeps.study import SweepJob, counts, open_study, run_workers
from boardrl.sweeps.tracking import SweepTracker, retry

DEFAULT_JOURNAL_DIR = Path("sweeps")


@dataclass
class SweepResult:
    study_name: str
    storage: str
    experiment: str
    finished: int
    best_trial: int | None
    best_score: float | None
    best_params: dict[str, Any]
    parent_run_id: str | None
    files: list[Path]


def resolve_settings(params: Params, exp_id: str, space: dict[str, Any] | None = None, budget: int | None = None,
                     seeds: list[int] | None = None) -> SweepSettings:
    """The settings of a sweep over ``exp_id``'s learner params, checked against the learner's params model."""
    e = params.experiment(exp_id)
    try:
        narrowed = experiment_space(e.learner, e.params, space, budget)
    except SpaceError as exc:
        raise SweepError(f"{exp_id}: {exc}") from None
    if budget is not None and budget < 1:
        raise SweepError(f"the training budget per trial must be positive, got {budget}")
    return SweepSettings(experiment=exp_id, space=narrowed, budget=budget, seeds=list(seeds or [0]))


def run_sweep(params: Params, settings: SweepSettings, *, root: Path, study_name: str, storage_url: str,
              n_trials: int, jobs: int = 1, sampler_seed: int = 0, timeout_s: float | None = None,
              tracking_uri: str | None = None, out_dir: Path | None = None, processes: int = 1,
              create_only: bool = False, prune: bool = True) -> SweepResult:
    """Create or continue the study, run ``jobs`` workers until ``n_trials`` trials finished, write the outputs."""
    from boardrl.sweeps.outputs import best_overlay, write_outputs
    from boardrl.tracking import mlflow_runs
    from boardrl.tracking.provenance import dvc_exp_name, git_commit

    if n_trials < 1:
        raise SweepError(f"--trials must be at least 1, got {n_trials}")
    if jobs < 1:
        raise SweepError(f"--jobs must be at least 1, got {jobs}")
    root = Path(root)
    game = params.experiment(settings.experiment).game
    uri = tracking_uri or mlflow_runs.tracking_uri(root)
    tags = {"stage": "sweep", "experiment": settings.experiment, "game": game, "profile": params.profile,
            "storage": describe(storage_url), "git_commit": git_commit(root), "dvc_exp_name": dvc_exp_name() or "",
            mlflow_runs.WORKSPACE_TAG: mlflow_runs.workspace(root)}
    job = SweepJob(params=params, settings=settings, study_name=study_name, storage_url=storage_url,
                   n_trials=n_trials, sampler_seed=sampler_seed, timeout_s=timeout_s, tracking_uri=uri,
                   mlflow_experiment=game, artifact_location=_artifacts(root, game, tracking_uri), tags=tags,
                   processes=processes, mlflow_db=mlflow_runs.tracking_root(root) / mlflow_runs.DB_NAME,
                   prune=prune)
    study = open_study(job, create=True)  # once, before any worker: concurrent creation races on an RDB
    tracker = SweepTracker(uri, game, job.artifact_location)  # a damaged mlflow.db: one TrackingError line
    fail_stale_trials(study)  # trials of workers killed earlier: FAILED (their runs closed), made up by this run
    with mlflow_runs.tracking_errors(uri):
        job.parent_run_id = tracker.parent_run(study, {**tags, "study": study_name})
        tracker.close_abandoned(tags[mlflow_runs.WORKSPACE_TAG], settings.experiment, exclude=job.parent_run_id)
        _log_settings(tracker, job)
    if create_only:
        return SweepResult(study_name, describe(storage_url), settings.experiment, counts(study)[0], None, None, {},
                           job.parent_run_id, [])
    try:
        run_workers(job, jobs)
    finally:
        retry(tracker.client.set_terminated, job.parent_run_id, "FINISHED")
    study = open_study(job)
    finished = counts(study)[0]
    if finished == 0 or not _has_complete(study):
        return SweepResult(study_name, describe(storage_url), settings.experiment, finished, None, None, {},
                           job.parent_run_id, [])
    files = write_outputs(study, settings.experiment, describe(storage_url), out_dir) if out_dir else []
    _log_best(tracker, job.parent_run_id, study, files)
    best = study.best_trial
    return SweepResult(study_name, describe(storage_url), settings.experiment, finished, best.number,
                       float(best.value), best_overlay(study, settings.experiment), job.parent_run_id, files)


def _artifacts(root: Path, game: str, tracking_uri: str | None) -> str | None:
    """The project's artifact folder when logging to the project's own store (a server decides its own)."""
    if tracking_uri is not None and not tracking_uri.startswith("sqlite:"):
        return None
    from boardrl.tracking import mlflow_runs

    return mlflow_runs.artifact_location(root, game)


def _has_complete(study: Any) -> bool:
    from optuna.trial import TrialState

    return any(t.state == TrialState.COMPLETE for t in study.get_trials(deepcopy=False))


def _log_settings(tracker: SweepTracker, job: SweepJob) -> None:
    from mlflow.entities import Param

    s = job.settings
    flat = {"experiment": s.experiment, "trials": job.n_trials, "budget": s.budget, "seeds": s.seeds,
            **{f"space.{k}": d.model_dump_json(exclude_none=True) for k, d in sorted(s.space.items())}}
    run = retry(tracker.client.get_run, job.parent_run_id)
    new = [Param(k, str(v)) for k, v in flat.items() if k not in run.data.params]
    if new:
        retry(tracker.client.log_batch, job.parent_run_id, params=new)


def _log_best(tracker: SweepTracker, parent: str, study: Any, files: list[Path]) -> None:
    best = study.best_trial
    retry(tracker.client.log_metric, parent, "best_score", float(best.value))
    retry(tracker.client.log_metric, parent, "finished_trials", float(counts(study)[0]))
    for key, value in best.params.items():
        retry(tracker.client.set_tag, parent, f"best.{key}", str(value))
    retry(tracker.client.set_tag, parent, "best_trial", str(best.number))
    for f in files:
        retry(tracker.client.log_artifact, parent, str(f), "figures" if f.parent.name == "figures" else None)
