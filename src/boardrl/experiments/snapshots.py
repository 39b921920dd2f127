"""Snapshots of the frozen agent at each learning-curve point: what the train stage saves and curve@<id> plays.

Why: the curve's opponents and its games per point cannot change a model, so changing them must not retrain it.
The train stage therefore measures nothing: at each curve point it saves the agent it would have measured
(``Learner.snapshot()``) with ``agent.save``, the same path a trained model takes (so a snapshot carries the same
content hashes and ``load_agent`` checks them), and stage curve@<id> (experiments/curve.py) plays the curve
against the saved snapshots.

While a seed trains, its snapshots go to ``models/<id>/seed-<k>/snapshots/<count>/``, beside the checkpoint:
the learner base saves a checkpoint only after the evaluation callback of the points it records returned, so a
run killed and resumed from its checkpoint still has the snapshot of every point it measured before.  When the
seed is published, ``stage_snapshots`` links (hard links: no copy of hundreds of MB) exactly the snapshots of the
points this run measured into the seed's new ``snapshots/<id>/seed-<k>/`` with an ``index.json``; the staging
folder goes with the checkpoint.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from boardrl.atomic_io import atomic_directory, atomic_write_json
from boardrl.errors import BoardRLError

INDEX = "index.json"
INDEX_FORMAT = 1


class SnapshotSaver:
    """``on_eval`` of a pipeline training run: save the snapshot at ``step`` atomically; the record names it."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def __call__(self, step: int, agent: Any) -> dict[str, Any]:
        with atomic_directory(self.directory / str(int(step))) as tmp:
            agent.save(tmp)
        return {"snapshot": int(step)}


def _link_or_copy(src: str, dst: str) -> None:
    """A hard link where the file system allows one, else a copy."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def stage_snapshots(staging: Path, target: Path, index: dict[str, Any]) -> None:
    """Fill the empty folder ``target`` with the snapshots ``index`` lists (linked from ``staging``) and the index.

    A snapshot the index lists but ``staging`` lacks is an error: the published curve would have a hole.
    """
    for count in index["snapshots"]:
        src = Path(staging) / str(count)
        if not src.is_dir():
            raise BoardRLError(f"{index['experiment']} seed {index['seed']}: the snapshot at {count} {index['unit']} "
                               f"is missing from {staging}; delete {Path(staging).parent / 'checkpoint'} and rerun "
                               f"to train from the start")
        shutil.copytree(src, Path(target) / str(count), copy_function=_link_or_copy)
    atomic_write_json(Path(target) / INDEX, index)


def snapshot_index(*, experiment: str, game: str, learner: str, seed: int, unit: str, budget: int,
                   curve_points: dict[int, int], saved: bool) -> dict[str, Any]:
    """The index of one seed's snapshots: where each requested curve point was measured and which snapshots
    exist (none when the experiment has no curve opponents).  A function of the training alone (no times), so a
    retrained seed writes the same bytes."""
    measured = sorted(set(curve_points.values()))
    return {"format": INDEX_FORMAT, "experiment": experiment, "game": game, "learner": learner, "seed": int(seed),
            "unit": unit, "budget": int(budget),
            "curve_points": {str(k): int(v) for k, v in sorted(curve_points.items())},
            "snapshots": measured if saved else []}


def read_index(directory: Path) -> dict[str, Any]:
    """``index.json`` of a seed's snapshot folder; one-line ``BoardRLError`` when it is missing or not ours."""
    path = Path(directory) / INDEX
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise BoardRLError(f"no snapshots in {directory}: {INDEX} is missing (run the train stage first)") from None
    except (OSError, ValueError) as exc:
        raise BoardRLError(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != INDEX_FORMAT or not isinstance(data.get("snapshots"), list):
        raise BoardRLError(f"{path}: not a snapshot index of format {INDEX_FORMAT}")
    return data
