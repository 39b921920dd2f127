"""Bounded params: counts have ceilings, booleans are not numbers, a YAML key may appear once; each is one line.

The shipped params.yaml and every profile keep validating (tests/test_config.py); here the refusals.
"""

from __future__ import annotations

import copy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from boardrl.config import (
    LEARNER_LIMITS,
    MAX_CHECKPOINTS,
    MAX_GAMES,
    MAX_SEARCH_NODES,
    MAX_UNITS,
    ConfigError,
    load_params,
    parse_params,
    read_yaml,
)
from boardrl.experiments.profiles import effective_params

ROOT = Path(__file__).resolve().parents[1]
TTT = "tictactoe_tabular_q"


@pytest.fixture(scope="module")
def raw() -> dict:
    """params.yaml with two experiments and the game sections they need (validation, not the shipped set)."""
    data = yaml.safe_load((ROOT / "params.yaml").read_text())
    data["experiments"] = {k: data["experiments"][k] for k in (TTT, "tictactoe_td0", "tictactoe_alphazero")}
    data["train"]["opponents"] = {"tictactoe": data["train"]["opponents"]["tictactoe"]}
    data["evaluate"]["per_game"] = {"tictactoe": data["evaluate"]["per_game"]["tictactoe"]}
    data["tournaments"] = {}
    return data


def refused(raw: dict, path: str, value) -> ConfigError:
    """The one-line error of ``raw`` with the dotted ``path`` set to ``value``."""
    data = copy.deepcopy(raw)
    *parents, last = path.split(".")
    node = data
    for part in parents:
        node = node[part]
    node[last] = value
    with pytest.raises(ConfigError) as info:
        parse_params(data)
    assert "\n" not in str(info.value)
    return info.value


@pytest.mark.parametrize("path", [
    "evaluate.games", "train.eval_games", "train.curve.first", "evaluate.optimal_positions",
    f"experiments.{TTT}.params.games", f"experiments.{TTT}.params.checkpoint_every",
    "experiments.tictactoe_alphazero.params.simulations", "experiments.tictactoe_alphazero.params.window",
    "experiments.tictactoe_td0.params.exploration.decay_games",
])
def test_an_astronomical_count_is_refused_naming_its_key(raw, path):
    err = refused(raw, path, 10**30)
    assert err.key == path
    assert "1000000000000000000000000000000" in err.problem.replace(",", "")


@pytest.mark.parametrize("path", [
    "evaluate.games", "train.eval_games", "evaluate.seed", "data.timeout_s", f"experiments.{TTT}.params.games",
    f"experiments.{TTT}.params.alpha", "experiments.tictactoe_td0.params.exploration.decay_games",
])
def test_a_boolean_is_not_a_number(raw, path):
    err = refused(raw, path, True)
    assert err.key == path and "a boolean is not a number" in err.problem


def test_numbers_are_not_booleans_or_text(raw):
    assert refused(raw, "train.curve.include_zero", 1).key == "train.curve.include_zero"
    assert refused(raw, "evaluate.games", "1000").key == "evaluate.games"


