"""MLflow tracking for pipeline stages: one experiment per game, one run per stage execution.

Why these choices (DESIGN.md, issue 3):
- The backend is ``sqlite:///<absolute project path>/mlflow.db`` and artifacts go to ``<project>/mlartifacts``:
  never the ``./mlruns`` file store, whose location would depend on the working directory.  Each experiment is
  created with an explicit ``artifact_location`` so MLflow has no reason to invent a default.
- The URI is set in this process only (``mlflow.set_tracking_uri`` plus ``MLFLOW_TRACKING_URI`` in
  ``os.environ`` for child processes of the stage), never in the user's shell.
- ``dvc exp run --temp`` / queued experiments run in a copy under ``<project>/.dvc/tmp/exps/``; their runs must
  land in the project's database, not in the throw-away copy, so the tracking root is resolved past it.
- Every run carries the tags a reader needs to find where a number came from: git commit, DVC experiment name,
  stage, game, agent, params hash, seed; and in a study's experiments the study and variation.
- A stage killed with ``kill -9`` cannot end its run.  Every run therefore records its workspace
  (``workspace_root``: the project copy it ran in, which differs for ``dvc exp run --temp``) and its owning
  process (``owner_host``, ``owner_pid``, ``owner_started``), and ``stage_run`` closes, as KILLED, the RUNNING
  runs of the same stage and labels whose owner is gone, in the same workspace only (or one deleted since).  A live
  run, or one in another live copy of the project, is never touched (issue 34, items 5 and 8).
- A damaged or unwritable ``mlflow.db`` is one ``TrackingError`` line, not a SQLAlchemy traceback.

- A stage's writes (``stage_run``, ``log_metrics``, ``log_artifact``, ``set_tag``, ``log_figure``,
  ``log_agent_model``) go through the store's tracking service (``tracking/service.py``): ``mlflow`` costs a stage
  about 2.5 s to import and open, and the service pays that once for the whole pipeline.  This module itself
  imports ``mlflow`` only in the helpers that other tools call in-process (sweeps, the UI, tests).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Mapping

from boardrl.errors import BoardRLError
from boardrl.tracking import owner
from boardrl.tracking.provenance import canonical_json, dvc_exp_name, git_commit, source_dirty

if TYPE_CHECKING:  # pragma: no cover
    import mlflow

DB_NAME = "mlflow.db"
ARTIFACTS_DIR = "mlartifacts"
_DVC_TEMP_EXPS = (".dvc", "tmp", "exps")
_MAX_PARAM_CHARS = 6000  # MLflow's limit on one param value
WORKSPACE_TAG = "workspace_root"
#: A RUNNING run without a recorded owner (made before owners were recorded) is closed only when older than this:
#: nothing can tell whether its process lives, and a long training run must never be marked KILLED.
LEGACY_AGE_S = 3 * 24 * 3600


class TrackingError(BoardRLError):
    """The MLflow tracking store cannot be read or written (a damaged or read-only ``mlflow.db``)."""


def tracking_root(project_root: str | os.PathLike) -> Path:
    """The directory that holds ``mlflow.db``: the project, even when DVC runs a stage in a temp copy of it."""
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


def flatten(params: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """Nested params as MLflow params: ``{"a": {"b": 1}}`` -> ``{"a.b": "1"}``; lists as canonical JSON."""
    out: dict[str, str] = {}
    for key, value in params.items():
        full = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten(value, full + "."))
        else:
            text = value if isinstance(value, str) else canonical_json(value)
            out[full] = text[:_MAX_PARAM_CHARS]
    return out


def workspace(project_root: str | os.PathLike) -> str:
    """The project copy a stage runs in (not ``tracking_root``: a DVC temp copy is a workspace of its own)."""
    return Path(project_root).resolve().as_posix()


def label_tags(labels: Mapping[str, Any]) -> dict[str, str]:
    """Labels as MLflow stores them: strings, '' where a value does not apply."""
    return {k: "" if v is None else str(v) for k, v in labels.items()}


def run_tags(project_root: str | os.PathLike, *, stage: str, params_hash: str, **labels: Any) -> dict[str, str]:
    """The provenance tags of a stage run (strings, as MLflow stores them; '' where a value does not apply).

    ``labels`` are what the run is about: experiment id, game, learner, seed, profile.  The workspace and owner
    tags let a later stage tell a killed run from a live one.
    """
    commit = git_commit(project_root)
    dirty = source_dirty(project_root)
    tags = {
        "stage": stage,
        **label_tags(labels),
        "git_commit": commit,
        "source_dirty": "" if dirty is None else str(dirty).lower(),
        "dvc_exp_name": dvc_exp_name() or "",
        "params_hash": params_hash,
        WORKSPACE_TAG: workspace(project_root),
        **owner.tags(),
    }
    if commit != "unknown":
        tags["mlflow.source.git.commit"] = commit  # MLflow's own key: the UI shows it as the run's source version
    return {**tags, **study_tags(project_root)}


def study_tags(project_root: str | os.PathLike) -> dict[str, str]:
    """``study`` and ``study_variation`` tags when the stage runs a study's DVC experiment, else none.

    Why from the params file: ``boardrl study`` sets ``study: {name, variation}`` in each variation's params.yaml
    (``dvc exp run -S``), the one thing that reliably reaches a queued experiment's stages (an environment
    variable would come from whichever queue worker runs it).  It is the same for every stage of the
    experiment, so it is read here instead of being passed by each stage.
    """
    import yaml

    try:
        data = yaml.safe_load((Path(project_root) / "params.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    study = data.get("study") if isinstance(data, dict) else None
    if not isinstance(study, dict):
        return {}
    return {"study": str(study.get("name", "")), "study_variation": str(study.get("variation", ""))}


@dataclass(frozen=True)
class RunInfo:
    """What a stage needs of an open run: its id and its MLflow experiment's id."""

    run_id: str
    experiment_id: str
    uri: str


