"""params.yaml validation: the shipped params and profiles load; every kind of mistake is one line naming its key."""

from __future__ import annotations

import copy
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from boardrl.config import (
    PROCESSES_ENV,
    ConfigError,
    CurveParams,
    curve_slice,
    eval_points,
    evaluate_slice,
    load_params,
    parse_params,
    runtime_processes,
    train_slice,
)
from boardrl.experiments.profiles import effective_params, load_overlay
from boardrl.learn import learner_params_model
from boardrl.tracking.provenance import params_hash

ROOT = Path(__file__).resolve().parents[1]
TTT = "tictactoe_tabular_q"
DAB = "dots_and_boxes_2x2_tabular_q"
PROFILES = sorted(p.stem for p in (ROOT / "profiles").glob("*.yaml"))


@pytest.fixture(scope="module")
def shipped() -> dict:
    return yaml.safe_load((ROOT / "params.yaml").read_text())


@pytest.fixture(scope="module")
def raw(shipped) -> dict:
    """The shipped params.yaml with only its first two experiments (the ones the sweep names) and the game
    sections they need: the checks below are about validation, not about which experiments ship."""
    data = copy.deepcopy(shipped)
    data["experiments"] = {k: data["experiments"][k] for k in (TTT, DAB)}
    data["train"]["opponents"] = {g: data["train"]["opponents"][g] for g in ("tictactoe", "dots_and_boxes_2x2")}
    data["tournaments"] = {}
    return data


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


def with_experiment(raw: dict, exp_id: str = "x", **fields) -> dict:
    """``raw`` plus an experiment ``exp_id`` (tabular_q on tictactoe unless ``fields`` say otherwise)."""
    data = copy.deepcopy(raw)
    data["experiments"][exp_id] = {"game": "tictactoe", "learner": "tabular_q", **fields}
    return data


def error_of(data: dict) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        parse_params(data)
    assert "\n" not in str(info.value)
    return info.value


# ---------------------------------------------------------------------------------------------- shipped files
def test_params_yaml_loads_with_the_default_experiments():
    p = load_params(ROOT / "params.yaml")
    assert p.profile == "default"
    assert list(p.experiments)[:2] == [TTT, DAB]
    assert [(e.game, e.learner) for e in list(p.experiments.values())[:2]] == [("tictactoe", "tabular_q"),
                                                                               ("dots_and_boxes_2x2", "tabular_q")]
    assert {e.learner for e in p.experiments.values()} >= {"tabular_q", "qt", "dots_table", "seed004_q"}
    assert p.evaluate.games >= 1000  # the default: at least 1,000 games per opponent
    assert p.data.timeout_s == 20 and p.data.source == "auto"
    for exp_id in p.experiments:  # every experiment's learner params validate against the learner's own model
        assert isinstance(p.learner_params(exp_id), learner_params_model(p.experiments[exp_id].learner))
    assert p.learner_params(DAB).reward == "margin"


def test_shipped_profiles_exist():
    assert {"tiny", "full"} <= set(PROFILES)


@pytest.mark.parametrize("name", ["default", *PROFILES])
def test_every_profile_overlay_validates(shipped, name):
    data = effective_params(ROOT, name)
    p = parse_params(data)
    assert p.profile == name
    dropped = {k.split(".", 1)[1] for k in (load_overlay(ROOT, name).get("drop") or [])}
    # a profile changes values and may leave experiments out (drop:), never reorders the shipped ones; it may add
    # its own after them (the full profile: reproductions that take hours)
    kept = [e for e in shipped["experiments"] if e not in dropped]
    assert list(p.experiments)[:len(kept)] == kept
    added = list(p.experiments)[len(kept):]
    assert (name == "full") == bool(added) and not set(added) & set(shipped["experiments"])


def test_default_profile_is_params_yaml_itself(shipped):
    assert effective_params(ROOT, "default") == shipped