def test_ceilings_sit_just_above_and_below_the_limit(raw):
    def ok(path, value):
        data = copy.deepcopy(raw)
        *parents, last = path.split(".")
        node = data
        for part in parents:
            node = node[part]
        node[last] = value
        parse_params(data)

    ok("evaluate.games", MAX_GAMES)
    assert refused(raw, "evaluate.games", MAX_GAMES + 1).key == "evaluate.games"
    games = f"experiments.{TTT}.params"
    ok(games, {"games": MAX_UNITS, "checkpoint_every": MAX_UNITS // MAX_CHECKPOINTS})
    assert refused(raw, games, {"games": MAX_UNITS + 1}).key == f"{games}.games"


def test_too_many_checkpoints_are_refused(raw):
    err = refused(raw, f"experiments.{TTT}.params", {"games": 10**6, "checkpoint_every": 10})
    assert err.key == f"experiments.{TTT}.params.checkpoint_every" and f"{MAX_CHECKPOINTS:,} checkpoints" in err.problem


def test_network_and_search_sizes_are_bounded(raw):
    hidden = "experiments.tictactoe_td0.params.network.hidden"
    assert refused(raw, hidden, [30000, 30000]).key == f"{hidden}[0]"
    assert refused(raw, hidden, [8] * 17).key == hidden
    assert refused(raw, hidden, [True]).key == f"{hidden}[0]"
    limit = LEARNER_LIMITS["simulations"][0]
    err = refused(raw, "experiments.tictactoe_alphazero.params",
                  {"simulations": limit, "parallel_games": MAX_SEARCH_NODES // limit + 1})
    assert err.key == "experiments.tictactoe_alphazero.params.parallel_games" and "tree nodes" in err.problem


def test_search_sizes_in_agent_specs_are_bounded(raw):
    ladder = "evaluate.per_game.tictactoe.opponents"
    err = refused(raw, ladder, ["random", "mcts:simulations=100000000"])
    assert err.key == f"{ladder}[1]" and "simulations is at most" in err.problem
    err = refused(raw, ladder, ["random", f"model:{TTT},simulations=2000000000"])
    assert err.key == f"{ladder}[1]" and "simulations is at most" in err.problem


def test_a_duplicate_key_is_refused_with_its_path_and_lines(tmp_path):
    text = (ROOT / "params.yaml").read_text()
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  eval_games:"))
    lines.insert(at + 1, "  eval_games: 5")  # a second value right below the first: PyYAML would keep it
    path = tmp_path / "params.yaml"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError) as info:
        load_params(path)
    assert str(info.value) == (f"params.yaml: train.eval_games: key given twice (lines {at + 1} and {at + 2}); "
                               "YAML allows a key once per mapping: keep one")


def test_duplicates_are_found_inside_lists_and_anchors_are_not_duplicates(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("a: &base {k: 1}\nb:\n  <<: *base\n  k: 2\nc: [1, {x: 1, y: 2, x: 3}]\n")
    with pytest.raises(ConfigError, match=r"^x.yaml: c\[1\].x: key given twice \(lines 5 and 5\)"):
        read_yaml(path)
    path.write_text("a: &base {k: 1}\nb:\n  <<: *base\n  k: 2\nc: *base\n")
    assert read_yaml(path) == {"a": {"k": 1}, "b": {"k": 2}, "c": {"k": 1}}


def project_copy(tmp_path: Path) -> Path:
    """params.yaml and profiles/ in a folder of their own (what the profile check reads)."""
    shutil.copy(ROOT / "params.yaml", tmp_path / "params.yaml")
    shutil.copytree(ROOT / "profiles", tmp_path / "profiles")
    return tmp_path


def check_profile(root: Path, name: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "boardrl.experiments.profiles", "check", name, "--root", str(root)],
                          capture_output=True, text=True, timeout=300)


def test_a_duplicate_key_in_a_profile_overlay_is_one_error_line(tmp_path):
    root = project_copy(tmp_path)
    overlay = root / "profiles" / "full.yaml"
    overlay.write_text(overlay.read_text() + "experiments:\n  tictactoe_tabular_q: {seeds: [0]}\n")
    with pytest.raises(ConfigError, match=r"^full.yaml: experiments: key given twice \(lines \d+ and \d+\)"):
        effective_params(root, "full")
    res = check_profile(root, "full")
    assert res.returncode == 2 and res.stderr.startswith("error: full.yaml: experiments: key given twice")
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr


def test_games_of_ten_to_the_thirty_stop_the_profile_check_with_one_line(tmp_path):
    root = project_copy(tmp_path)
    text = (root / "params.yaml").read_text()
    (root / "params.yaml").write_text(text.replace("params: {games: 1000000, checkpoint_every: 100000}\n",
                                                   "params: {games: 1000000000000000000000000000000, "
                                                   "checkpoint_every: 100000}\n", 1))
    res = check_profile(root, "default")
    assert res.returncode == 2, res.stderr
    assert res.stderr.startswith(f"error: params.yaml: experiments.{TTT}.params.games: at most 1,000,000,000")
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr


def test_the_full_profile_fits_its_ceilings_with_room():
    """The limits are generous for the seeds' published budgets: every budget at most a hundredth of its ceiling."""
    from boardrl.config import Params

    p = Params.model_validate(effective_params(ROOT, "full"))
    assert max(p.budget(e)[1] for e in p.experiments) * 100 <= MAX_UNITS
