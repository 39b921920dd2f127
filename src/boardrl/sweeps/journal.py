"""Optuna's heartbeat protocol for the journal file storage, which Optuna (up to 5.0) gives only to databases.

Why: a sweep worker killed with ``kill -9`` leaves its trial RUNNING in the journal for ever; it counts toward
``--trials``, so no later run makes it up.  ``RDBStorage`` solves this with heartbeats, and Optuna already drives
any storage that implements ``BaseHeartbeat`` the same way: a thread calls ``record_heartbeat`` every
``heartbeat_interval`` seconds while a trial runs, and ``study.optimize`` calls ``fail_stale_trials`` (which marks
the stale trials FAILED and calls the stale-trial callback) before each new trial.  So this class only says what a
beat is and which trials are stale, and the rest is Optuna's own machinery.

A beat is the worker's identity (host, pid, process start time: ``boardrl.tracking.owner``) and the time, kept in
the trial's system attributes (not user attributes: those go into ``trials.csv``).  A worker on this host is
stale as soon as its process is gone, with no grace period to wait; one on another host when its beats stop.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any, Callable

from optuna.storages._heartbeat import BaseHeartbeat
from optuna.storages.journal import JournalStorage
from optuna.trial import FrozenTrial, TrialState

from boardrl.tracking import owner

#: Trial system attribute of a beat: the worker's identity and the beat's time.
BEAT_ATTR = "boardrl:heartbeat"
StaleCallback = Callable[[Any, FrozenTrial], None]


class HeartbeatJournalStorage(JournalStorage, BaseHeartbeat):
    """A journal whose RUNNING trials say which process runs them, so a killed worker's trial is failed."""

    def __init__(self, backend: Any, heartbeat_interval: int, grace_period: int,
                 stale_callback: StaleCallback | None = None) -> None:
        super().__init__(backend)
        self.heartbeat_interval, self.grace_period = heartbeat_interval, grace_period
        self.stale_callback = stale_callback

    def record_heartbeat(self, trial_id: int) -> None:
        self.set_trial_system_attr(trial_id, BEAT_ATTR, {**owner.identity(), "at": time.time()})

    def _get_stale_trial_ids(self, study_id: int) -> list[int]:
        now = time.time()
        running = self.get_all_trials(study_id, deepcopy=False, states=(TrialState.RUNNING,))
        return [t._trial_id for t in running
                if stale_reason(t.system_attrs.get(BEAT_ATTR), t.datetime_start, now, self.grace_period)]

    def get_heartbeat_interval(self) -> int | None:
        return self.heartbeat_interval

    def get_heartbeat_stale_trial_callback(self) -> StaleCallback | None:
        return self.stale_callback


def stale_reason(beat: Any, started: datetime | None, now: float, grace_s: float) -> str | None:
    """Why a RUNNING trial with this last beat is abandoned, or None while its worker may still work on it.

    Same host: the worker's process is gone (or its pid now belongs to another process).  Another host: no beat
    for ``grace_s``.  No beat at all (a worker killed between creating the trial and its first beat, or one from
    before beats were recorded): the trial started more than ``grace_s`` ago, when a live worker would have beaten.
    """
    if not isinstance(beat, dict):
        age = now - started.timestamp() if started is not None else float("inf")
        return f"no heartbeat in {age:.0f} s" if age > grace_s else None
    alive = owner.alive(beat)
    if alive is False:
        return f"its worker ({owner.describe(beat)}) is gone"
    silent = now - float(beat.get("at", 0.0))
    if alive is None and silent > grace_s:
        return f"its worker ({owner.describe(beat)}) has not beaten for {silent:.0f} s"
    return None


def trial_stale_reason(trial: FrozenTrial, grace_s: float) -> str | None:
    """``stale_reason`` of a trial as it was when failed (for the message and the MLflow run's tag)."""
    return stale_reason(trial.system_attrs.get(BEAT_ATTR), trial.datetime_start, time.time(), grace_s)
