"""MLflow registered models: trained agents under a stable name and alias, ``model:<name>@<alias>``.

Why: a reader who wants "the best Connect 4 agent" should not need to know which experiment and seed produced it,
nor train it.  MLflow's model registry gives a name (here: one registered model per game), numbered versions (each
an MLflow logged model that a train stage wrote) and aliases, MLflow's current way to mark which version is in
use (``champion``, and one per kind of learner: ``tabular``, ``dqn``, ``value``, ``alphazero``).  The report's
headline agents are registered by ``boardrl register`` (``report/champions.py`` chooses them).

``model:<name>@<alias>[,simulations=N]...`` resolves in ``boardrl match``, ``boardrl play`` and the browser page:
the version the alias points to is downloaded from the project's MLflow store into ``cache/registry/<name>/v<N>``
once, checked, and played like any saved model.  Two checks, so that a damaged or swapped file is never played:
the version's ``model_sha256`` tag (the sha256 of the model's ``sha256.json`` manifest, recorded at registration
from the model the pipeline wrote) must match the downloaded manifest, and ``load_agent`` then checks every file
against that manifest.

Not in the pipeline's ladders (``params.yaml``): an alias moves when someone registers again, and a stage's result
must depend only on what DVC tracks, so a stage names an experiment id (``model:<id>``), whose model file DVC
hashes.  There ``model:<name>@<alias>`` is refused as a model that does not exist.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boardrl.errors import BoardRLError
from boardrl.integrity import HASH_FILE, sha256_file

CACHE_DIR = Path("cache") / "registry"
AGENT_SUBDIR = Path("artifacts") / "model"  # where a logged agent model keeps the saved agent (tracking/pyfunc.py)
HASH_TAG = "model_sha256"
#: ``<registered model>@<alias>`` as MLflow names them: what the browser page may load (from the project's store).
ALIAS_TARGET = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*@[A-Za-z0-9_-]+$")


class RegistryError(BoardRLError):
    """A registered model, version or alias that cannot be used, in one line."""


def split_alias(target: str) -> tuple[str, str] | None:
    """(name, alias) of a ``<name>@<alias>`` model target; None for an experiment id or a directory."""
    name, at, alias = target.partition("@")
    if not at or Path(target).is_dir():
        return None
    if not name or not alias:
        raise RegistryError(f"model target {target!r}: write <registered model>@<alias>, e.g. connect4@champion")
    return name, alias


def manifest_sha256(model_dir: Path) -> str:
    """The model's content hash: the sha256 of its ``sha256.json`` manifest, which lists every file's sha256."""
    path = Path(model_dir) / HASH_FILE
    if not path.is_file():
        raise RegistryError(f"{model_dir} has no {HASH_FILE}: not a sealed saved model")
    return sha256_file(path)


def _client(root: Path) -> Any:
    from boardrl.tracking.store import configure

    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    return configure(root).MlflowClient()


# ---------------------------------------------------------------------------------------------- registering
@dataclass(frozen=True)
class Registered:
    """One registered version: the model name, its version number, the aliases now on it, and whether it is new."""

    name: str
    version: int
    aliases: tuple[str, ...]
    created: bool


def logged_model_of_run(client: Any, run_id: str) -> Any:
    """The MLflow logged model that run ``run_id`` (a train stage's run) wrote; one-line error when there is none."""
    from mlflow.exceptions import MlflowException

    try:
        run = client.get_run(run_id)
    except MlflowException:
        raise RegistryError(f"train run {run_id} is not in this project's MLflow store (were its results copied "
                            f"from another machine or restored from DVC's cache? retrain with `make repro`)") from None
    found = client.search_logged_models(experiment_ids=[run.info.experiment_id],
                                        filter_string=f"source_run_id = '{run_id}'")
    if not found:
        raise RegistryError(f"train run {run_id} logged no model")
    return found[0]


def register(root: Path, name: str, model_dir: Path, run_id: str, aliases: list[str],
             tags: dict[str, str]) -> Registered:
    """Register the model that train run ``run_id`` logged as a version of ``name`` (or find the version that
    already holds the same content and experiment), and point each of ``aliases`` at it.

    The logged model must hold exactly the model in ``model_dir`` (the pipeline's file, which the report judged):
    its manifest's hash is compared before anything is registered."""
    import mlflow
    from mlflow.exceptions import MlflowException

    client = _client(root)
    content = manifest_sha256(model_dir)
    logged = logged_model_of_run(client, run_id)
    with _download(logged.model_uri) as copy:
        if manifest_sha256(copy / AGENT_SUBDIR) != content:
            raise RegistryError(f"the model that run {run_id} logged is not the one in {model_dir}: their "
                                f"{HASH_FILE} differ")
    try:
        versions = client.search_model_versions(f"name = '{name}'")
    except MlflowException:
        versions = []
    same = [v for v in versions if v.tags.get(HASH_TAG) == content and v.tags.get("experiment") == tags.get(
        "experiment") and v.tags.get("seed") == tags.get("seed")]
    if same:
        version, created = min(same, key=lambda v: int(v.version)), False
    else:
        version = mlflow.register_model(logged.model_uri, name, tags={**tags, HASH_TAG: content})
        created = True
    for alias in aliases:
        client.set_registered_model_alias(name, alias, version.version)
    return Registered(name, int(version.version), tuple(aliases), created)


@contextlib.contextmanager
def _download(uri: str) -> Iterator[Path]:
    """A temporary local copy of an MLflow artifact URI, removed on exit."""
    import mlflow

    with tempfile.TemporaryDirectory(prefix="boardrl-registry-") as tmp:
        yield Path(mlflow.artifacts.download_artifacts(artifact_uri=uri, dst_path=tmp))


# ---------------------------------------------------------------------------------------------- resolving
def make_named_agent(game: Any, spec: str) -> Any:
    """``make_agent``, with a registered model's alias fetched first; the agent keeps the name it was asked for."""
    from boardrl.agents import make_agent

    if "@" not in spec:
        return make_agent(game, spec)
    agent = make_agent(game, resolve_spec(spec))
    agent.name = spec.strip()
    return agent


def resolve_spec(spec: str, root: Path | None = None) -> str:
    """``spec`` with a ``model:<name>@<alias>`` target replaced by the checked local copy of that version;
    any other spec unchanged (so callers resolve every spec without looking at it first)."""
    from boardrl.agents.models import PREFIX, is_model_spec

    if not is_model_spec(spec):
        return spec
    body = spec.strip()[len(PREFIX):]
    target, comma, options = body.partition(",")
    pair = split_alias(target.strip())
    if pair is None:
        return spec
    if any(opt.split("=", 1)[0].strip() == "seed" for opt in options.split(",")):
        raise RegistryError(f"agent spec {spec!r}: seed= names a seed of an experiment; a registered version is "
                            f"one model (its seed is the version's tag)")
    local = fetch(Path(root or os.environ.get("BOARDRL_ROOT") or Path.cwd()), *pair)
    return f"{PREFIX}{local}{comma}{options}"


def fetch(root: Path, name: str, alias: str) -> Path:
    """The saved agent of ``name@alias``, downloaded once into ``cache/registry`` and checked against the
    version's content hash; one-line errors for an unknown model or alias and for a mismatch."""
    from mlflow.exceptions import MlflowException

    client = _client(root)
    try:
        version = client.get_model_version_by_alias(name, alias)
    except MlflowException:
        raise RegistryError(_unknown(client, name, alias)) from None
    expected = version.tags.get(HASH_TAG)
    if not expected:
        raise RegistryError(f"model:{name}@{alias} (version {version.version}) has no {HASH_TAG} tag: register it "
                            f"with `boardrl register`, which records the model's content hash")
    where = Path(root) / CACHE_DIR / name / f"v{version.version}"
    agent_dir = where / AGENT_SUBDIR
    if not (agent_dir / HASH_FILE).is_file() or manifest_sha256(agent_dir) != expected:
        shutil.rmtree(where, ignore_errors=True)
        with _download(version.source) as copy:  # copied whole, then renamed: a kill leaves no half copy
            where.parent.mkdir(parents=True, exist_ok=True)
            staged = where.with_name(f".{where.name}.tmp-{os.getpid()}")
            shutil.rmtree(staged, ignore_errors=True)
            shutil.copytree(copy, staged)
            os.replace(staged, where)
    if manifest_sha256(agent_dir) != expected:
        raise RegistryError(f"model:{name}@{alias} (version {version.version}): the stored model's {HASH_FILE} "
                            f"does not match the content hash recorded when it was registered")
    return agent_dir


def _unknown(client: Any, name: str, alias: str) -> str:
    from mlflow.exceptions import MlflowException

    try:
        model = client.get_registered_model(name)
    except MlflowException:
        names = sorted(m.name for m in client.search_registered_models())
        have = f"registered: {', '.join(names)}" if names else "no model is registered (run `boardrl register`)"
        return f"model:{name}@{alias}: no registered model {name!r} in this project's MLflow store ({have})"
    aliases = sorted(model.aliases or {})
    return (f"model:{name}@{alias}: registered model {name!r} has no alias {alias!r} "
            f"(aliases: {', '.join(aliases) if aliases else 'none'})")
