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

import os
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

from boardrl.tracking import owner
from boardrl.tracking.provenance import canonical_json, dvc_exp_name, git_commit, source_dirty
from boardrl.tracking.store import (  # noqa: F401 - the store's names that stages and tests reach through here
    DB_NAME, LEGACY_AGE_S, WORKSPACE_TAG, TrackingError, artifact_location, configure, ensure_experiment, label_tags,
    tracking_errors, tracking_root, tracking_uri, workspace,
)

_MAX_PARAM_CHARS = 6000  # MLflow's limit on one param value


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
