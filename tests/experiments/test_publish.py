"""All-or-nothing stage outputs (experiments/publish.py): a failure while publishing leaves the previous outputs.

First the mechanism on plain files: a rename that fails at each point of the switch, a failure to put the old
outputs back, a process killed (SIGKILL) at each point, a read-only folder.  Then the stages themselves, in a
throw-away project: train@<id> (model, snapshots, summary: the previous ones whole, the checkpoint kept, and a
rerun resumes from it), evaluate@<id> (results and metrics from one evaluation), curve@<id>.
"""

from __future__ import annotations

import errno
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import pytest
import yaml

from boardrl.config import parse_params
from boardrl.errors import BoardRLError
from boardrl.paths import ExperimentPaths
from boardrl.experiments.profiles import effective_params
from boardrl.experiments.publish import Publication, PublishError, publish_all, recover
from helpers import clear_tracking_env

ROOT = Path(__file__).resolve().parents[2]
NOTHING = "nothing was published: the previous outputs are in place"


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (temporaries included: none may be left) by relative path."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(Path(root).rglob("*")) if p.is_file()}


@contextmanager
def failing_replace(k: int, every_later: bool = False):
    """``os.replace`` fails (EACCES) at its k-th call, and with ``every_later`` at every call after it too."""
    real = os.replace
    calls = [0]

    def replace(src, dst, *args, **kwargs):
        calls[0] += 1
        if calls[0] == k or (every_later and calls[0] > k):
            raise PermissionError(errno.EACCES, "Permission denied", os.fsdecode(dst))
        return real(src, dst, *args, **kwargs)

    with mock.patch("os.replace", replace):
        yield calls


def fail_commit_at(monkeypatch, k: int) -> None:
    """From now on every ``Publication.commit`` meets an ``os.replace`` failing at its k-th call."""
    real_commit = Publication.commit

    def commit(self):
        with failing_replace(k):
            return real_commit(self)

    monkeypatch.setattr(Publication, "commit", commit)


def read_only(monkeypatch, folder: Path) -> None:
    """``folder`` behaves as read-only (root ignores permission bits, so they cannot stand in for it here):
    creating, replacing, renaming or removing anything in it, or opening a file in it for writing, is EACCES."""
    folder = Path(folder).resolve()

    def inside(path) -> bool:
        return isinstance(path, (str, bytes, os.PathLike)) and Path(os.fsdecode(path)).resolve().is_relative_to(folder)

    def guard(name: str, paths: int, flags_at: int | None = None):
        real = getattr(os, name)

        def call(*args, **kwargs):
            writes = flags_at is None or args[flags_at] & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)
            if writes and any(inside(a) for a in args[:paths]):
                raise PermissionError(errno.EACCES, "Permission denied", os.fsdecode(args[0]))
            return real(*args, **kwargs)

        monkeypatch.setattr(os, name, call)

    for name, paths in (("mkdir", 1), ("replace", 2), ("rename", 2), ("unlink", 1), ("rmdir", 1)):
        guard(name, paths)
    guard("open", 1, flags_at=1)


# ---------------------------------------------------------------------------------------------- the mechanism
def old_outputs(root: Path) -> None:
    (root / "a").mkdir(parents=True)
    (root / "a" / "x.txt").write_text("old a")
    (root / "b").mkdir()
    (root / "b" / "y.json").write_text("old b")


def stage_new(pub: Publication, root: Path) -> None:
    """New versions of directory a and file b, and c, an output that did not exist before."""
    (pub.stage_directory(root / "a") / "x.txt").write_text("new a")
    pub.stage_file(root / "b" / "y.json").write_text("new b")
    pub.stage_file(root / "c" / "z.tsv").write_text("new c")


NEW = {"a/x.txt": b"new a", "b/y.json": b"new b", "c/z.tsv": b"new c"}
RENAMES = 6  # the journal's atomic write, two renames for a and for b, one for c (nothing to move aside)


def test_a_clean_publication_switches_everything_and_leaves_nothing_behind(tmp_path):
    old_outputs(tmp_path)
    with failing_replace(0) as calls:
        publish_all(tmp_path / ".journal", lambda pub: stage_new(pub, tmp_path), "stage x")
    assert calls[0] == RENAMES
    assert tree(tmp_path) == NEW