def test_tiny_profile_is_small():
    p = parse_params(effective_params(ROOT, "tiny"))
    assert list(p.experiments)[0] == TTT and len(p.experiments) <= 30
    assert all(p.budget(e)[1] <= 5000 for e in p.experiments)
    assert all(len(e.seeds) <= 2 for e in p.experiments.values())
    assert p.evaluate.games <= 100 and p.train.eval_games <= 100


@pytest.mark.parametrize("name", ["default", *PROFILES])
def test_dvc_yaml_params_exist_for_every_experiment(name):
    """Every params key a foreach stage declares resolves (else DVC stops with a missing param), per profile."""
    data = effective_params(ROOT, name)
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    for exp_id, exp in data["experiments"].items():
        for stage in ("train", "curve", "evaluate"):
            assert stages[stage]["foreach"] == "${experiments}"
            assert f"--experiment ${{key}}" in stages[stage]["do"]["cmd"]
            for key in stages[stage]["do"].get("params", []):  # train and curve: their slice in build/inputs
                key = key.replace("${key}", exp_id).replace("${item.game}", exp["game"])
                node = data
                for part in key.split("."):
                    assert isinstance(node, dict) and part in node, f"{stage}@{exp_id}: params key {key} missing"
                    node = node[part]


@pytest.mark.parametrize("name", ["params.yaml", "dvc.yaml", *(f"profiles/{p}.yaml" for p in PROFILES),
                                  *(str(p.relative_to(ROOT)) for p in sorted((ROOT / "studies").glob("*.yaml")))])
def test_shipped_yaml_parses_with_the_c_parser_dvc_uses(name):
    """DVC reads params.yaml (and dvc.lock) with ruamel's safe loader, which is libyaml's C parser when
    ruamel.yaml.clib is installed (a dependency here: it parses the lock four times faster).  That parser refuses
    a ':' inside an unquoted flow-list item such as ``[random, mcts:simulations=200]``, which the Python parsers
    accept, and every DVC command then stops with "YAML file structure is corrupted"."""
    from ruamel.yaml import YAML

    parser = YAML(typ="safe")
    assert parser.Parser.__module__.startswith("ruamel.yaml.clib") or "CParser" in parser.Parser.__name__, \
        f"ruamel.yaml.clib is not in use ({parser.Parser}): install the project's pipeline dependencies"
    assert parser.load((ROOT / name).read_text()) == yaml.safe_load((ROOT / name).read_text())


def test_dvc_lock_holds_only_stages_of_the_pipeline(shipped):
    """DVC keeps the lock entry of a stage that no longer exists, and parses and rewrites the whole lock after
    every stage it runs (about 2 s a stage at 250 KB), so a removed experiment's entries must go with it."""
    lock = yaml.safe_load((ROOT / "dvc.lock").read_text())["stages"]
    names = set()
    for name, stage in yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"].items():
        if "foreach" in stage:
            section = stage["foreach"].removeprefix("${").removesuffix("}")
            names |= {f"{name}@{key}" for key in shipped[section]}
        else:
            names.add(name)
    assert set(lock) <= names, f"stale dvc.lock entries: {sorted(set(lock) - names)}"


