"""MLflow helpers: the sqlite URI, artifact folders, temp-experiment workspaces, tagged stage runs."""

from __future__ import annotations

import os

import pytest

from boardrl.tracking import mlflow_runs as mr


def test_uri_and_artifact_location_are_absolute(tmp_path):
    assert mr.tracking_uri(tmp_path) == f"sqlite:///{tmp_path.resolve().as_posix()}/mlflow.db"
    assert mr.tracking_uri(tmp_path).startswith("sqlite:////")  # sqlite:/// + an absolute path
    assert mr.artifact_location(tmp_path, "tictactoe") == (tmp_path.resolve() / "mlartifacts" / "tictactoe").as_uri()


def test_dvc_temp_workspaces_track_into_the_project(tmp_path):
    temp_ws = tmp_path / "proj" / ".dvc" / "tmp" / "exps" / "tmpab12cd"
    temp_ws.mkdir(parents=True)
    assert mr.tracking_root(temp_ws) == (tmp_path / "proj").resolve()
    assert mr.tracking_root(tmp_path / "proj") == (tmp_path / "proj").resolve()


def test_flatten_and_metric_keys():
    assert mr.flatten({"a": {"b": 1, "c": [1, 2]}, "d": "x", "e": None}) == {"a.b": "1", "a.c": "[1,2]", "d": "x",
                                                                             "e": "null"}
    assert mr.metric_key("curve", "mcts:simulations=200", "combined", "win") == "curve/mcts_simulations_200/combined/win"


@pytest.mark.timeout(120)
def test_stage_run_logs_into_the_project_database(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a stray ./mlruns would appear here
    monkeypatch.setenv("DVC_EXP_NAME", "exp-test")
    saved = os.environ.get("MLFLOW_TRACKING_URI")
    try:
        with mr.stage_run(tmp_path, stage="train", mlflow_experiment="tictactoe", run_name="train ttt",
                          params={"train": {"alpha": 0.1}}, params_hash="abc123", experiment="ttt",
                          game="tictactoe", learner="tabular_q", seed=5) as run:
            mr.log_metrics({"curve/random/combined/win": 0.5, "skipped": None}, step=100)
            mr.log_metrics({"curve/random/combined/win": 0.9}, step=1000)
        import mlflow

        client = mlflow.MlflowClient(tracking_uri=mr.tracking_uri(tmp_path))
        exp = client.get_experiment_by_name("tictactoe")
        assert exp.artifact_location == mr.artifact_location(tmp_path, "tictactoe")
        got = client.get_run(run.info.run_id)
        tags = got.data.tags
        keys = ("stage", "experiment", "game", "learner", "params_hash", "dvc_exp_name", "git_commit", "seed")
        assert {k: tags[k] for k in keys} == {
            "stage": "train", "experiment": "ttt", "game": "tictactoe", "learner": "tabular_q",
            "params_hash": "abc123", "dvc_exp_name": "exp-test", "git_commit": "unknown", "seed": "5"}
        assert got.data.params == {"train.alpha": "0.1"}
        hist = client.get_metric_history(run.info.run_id, "curve/random/combined/win")
        assert [(m.step, m.value) for m in hist] == [(100, 0.5), (1000, 0.9)]
        assert "skipped" not in got.data.metrics
        assert got.info.artifact_uri.startswith((tmp_path.resolve() / "mlartifacts" / "tictactoe").as_uri())
        assert (tmp_path / "mlflow.db").is_file() and not (tmp_path / "mlruns").exists()
    finally:
        import mlflow

        mlflow.set_tracking_uri(None)  # back to MLflow's default for later tests in this process
        if saved is None:
            os.environ.pop("MLFLOW_TRACKING_URI", None)
        else:
            os.environ["MLFLOW_TRACKING_URI"] = saved


@pytest.mark.timeout(120)
def test_a_seed_run_has_its_seed_and_not_the_parents_seed_list(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    saved = os.environ.get("MLFLOW_TRACKING_URI")
    params = {"seeds": [0, 1, 2], "params": {"alpha": 0.1}}
    try:
        with mr.stage_run(tmp_path, stage="train", mlflow_experiment="tictactoe", run_name="ttt (train)",
                          params=params, params_hash="h", experiment="ttt", seeds="0,1,2") as parent:
            with mr.stage_run(tmp_path, stage="train", mlflow_experiment="tictactoe", run_name="ttt seed 1 (train)",
                              params=params, params_hash="h", nested=True, experiment="ttt", seed=1) as child:
                pass
        import mlflow

        client = mlflow.MlflowClient(tracking_uri=mr.tracking_uri(tmp_path))
        assert client.get_run(parent.info.run_id).data.params == {"seeds": "[0,1,2]", "params.alpha": "0.1"}
        seed_run = client.get_run(child.info.run_id).data
        assert seed_run.params == {"params.alpha": "0.1"} and seed_run.tags["seed"] == "1"
        assert seed_run.tags["mlflow.parentRunId"] == parent.info.run_id
    finally:
        import mlflow

        mlflow.set_tracking_uri(None)
        if saved is None:
            os.environ.pop("MLFLOW_TRACKING_URI", None)
        else:
            os.environ["MLFLOW_TRACKING_URI"] = saved