@pytest.mark.parametrize("k", range(1, RENAMES + 1))
def test_a_rename_failing_at_any_point_leaves_the_previous_outputs(tmp_path, k):
    old_outputs(tmp_path)
    before = tree(tmp_path)
    with failing_replace(k), pytest.raises(PublishError) as err:
        publish_all(tmp_path / ".journal", lambda pub: stage_new(pub, tmp_path), "stage x", "the checkpoint is kept")
    message = str(err.value)
    assert message.startswith("stage x: ") and "\n" not in message
    assert message.endswith(f": Permission denied; {NOTHING}; the checkpoint is kept")
    assert tree(tmp_path) == before  # no new output, no temporary, no journal


def test_when_putting_the_old_outputs_back_fails_too_the_next_run_completes_the_switch(tmp_path):
    old_outputs(tmp_path)
    journal = tmp_path / ".journal"
    with failing_replace(4, every_later=True), pytest.raises(PublishError, match="the next run completes the switch"):
        publish_all(journal, lambda pub: stage_new(pub, tmp_path), "stage x")
    assert journal.is_file()  # a mix of old and new on disk, and the record of how to finish
    assert recover(journal) is True
    assert tree(tmp_path) == NEW
    assert recover(journal) is False  # nothing left to do


@pytest.mark.parametrize("k", range(1, RENAMES + 1))
def test_a_process_killed_at_any_point_of_the_switch_is_completed_or_undone_whole(tmp_path, k):
    """SIGKILL at the k-th rename: the next run's ``recover`` ends with all new outputs (the journal was written)
    or all old ones (killed while writing the journal); never a mix."""
    old_outputs(tmp_path)
    before = tree(tmp_path)
    script = textwrap.dedent(f"""
        import os, signal
        from pathlib import Path
        from unittest import mock
        from boardrl.experiments.publish import publish_all
        root = Path({str(tmp_path)!r})
        real, calls = os.replace, [0]
        def replace(src, dst, *args, **kwargs):
            calls[0] += 1
            if calls[0] == {k}:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(src, dst, *args, **kwargs)
        def stage(pub):
            (pub.stage_directory(root / "a") / "x.txt").write_text("new a")
            pub.stage_file(root / "b" / "y.json").write_text("new b")
            pub.stage_file(root / "c" / "z.tsv").write_text("new c")
        with mock.patch("os.replace", replace):
            publish_all(root / ".journal", stage, "stage x")
    """)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert res.returncode == -signal.SIGKILL, res.stderr
    recovered = recover(tmp_path / ".journal")
    from boardrl.experiments.publish import remove_stale_beside

    for target in (".journal", "a", "b/y.json", "c/z.tsv"):  # what the stage's next run does after recovering
        remove_stale_beside(tmp_path / target)
    after = tree(tmp_path)
    assert after == (NEW if recovered else before), (k, recovered, after)
    assert recovered == (k > 1)


def test_a_read_only_folder_fails_before_any_switch_and_leaves_no_staged_output(tmp_path, monkeypatch):
    old_outputs(tmp_path)
    before = tree(tmp_path)
    read_only(monkeypatch, tmp_path / "b")
    with pytest.raises(PublishError) as err:
        publish_all(tmp_path / ".journal", lambda pub: stage_new(pub, tmp_path), "stage x")
    folder = re.escape(str(tmp_path / "b"))
    assert re.fullmatch(f"stage x: cannot write the new outputs: {folder}/\\.y\\.json\\.tmp-new-[^/ ]+: Permission "
                        f"denied; {NOTHING}", str(err.value)), str(err.value)
    monkeypatch.undo()
    assert tree(tmp_path) == before


# ---------------------------------------------------------------------------------------------- the stages
EXP = "ttt"
SEED = 1