# ---------------------------------------------------------------------------------------------- bad values
@pytest.mark.parametrize(
    "path, value, key, problem",
    [
        ("bogus", 1, "bogus", "unknown key; known keys here: profile, study, data, prepare, train, evaluate, experiments"),
        ("train.curve.firts", 100, "train.curve.firts", "unknown key; known keys here: first, per_decade, include_zero"),
        ("train.opponents.tictactoe", ["random", "grandmaster"], "train.opponents.tictactoe[1]",
         "unknown agent 'grandmaster'"),
        ("train.opponents.tictactoe", ["random", f"model:{TTT}"], "train.opponents.tictactoe[1]",
         "not a training or learning-curve opponent"),
        ("evaluate.per_game.dots_and_boxes_2x2.opponents", ["random", "tactical"],
         "evaluate.per_game.dots_and_boxes_2x2.opponents[1]", "does not play dots_and_boxes_2x2"),
        ("evaluate.per_game.tictactoe.opponents", ["human"], "evaluate.per_game.tictactoe.opponents[0]", "terminal"),
        ("evaluate.per_game.tictactoe.opponents", ["random", "random"], "evaluate.per_game.tictactoe.opponents[1]",
         "listed twice"),
        ("evaluate.per_game.tictactoe.opponents", ["random", "model:nope"],
         "evaluate.per_game.tictactoe.opponents[1]", "no experiment 'nope'"),
        ("evaluate.per_game.tictactoe.opponents", [{"agent": "random", "gmes": 10}],
         "evaluate.per_game.tictactoe.opponents[0].gmes", "unknown key; known keys here: agent, games"),
        ("evaluate.per_game.tictactoe.opponents", [{"agent": "random", "games": 1}],
         "evaluate.per_game.tictactoe.opponents[0].games", "greater than or equal to 2"),
        ("evaluate.per_game.chess", {"opponents": ["random"]}, "evaluate.per_game.chess", "unknown game 'chess'"),
        ("evaluate.per_game.connect4.optimal_plies", [30, 20], "evaluate.per_game.connect4.optimal_plies",
         "lo <= hi"),
        ("evaluate.per_game.tictactoe.uci", {"seed000_games": 10, "full": False, "full_positions": None},
         "evaluate.per_game.tictactoe.uci", "only connect4 has uci"),
        ("train.eval_games", "many", "train.eval_games", "valid integer"),
        ("train.eval_games", 2.5, "train.eval_games", "valid integer"),
        ("evaluate.games", -1, "evaluate.games", "greater than or equal to 2"),
        ("evaluate.optimal_positions", -3, "evaluate.optimal_positions", "greater than or equal to 0"),
        ("evaluate.seed", -1, "evaluate.seed", "greater than or equal to 0"),
        ("data.source", "ftp", "data.source", "'auto', 'online' or 'vendored'"),
        ("data.timeout_s", 0, "data.timeout_s", "greater than 0"),
        ("prepare.regen", True, "prepare.regen", "unknown key; known keys here: check_regenerated"),
        ("profile", "Big Profile", "profile", "should match pattern"),
        ("experiments", {}, "experiments", "at least 1 item"),
        (f"experiments.{TTT}.agent", "tabular_q", f"experiments.{TTT}.agent",
         "unknown key; known keys here: game, learner, seeds, params, opponents, ladder, uci, description"),
        (f"experiments.{TTT}.params.games", -5, f"experiments.{TTT}.params.games", "greater than or equal to 1"),
        (f"experiments.{DAB}.params.reward", "score", f"experiments.{DAB}.params.reward", "'result' or 'margin'"),
    ],
)
def test_bad_values_name_their_key(raw, path, value, key, problem):
    err = error_of(mutate(raw, path, value))
    assert err.key == key
    assert problem in err.problem
    assert str(err).startswith(f"params.yaml: {key}: ")


