"""Running a study: created once, then worked on by one or many processes (on one machine or many).

- The study is created (or loaded) by the command before any worker starts, with what it searches in its user
  attributes; continuing it with another experiment, space, budget or seeds is refused with one line.
- ``--trials N`` is the number of *finished* trials (complete or pruned) the study should have: the same command
  continues a study after Ctrl-C or a crash up to N.  Workers never overshoot: a worker stops asking once the
  finished and running trials reach N, and a trial that started in the same instant as others runs only if
  fewer than N trials are finished or running with a lower trial number; otherwise it is closed at once as
  FAILED with the user attribute ``skipped`` (no MLflow run) and the worker stops.
- ``--jobs J`` starts J worker *processes* (not threads: training is CPU-bound Python and numba), each with its
  own seeded ``TPESampler(multivariate=True)`` (seed K + worker index) and a ``MedianPruner``.
- Ctrl-C: Optuna marks the running trial FAILED and the MLflow trial run ends KILLED; the study stays resumable.
- ``kill -9`` of a worker: its trial stops beating (``storage``), and the next worker that looks (each worker
  before each trial, and every new command at its start) marks it FAILED and closes its MLflow run KILLED.  A
  FAILED trial does not count toward ``--trials``, so it is made up by a new one.
"""

from __future__ import annotations

import functools
import json
import multiprocessing
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from boardrl.config import Params
from boardrl.sweeps.objective import Objective, SweepSettings
from boardrl.sweeps.storage import (GRACE_S, SweepError, describe, fail_stale_trials, is_journal, journal_os_error,
                                    journal_path, make_storage)
from boardrl.sweeps.tracking import SweepTracker

SETTINGS_ATTR = "settings"
SKIPPED_ATTR = "skipped"


class SkipTrial(Exception):
    """A trial beyond the requested count (several workers asked at once): closed without running."""


@dataclass
class SweepJob:
    """Everything a worker process needs (picklable: it crosses a process boundary)."""

    params: Params
    settings: SweepSettings
    study_name: str
    storage_url: str
    n_trials: int
    sampler_seed: int = 0
    timeout_s: float | None = None
    tracking_uri: str | None = None
    mlflow_experiment: str = ""
    artifact_location: str | None = None
    parent_run_id: str | None = None
    tags: dict[str, str] = field(default_factory=dict)
    processes: int = 1
    mlflow_db: Path | None = None
    prune: bool = True


# ---------------------------------------------------------------------------------------------- study
#: The objective's name in Optuna's dashboard and figures (without it: "Objective 0").
OBJECTIVE_NAME = "score (win + draw/2)"