def params_with(alpha: float = 0.1, games: int = 20) -> dict:
    """params.yaml with one small tic-tac-toe experiment (checkpoints every 500 of its 1,500 games)."""
    data = yaml.safe_load((ROOT / "params.yaml").read_text())
    data["experiments"] = {EXP: {"game": "tictactoe", "learner": "tabular_q", "seeds": [SEED],
                                 "params": {"games": 1500, "parallel_games": 64, "checkpoint_every": 500,
                                            "alpha": alpha}}}
    data["train"].update(eval_games=6, curve={"first": 100, "per_decade": 1, "include_zero": True})
    data["train"]["opponents"]["tictactoe"] = ["random"]
    data["evaluate"].update(games=games, optimal_positions=10)
    data["evaluate"]["per_game"]["tictactoe"]["opponents"] = ["random"]
    data["sweeps"], data["tournaments"] = {}, {}
    return data


@pytest.fixture()
def project(tmp_path, monkeypatch):
    """A throw-away project root with its own MLflow store (the stages configure it from the root)."""
    monkeypatch.chdir(tmp_path)
    clear_tracking_env(monkeypatch)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "unset")
    yield tmp_path
    import mlflow

    mlflow.set_tracking_uri(None)


def train(root: Path, data: dict):
    from boardrl.experiments.train import run_train

    return run_train(parse_params(data).spec(EXP), root, progress=False)


def seed_outputs(root: Path) -> dict[str, dict[str, bytes]]:
    paths = ExperimentPaths(root, EXP)
    return {"model": tree(paths.model(SEED)), "snapshots": tree(paths.snapshots),
            "results": tree(paths.train_results), "models": {n: b for n, b in tree(paths.models).items()
                                                             if "checkpoint" not in n and "/snapshots/" not in n}}


TRAIN_RENAMES = 7  # the journal, then snapshots, model and results, each moved aside and replaced


@pytest.mark.parametrize("k", range(1, TRAIN_RENAMES + 1))
def test_train_publication_failing_at_any_rename_keeps_the_old_outputs_and_the_checkpoint(project, monkeypatch, k):
    train(project, params_with(alpha=0.1))
    before = seed_outputs(project)
    paths = ExperimentPaths(project, EXP)
    fail_commit_at(monkeypatch, k)
    with pytest.raises(PublishError) as err:
        train(project, params_with(alpha=0.3))
    message = str(err.value)
    assert message.startswith("train: ttt seed 1: ") and message.endswith(
        f"Permission denied; {NOTHING}; the checkpoint is kept ({paths.checkpoint(SEED)}): a rerun resumes from it"), \
        message
    assert seed_outputs(project) == before  # model, snapshots, summary (naming the old run) and records
    assert (paths.checkpoint(SEED) / "checkpoint.json").is_file() and paths.snapshot_staging(SEED).is_dir()


def test_after_a_failed_train_publication_a_rerun_resumes_and_publishes_what_a_clean_run_does(project, monkeypatch):
    train(project, params_with(alpha=0.1))
    with monkeypatch.context() as m:
        fail_commit_at(m, 4)
        with pytest.raises(PublishError):
            train(project, params_with(alpha=0.3))
    again = train(project, params_with(alpha=0.3))
    clean = project / "clean"
    clean.mkdir()
    train(clean, params_with(alpha=0.3))
    ours, theirs = seed_outputs(project), seed_outputs(clean)
    assert ours["model"] == theirs["model"] and ours["snapshots"] == theirs["snapshots"]
    from mlflow import MlflowClient

    run = MlflowClient(f"sqlite:///{project}/mlflow.db").get_run(again[0].summary["mlflow_run_id"])
    assert int(run.data.tags["resumed_from"]) == 1024  # the last checkpoint, at the wave after 1,000 games
    assert not ExperimentPaths(project, EXP).checkpoint(SEED).exists()


def test_a_read_only_results_folder_fails_the_train_stage_with_the_old_outputs_whole(project, monkeypatch):
    train(project, params_with(alpha=0.1))
    before = seed_outputs(project)
    paths = ExperimentPaths(project, EXP)
    with monkeypatch.context() as m:
        read_only(m, paths.train_results)
        with pytest.raises(PublishError) as err:
            train(project, params_with(alpha=0.3))
    assert re.fullmatch(f"train: ttt seed 1: cannot write the new outputs: {re.escape(str(paths.train_results))}/"
                        f"\\.seed-1\\.tmp-new-[^/ ]+: Permission denied; {NOTHING}; the checkpoint is kept "
                        f"\\({re.escape(str(paths.checkpoint(SEED)))}\\): a rerun resumes from it", str(err.value)), \
        str(err.value)
    assert seed_outputs(project) == before
    assert (paths.checkpoint(SEED) / "checkpoint.json").is_file()


