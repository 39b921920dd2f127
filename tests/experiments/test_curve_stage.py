"""Stage curve@<id>: the learning curve played against the train stage's snapshots.

The curve's numbers must not depend on where they are measured: every registered learner (found through the
registry) trains its ``small_run`` once, with an evaluation callback that both saves the snapshot (as the train
stage does) and plays it (as training used to and a sweep still does); the curve played afterwards from the saved
snapshots must equal the one measured in training, row for row.  The stage functions (``run_train``,
``run_curve``) then run in a throw-away project: outputs, MLflow runs, no-opponent experiments, failures.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from boardrl.agents import make_agent
from boardrl.config import parse_params
from boardrl.errors import BoardRLError
from boardrl.experiments.curve import CurveEvaluator, CurveOpponent, curve_rows, run_curve, snapshot_curve
from boardrl.paths import ExperimentPaths
from boardrl.experiments.snapshots import INDEX, SnapshotSaver, read_index, snapshot_index, stage_snapshots
from boardrl.games import make_game
from boardrl.learn import learner_class, learner_names, make_learner
from boardrl.tracking import curve as curves
from helpers import clear_tracking_env

ROOT = Path(__file__).resolve().parents[2]
SEED = 5
EXP = "ttt"


def opponents(game) -> list[CurveOpponent]:
    return [CurveOpponent("random", make_agent(game, "random"), 4)]


@pytest.mark.parametrize("name", list(learner_names()))
def test_the_curve_from_snapshots_equals_the_curve_measured_in_training(name, tmp_path):
    game_id, params = learner_class(name).small_run
    game = make_game(game_id)
    learner = make_learner(name)
    total = learner.budget(learner.check_params(params))
    evaluator = CurveEvaluator(game, opponents(game), SEED, log_to_mlflow=False, verbose=False)
    saver = SnapshotSaver(tmp_path / "staging")

    def on_eval(step: int, agent) -> dict:
        saver(step, agent)
        return evaluator(step, agent)

    learner.train(game, params, seed=SEED, checkpoint_dir=tmp_path / "ck", eval_points=[0, total // 3, total],
                  on_eval=on_eval)
    index = snapshot_index(experiment=EXP, game=game_id, learner=name, seed=SEED, unit=learner.unit, budget=total,
                           curve_points=learner.curve_points, saved=True)
    published = tmp_path / "snapshots"
    published.mkdir()
    stage_snapshots(tmp_path / "staging", published, index)
    measured = sorted(set(learner.curve_points.values()))
    assert read_index(published)["snapshots"] == sorted(learner.evaluations) == measured
    rows = snapshot_curve(game, name, opponents(game), SEED, published, verbose=False)
    assert rows and rows == curve_rows(learner.evaluations)


# ---------------------------------------------------------------------------------------------- the stage
def params_with(**experiment) -> dict:
    """params.yaml with one small tic-tac-toe experiment ``EXP`` (two seeds, checkpoints every 500 games)."""
    data = yaml.safe_load((ROOT / "params.yaml").read_text())
    data["experiments"] = {EXP: {"game": "tictactoe", "learner": "tabular_q", "seeds": [1, 2],
                                 "params": {"games": 1500, "parallel_games": 64, "checkpoint_every": 500},
                                 **experiment}}
    data["train"].update(eval_games=6, curve={"first": 100, "per_decade": 1, "include_zero": True})
    data["train"]["opponents"]["tictactoe"] = ["random", {"agent": "tactical", "games": 4}]
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


def train_and_curve(root: Path, data: dict) -> tuple[list, dict]:
    from boardrl.experiments.train import run_train

    params = parse_params(data)
    return run_train(params.spec(EXP), root, progress=False), run_curve(params.spec(EXP), root, verbose=False)


def test_the_stages_write_snapshots_curves_and_linked_mlflow_runs(project):
    from mlflow import MlflowClient

    trained, curve = train_and_curve(project, params_with())
    paths = ExperimentPaths(project, EXP)
    for t in trained:
        index = read_index(paths.seed_snapshots(t.seed))
        assert index["snapshots"] == sorted(set(index["curve_points"].values())) == sorted(t.evaluations)
        assert sorted(p.name for p in paths.seed_snapshots(t.seed).iterdir()) == sorted(
            [INDEX, *map(str, index["snapshots"])])
        assert not paths.snapshot_staging(t.seed).exists() and not paths.checkpoint(t.seed).exists()
        text = paths.curve(t.seed).read_text()
        assert text.splitlines()[0] == "\t".join(curves.HEADER)
        rows = [line.split("\t") for line in text.splitlines()[1:]]
        assert sorted({int(r[0]) for r in rows}) == index["snapshots"]
        assert {r[1] for r in rows} == {"random", "tactical"}
        assert {r[6] for r in rows if r[1] == "tactical" and r[2] == "combined"} == {"4"}  # its own games
        assert {r[6] for r in rows if r[1] == "random" and r[2] == "combined"} == {"6"}  # train.eval_games
        assert len(rows) == len(curve[t.seed])

        client = MlflowClient(f"sqlite:///{project}/mlflow.db")
        train_run = client.get_run(t.summary["mlflow_run_id"])
        curve_run = client.get_run(train_run.data.tags["curve_run_id"])
        assert curve_run.data.tags["train_run_id"] == train_run.info.run_id
        assert curve_run.data.tags["stage"] == "curve" and curve_run.data.tags["seed"] == str(t.seed)
        assert curve_run.data.tags["mlflow.parentRunId"]  # nested under the stage's run
        history = client.get_metric_history(curve_run.info.run_id, "curve/random/combined/win")
        assert sorted(m.step for m in history) == index["snapshots"]
        assert not client.get_metric_history(train_run.info.run_id, "curve/random/combined/win")
        assert {a.path for a in client.list_artifacts(curve_run.info.run_id)} >= {"curve.png", f"seed-{t.seed}.tsv"}


def test_the_stage_curve_equals_the_in_training_curve(project):
    """The same seeds as training used: the curve stage's TSV is byte for byte the in-training curve's."""
    from boardrl.experiments.train import train_seed

    data = params_with()
    train_and_curve(project, data)
    _, learner = train_seed(parse_params(data).spec(EXP), 2, project / "reference-ck", verbose=False)
    reference = curves.write_tsv(project / "reference.tsv", curve_rows(learner.evaluations))
    assert ExperimentPaths(project, EXP).curve(2).read_bytes() == reference.read_bytes()


def test_no_curve_opponents_no_snapshots_and_an_empty_curve_the_report_reads(project):
    from boardrl.report.results import read_curve

    train_and_curve(project, params_with(opponents=[]))
    paths = ExperimentPaths(project, EXP)
    for seed in (1, 2):
        assert [p.name for p in paths.seed_snapshots(seed).iterdir()] == [INDEX]
        assert read_index(paths.seed_snapshots(seed))["snapshots"] == []
        assert paths.curve(seed).read_text() == "\t".join(curves.HEADER) + "\n"
        assert read_curve(paths.curve(seed)).empty


def test_the_curve_stage_needs_snapshots_and_keeps_the_old_curves_when_one_seed_fails(project):
    import shutil

    data = params_with()
    with pytest.raises(BoardRLError, match=r"no snapshots in .*seed-1: index.json is missing"):
        run_curve(parse_params(data).spec(EXP), project, verbose=False)
    assert not (project / "results").exists()  # checked before any work
    train_and_curve(project, data)
    paths = ExperimentPaths(project, EXP)
    before = {s: paths.curve(s).read_bytes() for s in (1, 2)}
    index = paths.seed_snapshots(2) / INDEX
    good = index.read_text()
    index.write_text(json.dumps({**json.loads(good), "seed": 1}))  # seed 1's snapshots under seed 2
    with pytest.raises(BoardRLError, match=r"seed-2: snapshots of tabular_q on tictactoe seed 1, not tabular_q"):
        run_curve(parse_params(data).spec(EXP), project, verbose=False)
    index.write_text(good)
    shutil.rmtree(paths.seed_snapshots(2) / str(json.loads(good)["snapshots"][-1]))  # fails after seed 1 played
    data["train"]["eval_games"] = 8
    with pytest.raises(BoardRLError, match=r"agent.json is missing"):
        run_curve(parse_params(data).spec(EXP), project, verbose=False)
    assert {s: paths.curve(s).read_bytes() for s in (1, 2)} == before  # seed 1's new curve was not published alone
    assert sorted(p.name for p in paths.curves.parent.iterdir()) == [EXP]  # no temporaries left