@pytest.mark.parametrize(
    "fields, key, problem",
    [
        ({"game": "chess"}, "experiments.x.game", "unknown game 'chess'"),
        ({"learner": "dqn9000"}, "experiments.x.learner", "unknown learner 'dqn9000'; known learners: "),
        ({"params": {"alphaa": 0.2}}, "experiments.x.params.alphaa",
         "unknown key; known keys here: opponent, learner_seat, checkpoint_every, games, alpha, gamma, "),
        ({"params": {"alpha": "fast"}}, "experiments.x.params.alpha", "valid number"),
        ({"params": {"alpha": 1.5}}, "experiments.x.params.alpha", "less than or equal to 1"),
        ({"params": {"games": -5}}, "experiments.x.params.games", "greater than or equal to 1"),
        ({"params": {"games": 2.5}}, "experiments.x.params.games", "valid integer"),
        ({"params": {"exploration": {"schedule": "constant", "start": 1.0, "sart": 2}}},
         "experiments.x.params.exploration.sart", "unknown key"),
        ({"params": {"learner_seat": "first"}}, "experiments.x.params", "only with an opponent"),
        ({"params": {"opponent": "nobody"}}, "experiments.x.params.opponent", "unknown agent 'nobody'"),
        ({"params": {"opponent": f"model:{TTT}"}}, "experiments.x.params.opponent",
         "not a training or learning-curve opponent"),
        ({"params": [1, 2]}, "experiments.x.params", "valid dictionary"),
        ({"seeds": [0, 1, 0]}, "experiments.x.seeds", "a seed is listed twice in [0, 1, 0]"),
        ({"seeds": [-1]}, "experiments.x.seeds", "seeds must lie in 0 .. 2^63-1"),
        ({"seeds": []}, "experiments.x.seeds", "at least 1 item"),
        ({"seeds": ["a"]}, "experiments.x.seeds[0]", "valid integer"),
        ({"ladder": ["random", "model:nope"]}, "experiments.x.ladder[1]",
         f"no experiment 'nope'; experiments: {TTT}, {DAB}, x"),
        ({"ladder": ["random", f"model:{DAB}"]}, "experiments.x.ladder[1]",
         f"experiment '{DAB}' plays dots_and_boxes_2x2, not tictactoe"),
        ({"ladder": ["random", "model:/some/model/dir"]}, "experiments.x.ladder[1]", "no experiment '/some/model/dir'"),
        ({"ladder": ["random", "grandmaster"]}, "experiments.x.ladder[1]", "unknown agent 'grandmaster'"),
        ({"ladder": ["random", "random"]}, "experiments.x.ladder[1]", "listed twice"),
        ({"ladder": [{"agent": "random", "games": 1}]}, "experiments.x.ladder[0].games", "greater than or equal to 2"),
        ({"opponents": ["random", f"model:{TTT}"]}, "experiments.x.opponents[1]",
         "a trained model can be a ladder opponent (evaluate), not a training or learning-curve opponent"),
        ({"opponents": ["random", "human"]}, "experiments.x.opponents[1]", "terminal"),
        ({"game": "dots_and_boxes_3x3"}, "train.opponents.dots_and_boxes_3x3",
         "missing: experiment x plays dots_and_boxes_3x3 and needs it"),
        ({"description": 3}, "experiments.x.description", "valid string"),
        ({"agent": "tabular_q"}, "experiments.x.agent", "unknown key"),
    ],
)
def test_bad_experiments_name_their_key(raw, fields, key, problem):
    err = error_of(with_experiment(raw, **fields))
    assert err.key == key, str(err)
    assert problem in err.problem, str(err)
    assert str(err).startswith(f"params.yaml: {key}: ")


@pytest.mark.parametrize("spec", [f"model:{TTT},seed=9", f"model:{TTT},depth=3", f"model:{TTT},seed=abc"])
def test_model_spec_options_are_checked_up_front(raw, spec):
    err = error_of(with_experiment(raw, ladder=["random", spec]))
    assert err.key == "experiments.x.ladder[1]"


def test_missing_game_sections_for_an_experiment_are_named(raw):
    err = error_of(mutate(raw, "evaluate.per_game.dots_and_boxes_2x2", delete=True))
    assert err.key == "evaluate.per_game.dots_and_boxes_2x2"
    assert err.problem == f"missing: experiment {DAB} plays dots_and_boxes_2x2 and needs it"
    err = error_of(mutate(raw, "train.opponents.tictactoe", delete=True))
    assert err.key == "train.opponents.tictactoe"
    assert err.problem == f"missing: experiment {TTT} plays tictactoe and needs it"
    # an experiment on connect4 needs train.opponents.connect4 (params.yaml has only its per_game block)
    assert error_of(with_experiment(raw, game="connect4")).key == "train.opponents.connect4"