def evaluate(root: Path, data: dict):
    from boardrl.experiments.evaluate import run_evaluate

    return run_evaluate(parse_params(data).spec(EXP), root)


def eval_outputs(root: Path) -> tuple[bytes, bytes]:
    paths = ExperimentPaths(root, EXP)
    return paths.evaluation.read_bytes(), paths.metrics.read_bytes()


@pytest.mark.parametrize("k", range(1, 6))  # the journal, then results and metrics, each moved aside and replaced
def test_evaluate_publication_failing_at_any_rename_keeps_results_and_metrics_of_one_evaluation(project,
                                                                                                monkeypatch, k):
    data = params_with()
    train(project, data)
    evaluate(project, data)
    before = eval_outputs(project)
    with monkeypatch.context() as m:
        fail_commit_at(m, k)
        with pytest.raises(PublishError, match=f"^evaluate: ttt: .*Permission denied; {NOTHING}$"):
            evaluate(project, params_with(games=30))
    assert eval_outputs(project) == before
    assert sorted(p.name for p in (project / "results" / "eval").iterdir()) == ["ttt.json"]
    evaluate(project, params_with(games=30))
    results, metrics = (json.loads(b) for b in eval_outputs(project))
    assert results["seeds"][str(SEED)]["opponents"]["random"]["combined"]["games"] == 30
    assert metrics["vs:random"]["win"] == round(results["across_seeds"]["opponents"]["random"]["win"]["iqm"], 4)


def test_a_read_only_metrics_folder_leaves_the_old_evaluation_too(project, monkeypatch):
    data = params_with()
    train(project, data)
    evaluate(project, data)
    before = eval_outputs(project)
    metrics = ExperimentPaths(project, EXP).metrics.parent
    with monkeypatch.context() as m:
        read_only(m, metrics)
        folder = re.escape(str(metrics))
        with pytest.raises(PublishError, match=f"^evaluate: ttt: cannot write the new outputs: {folder}/"
                                               f".*: Permission denied; {NOTHING}$"):
            evaluate(project, params_with(games=30))
    assert eval_outputs(project) == before


@pytest.mark.parametrize("k", range(1, 4))  # the journal, then the curves folder moved aside and replaced
def test_curve_publication_failing_at_any_rename_keeps_the_old_curves(project, monkeypatch, k):
    from boardrl.experiments.curve import run_curve

    data = params_with()
    train(project, data)
    run_curve(parse_params(data).spec(EXP), project, verbose=False)
    curves = ExperimentPaths(project, EXP).curves
    before = tree(curves.parent)
    data["train"]["eval_games"] = 8
    with monkeypatch.context() as m:
        fail_commit_at(m, k)
        with pytest.raises(BoardRLError, match=f"^curve: ttt: .*Permission denied; {NOTHING}$"):
            run_curve(parse_params(data).spec(EXP), project, verbose=False)
    assert tree(curves.parent) == before


def test_the_full_profile_still_gives_the_published_runs_settings():
    """Every experiment, sweep and evaluation setting of params.yaml + profiles/full.yaml is the published full
    run's (published/full/params.yaml), up to params spelled out at their defaults: an edit to the default
    profile that the overlay does not pin would make `make repro PROFILE=full` retrain or replay what was
    published under other settings, and its recheck would fail."""
    published = parse_params(yaml.safe_load((ROOT / "published" / "full" / "params.yaml").read_text()))
    now = parse_params(effective_params(ROOT, "full"))
    assert list(now.experiments) == list(published.experiments)
    for exp_id in published.experiments:
        assert now.spec(exp_id) == published.spec(exp_id), exp_id
        assert now.learner_params(exp_id) == published.learner_params(exp_id), exp_id
    assert now.sweeps == published.sweeps and now.tournaments == published.tournaments
    assert now.evaluate == published.evaluate and now.train == published.train
