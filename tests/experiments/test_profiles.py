"""Profiles: overlays of params.yaml (dicts merge, lists replace), validated, run as DVC experiments in a persistent
directory (a killed run resumes: tests/pipeline/test_fault_injection.py)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from boardrl.config import ConfigError, parse_params
from boardrl.experiments.profiles import (
    DEFAULT,
    RUN_STATE,
    commands,
    RUNS_DIR as RUN_DIRS,
    effective_params,
    first_look,
    hydra_value,
    leaves,
    load_overlay,
    main,
    merge,
    plan,
    run_dir,
    set_args,
    stage_env,
    write_params,
)

ROOT = Path(__file__).resolve().parents[2]
PROFILES = sorted(p.stem for p in (ROOT / "profiles").glob("*.yaml"))
KNOWN = ", ".join(sorted([DEFAULT, *PROFILES]))


@pytest.fixture()
def project(tmp_path) -> Path:
    """A temp copy of what the profiles read: params.yaml and profiles/."""
    shutil.copy(ROOT / "params.yaml", tmp_path / "params.yaml")
    shutil.copytree(ROOT / "profiles", tmp_path / "profiles")
    return tmp_path


def edit_yaml(path: Path, fn) -> None:
    data = yaml.safe_load(path.read_text()) or {}
    fn(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DVC_", "MLFLOW_"))}
    return subprocess.run([sys.executable, "-m", "boardrl.experiments.profiles", *args, "--root", str(root)],
                          cwd=root, capture_output=True, text=True, timeout=120, env=env)


# ---------------------------------------------------------------------------------------------- merge
def test_merge_dicts_merge_and_lists_replace():
    base = {"a": {"b": 1, "c": [1, 2, 3], "d": {"e": 1, "f": 2}}, "g": "x", "h": [{"k": 1}]}
    overlay = {"a": {"c": [9], "d": {"f": 5, "new": None}}, "h": [{"k": 2, "z": 0}], "i": {"j": []}}
    out = merge(base, overlay)
    assert out == {"a": {"b": 1, "c": [9], "d": {"e": 1, "f": 5, "new": None}}, "g": "x", "h": [{"k": 2, "z": 0}],
                   "i": {"j": []}}
    assert base == {"a": {"b": 1, "c": [1, 2, 3], "d": {"e": 1, "f": 2}}, "g": "x", "h": [{"k": 1}]}  # untouched
    out["a"]["c"].append(10)
    out["h"][0]["k"] = 99
    assert overlay == {"a": {"c": [9], "d": {"f": 5, "new": None}}, "h": [{"k": 2, "z": 0}], "i": {"j": []}}


def test_merge_values_replace_whatever_the_type():
    assert merge({"a": {"b": 1}}, {"a": 3}) == {"a": 3}  # a value replaces a dict
    assert merge({"a": 3}, {"a": {"b": 1}}) == {"a": {"b": 1}}  # and a dict a value
    assert merge({"a": [1]}, {"a": None}) == {"a": None}
    assert merge({"a": {"b": 1}}, {"a": {}}) == {"a": {"b": 1}}  # an empty dict changes nothing
    assert merge({"a": 1}, {}) == {"a": 1}


@pytest.mark.parametrize("name", PROFILES)
def test_an_overlay_keeps_what_it_does_not_list(name):
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    overlay = load_overlay(ROOT, name)
    eff = effective_params(ROOT, name)
    assert eff["profile"] == name
    dropped = {key.split(".", 1)[1] for key in overlay.get("drop", []) if key.startswith("experiments.")}
    kept = [e for e in raw["experiments"] if e not in dropped]
    assert list(eff["experiments"])[:len(kept)] == kept  # the full profile adds its own after them
    listed = [key for key, _ in leaves(overlay)] + overlay.get("drop", [])
    overlay = {k: v for k, v in overlay.items() if k != "drop"}
    for key, value in leaves(raw):
        if any(key == k or key.startswith(k + ".") for k in listed):
            continue
        node = eff
        for part in key.split("."):
            node = node[part]
        if any(key == k or key.startswith(k + ".") or k.startswith(key + ".") for k in listed):
            continue
        assert node == value, f"{name}: {key} changed though the overlay does not list it"
    for key, value in leaves(overlay):
        node = eff
        for part in key.split("."):
            node = node[part]
        assert node == value, f"{name}: {key} is not the overlay's value"


# ---------------------------------------------------------------------------------------------- -S overrides
def test_leaves_stop_at_lists_and_empty_dicts():
    assert leaves({"a": {"b": 1, "c": [1, {"x": 1}], "d": {}}, "e": None}) == [
        ("a.b", 1), ("a.c", [1, {"x": 1}]), ("a.d", {}), ("e", None)]


def test_set_args_of_a_small_overlay():
    overlay = {
        "data": {"url": "http://127.0.0.1:9/x.zip", "timeout_s": 2.5},
        "train": {"eval_games": 40, "opponents": {"tictactoe": ["random", "mcts:simulations=20"]}},
        "evaluate": {"per_game": {"tictactoe": {"opponents": ["random", {"agent": "perfect", "games": 10}],
                                               "optimal_plies": None}}},
        "prepare": {"check_regenerated": False},
        "experiments": {"e1": {"seeds": [7, 8], "params": {"opponent": "it's", "flag": True}}},
    }
    assert set_args(overlay) == [
        "-S", "++data.url='http://127.0.0.1:9/x.zip'",
        "-S", "++data.timeout_s=2.5",
        "-S", "++train.eval_games=40",
        "-S", "++train.opponents.tictactoe=['random','mcts:simulations=20']",
        "-S", "++evaluate.per_game.tictactoe.opponents=['random',{agent:'perfect',games:10}]",
        "-S", "++evaluate.per_game.tictactoe.optimal_plies=null",
        "-S", "++prepare.check_regenerated=false",
        "-S", "++experiments.e1.seeds=[7,8]",
        "-S", "++experiments.e1.params.opponent='it\\'s'",
        "-S", "++experiments.e1.params.flag=true",
    ]


@pytest.mark.parametrize(
    "value, text",
    [
        (None, "null"), (True, "true"), (False, "false"), (0, "0"), (-3, "-3"), (0.1, "0.1"), (1e-05, "1e-05"),
        ("x", "'x'"), ("", "''"), ("10", "'10'"), ("null", "'null'"), ("a b,c", "'a b,c'"), ("it's", "'it\\'s'"),
        ([], "[]"), ([1, "a", None], "[1,'a',null]"), ({}, "{}"), ({"k": [1, 2], "s": "v"}, "{k:[1,2],s:'v'}"),
    ],
)
def test_hydra_value(value, text):
    assert hydra_value(value) == text


def test_hydra_value_refuses_other_types():
    with pytest.raises(ConfigError, match="cannot pass a set"):
        hydra_value({1, 2})


@pytest.mark.parametrize("name", PROFILES)
def test_a_profile_runs_in_its_persistent_directory_under_a_new_name(name, tmp_path):
    run = plan(tmp_path, name)
    assert run.directory == tmp_path / ".dvc" / "tmp" / "exps" / "profiles" / name == run_dir(tmp_path, name)
    assert re.fullmatch(rf"{name}-\d{{8}}-\d{{6}}", run.exp_name) and not run.resumed
    assert commands(run) == [["dvc", "repro"], ["dvc", "exp", "save", "--name", run.exp_name]]


def test_an_unfinished_run_is_resumed_under_its_name(tmp_path):
    state = run_dir(tmp_path, "tiny").joinpath(*RUN_STATE)
    state.parent.mkdir(parents=True)
    state.write_text(json.dumps({"profile": "tiny", "exp_name": "tiny-20260101-000000"}))
    run = plan(tmp_path, "tiny")
    assert (run.exp_name, run.resumed) == ("tiny-20260101-000000", True)
    assert commands(run)[1] == ["dvc", "exp", "save", "--name", "tiny-20260101-000000", "--force"]
    assert plan(tmp_path, "tiny", exp_name="mine").exp_name == "mine"  # a name given starts a new experiment
    assert plan(tmp_path, "full").resumed is False  # another profile's directory


def test_workspace_runs_and_the_stage_environment(tmp_path):
    run = plan(tmp_path, "tiny", workspace=True, exp_name="mine")
    assert (run.directory, run.exp_name) == (tmp_path, "mine")
    env = stage_env(run)
    assert env["DVC_EXP_NAME"] == "mine"  # the stages' provenance, as `dvc exp run` sets it
    assert env["PYTHONPATH"].split(os.pathsep)[0] == str(tmp_path.resolve() / "src")  # the code it records


@pytest.mark.parametrize("name", PROFILES)
def test_write_params_in_a_run_directory_is_the_validated_overlay(project, tmp_path_factory, name):
    directory = tmp_path_factory.mktemp("run")
    write_params(project, directory, name)
    assert yaml.safe_load((directory / "params.yaml").read_text()) == effective_params(project, name)


def test_write_params_in_the_workspace_keeps_comments_and_is_idempotent(project):
    expected = effective_params(project, "tiny")
    write_params(project, project, "tiny")
    text = (project / "params.yaml").read_text()
    assert "# which overlay of profiles/ produced the numbers" in text
    assert yaml.safe_load(text) == expected
    write_params(project, project, "tiny")  # a rerun after a kill: already the profile's
    assert (project / "params.yaml").read_text() == text
    assert effective_params(project, "tiny", workspace=True) == yaml.safe_load(text)  # validated as it is


@pytest.mark.parametrize("name", PROFILES)
def test_dvc_applies_the_overrides_as_merge_does(tmp_path, name):
    """`dvc exp run -S` (Hydra overrides on params.yaml) gives exactly the validated effective params."""
    hydra = pytest.importorskip("dvc.utils.hydra")
    shutil.copy(ROOT / "params.yaml", tmp_path / "params.yaml")
    hydra.apply_overrides(tmp_path / "params.yaml", set_args(load_overlay(ROOT, name))[1::2])
    assert yaml.safe_load((tmp_path / "params.yaml").read_text()) == effective_params(ROOT, name)


def test_dvc_reads_back_a_string_with_a_backslash(tmp_path):
    hydra = pytest.importorskip("dvc.utils.hydra")
    (tmp_path / "params.yaml").write_text("data: {url: x}\n")
    hydra.apply_overrides(tmp_path / "params.yaml", set_args({"data": {"url": "C:\\data\\x.zip"}})[1::2])
    assert yaml.safe_load((tmp_path / "params.yaml").read_text()) == {"data": {"url": "C:\\data\\x.zip"}}


# ---------------------------------------------------------------------------------------------- load / validate
def test_load_overlay(project):
    assert load_overlay(project, "default") == {}
    tiny = load_overlay(project, "tiny")
    assert tiny["profile"] == "tiny" and list(tiny)[-1] == "profile"
    with pytest.raises(ConfigError) as info:
        load_overlay(project, "nope")
    assert str(info.value) == f"PROFILE: unknown profile 'nope'; profiles: {KNOWN}"
    (project / "profiles" / "listy.yaml").write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match=r"^listy.yaml: the top level must be a mapping"):
        load_overlay(project, "listy")
    (project / "profiles" / "empty.yaml").write_text("# nothing\n")
    assert load_overlay(project, "empty") == {"profile": "empty"}
    assert effective_params(project, "empty")["profile"] == "empty"


def test_effective_params_name_the_overlay(project):
    edit_yaml(project / "profiles" / "tiny.yaml", lambda d: d["train"].update(eval_games=-1))
    with pytest.raises(ConfigError) as info:
        effective_params(project, "tiny")
    assert info.value.key == "train.eval_games"
    assert str(info.value).startswith("params.yaml + profiles/tiny.yaml: train.eval_games: ")
    edit_yaml(project / "params.yaml", lambda d: d["experiments"]["tictactoe_tabular_q"]["params"].update(alphaa=1))
    with pytest.raises(ConfigError) as info:
        effective_params(project, "default")
    assert info.value.key == "experiments.tictactoe_tabular_q.params.alphaa"
    assert str(info.value).startswith("params.yaml: experiments.tictactoe_tabular_q.params.alphaa: unknown key")


def test_an_overlay_can_add_an_experiment(project):
    (project / "profiles" / "more.yaml").write_text(yaml.safe_dump({"experiments": {"extra_ttt": {
        "game": "tictactoe", "learner": "tabular_q", "params": {"games": 10}}}}))
    p = parse_params(effective_params(project, "more"))
    assert list(p.experiments)[-1] == "extra_ttt" and "tictactoe_tabular_q" in p.experiments
    assert "++experiments.extra_ttt.params.games=10" in set_args(load_overlay(project, "more"))


def test_an_overlay_can_drop_an_experiment(project, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("applied")
    (project / "profiles" / "less.yaml").write_text(yaml.safe_dump({"drop": ["experiments.dots_and_boxes_2x2_tabular_q"]}))
    p = parse_params(effective_params(project, "less"))
    assert "dots_and_boxes_2x2_tabular_q" not in p.experiments and "tictactoe_tabular_q" in p.experiments
    cmd = set_args(load_overlay(project, "less"))
    assert cmd[cmd.index("~experiments.dots_and_boxes_2x2_tabular_q") - 1] == "-S"
    hydra = pytest.importorskip("dvc.utils.hydra")  # DVC's own override parser deletes the key the same way
    shutil.copy(project / "params.yaml", tmp_path / "params.yaml")
    hydra.apply_overrides(tmp_path / "params.yaml", set_args(load_overlay(project, "less"))[1::2])
    assert yaml.safe_load((tmp_path / "params.yaml").read_text()) == effective_params(project, "less")


@pytest.mark.parametrize("drop, problem", [(["experiments.nope"], "'experiments.nope' is not a key of params.yaml"),
                                           ("experiments.x", "must be a list of dotted params keys")])
def test_a_bad_drop_is_one_line(project, drop, problem):
    (project / "profiles" / "less.yaml").write_text(yaml.safe_dump({"drop": drop}))
    with pytest.raises(ConfigError) as info:
        effective_params(project, "less")
    assert problem in str(info.value) and "\n" not in str(info.value)


def test_keep_drops_every_other_id_of_a_section(project):
    (project / "profiles" / "few.yaml").write_text(yaml.safe_dump(
        {"keep": {"experiments": ["tictactoe_tabular_q", "connect4_alphazero"]},
         "drop": ["experiments.connect4_alphazero"]}))
    raw = yaml.safe_load((project / "params.yaml").read_text())
    p = parse_params(effective_params(project, "few"))
    assert list(p.experiments) == ["tictactoe_tabular_q"]
    assert set(p.sweeps) == set(raw["sweeps"]) and set(p.tournaments) == set(raw["tournaments"])
    drops = load_overlay(project, "few")["drop"]
    assert len(drops) == len(raw["experiments"]) - 1 and len(set(drops)) == len(drops)  # each dropped once


@pytest.mark.parametrize("keep, problem", [
    ({"experiments": ["nope"]}, "keep.experiments: 'nope' is not a key of params.yaml experiments"),
    ({"games": ["tictactoe"]}, "keep.games: is not a section of ids in params.yaml"),
    (["experiments.tictactoe_tabular_q"], "keep: must map a params section to the ids it keeps"),
])
def test_a_bad_keep_is_one_line(project, keep, problem):
    (project / "profiles" / "few.yaml").write_text(yaml.safe_dump({"keep": keep}))
    with pytest.raises(ConfigError) as info:
        effective_params(project, "few")
    assert problem in str(info.value) and "\n" not in str(info.value)


def test_the_tiny_profile_is_a_first_look_of_one_experiment_per_game():
    params = parse_params(effective_params(ROOT, "tiny"))
    assert sorted(e.game for e in params.experiments.values()) == sorted(
        ["tictactoe", "dots_and_boxes_3x3", "conniption", "connect4"])


@pytest.mark.parametrize("applied, named", [({"profile": "tiny"}, "profile 'tiny'"),
                                            ({"study": {"name": "s", "variation": "v"}}, "study 's' variation 'v'")])
def test_the_default_run_refuses_params_a_profile_left_in_the_workspace(project, applied, named):
    edit_yaml(project / "params.yaml", lambda d: d.update(applied))
    res = cli(project, "run", "default")
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.startswith("error: params.yaml holds the values of " + named)
    assert "`git checkout params.yaml`" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_first_look_names_the_run_s_real_paths_and_experiment(project):
    run = plan(project, "tiny", exp_name="tiny-x")
    run.directory.mkdir(parents=True)
    write_params(project, run.directory, "tiny")
    text = first_look(project, run)
    where = str(Path(*RUN_DIRS, "tiny"))
    assert f"saved as DVC experiment tiny-x; its outputs stay in {where}/" in text
    assert f"{where}/reports/index.html" in text and "dvc exp show --rev tiny-x" in text
    assert f"BOARDRL_ROOT={where} .venv/bin/boardrl match tictactoe model:tictactoe_tabular_q random" in text


def test_in_process_check_and_args(project, capsys):
    assert main(["check", "tiny", "--root", str(project)]) is None
    main(["args", "tiny", "--root", str(project), "--name", "t1"])
    assert capsys.readouterr().out.splitlines() == [f"cd {run_dir(project, 'tiny')}", "DVC_EXP_NAME=t1 dvc repro",
                                                    "dvc exp save --name t1"]
    main(["args", "default", "--root", str(project)])
    assert capsys.readouterr().out.strip() == "dvc repro"


# ---------------------------------------------------------------------------------------------- CLI
def test_cli_check_passes_silently(project):
    res = cli(project, "check", "default")
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")


@pytest.mark.parametrize(
    "exp, key",
    [
        ({"game": "chess", "learner": "tabular_q"}, "experiments.bad.game"),
        ({"game": "tictactoe", "learner": "tabular_q", "params": {"alpha": "x"}}, "experiments.bad.params.alpha"),
    ],
)
def test_cli_check_refuses_a_bad_experiment_in_one_line(project, exp, key):
    edit_yaml(project / "params.yaml", lambda d: d["experiments"].update(bad=exp))
    res = cli(project, "check", "default")
    assert res.returncode == 2, res.stderr
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("error: params.yaml: experiments.")
    assert lines[0].startswith(f"error: params.yaml: {key}: ")


def test_cli_unknown_profile(project):
    res = cli(project, "check", "huge")
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.splitlines() == [f"error: PROFILE: unknown profile 'huge'; profiles: {KNOWN}"]


def test_cli_check_tiny_names_the_overlay(project):
    edit_yaml(project / "profiles" / "tiny.yaml",
              lambda d: d["experiments"]["tictactoe_tabular_q"]["params"].update(games=-7))
    res = cli(project, "check", "tiny")
    assert res.returncode == 2 and res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("error: params.yaml + profiles/tiny.yaml: "
                               "experiments.tictactoe_tabular_q.params.games: ")
    # params.yaml alone is still fine: the problem is the overlay's
    assert cli(project, "check", "default").returncode == 0


def test_cli_run_refuses_before_dvc(project):
    """`run` validates first: a bad file never reaches dvc (which is not even looked up)."""
    edit_yaml(project / "params.yaml", lambda d: d["experiments"]["tictactoe_tabular_q"].update(game="go"))
    res = cli(project, "run", "tiny")
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.splitlines() == [res.stderr.strip()]
    assert res.stderr.startswith(
        "error: params.yaml + profiles/tiny.yaml: experiments.tictactoe_tabular_q.game: unknown game 'go'")


def _git_dvc_project(root: Path) -> Path:
    """A committed git + DVC project of one file: what ``sync_run_dir`` makes a worktree of."""
    root.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    for cmd in (["git", "init", "-q"], [str(Path(sys.executable).parent / "dvc"), "init", "-q"]):
        subprocess.run(cmd, cwd=root, check=True, env=env)
    (root / "notes.txt").write_text("one\n")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "start"], cwd=root, check=True, env=env)
    return root


def test_a_git_lock_left_by_a_killed_run_is_removed_and_the_run_directory_synced(tmp_path, capsys):
    """A SIGKILL during the run directory's own ``git checkout`` left its index.lock, and every rerun then failed
    with git's "remove the file manually to continue" (the random-kills test, 2026-12-03)."""
    from boardrl.experiments.profiles import drop_stale_git_locks, sync_run_dir

    root = _git_dvc_project(tmp_path / "project")
    directory = root.joinpath(*RUN_DIRS, "tiny")
    sync_run_dir(root, directory)
    git_dir = Path(subprocess.run(["git", "rev-parse", "--absolute-git-dir"], cwd=directory, check=True,
                                  capture_output=True, text=True).stdout.strip())
    assert git_dir.parent.name == "worktrees"  # the worktree's own git directory, never the project's
    (git_dir / "index.lock").write_text("")
    refused = subprocess.run(["git", "checkout", "-q", "-f", "--detach", "HEAD"], cwd=directory,
                             capture_output=True, text=True)
    assert refused.returncode != 0 and "index.lock" in refused.stderr  # what the rerun met
    capsys.readouterr()
    (root / "notes.txt").write_text("two\n")  # an uncommitted change: the sync must carry it over
    sync_run_dir(root, directory)
    assert not (git_dir / "index.lock").exists() and (directory / "notes.txt").read_text() == "two\n"
    assert capsys.readouterr().err.strip() == f"note: removed index.lock from {git_dir}: left by a killed run"
    assert drop_stale_git_locks(directory) == []  # nothing left, nothing said
    assert not (root / ".git" / "index.lock").exists()