def test_an_experiment_may_override_its_opponents_and_ladder(raw):
    """A valid per-experiment curve and ladder (model: of the same game allowed in the ladder only)."""
    p = parse_params(with_experiment(raw, ladder=["random", {"agent": f"model:{TTT}", "games": 10}],
                                     opponents=["random", "perfect"], params={"opponent": "tactical"}))
    assert [o.key for o in p.ladder("x")] == ["random", f"model:{TTT}"]
    assert [o.key for o in p.curve_opponents("x")] == ["random", "perfect"]
    assert [o.key for o in p.curve_opponents(TTT)] == raw["train"]["opponents"]["tictactoe"]
    assert p.ladder(TTT) == list(p.evaluate.per_game["tictactoe"].opponents)


@pytest.mark.parametrize("exp_id", ["Bad Id!", "UPPER", "_lead", "-lead", "a" * 65, "has space", "dot.ted"])
def test_bad_experiment_ids(raw, exp_id):
    err = error_of(with_experiment(raw, exp_id))
    assert err.key == f"experiments.{exp_id}"
    assert "an experiment id is 1-64 characters" in err.problem


@pytest.mark.parametrize("exp_id", ["a", "x1", "0_start-with-digit", "a" * 64])
def test_good_experiment_ids(raw, exp_id):
    assert exp_id in parse_params(with_experiment(raw, exp_id)).experiments


def test_the_first_bad_experiment_is_reported_even_when_not_first_in_the_file(raw):
    data = mutate(raw, f"experiments.{DAB}.params.games", 0)
    assert error_of(data).key == f"experiments.{DAB}.params.games"


def test_unknown_experiment_names_the_configured_ones(raw):
    with pytest.raises(ConfigError) as info:
        parse_params(raw).experiment("conniption_tabular_q")
    assert info.value.key == "experiments"
    assert info.value.problem == f"no experiment 'conniption_tabular_q'; configured: {TTT}, {DAB}"


def test_a_spec_resolves_the_experiment_once_with_its_games_defaults(raw):
    """The stages take an ExperimentSpec: the experiment's own settings, else its game's, and the learner's params
    validated with their defaults; an unknown id is the same one-line error as above."""
    p = parse_params(raw)
    spec = p.spec(TTT)
    assert (spec.id, spec.game, spec.learner, spec.profile) == (TTT, "tictactoe", "tabular_q", p.profile)
    assert spec.seeds == tuple(p.experiments[TTT].seeds) and spec.learner_params == p.learner_params(TTT)
    assert (spec.unit, spec.budget) == p.budget(TTT)
    assert list(spec.curve_opponents) == p.curve_opponents(TTT) and list(spec.ladder) == p.ladder(TTT)
    assert spec.uci == p.uci(TTT) and spec.evaluate is p.evaluate and spec.train is p.train
    assert spec.labels() == {"experiment": TTT, "game": "tictactoe", "learner": "tabular_q", "profile": p.profile}
    with pytest.raises(ConfigError, match="no experiment 'nope'; configured: "):
        p.spec("nope")


def test_missing_sections_are_named(raw):
    err = error_of(mutate(raw, "train.curve", delete=True))
    assert err.key == "train.curve" and "missing" in err.problem
    err = error_of(mutate(raw, f"experiments.{TTT}.game", delete=True))
    assert err.key == f"experiments.{TTT}.game" and "missing" in err.problem
    err = error_of(mutate(raw, "evaluate.per_game.tictactoe.opponents", delete=True))
    assert err.key == "evaluate.per_game.tictactoe.opponents" and "missing" in err.problem


def test_optional_keys_have_defaults(raw):
    data = mutate(mutate(raw, f"experiments.{TTT}.seeds", delete=True), f"experiments.{TTT}.params", delete=True)
    p = parse_params(mutate(data, "profile", delete=True))
    assert p.profile == "default"
    assert p.experiments[TTT].seeds == [0]
    assert p.learner_params(TTT) == learner_params_model("tabular_q")()


