"""Studies (experiments/study.py): validation, a variation's params, the resume plan, the table; and one study run
end to end through DVC's queue in a copy of the repository (slow: about two minutes on 2 busy cores)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from boardrl.config import ConfigError, parse_params
from boardrl.experiments.study import (
    Finished,
    check_cores,
    dvc_env,
    exp_name,
    overlay,
    plan,
    queue_command,
    restore_params,
    rows,
    shipped_params,
    stale_rows,
    validate,
    variation_params,
    write_results,
)
from boardrl.experiments.study_reuse import validated
from boardrl.experiments.study_spec import Study, StudyFile, load_study
from boardrl.experiments.study_table import stale_note
from repo_copy import git

ROOT = Path(__file__).resolve().parents[2]
EXP = "tictactoe_tabular_q"
SMALL = {  # a quick base profile: offline data, few evaluation games
    "data": {"url": "http://127.0.0.1:9/connect+4.zip", "timeout_s": 2},
    "prepare": {"check_regenerated": False},
    "train": {"eval_games": 20, "curve": {"first": 100, "per_decade": 1}},
    "evaluate": {"games": 20, "optimal_positions": 10,
                 "per_game": {"tictactoe": {"opponents": ["random", {"agent": "perfect", "games": 10}]}}},
}
TINY_STUDY = {
    "description": "tabular Q's step size, small and large",
    "base_profile": "small",
    "experiments": [EXP],
    "common": {f"experiments.{EXP}.seeds": [7], f"experiments.{EXP}.params.games": 2000,
               f"experiments.{EXP}.params.checkpoint_every": 1000},
    "variations": {"slow": {f"experiments.{EXP}.params.alpha": 0.1},
                   "fast": {f"experiments.{EXP}.params.alpha": 0.5}},
}


def write_study(root: Path, name: str, spec: dict) -> None:
    (root / "studies").mkdir(exist_ok=True)
    (root / "studies" / f"{name}.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))


@pytest.fixture()
def project(tmp_path) -> Path:
    """What a study reads: params.yaml, profiles/ (plus `small`) and studies/ (plus `tiny`)."""
    shutil.copy(ROOT / "params.yaml", tmp_path / "params.yaml")
    shutil.copytree(ROOT / "profiles", tmp_path / "profiles")
    (tmp_path / "profiles" / "small.yaml").write_text(yaml.safe_dump(SMALL))
    shutil.copytree(ROOT / "studies", tmp_path / "studies")
    write_study(tmp_path, "tiny", TINY_STUDY)
    return tmp_path


def error_of(project: Path, spec: dict) -> str:
    write_study(project, "bad", spec)
    with pytest.raises(ConfigError) as info:
        validate(project, load_study(project, "bad"))
    assert "\n" not in str(info.value)
    return str(info.value)


def with_(**changes) -> dict:
    return {**TINY_STUDY, **changes}


# ---------------------------------------------------------------------------------------------- reading params
def test_params_parsed_once_follow_every_edit_and_are_copies(project):
    """The parse is kept by content: an edit (even of the same size) is read again, and a caller that changes
    its copy changes nobody else's."""
    path = project / "params.yaml"
    first = shipped_params(project)
    assert first == yaml.safe_load(path.read_text())
    first["train"] = "changed by a caller"
    assert shipped_params(project)["train"] != "changed by a caller"
    text = path.read_text()
    edited = text.replace("eval_games: 1000", "eval_games: 2000", 1)
    assert edited != text and len(edited) == len(text)
    path.write_text(edited)
    assert shipped_params(project) == yaml.safe_load(edited)
    path.unlink()
    with pytest.raises(ConfigError, match="cannot read"):
        shipped_params(project)


def test_validated_params_are_parse_params_and_a_bad_one_fails_each_time(project):
    data = yaml.safe_load((project / "params.yaml").read_text())
    assert validated(data) == parse_params(data)
    assert validated(yaml.safe_load((project / "params.yaml").read_text())) is validated(data)
    data["experiments"][EXP]["params"]["games"] = -1
    for _ in range(2):
        with pytest.raises(ConfigError, match="games"):
            validated(data)


# ---------------------------------------------------------------------------------------------- validation
def test_the_shipped_studies_validate():
    for path in sorted((ROOT / "studies").glob("*.yaml")):
        study = load_study(ROOT, path.stem)
        for variation, params in validate(ROOT, study).items():
            assert params["study"] == {"name": path.stem, "variation": variation}
            assert sorted(params["experiments"]) == sorted(study.spec.experiments)


def test_value_learning_rate_compares_constant_and_falling_rates():
    p = validate(ROOT, load_study(ROOT, "value_learning_rate"))
    for exp_id in ("tictactoe_td0", "tictactoe_td_lambda", "tictactoe_dqn_lambda"):
        assert p["constant"]["experiments"][exp_id]["params"]["lr_end"] is None
        assert p["falling"]["experiments"][exp_id]["params"]["lr_end"] == 0.0001
        assert p["constant"]["experiments"][exp_id]["seeds"] == [0, 1, 2, 3, 4]
        typed = parse_params(p["constant"]).learner_params(exp_id)
        assert typed.lr_end is None and typed.lr == 0.001