def test_a_second_run_in_the_same_profile_directory_is_refused_in_one_line(tmp_path, capsys):
    """The lock that makes a worktree's git locks safe to remove: held for the run, released when it ends."""
    from boardrl.experiments.profiles import only_run

    directory = tmp_path / "runs" / "tiny"
    with only_run(directory):
        with pytest.raises(SystemExit) as refused:
            with only_run(directory):
                pytest.fail("a second run got the lock")
        assert refused.value.code == 1
    err = capsys.readouterr().err
    assert err == f"error: {directory}: another run of this profile is running there; wait for it to end or stop it\n"
    with only_run(directory):  # the first ended: free again
        pass


def test_a_damaged_dvc_lock_is_set_aside_and_the_last_good_one_put_back(tmp_path, capsys):
    """DVC rewrites dvc.lock in place: a kill mid-write must not block every rerun."""
    from boardrl.experiments.profiles import GOOD_LOCK, guard_lock

    lock = tmp_path / "dvc.lock"
    good = "schema: '2.0'\nstages:\n  prepare:\n    cmd: python pipeline/prepare.py\n"
    lock.write_text(good)
    assert guard_lock(tmp_path) is None and tmp_path.joinpath(*GOOD_LOCK).read_text() == good
    lock.write_text(good + "  train@x:\n    deps:\n    - path: a\n")  # cut off: a stage without its cmd
    aside = guard_lock(tmp_path)
    assert aside is not None and aside.name.startswith("dvc.lock.damaged-")
    assert lock.read_text() == good and "train@x" in aside.read_text()  # moved aside, not deleted
    line = capsys.readouterr().err.strip()
    assert line.startswith(f"error: {lock}: damaged (") and "the last good one is back" in line
    assert "\n" not in line