def test_several_problems_are_counted_on_one_line(raw):
    data = mutate(mutate(raw, "evaluate.seed", -1), "train.eval_games", "x")
    err = error_of(data)
    assert err.key == "train.eval_games" and "(and 1 more problem)" in err.problem
    data = mutate(mutate(data, "evaluate.games", "y"), "data.timeout_s", -1)
    assert "(and 3 more problems)" in error_of(data).problem


def test_file_errors(tmp_path):
    bad = tmp_path / "params.yaml"
    bad.write_text("profile: [1, 2\n")
    with pytest.raises(ConfigError, match=r"^params.yaml: not valid YAML: line \d+") as info:
        load_params(bad)
    assert "\n" not in str(info.value)
    bad.write_text("- just\n- a list\n")
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        load_params(bad)
    with pytest.raises(ConfigError, match="cannot read"):
        load_params(tmp_path / "nope.yaml")


# ---------------------------------------------------------------------------------------------- slices
def test_eval_points_are_log_spaced_and_end_at_the_budget():
    curve = CurveParams(first=100, per_decade=3, include_zero=True)
    assert eval_points(1_000_000, curve) == [0, 100, 220, 460, 1000, 2200, 4600, 10000, 22000, 46000, 100000,
                                             220000, 460000, 1000000]
    assert eval_points(1500, CurveParams(first=100, per_decade=1, include_zero=False)) == [100, 1000, 1500]
    assert eval_points(50, CurveParams(first=100, per_decade=2, include_zero=True)) == [0, 50]
    pts = eval_points(70_000, CurveParams(first=100, per_decade=2, include_zero=False))
    assert {100, 1000, 10000, 70000} <= set(pts) and pts == sorted(set(pts))


def hashes(p, exp_id: str) -> tuple[str, str]:
    return params_hash(train_slice(p.spec(exp_id))), params_hash(evaluate_slice(p.spec(exp_id)))


@pytest.mark.parametrize(
    "path, value",
    [
        (f"experiments.{DAB}.params.alpha", 0.2),  # another experiment
        (f"experiments.{DAB}.seeds", [5]),
        (f"experiments.{DAB}.game", "dots_and_boxes_3x3"),
        ("experiments.new_one", {"game": "tictactoe", "learner": "tabular_q"}),  # an experiment added
        ("train.opponents.dots_and_boxes_2x2", ["random"]),  # another game's opponents
        ("evaluate.per_game.dots_and_boxes_2x2.opponents", ["random", "perfect"]),  # another game's per_game
        ("evaluate.per_game.connect4.optimal_plies", [10, 12]),
        ("evaluate.per_game.conniption", {"opponents": ["random"]}),
        ("data.timeout_s", 5),  # other stages
        ("prepare.check_regenerated", False),
        ("profile", "tiny"),  # a label, not a number a stage depends on
    ],
)
def test_slices_ignore_other_experiments_and_games(raw, path, value):
    """Changing anything outside an experiment's slice leaves its stage hashes alone (DVC reruns only that)."""
    data = copy.deepcopy(raw)
    data["evaluate"]["per_game"]["dots_and_boxes_3x3"] = raw["evaluate"]["per_game"]["dots_and_boxes_3x3"]
    data["train"]["opponents"]["dots_and_boxes_3x3"] = ["random"]
    assert hashes(parse_params(data), TTT) == hashes(parse_params(mutate(data, path, value)), TTT)


def test_removing_an_experiment_leaves_the_others_alone(raw):
    data = copy.deepcopy(raw)
    del data["experiments"][DAB]
    del data["train"]["opponents"]["dots_and_boxes_2x2"]
    assert hashes(parse_params(raw), TTT) == hashes(parse_params(data), TTT)