@pytest.mark.parametrize("spec, expected", [
    (with_(varations={}), "studies/bad.yaml: varations: Extra inputs are not permitted"),
    (with_(description=""), "studies/bad.yaml: description: String should have at least 1 character"),
    (with_(variations={"Big One": {}}), "studies/bad.yaml: variations.Big One: use lower-case letters"),
    (with_(experiments=[EXP, "nope"]), "studies/bad.yaml: experiments: not in params.yaml (after the base "
                                        "profile): nope"),
    (with_(base_profile="huge"), "PROFILE: unknown profile 'huge'"),
    (with_(variations={"v": {f"experiments.{EXP}.params.games": -5}}),
     f"studies/bad.yaml: variations.v.experiments.{EXP}.params.games: "),
    (with_(variations={"v": {f"experiments.{EXP}.params.alhpa": 0.2}}),
     f"studies/bad.yaml: variations.v.experiments.{EXP}.params.alhpa: "),
    (with_(common={"train.eval_games": "many"}), "studies/bad.yaml: common.train.eval_games: "),
    (with_(variations={"v": {"experiments.tictactoe_td0.params.lr_end": 0.1}}),
     "studies/bad.yaml: variations.v.experiments.tictactoe_td0.params.lr_end: experiments.tictactoe_td0 is "
     "dropped: list it under experiments"),
    (with_(variations={"v": {f"experiments.{EXP}.params": 1, f"experiments.{EXP}.params.alpha": 0.2}}),
     f"studies/bad.yaml: variations.v.experiments.{EXP}.params.alpha: "),
])
def test_a_bad_study_is_one_line_naming_the_file_and_key(project, spec, expected):
    assert error_of(project, spec).startswith(expected)


