"""params.yaml validation: the shipped profiles load; every kind of mistake is one line naming its key."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
import yaml

from boardrl.config import (
    ConfigError,
    CurveParams,
    eval_points,
    evaluate_slice,
    load_params,
    parse_params,
    train_slice,
)
from boardrl.tracking.provenance import params_hash

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def raw() -> dict:
    return yaml.safe_load((ROOT / "params.yaml").read_text())


def mutate(raw: dict, path: str, value=None, delete: bool = False) -> dict:
    """A deep copy of ``raw`` with the dotted ``path`` (list indices as [i]) set to ``value`` or deleted."""
    data = copy.deepcopy(raw)
    parts = [int(p) if p.isdigit() else p for p in re.split(r"\.|\[|\]\.?", path) if p != ""]
    node = data
    for p in parts[:-1]:
        node = node[p]
    if delete:
        del node[parts[-1]]
    else:
        node[parts[-1]] = value
    return data


def error_of(data: dict) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        parse_params(data)
    assert "\n" not in str(info.value)
    return info.value


def test_shipped_profiles_load():
    full = load_params(ROOT / "params.yaml")
    tiny = load_params(ROOT / "params.tiny.yaml")
    assert [(e.game, e.agent) for e in full.experiments][:2] == [("tictactoe", "tabular_q"),
                                                                  ("dots_and_boxes_2x2", "tabular_q")]
    assert full.evaluate.games >= 1000  # the default: at least 1,000 games per opponent
    assert full.data.timeout_s == 20 and full.data.source == "auto"
    assert {e.game for e in tiny.experiments} >= {"tictactoe", "dots_and_boxes_2x2", "connect4"}


@pytest.mark.parametrize(
    "path, value, key, problem",
    [
        ("bogus", 1, "bogus", "unknown key; known keys here: seed, data, prepare, experiments, train, evaluate"),
        ("train.curve.firts", 100, "train.curve.firts", "unknown key; known keys here: first, per_decade, include_zero"),
        ("train.learners.tictactoe.tabular_q.alpah", 0.1, "train.learners.tictactoe.tabular_q.alpah", "unknown key"),
        ("experiments[0].game", "chess", "experiments[0].game", "unknown game 'chess'"),
        ("experiments[1].agent", "dqn9000", "experiments[1].agent", "unknown learner 'dqn9000'; known learners: "),
        ("train.opponents.tictactoe", ["random", "grandmaster"], "train.opponents.tictactoe[1]",
         "unknown agent 'grandmaster'"),
        ("evaluate.opponents.dots_and_boxes_2x2", ["random", "tactical"], "evaluate.opponents.dots_and_boxes_2x2[1]",
         "does not play dots_and_boxes_2x2"),
        ("evaluate.opponents.tictactoe", ["human"], "evaluate.opponents.tictactoe[0]", "terminal"),
        ("evaluate.opponents.tictactoe", ["random", "random"], "evaluate.opponents.tictactoe[1]", "listed twice"),
        ("train.eval_games", "many", "train.eval_games", "valid integer"),
        ("train.eval_games", 2.5, "train.eval_games", "valid integer"),
        ("train.learners.tictactoe.tabular_q.games", -5, "train.learners.tictactoe.tabular_q.games",
         "greater than or equal to 1"),
        ("evaluate.games", -1, "evaluate.games", "greater than or equal to 2"),
        ("evaluate.optimal_positions", -3, "evaluate.optimal_positions", "greater than or equal to 0"),
        ("data.source", "ftp", "data.source", "'auto', 'online' or 'vendored'"),
        ("data.timeout_s", 0, "data.timeout_s", "greater than 0"),
        ("seed", -1, "seed", "greater than or equal to 0"),
        ("evaluate.optimal_plies.connect4", [30, 20], "evaluate.optimal_plies.connect4", "lo <= hi"),
        ("train.learners.tictactoe.tabular_q.opponent", "nobody", "train.learners.tictactoe.tabular_q.opponent",
         "unknown agent 'nobody'"),
        ("experiments", [], "experiments", "at least 1 item"),
    ],
)
def test_bad_values_name_their_key(raw, path, value, key, problem):
    err = error_of(mutate(raw, path, value))
    assert err.key == key
    assert problem in err.problem
    assert str(err).startswith(f"params.yaml: {key}: ")


def test_missing_sections_are_named(raw):
    assert error_of(mutate(raw, "train.curve", delete=True)).key == "train.curve"
    err = error_of(mutate(raw, "train.learners.dots_and_boxes_2x2", delete=True))
    assert err.key == "train.learners.dots_and_boxes_2x2.tabular_q" and "missing" in err.problem
    err = error_of(mutate(raw, "evaluate.opponents.tictactoe", delete=True))
    assert err.key == "evaluate.opponents.tictactoe" and "missing" in err.problem


def test_duplicate_experiment(raw):
    data = mutate(raw, "experiments", [{"game": "tictactoe", "agent": "tabular_q"}] * 2)
    assert error_of(data).key == "experiments[1]"


def test_several_problems_are_counted_on_one_line(raw):
    data = mutate(mutate(raw, "seed", -1), "train.eval_games", "x")
    err = error_of(data)
    assert err.key == "seed" and "(and 1 more problem)" in err.problem


def test_file_errors(tmp_path):
    bad = tmp_path / "params.yaml"
    bad.write_text("seed: [1, 2\n")
    with pytest.raises(ConfigError, match=r"^params.yaml: not valid YAML: line \d+"):
        load_params(bad)
    bad.write_text("- just\n- a list\n")
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        load_params(bad)
    with pytest.raises(ConfigError, match="cannot read"):
        load_params(tmp_path / "nope.yaml")


def test_eval_points_are_log_spaced_and_end_at_the_budget():
    curve = CurveParams(first=100, per_decade=3, include_zero=True)
    assert eval_points(1_000_000, curve) == [0, 100, 220, 460, 1000, 2200, 4600, 10000, 22000, 46000, 100000,
                                             220000, 460000, 1000000]
    assert eval_points(1500, CurveParams(first=100, per_decade=1, include_zero=False)) == [100, 1000, 1500]
    assert eval_points(50, CurveParams(first=100, per_decade=2, include_zero=True)) == [0, 50]
    pts = eval_points(70_000, CurveParams(first=100, per_decade=2, include_zero=False))
    assert {100, 1000, 10000, 70000} <= set(pts) and pts == sorted(set(pts))


def test_slices_isolate_games(raw):
    """Changing one game's params leaves the other game's stage hashes alone (DVC reruns only that game)."""
    base = parse_params(raw)
    changed = parse_params(mutate(raw, "train.learners.dots_and_boxes_2x2.tabular_q.alpha", 0.2))
    for fn in (train_slice, evaluate_slice):
        assert params_hash(fn(base, "tictactoe", "tabular_q")) == params_hash(fn(changed, "tictactoe", "tabular_q"))
        assert params_hash(fn(base, "dots_and_boxes_2x2", "tabular_q")) != params_hash(
            fn(changed, "dots_and_boxes_2x2", "tabular_q"))


def test_dvc_yaml_params_exist_for_every_experiment(raw):
    """Every params key a matrix stage declares resolves in params.yaml (else DVC stops with a missing param)."""
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    for exp in raw["experiments"]:
        for name in ("train", "evaluate"):
            for key in stages[name]["params"]:
                key = key.replace("${item.experiment.game}", exp["game"]).replace("${item.experiment.agent}",
                                                                                  exp["agent"])
                node = raw
                for part in key.split("."):
                    assert isinstance(node, dict) and part in node, f"{name}: params key {key} not in params.yaml"
                    node = node[part]


def test_sigterm_during_a_stage_unwinds_and_prints_one_line(tmp_path):
    """A stage stopped with SIGTERM runs its cleanup (so MLflow closes the run as FAILED) and exits 128+15."""
    import subprocess
    import sys
    import textwrap

    marker = tmp_path / "unwound"
    script = textwrap.dedent(f"""
        import os, signal
        from boardrl.config import run_experiment_stage

        def run(params, game, agent):
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                signal.pause()
            finally:
                open({str(marker)!r}, "w").write(game)

        run_experiment_stage({str(ROOT / "params.yaml")!r}, "tictactoe", "tabular_q", run)
    """)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert res.returncode == 143
    assert res.stderr.strip().splitlines() == ["error: stopped by SIGTERM; previous outputs are kept"]
    assert marker.read_text() == "tictactoe"