@pytest.mark.parametrize(
    "path, value, train_changes",
    [
        (f"experiments.{TTT}.params.alpha", 0.2, True),
        (f"experiments.{TTT}.params.games", 500, True),
        (f"experiments.{TTT}.seeds", [0, 1], True),
        (f"experiments.{TTT}.learner", "tabular_q", False),  # same value: no change at all
        (f"experiments.{TTT}.opponents", ["random"], False),  # the curve stage's (curve_slice), not training's
        (f"experiments.{TTT}.opponents", [], True),  # no curve at all: no snapshots to save
        (f"experiments.{TTT}.ladder", ["random"], False),
        ("train.opponents.tictactoe", ["random"], False),
        ("train.eval_games", 50, False),
        ("train.curve.first", 10, True),  # other curve points
        ("evaluate.per_game.tictactoe.opponents", ["random"], False),
        ("evaluate.games", 50, False),
        ("evaluate.seed", 3, False),
        ("evaluate.optimal_positions", 0, False),
    ],
)
def test_slices_follow_the_experiments_own_params(raw, path, value, train_changes):
    base = parse_params(raw)
    changed = parse_params(mutate(raw, path, value))
    train_changed = params_hash(train_slice(base.spec(TTT))) != params_hash(train_slice(changed.spec(TTT)))
    evaluate_changed = params_hash(evaluate_slice(base.spec(TTT))) != params_hash(evaluate_slice(changed.spec(TTT)))
    assert train_changed == train_changes
    # evaluate depends on the learner params, seeds and its own evaluate keys, not on the learning curve
    own = path.startswith(f"experiments.{TTT}.") and not path.endswith((".opponents", ".learner"))
    assert evaluate_changed == (own or path.startswith("evaluate."))


def test_a_default_written_out_does_not_change_the_slice(raw):
    """params holds only what differs from the learner's defaults; writing a default explicitly is the same run."""
    alpha = learner_params_model("tabular_q")().alpha
    data = mutate(raw, f"experiments.{TTT}.params.alpha", alpha)
    assert hashes(parse_params(raw), TTT) == hashes(parse_params(data), TTT)


def test_slice_contents(raw):
    p = parse_params(raw)
    tr, ev = train_slice(p.spec(TTT)), evaluate_slice(p.spec(TTT))
    for sl in (tr, ev):
        assert sl["experiment"] == TTT and sl["game"] == "tictactoe" and sl["learner"] == "tabular_q"
        assert sl["seeds"] == [0, 1, 2]
        assert sl["learner_params"] == p.learner_params(TTT).model_dump(mode="json")
        assert sl["learner_params"]["games"] == 1_000_000
    assert tr["train"] == {"curve_points": eval_points(1_000_000, p.train.curve), "snapshots": True}
    curve = curve_slice(p.spec(TTT))["curve"]["opponents"]
    assert [o["agent"] for o in curve] == raw["train"]["opponents"]["tictactoe"]
    assert {o["games"] for o in curve} == {p.train.eval_games}  # resolved: each opponent's games
    assert ev["evaluate"]["uci"] is None and ev["evaluate"]["optimal_plies"] is None  # not connect4
    assert ev["evaluate"]["opponents"][0] == {"agent": "random", "games": 20000}
    assert evaluate_slice(p.spec(DAB))["evaluate"]["uci"] is None


def test_a_connect4_experiment_gets_uci_and_optimal_plies(raw):
    data = with_experiment(raw, "c4", game="connect4")
    data["train"]["opponents"]["connect4"] = ["random"]
    ev = evaluate_slice(parse_params(data).spec("c4"))["evaluate"]
    assert ev["optimal_plies"] == [12, 30]
    assert ev["uci"] == {"seed000_games": 1000, "full": True, "full_positions": None, "value_accuracy": True}