def test_a_problem_outside_the_study_keys_names_params_and_the_variation(project):
    data = yaml.safe_load((project / "params.yaml").read_text())
    data["experiments"][EXP]["ladder"] = ["random", "model:tictactoe_td0"]  # a model the study drops
    (project / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    assert error_of(project, TINY_STUDY).startswith(
        f"params.yaml + studies/bad.yaml (variation slow): experiments.{EXP}.ladder")


def test_an_unknown_study_names_the_known_ones(project):
    known = ", ".join(sorted(p.stem for p in (project / "studies").glob("*.yaml")))
    assert "tiny" in known and "value_learning_rate" in known
    with pytest.raises(ConfigError) as info:
        load_study(project, "nope")
    assert str(info.value) == f"STUDY: unknown study 'nope'; studies: {known}"


def cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DVC_", "MLFLOW_"))}
    return subprocess.run([sys.executable, "-m", "boardrl.cli", "study", *args], cwd=root, capture_output=True,
                          text=True, timeout=120, env=env)


def test_cli_refuses_a_bad_study_before_dvc(project):
    """`boardrl study` validates every variation first: one error line, exit 2, nothing queued or written."""
    write_study(project, "bad", with_(variations={"ok": {}, "v": {f"experiments.{EXP}.seeds": [1, 1]}}))
    for args in (["bad", "--check"], ["bad"]):
        res = cli(project, *args)
        assert res.returncode == 2 and res.stdout == ""
        assert res.stderr.splitlines() == [res.stderr.strip()]
        assert res.stderr.startswith(f"error: studies/bad.yaml: variations.v.experiments.{EXP}.seeds: ")
    assert not (project / ".dvc").exists() and not (project / "studies" / "bad").exists()
    assert cli(project, "tiny", "--check").returncode == 0


def test_variations_side_by_side_may_not_run_more_torch_threads_than_cores(project, monkeypatch):
    """connect4_alphazero trains on 2 torch threads: two side by side on 2 cores would spin-wait (several times
    slower), so --jobs 2 is refused with the two ways out; one thread each (set under common) or more cores fit,
    and a tabular learner's one-thread stages always pair."""
    monkeypatch.delenv("BOARDRL_TORCH_THREADS", raising=False)  # the suite's override (tests/conftest.py)
    az = "connect4_alphazero"
    spec = {"description": "two searches", "experiments": [az],
            "variations": {"a": {}, "b": {f"experiments.{az}.params.simulations": 32}}}
    write_study(project, "az", spec)
    study = load_study(project, "az")
    wanted = validate(project, study)
    with pytest.raises(ConfigError) as info:
        check_cores(study, wanted, jobs=2, cores=2)
    assert str(info.value) == (
        f"studies/az.yaml: common: --jobs 2 runs 2 variations side by side, and {az} (a) trains on 2 torch "
        f"threads: 4 threads on 2 cores run several times slower; use --jobs 1, or set experiments.{az}.params."
        "threads: 1 under common (it changes the models' bits)")
    check_cores(study, wanted, jobs=1, cores=2)
    check_cores(study, wanted, jobs=2, cores=4)
    write_study(project, "az", {**spec, "common": {f"experiments.{az}.params.threads": 1}})
    one_thread = load_study(project, "az")
    check_cores(one_thread, validate(project, one_thread), jobs=2, cores=2)
    tiny = load_study(project, "tiny")
    check_cores(tiny, validate(project, tiny), jobs=2, cores=1)


# ---------------------------------------------------------------------------------------------- a variation's params
def test_a_variation_is_params_plus_base_profile_drops_common_and_its_keys(project):
    study = load_study(project, "tiny")
    raw = yaml.safe_load((project / "params.yaml").read_text())
    p = variation_params(project, study, "fast")
    assert list(p["experiments"]) == [EXP] and p["sweeps"] == {} and p["tournaments"] == {}
    e = p["experiments"][EXP]
    assert e["seeds"] == [7] and e["params"] == {**raw["experiments"][EXP]["params"], "games": 2000,
                                                 "checkpoint_every": 1000, "alpha": 0.5}
    assert p["profile"] == "small" and p["train"]["eval_games"] == 20 and p["prepare"]["check_regenerated"] is False
    assert p["train"]["opponents"] == raw["train"]["opponents"]  # what no layer lists stays
    assert p["study"] == {"name": "tiny", "variation": "fast"}
    slow = variation_params(project, study, "slow")
    assert slow["experiments"][EXP]["params"]["alpha"] == 0.1
    assert {k: v for k, v in slow.items() if k != "experiments" and k != "study"} == \
        {k: v for k, v in p.items() if k != "experiments" and k != "study"}


def test_the_overlay_drops_what_the_study_does_not_compare(project):
    ov = overlay(project, load_study(project, "tiny"), "slow")
    raw = yaml.safe_load((project / "params.yaml").read_text())
    assert sorted(ov["drop"]) == sorted([f"experiments.{e}" for e in raw["experiments"] if e != EXP]
                                        + [f"sweeps.{s}" for s in raw["sweeps"]]
                                        + [f"tournaments.{t}" for t in raw["tournaments"]])
    assert ov["experiments"] == {EXP: {"seeds": [7], "params": {"games": 2000, "checkpoint_every": 1000,
                                                                "alpha": 0.1}}}


def test_a_base_profile_drop_and_its_settings_of_dropped_experiments_go(project):
    write_study(project, "ontiny", with_(base_profile="tiny"))
    study = load_study(project, "ontiny")
    ov = overlay(project, study, "slow")
    assert list(ov["experiments"]) == [EXP]  # tiny's settings of the other experiments are pruned
    tiny = yaml.safe_load((project / "profiles" / "tiny.yaml").read_text())
    assert set(tiny["drop"]) <= set(ov["drop"])
    p = variation_params(project, study, "slow")
    assert p["experiments"][EXP]["seeds"] == [7] and p["evaluate"]["seed"] == tiny["evaluate"]["seed"]


def test_queue_command_names_the_experiment():
    study = Study("s", "studies/s.yaml", StudyFile.model_validate(TINY_STUDY))
    assert queue_command(study, "fast") == ["dvc", "exp", "run", "--queue", "--name", "s-fast"]
    assert exp_name(study, "slow") == "s-slow"


@pytest.mark.xfail(strict=True, reason="DVC 3.67's -S writer turns `sweeps:  # comment` with its last entry "
                   "removed into `{}` on a line of its own: why a study queues its own params.yaml, not -S")
def test_dvc_set_param_could_apply_a_variation(project, tmp_path_factory):
    from dvc.utils.hydra import apply_overrides

    from boardrl.experiments.profiles import set_args

    study = load_study(project, "tiny")
    target = tmp_path_factory.mktemp("applied") / "params.yaml"
    shutil.copy(project / "params.yaml", target)
    apply_overrides(target, set_args(overlay(project, study, "slow"))[1::2])
    assert yaml.safe_load(target.read_text()) == variation_params(project, study, "slow")


def test_a_killed_queueing_leaves_params_yaml_restorable(tmp_path):
    (tmp_path / "params.yaml").write_text("mine: 1\n")
    assert restore_params(tmp_path) is False
    backup = tmp_path / ".dvc" / "tmp" / "boardrl-study-params.yaml"
    backup.parent.mkdir(parents=True)
    backup.write_text("mine: 1\n")
    (tmp_path / "params.yaml").write_text("study: {name: x, variation: y}\n")  # killed while queueing
    assert restore_params(tmp_path) is True
    assert (tmp_path / "params.yaml").read_text() == "mine: 1\n" and not backup.exists()


# ---------------------------------------------------------------------------------------------- resume plan
def test_plan_skips_finished_variations_and_reruns_the_rest():
    study = Study("s", "studies/s.yaml", StudyFile.model_validate(
        {**TINY_STUDY, "variations": {v: {} for v in "abcdefg"}}))
    wanted = {v: {"v": v} for v in "abcdefg"}
    done = {"s-a": Finished("1" * 40, {"v": "a"}, {}),    # finished with these params: skipped
            "s-b": Finished("2" * 40, {"v": "old"}, {})}  # finished with other params: runs again
    queued = {"s-c": "Queued", "s-d": "Running", "s-e": "Failed", "s-f": "Success"}
    assert plan(wanted, study, done, queued, alive=True) == (["a"], ["c", "d"], ["b", "e", "f", "g"])
    # no live worker: a "Running" entry is a killed one's, so it runs again; a queued one waits for new workers
    assert plan(wanted, study, done, queued, alive=False) == (["a"], ["c"], ["b", "d", "e", "f", "g"])


def test_variations_that_failed_side_by_side_run_once_more_alone(monkeypatch, tmp_path):
    """DVC's parallel queue workers can race (treeverse/dvc#10673): a variation that failed beside another is
    queued again and run by one worker; one that failed alone, or twice, is left to the report, and one taken out
    of DVC's queue by hand stays out."""
    from boardrl.experiments import study as study_mod

    study = Study("s", "studies/s.yaml", StudyFile.model_validate({**TINY_STUDY, "variations": {"a": {}, "b": {}}}))
    wanted = {"a": {"v": "a"}, "b": {"v": "b"}}
    calls: list[tuple] = []
    monkeypatch.setattr(study_mod, "finished", lambda root: {"s-a": Finished("1" * 40, {"v": "a"}, {})})
    monkeypatch.setattr(study_mod, "queue_status",
                        lambda root, ask_if=None: ({"s-a": "Success", "s-b": "Failed"}, False))
    monkeypatch.setattr(study_mod, "_queue", lambda root, st, v, params, done, status, say:
                        calls.append(("queue", v, params, status)))
    monkeypatch.setattr(study_mod, "start_workers", lambda root, jobs: calls.append(("start", jobs)))
    monkeypatch.setattr(study_mod, "wait_for", lambda root, names, jobs, poll_s, say:
                        calls.append(("wait", names, jobs)))
    said: list[str] = []
    assert study_mod._retry_alone(tmp_path, study, wanted, ["a", "b"], 0.0, said.append) is None  # read again
    assert calls == [("queue", "b", {"v": "b"}, "Failed"), ("start", 1), ("wait", ["s-b"], 1)]
    assert said == ["study s: s-b failed beside another variation (DVC's parallel workers can race: "
                    "treeverse/dvc#10673); running it again alone"]
    calls.clear()
    # nothing failed: nothing runs, and what it read is the caller's table
    assert study_mod._retry_alone(tmp_path, study, wanted, ["a"], 0.0, said.append) == {
        "s-a": Finished("1" * 40, {"v": "a"}, {})}
    assert calls == []
    # taken out of the queue by hand while the study waited (gone from the listing, or "Success" with no
    # experiment): not queued again, and said so
    for listing in ({"s-a": "Success"}, {"s-a": "Success", "s-b": "Success"}):
        monkeypatch.setattr(study_mod, "queue_status", lambda root, ask_if=None, listing=listing: (listing, False))
        said.clear()
        assert study_mod._retry_alone(tmp_path, study, wanted, ["a", "b"], 0.0, said.append) == {
            "s-a": Finished("1" * 40, {"v": "a"}, {})}
        assert calls == [] and said == ["study s: s-b left DVC's queue without failing (removed by hand?): "
                                        "not run again"]


def test_a_study_that_runs_nothing_reads_the_finished_experiments_once(monkeypatch, tmp_path):
    """Nothing queued and nothing in DVC's queue: the table is written from what was read at the start (each read
    is a ``dvc exp show``, about 1.7 s here); a variation still in the queue may finish meanwhile, so ``--collect``
    reads again before the table."""
    from boardrl.experiments import study as study_mod

    study = Study("s", "studies/s.yaml", StudyFile.model_validate({**TINY_STUDY, "variations": {"a": {}, "b": {}}}))
    wanted = {"a": {"v": "a"}, "b": {"v": "b"}}
    reads: list[str] = []
    tables: list[set[str]] = []
    monkeypatch.setattr(study_mod, "load_study", lambda root, name: study)
    monkeypatch.setattr(study_mod, "validate", lambda root, st: wanted)
    monkeypatch.setattr(study_mod, "prepare_data", lambda root, st, w, say: None)

    def finished_or_reused(root, st, w):  # s-b finishes after the first read
        reads.append("read")
        return {"s-a": Finished("1" * 40, {"v": "a"}, {}),
                **({"s-b": Finished("2" * 40, {"v": "b"}, {})} if len(reads) > 1 else {})}

    monkeypatch.setattr(study_mod, "finished_or_reused", finished_or_reused)
    monkeypatch.setattr(study_mod, "write_results", lambda root, st, w, results: tables.append(set(results)) or [])

    monkeypatch.setattr(study_mod, "queue_status", lambda root, ask_if=None: ({}, False))
    assert study_mod.run_study(tmp_path, "s", collect=True, say=lambda m: None) == 1  # s-b not finished
    assert reads == ["read"] and tables == [{"s-a"}]

    reads.clear()
    tables.clear()
    monkeypatch.setattr(study_mod, "queue_status", lambda root, ask_if=None: ({"s-b": "Running"}, True))
    assert study_mod.run_study(tmp_path, "s", collect=True, say=lambda m: None) == 0  # s-b finished meanwhile
    assert reads == ["read", "read"] and tables == [{"s-a", "s-b"}]


def test_only_queues_the_variations_named_and_judges_the_run_by_them(monkeypatch, tmp_path):
    """``--only``: a long study rerun over several sittings queues the variations named and no other; the exit
    status is theirs, the table still has every variation, and a name the study lacks is one error line."""
    from boardrl.experiments import study as study_mod

    study = Study("s", "studies/s.yaml", StudyFile.model_validate(
        {**TINY_STUDY, "variations": {"a": {}, "b": {}, "c": {}}}))
    wanted = {v: {"v": v} for v in "abc"}
    queued: list[str] = []
    tables: list[set[str]] = []
    said: list[str] = []
    monkeypatch.setattr(study_mod, "load_study", lambda root, name: study)
    monkeypatch.setattr(study_mod, "validate", lambda root, st: wanted)
    monkeypatch.setattr(study_mod, "prepare_data", lambda root, st, w, say: None)
    monkeypatch.setattr(study_mod, "queue_status", lambda root, ask_if=None: ({}, False))
    monkeypatch.setattr(study_mod, "check_cores", lambda st, w, jobs, cores: None)
    monkeypatch.setattr(study_mod, "_queue", lambda root, st, v, params, done, status, say: queued.append(v))
    monkeypatch.setattr(study_mod, "init_tracking", lambda root: None)
    monkeypatch.setattr(study_mod, "start_workers", lambda root, jobs: None)
    monkeypatch.setattr(study_mod, "wait_for", lambda root, names, jobs, poll_s, say: None)
    monkeypatch.setattr(study_mod, "write_results", lambda root, st, w, results: tables.append(set(results)) or [])
    reads = iter([{}, {"s-c": Finished("3" * 40, {"v": "c"}, {})}])  # c finishes while the study waits
    monkeypatch.setattr(study_mod, "finished_or_reused", lambda root, st, w: next(reads))
    assert study_mod.run_study(tmp_path, "s", only=("c",), say=said.append) == 0  # a and b not finished: not asked
    assert queued == ["c"] and tables == [{"s-c"}]
    assert "study s: not queued (--only): s-a, s-b" in said
    assert study_mod.chosen(study, None) == ("a", "b", "c") and study_mod.chosen(study, ("c", "a")) == ("a", "c")
    for bad, named in ((("a", "z"), "'z'"), ((), "nothing")):
        with pytest.raises(ConfigError, match=f"variations: --only names {named}, which is no variation of the "
                           r"study \(its variations: a, b, c\)"):
            study_mod.chosen(study, bad)


def test_the_queue_asks_for_a_worker_only_when_an_entry_needs_one(monkeypatch, tmp_path):
    """celery's ping waits a second when no worker answers: ``queue_status`` sends it only while an entry has a
    status the caller names (``ask_if``), always without ``ask_if``, and never for ``ask_if=()``."""
    import dvc.repo

    from boardrl.experiments.study import queue_status

    pings: list[str] = []

    class Queue:
        entries: list[dict] = []
        proc = type("Proc", (), {"wdir": str(tmp_path)})()  # no process records: no experiment running

        def status(self):
            return self.entries

        def worker_status(self):
            pings.append("ping")
            return {"worker-1": []}

    class FakeRepo:
        def __init__(self, root):
            self.experiments = type("Experiments", (), {"celery_queue": Queue()})()

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(dvc.repo, "Repo", FakeRepo)
    Queue.entries = [{"name": "s-a", "status": "Success"}, {"name": "s-b", "status": "Queued"}]
    assert queue_status(tmp_path, ask_if=("Running",)) == ({"s-a": "Success", "s-b": "Queued"}, False)
    assert queue_status(tmp_path, ask_if=()) == ({"s-a": "Success", "s-b": "Queued"}, False)
    assert pings == []
    assert queue_status(tmp_path)[1] is True and pings == ["ping"]
    Queue.entries = [{"name": "s-b", "status": "Running"}]
    assert queue_status(tmp_path, ask_if=("Running",)) == ({"s-b": "Running"}, True) and pings == ["ping"] * 2


def test_waiting_outlasts_an_entry_missing_for_a_moment_and_ends_when_it_is_removed(monkeypatch, tmp_path):
    """A task between DVC's queue and its worker is briefly in neither listing: the study keeps waiting (it once
    took such a variation for finished), and stops only when the entry has been gone ``ABSENT_POLLS`` polls."""
    from boardrl.experiments import study as study_mod

    def replay(listings):
        polls = iter(listings)
        monkeypatch.setattr(study_mod, "queue_status", lambda root, ask_if=None: (next(polls), True))
        said: list[str] = []
        study_mod.wait_for(tmp_path, ["s-a"], 1, 0.0, said.append)
        return said

    assert replay([{"s-a": "Queued"}, {}, {}, {"s-a": "Running"}, {}, {"s-a": "Success"}]) == [
        "study: s-a: Queued", "study: s-a: Running", "study: s-a: Success"]
    assert replay([{"s-a": "Running"}] + [{}] * study_mod.ABSENT_POLLS) == [
        "study: s-a: Running", "study: s-a: Removed"]


def test_an_experiment_the_queue_started_counts_as_a_live_worker_while_its_process_lives(tmp_path):
    """dvc-task's record of a queued experiment's process: running (no return code) with a live pid keeps the
    worker alive however late celery's ping comes back; a return code, a dead pid or a damaged record does not."""
    from boardrl.experiments.study import experiment_running

    def record(key: str, pid: object, returncode: object) -> None:
        (tmp_path / key).mkdir()
        (tmp_path / key / f"{key}.json").write_text(json.dumps({"pid": pid, "returncode": returncode}))

    assert not experiment_running(tmp_path / "missing")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    record("finished", os.getpid(), 0)
    record("killed", dead.pid, None)
    record("damaged", "not a pid", None)
    (tmp_path / "torn").mkdir()
    (tmp_path / "torn" / "torn.json").write_text("{\"pid\": ")
    assert not experiment_running(tmp_path)
    record("running", os.getpid(), None)
    assert experiment_running(tmp_path)


def test_a_worker_is_replaced_only_after_six_polls_without_one(monkeypatch, tmp_path):
    """``wait_for`` kills a Running entry and starts workers only when six polls in a row find no live worker."""
    from boardrl.experiments import study as study_mod

    calls: list[tuple[str, ...]] = []
    monkeypatch.setattr(study_mod, "dvc", lambda root, *args, **kw: calls.append(args))
    monkeypatch.setattr(study_mod, "start_workers", lambda root, jobs: calls.append(("start",)))
    polls = iter([({"s-a": "Running"}, False)] * 5 + [({"s-a": "Running"}, True)]
                 + [({"s-a": "Running"}, False)] * 5 + [({"s-a": "Success"}, False)])
    monkeypatch.setattr(study_mod, "queue_status", lambda root, ask_if=None: next(polls))
    study_mod.wait_for(tmp_path, ["s-a"], 1, 0.0, lambda line: None)
    assert calls == []
    polls = iter([({"s-a": "Running"}, False)] * 6 + [({"s-a": "Failed"}, False)])
    study_mod.wait_for(tmp_path, ["s-a"], 1, 0.0, lambda line: None)
    assert calls == [("queue", "kill", "s-a"), ("start",)]


# ---------------------------------------------------------------------------------------------- the table
def test_rows_keep_variations_with_the_wanted_params_and_write_the_three_files(tmp_path):
    study = Study("s", "studies/s.yaml", StudyFile.model_validate(TINY_STUDY))
    wanted = {"slow": {"x": 1}, "fast": {"x": 2}}
    metrics = {f"results/metrics/{EXP}.json": {"budget": 2000, "seeds": 1, "optimal_move_rate": 0.5,
                                                "exact_vs_perfect": {"flawless_seeds": 0, "loss_as_first": 1.0,
                                                                     "loss_as_second": 0.95344},
                                                "vs:random": {"win": 0.55, "loss": 0.45},
                                                "vs:perfect": {"win": 0.0, "loss": 1.0}}}
    results = {"s-slow": Finished("a" * 40, {"x": 1}, metrics), "s-fast": Finished("b" * 40, {"x": 0}, metrics)}
    table = rows(study, wanted, results, lambda rev, exp_id: [30.0, 10.0, 20.5] if rev[0] == "a" else [])
    assert [(r["variation"], r["rev"][0]) for r in table] == [("slow", "a")]  # fast's params are stale
    assert table[0]["train_seconds"] == [30.0, 10.0, 20.5]
    files = write_results(tmp_path, study, wanted, results)
    assert [f.name for f in files] == ["results.md", "results.png", "results.json"]
    assert files[1].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # tmp_path is no DVC repository: the numbers are written, the timings are not known ("-")
    assert json.loads(files[2].read_text())["rows"] == [{**table[0], "train_seconds": []}]
    assert "| 1 | 2000 | - | 0.500 |" in files[0].read_text()


def test_a_carried_variation_keeps_its_committed_rows_and_a_run_one_gets_its_fingerprint():
    study = Study("s", "studies/s.yaml", StudyFile.model_validate(TINY_STUDY))
    wanted = {"slow": {"x": 1}, "fast": {"x": 2}}
    committed = {"experiment": EXP, "variation": "slow", "dvc_experiment": "s-slow", "rev": "c" * 40, "seeds": 3,
                 "budget": 9, "train_seconds": [1.0], "optimal_move_rate": 0.9, "exact_vs_perfect": None,
                 "opponents": {"random": {"win": 1.0, "loss": 0.0}}, "fingerprint": "f" * 64}
    results = {"s-slow": Finished("c" * 40, {"x": 1}, {}, earlier=True, rows=(committed,)),
               "s-fast": Finished("d" * 40, {"x": 2}, {f"results/metrics/{EXP}.json": {"budget": 5, "seeds": 1}})}
    table = rows(study, wanted, results, lambda rev, exp_id: [2.0], lambda rev, params: f"{rev[0]}{params['x']}")
    assert table[0] == committed  # as the committed table has it, timings included
    assert (table[1]["variation"], table[1]["budget"], table[1]["fingerprint"]) == ("fast", 5, "d2")


def test_a_variation_not_done_keeps_its_committed_rows_flagged_and_a_dropped_variation_loses_them(tmp_path):
    study = Study("s", "studies/s.yaml", StudyFile.model_validate(TINY_STUDY))
    wanted = {"slow": {"x": 1}, "fast": {"x": 2}}
    old = {"experiment": EXP, "variation": "slow", "dvc_experiment": "s-slow", "rev": "c" * 40, "seeds": 3,
           "budget": 9, "train_seconds": [1.0], "optimal_move_rate": 0.9, "exact_vs_perfect": None,
           "opponents": {"random": {"win": 1.0, "loss": 0.0}}, "fingerprint": "f" * 64}
    gone = {**old, "variation": "removed", "dvc_experiment": "s-removed"}
    results = {"s-fast": Finished("d" * 40, {"x": 2}, {f"results/metrics/{EXP}.json": {"budget": 5, "seeds": 1}})}
    stale = stale_rows([old, gone], wanted, results, study)
    assert stale == {"slow": (old,)}  # fast is done; "removed" is no variation of the study any more
    table = rows(study, wanted, results, stale=stale)
    assert [(r["variation"], r["budget"]) for r in table] == [("slow", 9), ("fast", 5)]  # the study's order
    (tmp_path / "studies" / "s").mkdir(parents=True)
    (tmp_path / "studies" / "s" / "results.json").write_text(json.dumps({"study": "s", "rows": [old, gone]}))
    write_results(tmp_path, study, wanted, results)
    written = json.loads((tmp_path / "studies" / "s" / "results.json").read_text())["rows"]
    assert [r["variation"] for r in written] == ["slow", "fast"] and written[0] == old
    md = (tmp_path / "studies" / "s" / "results.md").read_text()
    assert md.rstrip().endswith(stale_note("s", ("slow",))) and "the rows of `slow` ran with" in md
    assert stale_rows([old], wanted, {**results, "s-slow": Finished("e" * 40, {"x": 1}, {})}, study) == {}


def test_a_missing_uci_table_is_made_first_only_when_a_compared_stage_reads_it(monkeypatch, tmp_path):
    import boardrl.experiments.study as study_mod
    import boardrl.experiments.study_reuse as reuse
    from boardrl.experiments.study import prepare_data

    study = Study("s", "studies/s.yaml", StudyFile.model_validate(TINY_STUDY))
    calls, said = [], []
    reads = {"build/inputs/x.evaluate.json": {"data": {"data/processed/uci.parquet": "missing"}}}
    monkeypatch.setattr(reuse, "current_inputs", lambda root, params, exp_ids: reads)
    monkeypatch.setattr(study_mod, "dvc", lambda root, *args, **kw: calls.append(args) or
                        subprocess.CompletedProcess(args, 0, "", ""))
    prepare_data(tmp_path, study, {"v": {}}, said.append)
    assert calls == [("repro", "prepare")] and "dvc repro prepare" in said[0]

    table = tmp_path / "data" / "processed" / "uci.parquet"
    table.parent.mkdir(parents=True)
    table.write_bytes(b"x")
    prepare_data(tmp_path, study, {"v": {}}, said.append)  # present: nothing to make
    table.unlink()
    reads = {"build/inputs/x.evaluate.json": {"data": {}}}
    prepare_data(tmp_path, study, {"v": {}}, said.append)  # no compared stage reads it
    assert len(calls) == 1

    reads = {"build/inputs/x.train.json": {"data": {"data/processed/uci.parquet": "missing"}}}
    monkeypatch.setattr(study_mod, "dvc", lambda root, *args, **kw: subprocess.CompletedProcess(
        args, 1, "", "ERROR: failed to reproduce 'prepare'\n  details\n"))
    with pytest.raises(ConfigError, match="dvc repro prepare failed: ERROR: failed to reproduce 'prepare' details"):
        prepare_data(tmp_path, study, {"v": {}}, said.append)


# ---------------------------------------------------------------------------------------------- end to end
@pytest.mark.timeout(600)
def test_a_tiny_study_runs_through_the_dvc_queue_and_resumes(tmp_path):
    """Slow (about 2 minutes here): two variations queued and run side by side by DVC's queue in a copy of the
    repository; MLflow runs carry the study's tags, the table lists both, and a rerun skips both."""
    import mlflow

    from repo_copy import copy_repo, run

    def add_study(root: Path) -> None:
        (root / "profiles" / "small.yaml").write_text(yaml.safe_dump(SMALL))
        write_study(root, "tiny", TINY_STUDY)

    # no MLflow store yet: the study creates it before two variations start side by side (``init_tracking``)
    repo = copy_repo(tmp_path / "repo", edit_tree=add_study, mlflow_store=False)
    params_before = (repo / "params.yaml").read_bytes()
    cmd = [str(Path(sys.executable).parent / "boardrl"), "study", "tiny", "--jobs", "2"]
    first = run(cmd, repo, timeout=500)
    assert first.returncode == 0, first.stderr[-3000:]
    assert (repo / "params.yaml").read_bytes() == params_before  # the workspace is the user's again

    table = (repo / "studies" / "tiny" / "results.md").read_text()
    for v in ("slow", "fast"):
        assert f"| `{EXP}` | {v} | `tiny-{v}` | " in table
    assert (repo / "studies" / "tiny" / "results.png").stat().st_size > 1000
    got = json.loads((repo / "studies" / "tiny" / "results.json").read_text())["rows"]
    assert {r["variation"]: r["budget"] for r in got} == {"slow": 2000, "fast": 2000}
    assert all(len(r["train_seconds"]) == 1 and r["train_seconds"][0] > 0 for r in got)  # seed 7, from DVC

    client = mlflow.MlflowClient(f"sqlite:///{repo / 'mlflow.db'}")
    game = client.get_experiment_by_name("tictactoe")
    runs = client.search_runs([game.experiment_id], filter_string="tags.study = 'tiny'")
    seen = {(r.data.tags["stage"], r.data.tags["study_variation"], r.data.tags["dvc_exp_name"]) for r in runs}
    assert {("train", v, f"tiny-{v}") for v in ("slow", "fast")} <= seen
    assert {("evaluate", v, f"tiny-{v}") for v in ("slow", "fast")} <= seen
    alphas = {r.data.tags["study_variation"]: r.data.params.get(f"learner_params.alpha") for r in runs
              if r.data.tags["stage"] == "train" and r.data.tags.get("seed") == "7"}
    assert alphas == {"slow": "0.1", "fast": "0.5"}

    # after a commit that changes nothing a stage runs, a rerun finds both done (study_reuse: DVC lists only this
    # commit's experiments), queues nothing and starts no MLflow run
    (repo / "README.md").write_text((repo / "README.md").read_text() + "\nA line that no stage reads.\n")
    git(repo, "commit", "-qam", "docs only")
    again = run(cmd, repo, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "tiny-slow is done (DVC experiment" in again.stderr and "tiny-fast is done" in again.stderr
    assert again.stderr.count("of an earlier commit: nothing it ran has changed since") == 2, again.stderr[-3000:]
    assert "queued" not in again.stderr
    assert len(client.search_runs([game.experiment_id], filter_string="tags.study = 'tiny'")) == len(runs)

    # a clone has no DVC experiments: the committed table is the study's memory, and its rows, whose fingerprints
    # of what they ran still hold, are carried (not queued, not dropped); --collect names a variation added since
    # as not finished, keeps the finished ones in the table and queues nothing
    rows_before = json.loads((repo / "studies" / "tiny" / "results.json").read_text())["rows"]
    assert [r["variation"] for r in rows_before] == ["slow", "fast"]
    assert all(len(r["fingerprint"]) == 64 for r in rows_before)
    for ref in git(repo, "for-each-ref", "--format=%(refname)", "refs/exps/").split():
        git(repo, "update-ref", "-d", ref)
    write_study(repo, "tiny", {**TINY_STUDY, "variations": {**TINY_STUDY["variations"],
                                                             "extra": {f"experiments.{EXP}.params.alpha": 0.3}}})
    fresh = run([*cmd[:3], "--collect"], repo, timeout=300)
    assert fresh.returncode == 1, fresh.stderr[-3000:]
    assert fresh.stderr.count("carried from studies/tiny/results.json") == 2, fresh.stderr[-3000:]
    assert "not finished: tiny-extra" in fresh.stderr and "queued" not in fresh.stderr
    assert json.loads((repo / "studies" / "tiny" / "results.json").read_text())["rows"] == rows_before
    git(repo, "add", "studies")
    git(repo, "commit", "-qm", "the study's table")
    # what the report and the docs say of the table: nothing while its rows hold (study_freshness)
    stale = [sys.executable, "-c", "from pathlib import Path; from boardrl.experiments.study_freshness import "
             "freshness; from boardrl.experiments.study_spec import load_study; "
             "print(freshness(Path('.'), load_study(Path('.'), 'tiny')).stale)"]
    assert run(stale, repo).stdout.strip() == "()"

    # a commit that changes the learner's code: nothing is done any more
    learner = repo / "src" / "boardrl" / "learn" / "tabular_q.py"
    learner.write_text(learner.read_text() + "\n# an edit of the trained code\n")
    git(repo, "commit", "-qam", "learner edited")
    assert run(stale, repo).stdout.strip() == "('slow', 'fast')"  # the report and the docs flag both rows
    edited = run([*cmd[:3], "--collect"], repo, timeout=300)
    assert edited.returncode == 1 and "not finished: tiny-slow, tiny-fast, tiny-extra" in edited.stderr, \
        edited.stderr[-3000:]
    # ... and the table keeps their rows, flagged below it, until a rerun replaces them
    assert json.loads((repo / "studies" / "tiny" / "results.json").read_text())["rows"] == rows_before
    assert "Not this commit's results: the rows of `slow`, `fast` ran with" in \
        (repo / "studies" / "tiny" / "results.md").read_text()
    print(f"study: first run {first.seconds:.0f} s, rerun {again.seconds:.0f} s")


def test_training_seconds_come_from_each_seeds_summary_in_dvcs_cache(tmp_path):
    """A DVC experiment's training wall times are read at its commit from the train stage's summaries (DVC
    outputs, not git files); an unreadable summary is left out."""
    from boardrl.experiments.study import training_seconds

    def commit(root: Path, seconds: dict[str, object]) -> None:
        for seed, value in seconds.items():
            d = root / "results" / "train" / EXP / f"seed-{seed}"
            d.mkdir(parents=True, exist_ok=True)
            (d / "summary.json").write_text(json.dumps({"training_seconds": value}))
        subprocess.run(["dvc", "add", "-q", f"results/train/{EXP}"], cwd=root, check=True, env=dvc_env())
        git(root, "add", "-A")
        git(root, "commit", "-qm", "train")

    git(tmp_path, "init", "-q")
    subprocess.run(["dvc", "init", "-q"], cwd=tmp_path, check=True, env=dvc_env())
    commit(tmp_path, {0: 12.5, 1: 30.0})
    first = git(tmp_path, "rev-parse", "HEAD")
    commit(tmp_path, {0: 99.0, 1: "not a number", 2: 7.0})
    assert training_seconds(tmp_path, first, EXP) == [12.5, 30.0]
    assert training_seconds(tmp_path, "HEAD", EXP) == [99.0, 7.0]
    assert training_seconds(tmp_path, "HEAD", "no_such_experiment") == []


def test_evaluation_details_come_from_each_seeds_evaluation_in_dvcs_cache(tmp_path):
    """Read at a commit from the evaluate stage's results file (a DVC output): the wins per seat against each
    opponent, as the interquartile mean over seeds, and the UCI protocol's wins per label class, seed by seed in
    seed order; nothing of the protocol for an experiment judged without it, nothing at all where there is no file."""
    from boardrl.experiments.study import evaluation_details

    def judged(seed: int, uci: bool = True) -> dict:
        out = {"opponents": {"random": {"as_first": {"win": 1.0 - seed / 100}, "as_second": {"win": seed / 100}}}}
        if uci:
            out["uci"] = {"seed000": {c: {"win": 0.9 + seed / 100 + i / 1000, "games": 1000}
                                      for i, c in enumerate(("win", "draw", "loss"))}}
        return out

    git(tmp_path, "init", "-q")
    subprocess.run(["dvc", "init", "-q"], cwd=tmp_path, check=True, env=dvc_env())
    (tmp_path / "results" / "eval").mkdir(parents=True)
    evals = {EXP: {"seeds": {"10": judged(10), "2": judged(2)}}, "plain": {"seeds": {"0": judged(40, uci=False)}}}
    for exp_id, data in evals.items():
        (tmp_path / "results" / "eval" / f"{exp_id}.json").write_text(json.dumps(data))
    subprocess.run(["dvc", "add", "-q", "results/eval"], cwd=tmp_path, check=True, env=dvc_env())
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "evaluate")
    got = evaluation_details(tmp_path, "HEAD", EXP)
    assert got["uci_seed000_wins"] == {"win": [0.92, 1.0], "draw": [0.921, 1.001], "loss": [0.922, 1.002]}
    assert got["seat_wins"] == {"random": {"as_first": pytest.approx(0.94), "as_second": pytest.approx(0.06)}}
    assert got["seat_wins_per_seed"] == {"random": {"as_first": {"2": 0.98, "10": 0.9},
                                                    "as_second": {"2": 0.02, "10": 0.1}}}  # in seed order
    assert list(got["seat_wins_per_seed"]["random"]["as_first"]) == ["2", "10"]
    assert evaluation_details(tmp_path, "HEAD", "plain") == {
        "seat_wins": {"random": {"as_first": 0.6, "as_second": 0.4}},
        "seat_wins_per_seed": {"random": {"as_first": {"0": 0.6}, "as_second": {"0": 0.4}}}}
    assert evaluation_details(tmp_path, "HEAD", "no_such_experiment") == {}


def test_stages_of_a_queued_variation_import_the_code_of_the_copy_they_run_in(tmp_path):
    """DVC's queue runs each variation in its own copy of the workspace; ``dvc_env`` puts that copy's ``src``
    first, so a stage runs the code the experiment records even where boardrl is installed from the workspace
    (editable) and was edited after queueing."""
    package = tmp_path / "src" / "boardrl"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    out = subprocess.run([sys.executable, "-c", "import boardrl; print(boardrl.__file__)"], cwd=tmp_path,
                         env=dvc_env(), capture_output=True, text=True, check=True)
    assert Path(out.stdout.strip()) == package / "__init__.py"
