"""Which variations of a study's committed table ran with something this commit has changed
(experiments/study_freshness.py).  The fingerprint itself is study_reuse's (tested there, and end to end by
test_study.py's tiny study, whose rows turn stale after a learner edit); here, what is made of it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

import boardrl.experiments.study_freshness as sf
from boardrl.experiments.study_freshness import Freshness, freshness, freshness_note
from boardrl.experiments.study_spec import load_study

ROOT = Path(__file__).resolve().parents[2]
EXP = "tictactoe_tabular_q"
STUDY = {"description": "tabular Q's step size", "experiments": [EXP],
         "variations": {"slow": {f"experiments.{EXP}.params.alpha": 0.1},
                        "fast": {f"experiments.{EXP}.params.alpha": 0.5}}}


def row(variation: str, fingerprint: str | None) -> dict:
    return {"experiment": EXP, "variation": variation, "rev": "a" * 40, "fingerprint": fingerprint}


@pytest.fixture()
def project(tmp_path, monkeypatch) -> Path:
    """params.yaml, profiles/ and studies/lr.yaml; this commit's fingerprint of a variation is 'now-<alpha>'."""
    shutil.copy(ROOT / "params.yaml", tmp_path / "params.yaml")
    shutil.copytree(ROOT / "profiles", tmp_path / "profiles")
    (tmp_path / "studies" / "lr").mkdir(parents=True)
    (tmp_path / "studies" / "lr.yaml").write_text(yaml.safe_dump(STUDY))
    monkeypatch.setattr(sf, "current_fingerprint",
                        lambda root, params, exp_ids: f"now-{params['experiments'][EXP]['params']['alpha']}")
    monkeypatch.setattr(sf, "reads_uci_table", lambda root, params, exp_ids: False)
    return tmp_path


def fresh_with(project: Path, rows: list[dict]) -> Freshness:
    (project / "studies" / "lr" / "results.json").write_text(json.dumps({"study": "lr", "rows": rows}))
    return freshness(project, load_study(project, "lr"))


def test_rows_whose_fingerprint_this_commit_computes_are_fresh(project):
    assert fresh_with(project, [row("slow", "now-0.1"), row("fast", "now-0.5")]) == Freshness()


def test_a_changed_fingerprint_a_missing_one_and_a_removed_variation_are_stale_in_table_order(project):
    rows = [row("fast", "then-0.5"), row("slow", "now-0.1"), row("gone", "now-0.3"), row("old", None)]
    assert fresh_with(project, rows) == Freshness(stale=("fast", "gone", "old"))


def test_a_study_never_run_has_nothing_to_flag(project):
    assert freshness(project, load_study(project, "lr")) == Freshness()


def test_a_missing_uci_table_that_a_compared_stage_reads_leaves_it_undecided(project, monkeypatch):
    """Its sha256 is in every such row's fingerprint: without the table all of them would look changed."""
    monkeypatch.setattr(sf, "reads_uci_table", lambda root, params, exp_ids: True)
    got = fresh_with(project, [row("slow", "now-0.1")])
    assert got.stale == () and got.unknown == "data/processed/uci.parquet is missing here (dvc repro prepare makes it)"


def test_params_that_cannot_be_read_leave_it_undecided_without_the_projects_path(project):
    (project / "params.yaml").write_text("experiments: [unclosed\n")
    got = fresh_with(project, [row("slow", "now-0.1")])
    assert got.stale == () and got.unknown and "params.yaml" in got.unknown and str(project) not in got.unknown


def test_the_note_names_the_stale_variations_and_the_command_that_reruns_them():
    note = freshness_note("lr", Freshness(stale=("fast", "slow")))
    assert note is not None and note.startswith("Not this commit's results: the rows of `fast`, `slow` ran with")
    assert "`studies/lr/results.json`" in note and note.endswith("`boardrl study lr` reruns them.")
    assert freshness_note("lr", Freshness()) is None
    assert freshness_note("lr", Freshness(unknown="why")) == (
        "Whether these rows still hold at this commit was not checked: why.")