@dataclass(frozen=True)
class ActiveRun:
    """An open stage run (``run.info.run_id``, as with MLflow's own ``ActiveRun``)."""

    info: RunInfo


#: The runs this process has open, innermost last: ``log_metrics`` and friends write to the last one.
_open_runs: list[ActiveRun] = []


def _call(uri: str, op: str, **kwargs: Any) -> Any:
    from boardrl.tracking.service import call

    return call(uri, op, **kwargs)


@contextmanager
def stage_run(
    project_root: str | os.PathLike,
    *,
    stage: str,
    mlflow_experiment: str,
    run_name: str,
    params: Mapping[str, Any],
    params_hash: str,
    nested: bool = False,
    **labels: Any,
) -> Iterator[ActiveRun]:
    """An MLflow run for one stage execution (or, ``nested``, one seed of it), with params and provenance tags.

    Run names start with what the run is about, ``<experiment id> seed <k> (<stage>)``, so MLflow's narrow name
    column tells the runs apart.  A seed's run logs the stage's params without the parent's ``seeds`` list: its
    own seed is its ``seed`` tag.  A nested run's parent is the innermost run this process has open.

    It ends FAILED on an exception (SIGTERM included: stage scripts turn it into SystemExit).  On start it closes
    the runs a killed execution of the same stage and labels left RUNNING (``close_stale_runs``), so no stage
    has to remember to.  The writes go through the store's tracking service (``tracking/service.py``); a damaged
    or unwritable database is a ``TrackingError`` line.
    """
    uri = tracking_uri(project_root)
    os.environ["MLFLOW_TRACKING_URI"] = uri  # for MLflow in child processes of the stage
    parent = _open_runs[-1].info.run_id if nested and _open_runs else None
    flat = {k: v for k, v in flatten(params).items() if not (nested and k == "seeds")}
    tags = {**run_tags(project_root, stage=stage, params_hash=params_hash, **labels), **source_tags()}
    opened = _call(uri, "open_run", experiment=mlflow_experiment,
                   artifacts=artifact_location(project_root, mlflow_experiment), run_name=run_name, tags=tags,
                   params=flat, parent_run_id=parent, stale_labels=label_tags({"stage": stage, **labels}))
    run = ActiveRun(RunInfo(opened["run_id"], opened["experiment_id"], uri))
    _open_runs.append(run)
    try:
        yield run
    except BaseException:
        _open_runs.remove(run)
        try:
            _call(uri, "end_run", run_id=run.info.run_id, status="FAILED")
        except TrackingError:
            pass  # the stage's own error is the one to report
        raise
    _open_runs.remove(run)
    _call(uri, "end_run", run_id=run.info.run_id, status="FINISHED")


def source_tags() -> dict[str, str]:
    """The tags MLflow's fluent ``start_run`` adds: who ran it and from which program."""
    import getpass

    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return {"mlflow.user": user, "mlflow.source.name": os.path.basename(sys.argv[0] or "python"),
            "mlflow.source.type": "LOCAL"}


def active_run() -> ActiveRun | None:
    """The innermost stage run this process has open, or None."""
    return _open_runs[-1] if _open_runs else None


def _active(what: str) -> ActiveRun:
    run = active_run()
    if run is None:
        raise TrackingError(f"{what}: no stage run is open (log inside `with stage_run(...)`)")
    return run


