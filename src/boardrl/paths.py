"""Where one experiment's outputs live: a single definition shared by the stages, the registry and the tests.

    models/<id>/seed-<k>/model/          the trained agent (agent.json + data files)
    models/<id>/seed-<k>/checkpoint/     until the seed's outputs are published; an interrupted run resumes from it
    models/<id>/seed-<k>/snapshots/      likewise: the snapshots saved so far (kept with the checkpoint)
    snapshots/<id>/seed-<k>/<count>/     the frozen agent at each learning-curve point (count: where it was measured)
    snapshots/<id>/seed-<k>/index.json   which points were measured where, and which snapshots exist
    results/train/<id>/seed-<k>/         summary.json (provenance of the training run)
    results/curves/<id>/seed-<k>.tsv     the learning curve, played by stage curve@<id> against the snapshots (a folder
                                         of curves only: `dvc plots` draws each file)
    results/eval/<id>.json               every seed's evaluation and the spread across seeds
    results/metrics/<id>.json            the few headline numbers `dvc metrics show` lists
    build/inputs/<id>.<stage>.json       fingerprints of the code and data a stage of <id> uses
    build/models/<id>.json               fingerprints of the trained models its ladder names (model:<id>)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SEED_DIR_PREFIX = "seed-"


def seed_dir_name(seed: int) -> str:
    return f"{SEED_DIR_PREFIX}{int(seed)}"


def seeds_in(directory: Path) -> list[int]:
    """The seeds that have a ``seed-<k>`` subdirectory in ``directory``, sorted."""
    if not directory.is_dir():
        return []
    out = []
    for d in directory.iterdir():
        if d.is_dir() and d.name.startswith(SEED_DIR_PREFIX) and d.name[len(SEED_DIR_PREFIX):].isdigit():
            out.append(int(d.name[len(SEED_DIR_PREFIX):]))
    return sorted(out)


@dataclass(frozen=True)
class ExperimentPaths:
    """The output paths of experiment ``exp_id`` under the project ``root``."""

    root: Path
    exp_id: str

    @property
    def models(self) -> Path:
        return self.root / "models" / self.exp_id

    def model(self, seed: int) -> Path:
        return self.models / seed_dir_name(seed) / "model"

    def checkpoint(self, seed: int) -> Path:
        return self.models / seed_dir_name(seed) / "checkpoint"

    def snapshot_staging(self, seed: int) -> Path:
        """Where training saves its snapshots until the seed's outputs are published (beside the checkpoint, and
        removed with it: a resumed run still has the snapshots measured before the interruption)."""
        return self.models / seed_dir_name(seed) / "snapshots"

    def publish_journal(self, seed: int) -> Path:
        """The train stage's journal of a seed's output switch, while one is in progress (experiments/publish.py)."""
        return self.models / seed_dir_name(seed) / ".publish.tmp-journal"

    @property
    def snapshots(self) -> Path:
        return self.root / "snapshots" / self.exp_id

    def seed_snapshots(self, seed: int) -> Path:
        return self.snapshots / seed_dir_name(seed)

    @property
    def train_results(self) -> Path:
        return self.root / "results" / "train" / self.exp_id

    @property
    def curves(self) -> Path:
        return self.root / "results" / "curves" / self.exp_id

    def curve(self, seed: int) -> Path:
        return self.curves / f"{seed_dir_name(seed)}.tsv"

    def summary(self, seed: int) -> Path:
        return self.train_results / seed_dir_name(seed) / "summary.json"

    @property
    def evaluation(self) -> Path:
        return self.root / "results" / "eval" / f"{self.exp_id}.json"

    @property
    def metrics(self) -> Path:
        return self.root / "results" / "metrics" / f"{self.exp_id}.json"

    def stage_journal(self, stage: str) -> Path:
        """The journal of an output switch in progress of stage ``curve`` or ``evaluate`` (experiments/publish.py)."""
        folder = self.curves.parent if stage == "curve" else self.evaluation.parent
        return folder / f".{self.exp_id}.{stage}.tmp-journal"

    def inputs(self, stage: str) -> Path:
        return self.root / "build" / "inputs" / f"{self.exp_id}.{stage}.json"

    @property
    def ladder_models(self) -> Path:
        return self.root / "build" / "models" / f"{self.exp_id}.json"
