"""The project's MLflow store: where it is, its experiments, its abandoned runs, and its errors as one line.

Why a module of its own: both sides of the tracking service need these, the stage-facing API
(``mlflow_runs``) and the writes it sends (``ops``, run by ``service``); here they sit below both, so neither
imports the other.  See ``mlflow_runs`` for the choices (sqlite at the project root, temp DVC copies, owners).
"""

from __future__ import annotations

import logging
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Mapping

from boardrl.errors import BoardRLError
from boardrl.tracking import owner

if TYPE_CHECKING:  # pragma: no cover
    import mlflow

DB_NAME = "mlflow.db"
ARTIFACTS_DIR = "mlartifacts"
_DVC_TEMP_EXPS = (".dvc", "tmp", "exps")
WORKSPACE_TAG = "workspace_root"
#: A RUNNING run without a recorded owner (made before owners were recorded) is closed only when older than this:
#: nothing can tell whether its process lives, and a long training run must never be marked KILLED.
LEGACY_AGE_S = 3 * 24 * 3600


class TrackingError(BoardRLError):
    """The MLflow tracking store cannot be read or written (a damaged or read-only ``mlflow.db``)."""


#: A project whose ``mlflow.db`` takes the runs of outputs written elsewhere (``boardrl train --out``).
TRACKING_ROOT_ENV = "BOARDRL_TRACKING_ROOT"


def tracking_root(project_root: str | os.PathLike) -> Path:
    """The directory that holds ``mlflow.db``: the project, even when DVC runs a stage in a temp copy of it (or
    ``$BOARDRL_TRACKING_ROOT`` when set: a try-out's outputs live apart, its runs in the project's store)."""
    if os.environ.get(TRACKING_ROOT_ENV):
        return Path(os.environ[TRACKING_ROOT_ENV]).resolve()
    root = Path(project_root).resolve()
    parts = root.parts
    n = len(_DVC_TEMP_EXPS)
    for i in range(len(parts) - n):
        if parts[i : i + n] == _DVC_TEMP_EXPS:
            return Path(*parts[:i])
    return root


def tracking_uri(project_root: str | os.PathLike) -> str:
    """``sqlite:///`` + the absolute path of the project's ``mlflow.db`` (so four slashes on POSIX)."""
    return f"sqlite:///{(tracking_root(project_root) / DB_NAME).as_posix()}"


def artifact_location(project_root: str | os.PathLike, experiment: str) -> str:
    """``file://`` URI of the artifact folder of one experiment, under ``<project>/mlartifacts``."""
    return (tracking_root(project_root) / ARTIFACTS_DIR / experiment).as_uri()


def quiet_migrations() -> None:
    """Silence the schema-migration chatter MLflow logs on every new database."""
    for name in ("alembic", "mlflow.store.db.utils"):
        logging.getLogger(name).setLevel(logging.WARNING)


def configure(project_root: str | os.PathLike) -> "mlflow":
    """Point MLflow at the project's database (this process and its children only); returns the module."""
    quiet_migrations()
    import mlflow

    uri = tracking_uri(project_root)
    os.environ["MLFLOW_TRACKING_URI"] = uri
    mlflow.set_tracking_uri(uri)
    return mlflow


#: Declares our experiments model training (MLflow's documented tag; some 3.x UIs ask for it otherwise).  MLflow
#: 3.17's UI does not read it to choose its view (the browser's workflow switch decides): ``make ui`` sets that
#: (``tracking/mlflow_ui.py``).
EXPERIMENT_KIND = {"mlflow.experimentKind": "custom_model_development"}
DEFAULT_EXPERIMENT_ID = "0"


def ensure_experiment(project_root: str | os.PathLike, name: str) -> str:
    """Id of experiment ``name``, created with its artifact folder under ``mlartifacts/`` when missing."""
    mlflow = configure(project_root)
    return experiment_id(mlflow.MlflowClient(), name, artifact_location(project_root, name))


def experiment_id(client: Any, name: str, artifacts: str | None) -> str:
    """Id of experiment ``name`` in ``client``'s store: created (model-training kind) or restored when needed.

    The SQL store's empty "Default" experiment is soft-deleted so the UI lists only ours.
    """
    from mlflow.exceptions import MlflowException

    exp = client.get_experiment_by_name(name)
    if exp is None:
        try:
            exp_id = client.create_experiment(name, artifact_location=artifacts, tags=EXPERIMENT_KIND)
        except MlflowException:  # created meanwhile by a concurrent stage or worker
            exp = client.get_experiment_by_name(name)
            if exp is None:
                raise
            exp_id = exp.experiment_id
    else:
        exp_id = exp.experiment_id
        if exp.lifecycle_stage == "deleted":
            client.restore_experiment(exp_id)
        if exp.tags.get("mlflow.experimentKind") != EXPERIMENT_KIND["mlflow.experimentKind"]:
            client.set_experiment_tag(exp_id, "mlflow.experimentKind", EXPERIMENT_KIND["mlflow.experimentKind"])
    _hide_empty_default(client)
    return exp_id


