"""Provenance: commit, dirty flag, DVC experiment name and params hash, robust outside git."""

from __future__ import annotations

import subprocess

from boardrl.tracking import provenance as prov


def _git(cwd, *args):
    return subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


def test_commit_and_dirty_flag(tmp_path):
    assert prov.git_commit(tmp_path) == "unknown"  # not a repository
    _git(tmp_path, "init", "-q")
    assert prov.git_commit(tmp_path) == "unknown"  # no commit yet
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "f.py").write_text("1")
    (tmp_path / "dvc.lock").write_text("a")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "c")
    assert prov.git_commit(tmp_path) == _git(tmp_path, "rev-parse", "HEAD")
    assert prov.source_dirty(tmp_path) is False
    (tmp_path / "dvc.lock").write_text("b")  # the pipeline rewrote its lock file: the source is still the commit's
    assert prov.source_dirty(tmp_path) is False
    (tmp_path / "src" / "new.py").write_text("x")  # a new source file the commit does not have
    assert prov.source_dirty(tmp_path) is True
    (tmp_path / "src" / "new.py").unlink()
    (tmp_path / "src" / "f.py").write_text("2")
    assert prov.source_dirty(tmp_path) is True


def test_dvc_exp_name(monkeypatch):
    monkeypatch.delenv("DVC_EXP_NAME", raising=False)
    assert prov.dvc_exp_name() is None
    monkeypatch.setenv("DVC_EXP_NAME", "burly-bass")
    assert prov.dvc_exp_name() == "burly-bass"


def test_params_hash_is_order_free_and_value_sensitive():
    a = {"seed": 0, "train": {"alpha": 0.1, "games": 10}}
    b = {"train": {"games": 10, "alpha": 0.1}, "seed": 0}
    assert prov.params_hash(a) == prov.params_hash(b)
    assert len(prov.params_hash(a)) == 16
    assert prov.params_hash(a) != prov.params_hash({"seed": 0, "train": {"alpha": 0.1, "games": 11}})


def test_collect_has_the_summary_keys(tmp_path, monkeypatch):
    monkeypatch.setenv("DVC_EXP_NAME", "exp-1")
    p = prov.collect(tmp_path, experiment="ttt_q", game="tictactoe", learner="tabular_q", seed=3, profile="tiny",
                     unit="games", budget=10, params_slice={"x": 1}, seconds=1.23456, mlflow_run_id="abc")
    assert list(p.to_dict()) == ["experiment", "game", "learner", "seed", "profile", "unit", "budget", "seconds",
                                 "mlflow_run_id", "git_commit", "params_hash", "dvc_exp_name"]
    assert p.seconds == 1.235 and p.dvc_exp_name == "exp-1" and p.git_commit == "unknown"