def test_params_hash_is_stable(raw):
    """The same params give the same hash in every process (it names MLflow runs and result provenance)."""
    p = parse_params(raw)
    again = parse_params(copy.deepcopy(raw))
    assert hashes(p, TTT) == hashes(again, TTT)
    assert re.fullmatch(r"[0-9a-f]{16}", hashes(p, TTT)[0])
    script = textwrap.dedent(f"""
        import yaml
        from boardrl.config import parse_params, train_slice, evaluate_slice
        from boardrl.tracking.provenance import params_hash
        p = parse_params(yaml.safe_load(open({str(ROOT / "params.yaml")!r})))
        print(params_hash(train_slice(p.spec({TTT!r}))), params_hash(evaluate_slice(p.spec({TTT!r}))))
    """)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONHASHSEED": "123"})
    assert res.returncode == 0, res.stderr
    assert tuple(res.stdout.split()) == hashes(p, TTT)


# ---------------------------------------------------------------------------------------------- runtime settings
def test_runtime_processes(monkeypatch):
    monkeypatch.delenv(PROCESSES_ENV, raising=False)
    assert runtime_processes() == 1
    monkeypatch.setenv(PROCESSES_ENV, "4")
    assert runtime_processes() == 4
    for bad in ("0", "abc", "65", "-1", "1.5", ""):
        monkeypatch.setenv(PROCESSES_ENV, bad)
        with pytest.raises(ConfigError) as info:
            runtime_processes()
        assert "\n" not in str(info.value)
        assert str(info.value) == (f"environment: ${PROCESSES_ENV} must be a whole number from 1 to 64, "
                                   f"got {bad!r}")


def test_sigterm_during_a_stage_unwinds_and_prints_one_line(tmp_path):
    """A stage stopped with SIGTERM runs its cleanup (so MLflow closes the run as FAILED) and exits 128+15."""
    marker = tmp_path / "unwound"
    script = textwrap.dedent(f"""
        import os, signal
        from boardrl.config import run_experiment_stage

        def run(spec):
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                signal.pause()
            finally:
                open({str(marker)!r}, "w").write(spec.id + " " + spec.game)

        run_experiment_stage({str(ROOT / "params.yaml")!r}, {TTT!r}, run)
    """)
    env = {k: v for k, v in os.environ.items() if k != PROCESSES_ENV}
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
    assert res.returncode == 143
    assert res.stderr.strip().splitlines() == ["error: stopped by SIGTERM; previous outputs are kept"]
    assert marker.read_text() == f"{TTT} tictactoe"


def test_a_stage_checks_its_own_experiment_only(raw):
    """A per-experiment stage skips other experiments (importing every learner imports torch, and checking 55
    ladders costs a second a stage); `make repro`'s whole-file check still catches them, and the stage's own
    experiment is checked in full."""
    bad = with_experiment(raw, "y", params={"alpha": -1.0})
    assert error_of(bad).key.startswith("experiments.y.params")
    parse_params(bad, only_experiment=next(iter(raw["experiments"])))
    with pytest.raises(ConfigError) as info:
        parse_params(bad, only_experiment="y")
    assert info.value.key.startswith("experiments.y.params")


def test_a_stage_checks_its_own_ladder_and_its_games_opponent_tables(raw):
    bad = with_experiment(raw, "y", ladder=[{"agent": "no_such_agent"}])
    with pytest.raises(ConfigError) as info:
        parse_params(bad, only_experiment="y")
    assert info.value.key == "experiments.y.ladder[0]"
    bad = with_experiment(raw, "y")  # a tic-tac-toe experiment
    bad["train"]["opponents"]["tictactoe"] = ["no_such_agent"]
    with pytest.raises(ConfigError) as info:
        parse_params(bad, only_experiment="y")
    assert info.value.key == "train.opponents.tictactoe[0]"


def test_a_tabular_stage_validates_params_without_importing_torch():
    code = ("import sys; from boardrl.config import load_params; "
            "load_params('params.yaml', only_experiment='tictactoe_tabular_q'); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