@pytest.mark.parametrize("text", ["", '{"read": {"models/x": [{"pid": 1, "cmd": "dvc re', '{"read": 3}'])
def test_a_damaged_dvc_rwlock_is_set_aside(tmp_path, capsys, text):
    """DVC rewrites .dvc/tmp/rwlock as stages take and free paths: a kill then left it empty and blocked reruns."""
    from boardrl.experiments.profiles import RWLOCK, guard_rwlock

    rwlock = tmp_path.joinpath(*RWLOCK)
    assert guard_rwlock(tmp_path) is None  # none yet: nothing to do
    rwlock.parent.mkdir(parents=True)
    rwlock.write_text('{"read": {}, "write": {}}')
    assert guard_rwlock(tmp_path) is None and rwlock.is_file() and capsys.readouterr().err == ""
    rwlock.write_text(text)
    aside = guard_rwlock(tmp_path)
    assert aside is not None and aside.name.startswith("rwlock.damaged-") and aside.read_text() == text
    assert not rwlock.exists()
    line = capsys.readouterr().err.strip()
    assert line.startswith(f"error: {rwlock}: damaged (") and line.endswith("DVC starts a new one")
    assert "\n" not in line


def test_rwlock_entries_of_zombie_and_missing_processes_are_dropped_and_live_ones_kept(tmp_path):
    """A dvc repro killed with its group stays a zombie where nobody reaps orphans (CI's container), and DVC took
    its pid for a live holder: the rerun stopped with "'data/raw/connect-4.names' is busy"."""
    import psutil
    from dvc.fs import localfs
    from dvc.rwlock import rwlock as dvc_rwlock

    from boardrl.experiments.profiles import RWLOCK, guard_rwlock

    zombie = subprocess.Popen(["sleep", "60"])
    os.kill(zombie.pid, signal.SIGKILL)
    while psutil.Process(zombie.pid).status() != psutil.STATUS_ZOMBIE:
        time.sleep(0.01)
    missing = max(psutil.pids()) + 100_000
    live, dead, gone = ({"pid": pid, "cmd": "dvc repro"} for pid in (os.getpid(), zombie.pid, missing))
    rwlock = tmp_path.joinpath(*RWLOCK)
    rwlock.parent.mkdir(parents=True)
    rwlock.write_text(json.dumps({"read": {"data/raw": [dead, live], "data/x": [gone]},
                                  "write": {"models/a": dead, "models/b": live}}))
    try:
        assert guard_rwlock(tmp_path) is None
    finally:
        zombie.wait()
    assert json.loads(rwlock.read_text()) == {"read": {"data/raw": [live]}, "write": {"models/b": live}}
    with dvc_rwlock(str(rwlock.parent), localfs, "dvc repro 2", ["models/a"], ["data/x"], False):
        pass  # DVC itself now lets a rerun read and write what the zombie and the missing process held


