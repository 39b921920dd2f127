"""Whether a study's committed table still describes this commit: which variations' rows ran with something changed.

Why: ``studies/<name>/results.json`` is committed, and the report and the docs show it.  Its rows were computed
by the code, params and stage files of the commit each row names.  When a later commit changes any of them, the
next ``boardrl study <name>`` reruns those variations (``study_reuse``), but until then the table still reads
as a result of today's code.  This module gives the report and the docs the variations to flag, by the same
test that decides what a study reruns: each row's ``fingerprint`` against the one this workspace computes.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from boardrl.config import ConfigError
from boardrl.experiments.inputs import UCI_TABLE
from boardrl.experiments.study import committed_rows, variation_params
from boardrl.experiments.study_reuse import carried, current_fingerprint, reads_uci_table
from boardrl.experiments.study_spec import Study
from boardrl.experiments.study_table import stale_note


@dataclass(frozen=True)
class Freshness:
    """``stale``: the table's variations that this commit would run again, in the table's order; ``unknown``:
    why that could not be decided here (None when it was)."""

    stale: tuple[str, ...] = ()
    unknown: str | None = None


def freshness(root: Path, study: Study) -> Freshness:
    """Which of the committed table's variations ran with params, stage code, data or stage files that the
    workspace at ``root`` has changed since (a row without a fingerprint counts as changed)."""
    rows = committed_rows(root, study)
    variations = list(dict.fromkeys(str(r.get("variation")) for r in rows))
    exp_ids = list(study.spec.experiments)
    try:
        params = {v: variation_params(root, study, v) for v in variations if v in study.spec.variations}
        missing = _missing_data(root, params, exp_ids)
        if missing:
            return Freshness(unknown=f"{missing} is missing here (dvc repro prepare makes it)")
        stale = tuple(v for v in variations if v not in params or carried(
            rows, v, exp_ids, lambda v=v: current_fingerprint(root, params[v], exp_ids)) is None)
    except OSError as exc:  # the project's own path stays out of the report
        name = Path(exc.filename).name if exc.filename else "a file"
        return Freshness(unknown=f"cannot read {name} ({exc.strerror})")
    except (ConfigError, subprocess.CalledProcessError) as exc:
        return Freshness(unknown=_relative(" ".join(str(exc).split()), Path(root)))
    return Freshness(stale=stale)


def _relative(message: str, root: Path) -> str:
    """``message`` with the project's own folder left out of its paths: the report is read on other machines."""
    for prefix in {str(root.resolve()), str(root)}:
        message = message.replace(prefix + "/", "")
    return message


def _missing_data(root: Path, params: dict[str, dict], exp_ids: list[str]) -> str | None:
    """The UCI table when a compared stage reads it and the workspace lacks it: without it every row that
    recorded the table's sha256 would look changed."""
    if not params or (Path(root) / UCI_TABLE).is_file():
        return None
    return str(UCI_TABLE) if reads_uci_table(root, next(iter(params.values())), exp_ids) else None


def freshness_note(name: str, fresh: Freshness) -> str | None:
    """What a reader of study ``name``'s table must know about ``fresh``, in Markdown (code in backticks); None
    when every row still holds."""
    if fresh.unknown is not None:
        return f"Whether these rows still hold at this commit was not checked: {fresh.unknown}."
    return stale_note(name, fresh.stale)
