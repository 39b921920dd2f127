"""experiments/study_reuse.py: which DVC experiments of earlier commits a study may take as done.  The whole path
(a docs-only commit keeps a study's results, a learner edit reruns them) runs in
tests/experiments/test_study.py::test_a_tiny_study_runs_through_the_dvc_queue_and_resumes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import yaml

from boardrl.config import parse_params
from boardrl.experiments.study_reuse import (carried, commit_stage_blobs, experiment_commits, fingerprint,
                                             plays_a_model, same_stage_files, workspace_stage_blobs)
from repo_copy import git

ROOT = Path(__file__).resolve().parents[2]


def commit(repo: Path, message: str, day: int = 1) -> str:
    """A commit of ``message`` dated 2026-11-``day`` (commits made within one second would tie in date order)."""
    (repo / "file.txt").write_text(message)
    git(repo, "add", "-A")
    date = f"2026-11-{day:02d}T12:00:00+00:00"
    subprocess.run(["git", "-c", "user.email=test@boardrl", "-c", "user.name=boardrl tests", "commit", "-qm", message],
                   cwd=repo, check=True, env={**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date})
    return git(repo, "rev-parse", "HEAD")


def test_experiment_commits_are_dvc_experiment_refs_of_any_baseline_newest_first(tmp_path):
    git(tmp_path, "init", "-q")
    first, second, third = (commit(tmp_path, m, day) for day, m in enumerate(("first", "second", "third"), 1))
    for baseline, exp, name in ((first, second, "s-fast"), (second, third, "s-fast"), (first, third, "s-slow"),
                                (first, third, "other-fast")):
        git(tmp_path, "update-ref", f"refs/exps/{baseline[:2]}/{baseline[2:]}/{name}", exp)
    git(tmp_path, "update-ref", "refs/exps/celery/stash", third)  # DVC's queue, not an experiment
    got = experiment_commits(tmp_path, {"s-fast", "s-slow", "stash"})
    assert got == {"s-fast": [third, second], "s-slow": [third]}


def test_stage_files_compare_the_workspace_with_the_commit(tmp_path):
    git(tmp_path, "init", "-q")
    (tmp_path / "pipeline").mkdir()
    (tmp_path / "pipeline" / "train.py").write_text("print(1)\n")
    (tmp_path / "dvc.yaml").write_text("stages: {}\n")
    old = commit(tmp_path, "stages")
    commit(tmp_path, "docs only")
    assert same_stage_files(tmp_path, old)
    (tmp_path / "pipeline" / "train.py").write_text("print(2)\n")  # uncommitted: the workspace is what runs
    assert not same_stage_files(tmp_path, old)


def test_an_experiment_playing_a_trained_model_is_never_taken_from_an_earlier_commit():
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    exp = next(e for e, v in params["experiments"].items() if v.get("game") == "tictactoe")
    assert not plays_a_model(parse_params(params).spec(exp))
    params["experiments"][exp]["ladder"] = ["random", f"model:{exp}"]
    assert plays_a_model(parse_params(params).spec(exp))


def test_stage_blobs_of_the_workspace_and_of_a_commit_agree_until_a_stage_file_changes(tmp_path):
    git(tmp_path, "init", "-q")
    (tmp_path / "pipeline").mkdir()
    (tmp_path / "pipeline" / "train.py").write_text("print(1)\n")
    (tmp_path / "dvc.yaml").write_text("stages: {}\n")
    (tmp_path / "notes.md").write_text("not a stage file\n")
    old = commit(tmp_path, "stages")
    assert set(commit_stage_blobs(tmp_path, old)) == {"dvc.yaml", "pipeline/train.py"}
    assert workspace_stage_blobs(tmp_path) == commit_stage_blobs(tmp_path, old)
    (tmp_path / "notes.md").write_text("edited\n")
    assert workspace_stage_blobs(tmp_path) == commit_stage_blobs(tmp_path, old)
    (tmp_path / "pipeline" / "train.py").write_text("print(2)\n")  # uncommitted: the workspace is what runs
    assert workspace_stage_blobs(tmp_path) != commit_stage_blobs(tmp_path, old)


def test_a_fingerprint_changes_with_each_of_params_inputs_and_stage_files():
    params, inputs, blobs = {"a": 1}, {"build/inputs/x.train.json": {"code": {"m.py": "00"}}}, {"dvc.yaml": "b1"}
    base = fingerprint(params, inputs, blobs)
    assert len(base) == 64 and fingerprint(dict(params), json.loads(json.dumps(inputs)), dict(blobs)) == base
    assert fingerprint({"a": 2}, inputs, blobs) != base
    assert fingerprint(params, {"build/inputs/x.train.json": {"code": {"m.py": "01"}}}, blobs) != base
    assert fingerprint(params, inputs, {"dvc.yaml": "b2"}) != base


def test_committed_rows_are_carried_only_when_every_experiment_records_the_current_fingerprint():
    rows = [{"experiment": "a", "variation": "v", "fingerprint": "f1", "rev": "r"},
            {"experiment": "b", "variation": "v", "fingerprint": "f1", "rev": "r"},
            {"experiment": "a", "variation": "old", "rev": "r"}]  # written before rows had fingerprints
    calls = []

    def now(value):
        return lambda: calls.append(value) or value

    assert carried(rows, "v", ["a", "b"], now("f1")) == rows[:2]
    assert carried(rows, "v", ["b"], now("f1")) == rows[1:2]
    assert carried(rows, "v", ["a", "b"], now("f2")) is None  # something it ran changed
    assert carried(rows, "v", ["a", "b"], now(None)) is None  # plays a trained model
    calls.clear()
    assert carried(rows, "v", ["a", "c"], now("f1")) is None  # no row of experiment c
    assert carried(rows, "old", ["a"], now("f1")) is None
    assert carried(rows, "missing", ["a"], now("f1")) is None
    assert calls == []  # the fingerprint, which hashes every stage's code, is computed only when rows could match