def test_a_damaged_dvc_lock_without_a_good_copy_is_only_set_aside(tmp_path, capsys):
    from boardrl.experiments.profiles import guard_lock

    (tmp_path / "dvc.lock").write_text("schema: '2.0'\nstages: [\n")
    assert guard_lock(tmp_path) is not None
    assert not (tmp_path / "dvc.lock").exists()
    assert "DVC checks every stage again" in capsys.readouterr().err


def test_lock_entries_of_stages_the_pipeline_lost_are_dropped(tmp_path):
    """A profile that drops experiments starts from the workspace's lock; DVC would keep their entries and rewrite
    them after every stage, and leave their outputs for the report to read.  Only entries of stages the pipeline
    lacks go, with their outputs that no stage declares; DVC still accepts the lock and finds the kept stage up
    to date; a second call writes nothing."""
    from boardrl.experiments.profiles import prune_lock

    (tmp_path / "params.yaml").write_text("items: {a: 1}\n")
    (tmp_path / "dvc.yaml").write_text("stages:\n  make:\n    foreach: ${items}\n    do:\n"
                                       "      cmd: echo ${item} > out-${key}\n      outs: ['out-${key}']\n")
    subprocess.run([str(Path(sys.executable).parent / "dvc"), "init", "--no-scm", "-q"], cwd=tmp_path, check=True)
    done = subprocess.run([str(Path(sys.executable).parent / "dvc"), "repro", "-q"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    kept = yaml.safe_load((tmp_path / "dvc.lock").read_text())["stages"]["make@a"]
    lock = yaml.safe_load((tmp_path / "dvc.lock").read_text())
    lock["stages"]["make@gone"] = {**kept, "cmd": "echo 2 > out-gone",
                                   "outs": [{**kept["outs"][0], "path": p} for p in ("out-gone", "out-a", "../x")]}
    (tmp_path / "dvc.lock").write_text(yaml.safe_dump(lock, sort_keys=False))
    (tmp_path / "out-gone").write_text("2\n")  # the removed stage's output: the report would read it
    outside = tmp_path.parent / "x"
    outside.write_text("not the project's")

    assert prune_lock(tmp_path) == ["make@gone"]
    assert yaml.safe_load((tmp_path / "dvc.lock").read_text())["stages"] == {"make@a": kept}
    assert not (tmp_path / "out-gone").exists()
    assert (tmp_path / "out-a").read_text() == "1\n"  # a path the pipeline still declares stays
    assert outside.read_text() == "not the project's"  # nothing outside the project is touched
    status = subprocess.run([str(Path(sys.executable).parent / "dvc"), "status", "--json"], cwd=tmp_path,
                            capture_output=True, text=True)
    assert status.returncode == 0 and json.loads(status.stdout) == {}, status.stdout + status.stderr
    before = (tmp_path / "dvc.lock").stat().st_mtime_ns
    assert prune_lock(tmp_path) == [] and (tmp_path / "dvc.lock").stat().st_mtime_ns == before
