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

``mlflow`` is imported lazily: it costs seconds, and the validation that precedes every stage must be instant.
"""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Mapping

from boardrl.tracking.provenance import canonical_json, dvc_exp_name, git_commit, source_dirty

if TYPE_CHECKING:  # pragma: no cover
    import mlflow

DB_NAME = "mlflow.db"
ARTIFACTS_DIR = "mlartifacts"
_DVC_TEMP_EXPS = (".dvc", "tmp", "exps")
_MAX_PARAM_CHARS = 6000  # MLflow's limit on one param value


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


def configure(project_root: str | os.PathLike) -> "mlflow":
    """Point MLflow at the project's database (this process and its children only); returns the module."""
    for name in ("alembic", "mlflow.store.db.utils"):
        logging.getLogger(name).setLevel(logging.WARNING)  # schema-migration chatter on every new database
    import mlflow

    uri = tracking_uri(project_root)
    os.environ["MLFLOW_TRACKING_URI"] = uri
    mlflow.set_tracking_uri(uri)
    return mlflow


#: MLflow 3 opens experiments without this tag in its GenAI view (an empty Traces page); ours train models.
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


def run_tags(project_root: str | os.PathLike, *, stage: str, params_hash: str, **labels: Any) -> dict[str, str]:
    """The provenance tags of a stage run (strings, as MLflow stores them; '' where a value does not apply).

    ``labels`` are what the run is about: experiment id, game, learner, seed, profile.
    """
    commit = git_commit(project_root)
    dirty = source_dirty(project_root)
    tags = {
        "stage": stage,
        **{k: "" if v is None else str(v) for k, v in labels.items()},
        "git_commit": commit,
        "source_dirty": "" if dirty is None else str(dirty).lower(),
        "dvc_exp_name": dvc_exp_name() or "",
        "params_hash": params_hash,
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
) -> Iterator["mlflow.ActiveRun"]:
    """An MLflow run for one stage execution (or, ``nested``, one seed of it), with params and provenance tags.

    It ends FAILED on an exception (SIGTERM included: stage scripts turn it into SystemExit).
    """
    mlflow = configure(project_root)
    exp_id = ensure_experiment(project_root, mlflow_experiment)
    tags = run_tags(project_root, stage=stage, params_hash=params_hash, **labels)
    with mlflow.start_run(experiment_id=exp_id, run_name=run_name, tags=tags, nested=nested) as run:
        flat = flatten(params)
        if flat:
            mlflow.log_params(flat)
        yield run


def close_stale_runs(mlflow_experiment_id: str, new_run_id: str, **labels: Any) -> list[str]:
    """Mark RUNNING runs with these tags (a killed stage's) KILLED and link them to ``new_run_id``.

    Only call this while holding the experiment's trainer lock: then no other process can own such a run.
    """
    import mlflow

    client = mlflow.MlflowClient()
    where = " and ".join(f"tags.{k} = '{v}'" for k, v in labels.items())
    stale = [r for r in client.search_runs([mlflow_experiment_id], filter_string=f"{where} and attributes.status = 'RUNNING'")
             if r.info.run_id != new_run_id]
    for r in stale:
        client.set_tag(r.info.run_id, "superseded_by", new_run_id)
        client.set_terminated(r.info.run_id, "KILLED")
    if stale:
        client.set_tag(new_run_id, "resumes_runs", ",".join(r.info.run_id for r in stale))
    return [r.info.run_id for r in stale]


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
        if not self.pending:
            return
        import time

        import mlflow
        from mlflow.entities import Metric

        run = mlflow.active_run()
        if run is not None:
            now = int(time.time() * 1000)
            metrics = [Metric(_safe_key(k), v, now, s) for k, v, s in self.pending]
            client = mlflow.MlflowClient()
            for i in range(0, len(metrics), 1000):  # MLflow's per-request limit
                client.log_batch(run.info.run_id, metrics=metrics[i:i + 1000])
        self.pending = []


def _safe_key(key: str) -> str:
    return metric_key(*key.split("/"))


def log_metrics(values: Mapping[str, float | None], step: int | None = None) -> None:
    """Log numeric metrics to the active run, skipping ``None`` (a rate over zero games is not a number)."""
    import mlflow

    clean = {k: float(v) for k, v in values.items() if v is not None}
    if clean:
        mlflow.log_metrics(clean, step=step)


def metric_key(*parts: str) -> str:
    """Join name parts with '/' (MLflow groups metrics by prefix in its UI), replacing characters it refuses."""
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-. /")
    return "/".join("".join(ch if ch in allowed else "_" for ch in p) for p in parts)
