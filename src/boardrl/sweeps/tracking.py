"""MLflow for sweeps: one parent run per study, one nested run per trial, logged by the project itself.

Why by hand: optuna-integration's MLflowCallback is deprecated, logs only finished trials, and knows nothing of
intermediate scores or pruning.  Here each trial's run is created when the trial starts (tags: study, trial
number, experiment, git commit, storage; ``mlflow.parentRunId`` nests it under the study's run), gets its params
and its intermediate scores with ``step`` as they are reported, and ends with the final score and its state
(complete / pruned / failed).  The parent run id is kept in the study's user attributes, so workers on other
machines nest their trials under the same parent.

Several worker processes may share MLflow's default SQLite store; SQLite answers "database is locked" when two
write at once, so every write retries with backoff rather than losing a run.  Two workers that write the same tag
or param of the parent run at the same moment can both find it absent and both insert it; the second insert fails
on the store's unique key ("UNIQUE constraint failed" in SQLite, "violates unique constraint" in PostgreSQL).
These writes are idempotent, so that is retried too: the retry finds the row and updates it (seen in the
two-worker test on a busy machine).

Every run records the process that writes it (``owner_*`` tags, ``boardrl.tracking.owner``) and the workspace, as
stage runs do.  A killed worker's trial run is closed KILLED when Optuna fails its trial (``close_trial_runs``,
the storage's stale-trial callback); a study's parent run whose command was killed is taken over by the next
command on the study; other abandoned sweep runs of the workspace are closed when a sweep starts.
"""

from __future__ import annotations

import random
import time
from typing import Any, Callable, TypeVar

from boardrl.tracking import owner

T = TypeVar("T")
RETRIES = 12
#: Words of a store error that a retry can get past (module docstring): a lock, a lost connection, a racing insert.
TRANSIENT = ("locked", "busy", "connection", "timed out", "temporarily", "unique constraint")
PARENT_ATTR = "mlflow_parent_run_id"


def retry(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)``, retried with backoff while the tracking store is locked or unreachable briefly."""
    for attempt in range(RETRIES):
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - MlflowException, OperationalError, requests errors
            text = str(exc).lower()
            transient = any(w in text for w in TRANSIENT)
            if not transient or attempt == RETRIES - 1:
                raise
            time.sleep(min(5.0, 0.05 * 2 ** attempt) * (0.5 + random.random()))
    raise AssertionError("unreachable")


class SweepTracker:
    """Writes a study's parent run and its trials' nested runs to one MLflow tracking store."""

    def __init__(self, tracking_uri: str, mlflow_experiment: str, artifact_location: str | None = None) -> None:
        from mlflow import MlflowClient

        from boardrl.tracking.store import quiet_migrations, tracking_errors

        quiet_migrations()
        self.tracking_uri = tracking_uri
        with tracking_errors(tracking_uri):  # a damaged or read-only mlflow.db: one line
            self.client = MlflowClient(tracking_uri=tracking_uri)
            self.experiment_id = retry(self._experiment_id, mlflow_experiment, artifact_location)
        self.runs: dict[int, str] = {}

    def _experiment_id(self, name: str, artifact_location: str | None) -> str:
        from boardrl.tracking.store import experiment_id

        return experiment_id(self.client, name, artifact_location)

    # ------------------------------------------------------------------ the study's run
    def parent_run(self, study: Any, tags: dict[str, str]) -> str:
        """The study's parent run id (created once and remembered in the study; taken over when abandoned)."""
        known = study.user_attrs.get(PARENT_ATTR)
        if known:
            try:
                run = retry(self.client.get_run, known)
            except Exception:  # noqa: BLE001 - another tracking store: start a parent here
                run = None
            if run is not None:
                self._take_over(run, tags)
                return known
        run = retry(self.client.create_run, self.experiment_id,
                    tags={**tags, **owner.tags(), "mlflow.runName": f"sweep {study.study_name}"},
                    run_name=f"sweep {study.study_name}")
        study.set_user_attr(PARENT_ATTR, run.info.run_id)
        return run.info.run_id

    def _take_over(self, run: Any, tags: dict[str, str]) -> None:
        """Make this process the owner of a parent run that is ended or whose command is gone, and mark it
        RUNNING while this command works (a command still running the study keeps it)."""
        from boardrl.tracking.store import WORKSPACE_TAG

        previous = owner.from_tags(run.data.tags)
        if run.info.status == "RUNNING" and previous is not None and owner.alive(previous) is not False:
            return
        mine = {**owner.tags(), **({WORKSPACE_TAG: tags[WORKSPACE_TAG]} if WORKSPACE_TAG in tags else {})}
        for key, value in mine.items():
            retry(self.client.set_tag, run.info.run_id, key, value)
        if run.info.status != "RUNNING":
            retry(self.client.update_run, run.info.run_id, status="RUNNING")

    def close_abandoned(self, here: str, experiment: str, exclude: str | None) -> list[str]:
        """Close KILLED the sweep runs of ``experiment`` in workspace ``here`` whose process is gone."""
        from boardrl.tracking.store import close_runs, find_stale_runs

        stale = retry(find_stale_runs, self.client, self.experiment_id, here,
                      {"stage": "sweep", "experiment": experiment}, exclude)
        retry(close_runs, self.client, stale)
        return list(stale)

    def close_trial_runs(self, study_name: str, number: int, why: str) -> list[str]:
        """End KILLED the RUNNING runs of trial ``number`` of ``study_name`` (its worker died), saying why."""
        running = retry(self.client.search_runs, [self.experiment_id],
                        filter_string="attributes.status = 'RUNNING'", max_results=10_000)
        mine = [r.info.run_id for r in running
                if r.data.tags.get("study") == study_name and r.data.tags.get("trial") == str(number)]
        for run_id in mine:
            retry(self.client.set_tag, run_id, "state", "killed")
            retry(self.client.set_tag, run_id, "closed_because", why)
            retry(self.client.set_terminated, run_id, "KILLED")
        return mine

    # ------------------------------------------------------------------ one trial's run
    def start_trial(self, parent: str, trial: Any, params: dict[str, Any], tags: dict[str, str]) -> str:
        run = retry(self.client.create_run, self.experiment_id, run_name=f"trial {trial.number}",
                    tags={**tags, **owner.tags(), "mlflow.parentRunId": parent, "trial": str(trial.number)})
        from mlflow.entities import Param

        retry(self.client.log_batch, run.info.run_id, params=[Param(k, str(v)) for k, v in sorted(params.items())])
        self.runs[trial.number] = run.info.run_id
        return run.info.run_id

    def report(self, trial: Any, step: int, value: float) -> None:
        run_id = self.runs.get(trial.number)
        if run_id is not None:
            retry(self.client.log_metric, run_id, "intermediate_score", float(value), step=int(step))

    def end_trial(self, trial: Any, state: str, value: float | None = None) -> None:
        """state: complete, pruned, failed or killed (MLflow status FINISHED, FINISHED, FAILED, KILLED)."""
        run_id = self.runs.pop(trial.number, None)
        if run_id is None:
            return
        if value is not None:
            retry(self.client.log_metric, run_id, "score", float(value))
        retry(self.client.set_tag, run_id, "state", state)
        status = {"complete": "FINISHED", "pruned": "FINISHED", "failed": "FAILED"}.get(state, "KILLED")
        retry(self.client.set_terminated, run_id, status)