def _hide_empty_default(client: Any) -> None:
    try:
        default = client.get_experiment(DEFAULT_EXPERIMENT_ID)
        if default.lifecycle_stage == "active" and not client.search_runs([DEFAULT_EXPERIMENT_ID], max_results=1):
            client.delete_experiment(DEFAULT_EXPERIMENT_ID)
    except Exception:  # noqa: BLE001 - a server without a Default experiment, or without the right to delete it
        pass


def workspace(project_root: str | os.PathLike) -> str:
    """The project copy a stage runs in (not ``tracking_root``: a DVC temp copy is a workspace of its own)."""
    return Path(project_root).resolve().as_posix()


def label_tags(labels: Mapping[str, Any]) -> dict[str, str]:
    """Labels as MLflow stores them: strings, '' where a value does not apply."""
    return {k: "" if v is None else str(v) for k, v in labels.items()}


def find_stale_runs(client: Any, mlflow_experiment_id: str, here: str, tags: Mapping[str, str],
                    exclude: str | None = None) -> dict[str, str]:
    """{run id: why} of the RUNNING runs carrying ``tags`` that ``stale_reason`` finds abandoned."""
    running = client.search_runs([mlflow_experiment_id], filter_string="attributes.status = 'RUNNING'",
                                 max_results=10_000)
    found = {}
    for r in running:
        if r.info.run_id == exclude or any(r.data.tags.get(k) != v for k, v in tags.items()):
            continue
        why = stale_reason(r.data.tags, r.info.start_time, here)
        if why is not None:
            found[r.info.run_id] = why
    return found


def close_runs(client: Any, stale: Mapping[str, str], superseded_by: str | None = None,
               status: str = "KILLED") -> None:
    """End each run ``status`` with a ``closed_because`` tag (and ``superseded_by`` when given)."""
    for run_id, why in stale.items():
        if superseded_by:
            client.set_tag(run_id, "superseded_by", superseded_by)
        client.set_tag(run_id, "closed_because", why)
        client.set_terminated(run_id, status)


def stale_reason(tags: Mapping[str, str], start_time_ms: int | None, here: str) -> str | None:
    """Why a RUNNING run with these tags is abandoned, seen from workspace ``here``; None while it may be live.

    Abandoned: its owner process is gone from this host, in this workspace or in one that no longer exists; or,
    for a run that recorded no owner, it started more than ``LEGACY_AGE_S`` ago.  A run owned by another host
    is left alone: this host cannot see its process.
    """
    who = owner.from_tags(tags)
    if who is None:
        age = time.time() - (start_time_ms or 0) / 1000
        return f"no owner recorded and started {age / 3600:.0f} h ago" if age > LEGACY_AGE_S else None
    ws = tags.get(WORKSPACE_TAG, "")
    if ws != here and (not ws or Path(ws).exists()):
        return None  # another copy of the project: its own stages close its runs
    if owner.alive(who) is not False:
        return None
    gone = "" if ws == here else f" and its workspace {ws} is gone"
    return f"its process ({owner.describe(who)}) ended without closing it{gone}"


@contextmanager
def tracking_errors(uri: str) -> Iterator[None]:
    """Turn a database error of the tracking store (damaged file, read-only file or folder) into one line."""
    try:
        yield
    except BoardRLError:
        raise
    except Exception as exc:
        db = database_error(exc)
        if db is None:
            raise
        raise TrackingError(database_message(uri, db)) from None


def database_error(exc: BaseException) -> BaseException | None:
    """The SQLAlchemy or sqlite3 error behind ``exc`` (MLflow wraps them in MlflowException), else None."""
    import sqlite3

    from sqlalchemy.exc import SQLAlchemyError

    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, (SQLAlchemyError, sqlite3.Error)):
            return cur
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None


def database_message(uri: str, err: BaseException) -> str:
    """One line naming the database and what to do: a damaged file is moved away, a read-only one fixed."""
    lines = str(getattr(err, "orig", None) or err).strip().splitlines()
    reason = lines[0] if lines else type(err).__name__
    if reason.startswith("(") and ") " in reason:  # SQLAlchemy's "(sqlite3.OperationalError) message"
        reason = reason.split(") ", 1)[1]
    where = uri.split(":///", 1)[1] if uri.startswith("sqlite:///") else _hide_password(uri)
    low = reason.lower()
    if any(w in low for w in ("not a database", "malformed", "corrupt")):
        return f"the MLflow database {where} is damaged ({reason}): move it away to start a new one"
    if any(w in low for w in ("readonly", "read-only", "unable to open", "permission denied")):
        return f"cannot write the MLflow database {where} ({reason}): check the permissions of it and its folder"
    return f"the MLflow database {where}: {reason}"


def _hide_password(uri: str) -> str:
    try:
        from sqlalchemy.engine import make_url

        return make_url(uri).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - only for display
        return uri.split("@")[-1]