def sampler(job: SweepJob, worker: int) -> Any:
    """Seeded multivariate TPE; ``group=True`` because the space is conditional (``learn.core.space``: a constant
    schedule draws no end or decay), so each branch is modelled from the trials that have it."""
    import optuna

    startup = min(10, max(2, job.n_trials // 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return optuna.samplers.TPESampler(seed=job.sampler_seed + worker, multivariate=True, group=True,
                                          n_startup_trials=startup)


def name_objective(study: Any) -> None:
    """Name the objective, so the dashboard and trials.csv say "score", not "Objective 0" (set once; cheap)."""
    import optuna

    if study.metric_names != [OBJECTIVE_NAME]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            study.set_metric_names([OBJECTIVE_NAME])


def pruner(job: SweepJob) -> Any:
    """Median rule: stop a trial whose running score is below the median of earlier trials at the same step.

    Not before 3 trials have finished nor before a tenth of the budget (the first curve points are noise).
    """
    import optuna

    if not job.prune:
        return optuna.pruners.NopPruner()
    total = job.settings.budget or job.params.budget(job.settings.experiment)[1]
    return optuna.pruners.MedianPruner(n_startup_trials=3, n_warmup_steps=max(1, total // 10))


def open_study(job: SweepJob, worker: int = 0, create: bool = False) -> Any:
    """The study (created with its settings when ``create``), checked to search what ``job`` searches."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.ERROR)  # our own one line per trial says what happened
    storage = make_storage(job.storage_url, job.mlflow_db, on_stale=functools.partial(on_stale_trial, job))
    try:
        if create:
            study = optuna.create_study(study_name=job.study_name, storage=storage, direction="maximize",
                                        sampler=sampler(job, worker), pruner=pruner(job), load_if_exists=True)
        else:
            study = optuna.load_study(study_name=job.study_name, storage=storage, sampler=sampler(job, worker),
                                      pruner=pruner(job))
    except SweepError:
        raise
    except OSError as exc:  # the journal's lock file in a folder this user may not write
        if is_journal(job.storage_url):
            raise SweepError(journal_os_error(journal_path(job.storage_url), exc)) from None
        raise SweepError(f"study {job.study_name!r} in {describe(job.storage_url)}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - storage errors surface here on first use
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        if is_journal(job.storage_url):
            raise SweepError(f"cannot read the study journal {journal_path(job.storage_url)}: {first}; it is not an "
                             "Optuna journal (or was damaged): move it away or pass --storage") from None
        raise SweepError(f"study {job.study_name!r} in {describe(job.storage_url)}: {first}") from None
    _check_settings(study, job)
    if create:
        name_objective(study)
    return study


def on_stale_trial(job: SweepJob, study: Any, trial: Any) -> None:
    """Optuna failed ``trial`` because its worker died: say so, and close its MLflow run KILLED.

    Called by Optuna's ``fail_stale_trials`` in whichever process noticed.  A tracking store that cannot be
    written is reported, not raised: the trial is already FAILED and this worker has trials to run.
    """
    from boardrl.sweeps.journal import trial_stale_reason

    why = trial_stale_reason(trial, GRACE_S) or "its worker stopped beating"
    print(f"sweep: {job.study_name} trial {trial.number}: failed ({why}); it will be made up",
          file=sys.stderr, flush=True)
    if not job.tracking_uri:
        return
    try:
        tracker = SweepTracker(job.tracking_uri, job.mlflow_experiment, job.artifact_location)
        tracker.close_trial_runs(job.study_name, trial.number, f"trial failed: {why}")
    except Exception as exc:  # noqa: BLE001 - see the docstring
        print(f"sweep: warning: trial {trial.number}'s MLflow run stays RUNNING: {str(exc).splitlines()[0]}",
              file=sys.stderr, flush=True)


def _check_settings(study: Any, job: SweepJob) -> None:
    wanted = job.settings.to_attrs()
    stored = study.user_attrs.get(SETTINGS_ATTR)
    if stored is None:
        study.set_user_attr(SETTINGS_ATTR, wanted)
    elif json.dumps(stored, sort_keys=True) != json.dumps(wanted, sort_keys=True):
        raise SweepError(f"study {job.study_name!r} already searches other settings (experiment, space, budget or "
                         "seeds); continue it with the same ones or name a new study with --study")


def counts(study: Any, below: int | None = None) -> tuple[int, int]:
    """(finished, running) trials; running counts only trial numbers below ``below`` when given."""
    from optuna.trial import TrialState

    finished = running = 0
    for t in study.get_trials(deepcopy=False):
        if t.state in (TrialState.COMPLETE, TrialState.PRUNED):
            finished += 1
        elif t.state == TrialState.RUNNING and (below is None or t.number < below):
            running += 1
    return finished, running


# ---------------------------------------------------------------------------------------------- a worker
class TrackedObjective:
    """The objective with the trial-count rule and the MLflow trial runs around it."""

    def __init__(self, job: SweepJob, study: Any, tracker: SweepTracker | None) -> None:
        self.job, self.study, self.tracker = job, study, tracker
        self.objective = Objective(job.params, job.settings, job.processes,
                                   on_report=tracker.report if tracker else None)
        self.skipped = False

    def __call__(self, trial: Any) -> float:
        import optuna

        finished, running = counts(self.study, below=trial.number)
        if finished + running >= self.job.n_trials:
            self.skipped = True
            trial.set_user_attr(SKIPPED_ATTR, "beyond --trials: closed without running")
            raise SkipTrial()
        values = self.objective.suggest(trial)
        if self.tracker is not None:
            self.tracker.start_trial(self.job.parent_run_id, trial, values,
                                     {**self.job.tags, "study": self.job.study_name})
        try:
            value = self.objective(trial)
        except optuna.TrialPruned:
            self._end(trial, "pruned")
            raise
        except KeyboardInterrupt:
            self._end(trial, "killed")
            raise
        except BaseException as exc:
            self._end(trial, "failed", detail=f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
            raise
        self._end(trial, "complete", value)
        return value

    def _end(self, trial: Any, state: str, value: float | None = None, detail: str = "") -> None:
        if self.tracker is not None:
            self.tracker.end_trial(trial, state, value)
        shown = ("" if value is None else f" score {value:.4f}") + (f" ({detail})" if detail else "")
        print(f"sweep: {self.job.study_name} trial {trial.number}: {state}{shown}", file=sys.stderr, flush=True)


class _Interrupt:
    """Ctrl-C seen.  Python raises KeyboardInterrupt wherever the signal lands, and one that lands in a garbage
    collector callback is printed and dropped; the flag makes the worker stop after the trial all the same."""

    seen = False

    @classmethod
    def handler(cls, signum: int, frame: Any) -> None:
        cls.seen = True
        raise KeyboardInterrupt

    @classmethod
    def install(cls) -> None:
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, cls.handler)


def work(job: SweepJob, worker: int = 0) -> None:
    """One worker: run trials until the study has ``n_trials`` finished (or the timeout passes)."""
    _Interrupt.install()
    study = open_study(job, worker)
    tracker = (SweepTracker(job.tracking_uri, job.mlflow_experiment, job.artifact_location)
               if job.tracking_uri else None)
    objective = TrackedObjective(job, study, tracker)
    deadline = None if job.timeout_s is None else time.monotonic() + job.timeout_s
    while not objective.skipped:
        if _Interrupt.seen:
            raise KeyboardInterrupt
        fail_stale_trials(study)  # a dead worker's trial must not count as running (optimize does it too)
        finished, running = counts(study)
        if finished + running >= job.n_trials or (deadline is not None and time.monotonic() >= deadline):
            return
        study.optimize(objective, n_trials=1, catch=(SkipTrial,), gc_after_trial=False)


def _work_in_process(job: SweepJob, worker: int) -> None:
    from boardrl.errors import BoardRLError

    try:
        work(job, worker)
    except BoardRLError as exc:
        print(f"error: worker {worker}: {exc}", flush=True)
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        raise SystemExit(130) from None


def run_workers(job: SweepJob, jobs: int) -> None:
    """``jobs`` worker processes (spawned: a fresh interpreter each), or this process when ``jobs`` is 1."""
    if jobs == 1:
        work(job, 0)
        return
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_work_in_process, args=(job, i), name=f"sweep-worker-{i}") for i in range(jobs)]
    for p in procs:
        p.start()
    try:
        for p in procs:
            p.join()
    except KeyboardInterrupt:
        for p in procs:
            p.join(timeout=30)
        raise
    bad = [p.exitcode for p in procs if p.exitcode != 0]
    if bad:
        raise SweepError(f"{len(bad)} of {jobs} sweep workers failed (exit status {bad[0]}); the study is kept")
