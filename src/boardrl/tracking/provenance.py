"""Provenance of a stage's numbers: git commit, params hash, DVC experiment name, seed.

Why: DESIGN.md asks that every reported number can be traced to the code (git commit), the exact settings
(a hash of the params the stage used), the DVC experiment that produced it and the MLflow run that logged it.
These helpers never fail: outside a git repository the commit is ``"unknown"``, outside ``dvc exp run`` the
experiment name is ``None``, so a stage still runs from a plain source tarball.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

UNKNOWN_COMMIT = "unknown"


def _git(root: Path, *args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, timeout=10, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


def git_commit(root: str | os.PathLike) -> str:
    """The commit checked out at ``root`` (40 hex digits), or ``"unknown"`` outside a repo / before any commit."""
    sha = _git(Path(root), "rev-parse", "--verify", "-q", "HEAD")
    return sha if sha and len(sha) == 40 else UNKNOWN_COMMIT


#: What counts as the source of a result: code and the pipeline's definition.  Not dvc.lock, params.yaml or
#: results: the pipeline rewrites the first itself, and params are recorded by their own hash.
SOURCE_PATHS = ("src", "pipeline", "pyproject.toml", "dvc.yaml", "profiles")


def source_dirty(root: str | os.PathLike) -> bool | None:
    """True when the source (``SOURCE_PATHS``, new untracked files included) differs from the commit, so the
    commit alone does not reproduce the number; None outside a repository.

    Why not plain ``git status``: a clean clone's own `dvc repro` rewrites dvc.lock, which made every run look
    dirty though its code was exactly the commit's.
    """
    status = _git(Path(root), "status", "--porcelain", "--untracked-files=normal", "--", *SOURCE_PATHS)
    return None if status is None else bool(status)


def dvc_exp_name() -> str | None:
    """Name of the DVC experiment running this stage (``dvc exp run`` sets ``DVC_EXP_NAME``), else None."""
    return os.environ.get("DVC_EXP_NAME") or None


def canonical_json(obj: Any) -> str:
    """One text per value: sorted keys, no whitespace (the input of ``params_hash``)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False, default=str)


def params_hash(obj: Any) -> str:
    """First 16 hex digits of the sha256 of ``canonical_json(obj)``: equal settings give equal hashes."""
    return hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Provenance:
    """The keys that travel with every result file (summary.json, each seed's ``provenance`` in the eval json)."""

    experiment: str
    game: str
    learner: str
    seed: int
    profile: str
    unit: str
    budget: int
    seconds: float
    mlflow_run_id: str | None
    git_commit: str
    params_hash: str
    dvc_exp_name: str | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def collect(root: str | os.PathLike, *, experiment: str, game: str, learner: str, seed: int, profile: str,
            unit: str, budget: int, params_slice: Any, seconds: float, mlflow_run_id: str | None) -> Provenance:
    """Provenance of a stage run at ``root`` that used ``params_slice`` (the params it depends on)."""
    return Provenance(
        experiment=experiment, game=game, learner=learner, seed=int(seed), profile=profile, unit=unit,
        budget=int(budget), seconds=round(float(seconds), 3), mlflow_run_id=mlflow_run_id,
        git_commit=git_commit(root), params_hash=params_hash(params_slice), dvc_exp_name=dvc_exp_name(),
    )