def set_tag(key: str, value: Any, run_id: str | None = None, *, missing_ok: bool = False) -> bool:
    """Tag the open run (or run ``run_id`` of the same store); ``missing_ok``: False if the store lacks that run."""
    run = _active(f"tag {key!r}")
    return _call(run.info.uri, "set_tags", run_id=run_id or run.info.run_id, tags={key: str(value)},
                 missing_ok=missing_ok)


def set_tags(tags: Mapping[str, Any]) -> None:
    """Tag the open run with several tags at once."""
    run = _active(f"tags {', '.join(tags)}")
    _call(run.info.uri, "set_tags", run_id=run.info.run_id, tags={k: str(v) for k, v in tags.items()})


def log_artifact(path: str | os.PathLike) -> None:
    """Copy a local file into the open run's artifacts."""
    run = _active(f"artifact {path}")
    _call(run.info.uri, "log_artifact", run_id=run.info.run_id, path=str(Path(path).resolve()))


def log_figure(figure: Any, name: str) -> None:
    """Save a matplotlib figure as artifact ``name`` (a PNG) of the open run, then close it."""
    import tempfile

    run = _active(f"figure {name}")
    with tempfile.TemporaryDirectory(prefix="boardrl-figure-") as tmp:
        path = Path(tmp) / name
        figure.savefig(path)
        _call(run.info.uri, "log_artifact", run_id=run.info.run_id, path=str(path))
    import matplotlib.pyplot as plt

    plt.close(figure)


def log_agent_model(game_id: str, model_dir: str | os.PathLike) -> str:
    """Log the saved agent in ``model_dir`` as the open run's MLflow logged model (``tracking/pyfunc.py``)."""
    run = _active(f"model {model_dir}")
    return _call(run.info.uri, "log_agent_model", run_id=run.info.run_id, game_id=game_id,
                 model_dir=str(Path(model_dir).resolve()))


def close_stale_runs(mlflow_experiment_id: str, new_run_id: str, **labels: Any) -> list[str]:
    """Mark KILLED the RUNNING runs with these tags whose owning process is gone, and link them to ``new_run_id``.

    Only runs of ``new_run_id``'s workspace (or of a workspace deleted since, such as a finished DVC temp copy)
    are candidates, and only when ``stale_reason`` finds their owner dead: a live run, here or in another copy
    of the project, is never touched.  Each closed run gets ``superseded_by`` and ``closed_because`` tags.
    ``new_run_id`` is a run this process has open.
    """
    run = next((r for r in _open_runs if r.info.run_id == new_run_id), None)
    if run is None:
        raise TrackingError(f"close_stale_runs: run {new_run_id} is not open in this process")
    return _call(run.info.uri, "close_stale", experiment_id=mlflow_experiment_id, run_id=new_run_id,
                 labels=label_tags(labels))


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


class MetricsBuffer:
    """Training metrics (loss, epsilon, throughput) collected per step and sent to MLflow in batches.

    Why: a learner may report every step; one database write per call would cost more than the training step.
    ``flush`` every ``every`` values and at the end (``close``).
    """

    def __init__(self, every: int = 2000) -> None:
        self.every = every
        self.pending: list[tuple[str, float, int]] = []

    def __call__(self, metrics: Mapping[str, float | None], step: int) -> None:
        self.pending += [(k, float(v), int(step)) for k, v in metrics.items() if v is not None]
        if len(self.pending) >= self.every:
            self.flush()

    def flush(self) -> None:
        run = active_run()
        if self.pending and run is not None:
            now = int(time.time() * 1000)
            _call(run.info.uri, "log_metrics", run_id=run.info.run_id,
                  metrics=[(_safe_key(k), v, now, s) for k, v, s in self.pending])
        self.pending = []


def _safe_key(key: str) -> str:
    return metric_key(*key.split("/"))


def log_metrics(values: Mapping[str, float | None], step: int | None = None) -> None:
    """Log numeric metrics to the open stage run, skipping ``None`` (a rate over zero games is not a number)."""
    clean = [(k, float(v), int(time.time() * 1000), int(step or 0)) for k, v in values.items() if v is not None]
    if clean:
        run = _active(f"metrics {', '.join(values)}")
        _call(run.info.uri, "log_metrics", run_id=run.info.run_id, metrics=clean)


def log_metric(key: str, value: float, step: int | None = None) -> None:
    """Log one metric to the open stage run."""
    log_metrics({key: value}, step=step)


def metric_key(*parts: str) -> str:
    """Join name parts with '/' (MLflow groups metrics by prefix in its UI), replacing characters it refuses."""
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-. /")
    return "/".join("".join(ch if ch in allowed else "_" for ch in p) for p in parts)
