"""build/inputs/<id>.<stage>.json: what train@<id>, curve@<id> and evaluate@<id> depend on.

The train stage's file must not change with the learning curve's opponents or games per point (they are
curve@<id>'s), nor with the curve code; the curve stage's must.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from boardrl.config import parse_params
from boardrl.experiments import inputs

ROOT = Path(__file__).resolve().parents[2]
TTT = "tictactoe_tabular_q"


@pytest.fixture(scope="module")
def raw() -> dict:
    return yaml.safe_load((ROOT / "params.yaml").read_text())


def files(data: dict, tmp_path: Path) -> dict[str, dict]:
    params = parse_params(data)
    learners = inputs.experiment_learners(params)
    return {stage: inputs.stage_inputs(params.spec(TTT), stage, tmp_path, learners) for stage in inputs.SLICES}


def edited(raw: dict, fn) -> dict:
    data = copy.deepcopy(raw)
    fn(data)
    return data


@pytest.mark.parametrize("change, train_changes, curve_changes, evaluate_changes", [
    (lambda d: d["train"].update(eval_games=77), False, True, False),
    (lambda d: d["train"]["opponents"].update(tictactoe=["random"]), False, True, False),
    (lambda d: d["experiments"][TTT].update(opponents=["random", {"agent": "perfect", "games": 10}]), False, True,
     False),
    (lambda d: d["experiments"][TTT].update(opponents=[]), True, True, False),  # no curve: no snapshots to save
    (lambda d: d["experiments"][TTT].update(description="another word"), False, False, False),
    (lambda d: d["train"]["curve"].update(first=1000), True, False, False),  # other points: other snapshots
    (lambda d: d["experiments"][TTT]["params"].update(alpha=0.123), True, True, True),
    (lambda d: d["evaluate"].update(games=123), False, False, True),
])
def test_each_stage_file_follows_its_own_params(raw, tmp_path, change, train_changes, curve_changes,
                                                evaluate_changes):
    before, after = files(raw, tmp_path), files(edited(raw, change), tmp_path)
    assert [before[s] != after[s] for s in ("train", "curve", "evaluate")] == [
        train_changes, curve_changes, evaluate_changes]


def test_the_train_file_holds_the_training_slice_and_not_the_curve_code(raw, tmp_path):
    got = files(raw, tmp_path)
    train, curve = got["train"], got["curve"]
    assert set(train["params"]) == {"experiment", "game", "learner", "seeds", "learner_params", "train"}
    assert set(train["params"]["train"]) == {"curve_points", "snapshots"}
    assert "opponents" not in str(train["params"]) and "eval_games" not in str(train["params"])
    assert "boardrl/experiments/snapshots.py" in train["code"]
    assert "boardrl/experiments/curve.py" not in train["code"]  # train_seed's in-training curve is a sweep's
    # the curve opponent `perfect` is played by curve@<id> only (the experiment trains by self-play)
    assert "boardrl/agents/perfect.py" in curve["code"] and "boardrl/agents/perfect.py" not in train["code"]
    assert "boardrl/experiments/curve.py" in curve["code"] and "boardrl/learn/tabular_q.py" in curve["code"]
    assert [o["agent"] for o in curve["params"]["curve"]["opponents"]] == raw["train"]["opponents"]["tictactoe"]
    assert "boardrl/experiments/curve.py" in inputs.sweep_inputs(parse_params(raw), "tictactoe_tabular_q")["code"]


def test_write_inputs_writes_a_curve_file_per_experiment(raw, tmp_path):
    data = edited(raw, lambda d: d.update(sweeps={}, tournaments={}))
    data["experiments"] = {TTT: data["experiments"][TTT]}
    written = {p.name for p in inputs.write_inputs(parse_params(data), tmp_path)}
    assert {f"{TTT}.train.json", f"{TTT}.curve.json", f"{TTT}.evaluate.json"} <= written


def test_the_report_stage_depends_on_all_the_code_and_settings_it_reads():
    """report/ validates params.yaml with config/ and asks solvers/conniption.py for forced wins: both are in its
    fingerprint, and dvc.yaml makes the stage depend on that fingerprint and on params.yaml."""
    code = inputs.report_inputs()["code"]
    for path in ("boardrl/report/build.py", "boardrl/report/alphazero_section.py", "boardrl/config/schema.py",
                 "boardrl/config/checks.py", "boardrl/solvers/conniption.py"):
        assert path in code, path
    assert not any(p.startswith(("boardrl/learn/dqn", "boardrl/web/", "boardrl/tools/")) for p in code)
    deps = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]["report"]["deps"]
    assert {"build/inputs/report.json", "params.yaml"} <= set(deps)
