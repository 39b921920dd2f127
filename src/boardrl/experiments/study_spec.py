"""A study's definition: the schema of ``studies/<name>.yaml`` and its loading.

Why a module of its own: the report shows every study (report/studies.py) and must not depend on the code that
queues and runs them (experiments/study.py), or each edit of the runner would rerun the report stage.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from boardrl.config import ConfigError, read_yaml

STUDIES_DIR = "studies"
NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


class StudyFile(BaseModel):
    """The schema of ``studies/<name>.yaml`` (unknown keys are errors: a typo must not silently compare nothing)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str = Field(min_length=1, description="what the study compares, and why")
    base_profile: str | None = Field(None, description="a profiles/<name>.yaml overlay applied first")
    experiments: list[str] = Field(min_length=1, description="the experiments compared; the others are dropped")
    common: dict[str, Any] = Field(default_factory=dict, description="dotted params keys set in every variation")
    variations: dict[str, dict[str, Any]] = Field(min_length=1, description="name -> dotted params keys")
    versus_time: list[str] = Field(default_factory=list, description="opponents whose win rate the figure draws "
                                   "against each variation's training wall time")


@dataclass(frozen=True)
class Study:
    name: str
    file: str  # studies/<name>.yaml, as errors name it
    spec: StudyFile


def study_path(root: Path, name: str) -> Path:
    return Path(root) / STUDIES_DIR / f"{name}.yaml"


def load_study(root: Path, name: str) -> Study:
    """Study ``name``, its file checked against the schema (``ConfigError`` naming the file and key)."""
    path, file = study_path(root, name), f"{STUDIES_DIR}/{name}.yaml"
    if not NAME.match(name) or not path.is_file():
        known = sorted(p.stem for p in (Path(root) / STUDIES_DIR).glob("*.yaml"))
        raise ConfigError("", f"unknown study {name!r}; studies: {', '.join(known) or 'none'}", file="STUDY")
    try:
        spec = StudyFile.model_validate(read_yaml(path))
    except ConfigError as exc:
        raise ConfigError(exc.key, exc.problem, file=file) from None
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ConfigError(".".join(str(p) for p in err["loc"]), err["msg"], file=file) from None
    for variation in spec.variations:
        if not NAME.match(variation):
            raise ConfigError(f"variations.{variation}", "use lower-case letters, digits, '_' and '-'", file=file)
    return Study(name, file, spec)
