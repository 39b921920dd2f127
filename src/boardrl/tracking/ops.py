"""The MLflow writes of a stage, as plain functions of explicit run ids: what the tracking service executes.

Why explicit ids instead of MLflow's fluent ``mlflow.start_run`` / ``mlflow.log_metric``: these functions run in
``tracking/service.py``'s long-lived process on behalf of many stage processes at once, where a per-thread
"active run" would mean nothing.  The stage keeps its own stack of open runs (``mlflow_runs.stage_run``) and
names the run in every call.  With ``BOARDRL_TRACKING_SERVICE=off`` the same functions run in the stage itself.

Every function takes the store's ``uri`` first and returns plain data (strings, dicts), so a call and its answer
cross a process boundary unchanged.  Errors leave as ``TrackingError`` lines (``tracking_errors``).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any, Mapping, Sequence

from boardrl.tracking.store import (WORKSPACE_TAG, close_runs, experiment_id, find_stale_runs, quiet_migrations,
                                    tracking_errors)

_MAX_PARAMS_PER_BATCH = 100   # MLflow's per-request limits
_MAX_METRICS_PER_BATCH = 1000
_clients: dict[str, Any] = {}


def client(uri: str) -> Any:
    """One ``MlflowClient`` per store, kept for the life of the process (its SQL engine is the costly part)."""
    if uri not in _clients:
        quiet_migrations()
        from mlflow import MlflowClient

        _clients[uri] = MlflowClient(tracking_uri=uri)
    return _clients[uri]


#: The agent model's code file that ``log_agent_model`` logs: the service's own copy once ``preload`` made one.
_model_code: Path | None = None


def preload(code_dir: Path | None = None) -> None:
    """Import what any call needs (MLflow, its SQL store, the agent model's pyfunc), without opening the database
    yet, and keep a copy of the agent model's code in ``code_dir``.

    Why all of it at start-up: the service outlives the stage that started it and imports boardrl from that
    stage's copy of the project, which DVC's queue deletes when its experiment ends.  A module or file of that copy
    first needed later is then gone: MLflow's Model.log found no model code file, and every later variation of a
    study failed in its train stage."""
    global _model_code
    quiet_migrations()
    import mlflow  # noqa: F401
    from mlflow.models import Model  # noqa: F401
    from mlflow.store.tracking import sqlalchemy_store  # noqa: F401

    from boardrl.atomic_io import atomic_write_bytes
    from boardrl.tracking.pyfunc import CODE

    if code_dir is not None:
        Path(code_dir).mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(Path(code_dir) / CODE.name, CODE.read_bytes())
        _model_code = Path(code_dir) / CODE.name


def forget_clients() -> None:
    """Drop the cached clients and MLflow's cached SQL stores (the database file was replaced under us)."""
    _clients.clear()
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore
    from mlflow.tracking._tracking_service.registry import TrackingStoreRegistry

    TrackingStoreRegistry._get_store_with_resolved_uri.cache_clear()  # MLflow's caches: stores by URI,
    with SqlAlchemyStore._engine_map_lock:                            # and SQL engines by URI
        for engine in SqlAlchemyStore._engine_map.values():
            engine.dispose()
        SqlAlchemyStore._engine_map.clear()


def open_run(uri: str, *, experiment: str, artifacts: str, run_name: str, tags: Mapping[str, str],
             params: Mapping[str, str], parent_run_id: str | None, stale_labels: Mapping[str, str]) -> dict[str, str]:
    """Create a RUNNING run in experiment ``experiment`` (made when missing) with its tags and params.

    Before returning, the runs of the same labels that a killed process left RUNNING in this workspace are
    closed KILLED and linked to the new run (``store.stale_reason`` decides which are abandoned).
    """
    from mlflow.entities import Param

    with tracking_errors(uri):
        c = client(uri)
        exp_id = experiment_id(c, experiment, artifacts)
        all_tags = dict(tags)
        if parent_run_id:
            all_tags["mlflow.parentRunId"] = parent_run_id
        run_id = c.create_run(exp_id, tags=all_tags, run_name=run_name).info.run_id
        _close_stale(c, exp_id, run_id, tags.get(WORKSPACE_TAG, ""), stale_labels)
        items = [Param(k, v) for k, v in params.items()]
        for i in range(0, len(items), _MAX_PARAMS_PER_BATCH):
            c.log_batch(run_id, params=items[i:i + _MAX_PARAMS_PER_BATCH])
        return {"run_id": run_id, "experiment_id": exp_id}


def close_stale(uri: str, *, experiment_id: str, run_id: str, labels: Mapping[str, str]) -> list[str]:
    """Close the abandoned RUNNING runs carrying ``labels`` (see ``open_run``); returns their ids."""
    with tracking_errors(uri):
        c = client(uri)
        here = c.get_run(run_id).data.tags.get(WORKSPACE_TAG, "")
        return _close_stale(c, experiment_id, run_id, here, labels)


def _close_stale(c: Any, exp_id: str, run_id: str, here: str, labels: Mapping[str, str]) -> list[str]:
    stale = find_stale_runs(c, exp_id, here, labels, exclude=run_id)
    close_runs(c, stale, superseded_by=run_id)
    if stale:
        c.set_tag(run_id, "resumes_runs", ",".join(stale))
    return list(stale)


def end_run(uri: str, *, run_id: str, status: str) -> None:
    """End the run with ``status`` (FINISHED, FAILED or KILLED)."""
    with tracking_errors(uri):
        client(uri).set_terminated(run_id, status)


def log_metrics(uri: str, *, run_id: str, metrics: Sequence[tuple[str, float, int, int]]) -> None:
    """Log ``(key, value, timestamp ms, step)`` values, in MLflow's batch size."""
    from mlflow.entities import Metric

    with tracking_errors(uri):
        items = [Metric(k, float(v), int(t), int(s)) for k, v, t, s in metrics]
        for i in range(0, len(items), _MAX_METRICS_PER_BATCH):
            client(uri).log_batch(run_id, metrics=items[i:i + _MAX_METRICS_PER_BATCH])


def set_tags(uri: str, *, run_id: str, tags: Mapping[str, str], missing_ok: bool = False) -> bool:
    """Set tags on a run; with ``missing_ok``, a run this store does not hold is False instead of an error."""
    from mlflow.exceptions import MlflowException

    with tracking_errors(uri):
        c = client(uri)
        try:
            for key, value in tags.items():
                c.set_tag(run_id, key, value)
        except MlflowException:
            if missing_ok:
                return False
            raise
        return True


def log_artifact(uri: str, *, run_id: str, path: str, artifact_path: str | None = None) -> None:
    """Copy the local file ``path`` into the run's artifacts."""
    with tracking_errors(uri):
        client(uri).log_artifact(run_id, path, artifact_path)


def log_agent_model(uri: str, *, run_id: str, game_id: str, model_dir: str, name: str = "model") -> str:
    """Log the saved agent in ``model_dir`` as a logged model of run ``run_id`` (see ``tracking/pyfunc.py``)."""
    import logging

    import mlflow
    from mlflow.models import Model

    from boardrl.tracking.pyfunc import CODE

    logging.getLogger("mlflow.pyfunc").setLevel(logging.ERROR)
    with tracking_errors(uri), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # Model.log files the logged model through MLflow's fluent state: point it at this store and at the run's
        # experiment (else the model lands in the hidden Default experiment).  Calls are serialized by the caller.
        mlflow.set_tracking_uri(uri)
        mlflow.set_experiment(experiment_id=client(uri).get_run(run_id).info.experiment_id)
        info = Model.log(artifact_path=None, name=name, flavor=mlflow.pyfunc, python_model=str(_model_code or CODE),
                         artifacts={"model_dir": str(model_dir)}, model_config={"game": game_id},
                         pip_requirements=["boardrl"], run_id=run_id, flavor_name="python_function")
        return str(info.model_uri)


def ping(uri: str) -> dict[str, Any]:
    """The service's process id and the store it serves (a client's check that it reached the right one)."""
    return {"pid": os.getpid(), "uri": uri}


def database_file(uri: str) -> Path | None:
    """The sqlite file behind ``uri`` (None for another backend)."""
    return Path(uri.split(":///", 1)[1]) if uri.startswith("sqlite:///") else None


#: The operations a client may call, by name (the service refuses any other).
OPERATIONS = {f.__name__: f for f in (open_run, close_stale, end_run, log_metrics, set_tags, log_artifact,
                                      log_agent_model, ping)}
