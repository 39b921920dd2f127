"""The parallel ``dvc repro``: on a small DVC project, independent stages overlap in time, every stage is recorded
in dvc.lock as a sequential ``dvc repro`` would record it, a rerun runs nothing, and a failure stops the run with
the failed stage's log."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from boardrl.experiments.parallel_repro import (
    Schedule,
    StageGraph,
    default_jobs,
    load_graph,
    log_path,
    parallel_repro,
    run_stages,
)

# Each stage writes its start and end times; b and c sleep long enough that overlap cannot be an accident.
STAGE = ("import json, sys, time; t0 = time.time(); time.sleep({sleep}); {check}"
         "open('{out}', 'w').write(json.dumps([t0, time.time()]))")


def _stage(out: str, deps: list[str], sleep: float = 0.0, check: str = "") -> dict:
    cmd = f'{sys.executable} -c "{STAGE.format(sleep=sleep, out=out, check=check)}"'
    return {"cmd": cmd, "deps": deps, "outs": [out]}


def _project(tmp_path: Path, fail_c: bool = False) -> Path:
    """a -> (b, c) -> d; b and c independent."""
    root = tmp_path / "proj"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["dvc", "init", "-q"], cwd=root, check=True, env=_env())
    (root / "input.txt").write_text("x\n")
    check_c = "sys.exit(3) if open('input.txt').read() == 'fail\\\\n' else None; " if fail_c else ""
    stages = {
        "a": _stage("a.json", ["input.txt"], check="print('note: a says hello'); "),
        "b": _stage("b.json", ["a.json"], sleep=2.0),
        "c": _stage("c.json", ["a.json", "input.txt"], sleep=2.0, check=check_c),
        "d": _stage("d.json", ["b.json", "c.json"]),
    }
    (root / "dvc.yaml").write_text(yaml.safe_dump({"stages": stages}, sort_keys=False))
    return root


def _env() -> dict[str, str]:
    env = os.environ.copy()
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def _times(root: Path, name: str) -> tuple[float, float]:
    return tuple(json.loads((root / f"{name}.json").read_text()))


def test_graph_lists_stages_in_order_with_their_upstream(tmp_path):
    root = _project(tmp_path)
    g = load_graph(root)
    assert g.order == ("a", "b", "c", "d")
    assert g.upstream == {"a": frozenset(), "b": {"a"}, "c": {"a"}, "d": {"b", "c"}}
    assert g.downstream_closure({"b"}) == {"b", "d"}
    assert g.downstream_closure({"a"}) == {"a", "b", "c", "d"}


def test_independent_stages_overlap_and_the_lock_is_complete(tmp_path, capsys):
    root = _project(tmp_path)
    assert parallel_repro(root, _env(), jobs=2) == 0
    assert "note: a says hello" in capsys.readouterr().err  # a stage's notes reach the terminal
    b, c = _times(root, "b"), _times(root, "c")
    assert max(b[0], c[0]) < min(b[1], c[1]), "b and c did not run side by side"
    assert _times(root, "a")[1] <= min(b[0], c[0]) and _times(root, "d")[0] >= max(b[1], c[1])
    lock = yaml.safe_load((root / "dvc.lock").read_text())
    assert sorted(lock["stages"]) == ["a", "b", "c", "d"]
    status = subprocess.run(["dvc", "status", "--json"], cwd=root, env=_env(), capture_output=True, text=True)
    assert json.loads(status.stdout) == {}
    # a rerun with nothing changed starts no stage
    before = {n: _times(root, n) for n in "abcd"}
    assert parallel_repro(root, _env(), jobs=2) == 0
    assert {n: _times(root, n) for n in "abcd"} == before


def test_one_changed_stage_reruns_it_and_what_depends_on_it_only(tmp_path):
    root = _project(tmp_path)
    assert parallel_repro(root, _env(), jobs=2) == 0
    before = {n: _times(root, n) for n in "abcd"}
    stages = yaml.safe_load((root / "dvc.yaml").read_text())
    stages["stages"]["c"]["cmd"] += " "  # a changed command: DVC reruns c, and d because c's output is new
    (root / "dvc.yaml").write_text(yaml.safe_dump(stages, sort_keys=False))
    assert parallel_repro(root, _env(), jobs=2) == 0
    after = {n: _times(root, n) for n in "abcd"}
    assert after["a"] == before["a"] and after["b"] == before["b"]
    assert after["c"] != before["c"] and after["d"] != before["d"]


def test_a_failed_stage_stops_the_run_and_its_log_is_shown(tmp_path, capsys):
    root = _project(tmp_path, fail_c=True)
    (root / "input.txt").write_text("fail\n")
    assert parallel_repro(root, _env(), jobs=2) != 0
    err = capsys.readouterr().err
    assert "error: stage c failed" in err and str(log_path(root, "c")) in err
    assert not (root / "d.json").exists()
    lock = yaml.safe_load((root / "dvc.lock").read_text())
    assert sorted(lock["stages"]) == ["a", "b"]  # b finished beside c and is recorded; d never started


def test_the_longest_known_stage_starts_first_and_jobs_are_a_ceiling(tmp_path):
    graph = StageGraph(("a", "b", "c", "d"), {"a": frozenset(), "b": frozenset(), "c": frozenset(),
                                               "d": frozenset({"a"})})
    schedule = Schedule(graph, {"a", "b", "c", "d"}, seconds={"a": 1.0, "c": 30.0, "b": 5.0})
    assert schedule.ready() == ["c", "b", "a"]

    class Done:
        def __init__(self):
            self.polls = 0

        def poll(self):
            self.polls += 1
            return 0 if self.polls > 1 else None

    started: list[tuple[str, int]] = []
    running = set()

    def launch(name, log):
        running.add(name)
        started.append((name, len(running)))
        proc = Done()
        orig = proc.poll

        def poll():
            rc = orig()
            if rc is not None:
                running.discard(name)
            return rc
        proc.poll = poll
        return proc

    assert run_stages(tmp_path, schedule, 2, launch, say=lambda s: None, poll_s=0) == 0
    order = [n for n, _ in started]
    assert order[:2] == ["c", "b"] and sorted(order) == ["a", "b", "c", "d"]
    assert max(k for _, k in started) <= 2
    assert order.index("d") > order.index("a")
    assert schedule.done == {"a", "b", "c", "d"}


class _Finished:
    """A stage process that has already exited with status 0."""

    def poll(self):
        return 0


def test_a_ready_stage_dvc_finds_up_to_date_is_skipped_without_a_start(tmp_path):
    """a -> (b, c) -> d, a known changed: b and c are asked about together once a finished, never before; b is
    up to date and never starts, c runs, and d is asked about once c finished."""
    graph = StageGraph(("a", "b", "c", "d"), {"a": frozenset(), "b": frozenset({"a"}), "c": frozenset({"a"}),
                                               "d": frozenset({"b", "c"})})
    schedule = Schedule(graph, {"a", "b", "c", "d"})
    asked: list[list[str]] = []
    started: list[str] = []
    said: list[str] = []

    def unchanged(names: list[str]) -> set[str]:
        asked.append(sorted(names))
        assert all(u in schedule.done for n in names for u in graph.upstream[n])  # asked only once ready
        return {"b"} & set(names)

    def launch(name, log):
        started.append(name)
        return _Finished()

    assert run_stages(tmp_path, schedule, 2, launch, say=said.append, poll_s=0, unchanged=unchanged,
                      known_changed=frozenset({"a"})) == 0
    assert started == ["a", "c", "d"] and asked == [["b", "c"], ["d"]]
    assert [s.split(":")[0] for s in said] == ["a", "b", "c", "d"] and said[1] == "b: unchanged, skipped"
    assert schedule.done == {"a", "b", "c", "d"}


def test_jobs_come_from_the_environment_with_a_one_line_refusal(monkeypatch):
    monkeypatch.setenv("BOARDRL_REPRO_JOBS", "3")
    assert default_jobs() == 3
    monkeypatch.setenv("BOARDRL_REPRO_JOBS", "two")
    with pytest.raises(SystemExit, match="BOARDRL_REPRO_JOBS must be a positive integer, got 'two'"):
        default_jobs()


def test_a_stage_that_keeps_every_core_busy_runs_alone():
    graph = StageGraph(("t1", "t2", "big", "t3"), {n: frozenset() for n in ("t1", "t2", "big", "t3")})
    schedule = Schedule(graph, {"t1", "t2", "big", "t3"}, seconds={"big": 100.0, "t1": 1.0, "t2": 1.0, "t3": 1.0},
                        cores={"big": 2})
    assert schedule.to_start(2, []) == ["big"]  # first by its time; nothing fits beside it
    schedule.started.add("big")
    assert schedule.to_start(2, ["big"]) == []
    schedule.done.add("big")
    assert schedule.to_start(2, []) == ["t1", "t2"]  # one-core stages pair up
    schedule.started |= {"t1", "t2"}
    assert schedule.to_start(2, ["t1"]) == ["t3"]
    # a stage asking for more cores than there are still runs, alone
    wide = Schedule(graph, {"big"}, cores={"big": 8})
    assert wide.to_start(2, []) == ["big"] and wide.to_start(2, ["t1"]) == []


def test_torch_stages_claim_their_threads_and_the_rest_one_core(monkeypatch):
    from boardrl.experiments.parallel_repro import stage_cores

    monkeypatch.delenv("BOARDRL_TORCH_THREADS", raising=False)  # tests/conftest.py sets 1 for the suite
    root = Path(__file__).resolve().parents[2]
    cores = stage_cores(root, 2)
    assert cores["referee"] == 2
    assert cores["train@tictactoe_dqn"] == 1  # its params set threads: 1
    assert cores["train@connect4_dqn"] == cores["evaluate@connect4_dqn"] == 1  # DQN's own default
    assert cores["train@tictactoe_td_lambda"] == cores["curve@tictactoe_td_lambda"] == 1  # seed 003's learners
    assert cores["train@tictactoe_alphazero"] == 1  # its params set threads: 1
    assert cores["train@connect4_alphazero"] == cores["curve@connect4_alphazero"] == 2  # AlphaZero's default
    assert cores["evaluate@connect4_alphazero"] == 2
    assert "train@tictactoe_tabular_q" not in cores  # one core
    monkeypatch.setenv("BOARDRL_TORCH_THREADS", "1")
    assert stage_cores(root, 2)["train@connect4_alphazero"] == 1  # the override torch itself would take


def test_a_skipped_stage_keeps_the_seconds_of_its_last_real_run(tmp_path, capsys):
    """The schedule starts the longest known stages first; a stage DVC only checked and skipped (its inputs came
    out byte-equal) must not record the second that took, or the next real run would start it last."""
    from boardrl.experiments.parallel_repro import SECONDS_FILE

    root = tmp_path / "proj"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["dvc", "init", "-q"], cwd=root, check=True, env=_env())
    (root / "input.txt").write_text("x\n")
    copy = f'{sys.executable} -c "import shutil; shutil.copy(\'input.txt\', \'p.txt\')"'
    slow = f'{sys.executable} -c "import time, shutil; time.sleep(1.5); shutil.copy(\'p.txt\', \'q.txt\')"'
    stages = {"p": {"cmd": copy, "deps": ["input.txt"], "outs": ["p.txt"]},
              "q": {"cmd": slow, "deps": ["p.txt"], "outs": ["q.txt"]}}
    (root / "dvc.yaml").write_text(yaml.safe_dump({"stages": stages}, sort_keys=False))
    assert parallel_repro(root, _env(), jobs=2) == 0
    first = json.loads(root.joinpath(*SECONDS_FILE).read_text())
    assert first["q"] >= 1.5
    stages["p"]["cmd"] += " "  # p reruns and writes the same bytes: DVC checks q and skips it
    (root / "dvc.yaml").write_text(yaml.safe_dump({"stages": stages}, sort_keys=False))
    log_path(root, "q").unlink()
    assert parallel_repro(root, _env(), jobs=2) == 0
    assert "q: unchanged, skipped" in capsys.readouterr().err
    assert not log_path(root, "q").exists()  # found up to date by one `dvc status`: no `dvc repro` started for it
    assert json.loads(root.joinpath(*SECONDS_FILE).read_text())["q"] == first["q"]


def test_a_first_run_orders_by_the_committed_seconds_and_this_machines_own_win(tmp_path):
    """A fresh clone has timed nothing: the committed prior (pipeline/stage-seconds.json) ranks the stages; a
    stage this machine has run ranks by its own seconds; a stage timed nowhere (``a``) goes first, since it may be
    the longest; a damaged file counts as none."""
    from boardrl.experiments.parallel_repro import PRIOR_SECONDS_FILE, SECONDS_FILE, _read_seconds, _seconds_in

    graph = StageGraph(("a", "b", "c"), {n: frozenset() for n in "abc"})
    prior, own = tmp_path.joinpath(*PRIOR_SECONDS_FILE), tmp_path.joinpath(*SECONDS_FILE)
    prior.parent.mkdir(parents=True)
    prior.write_text(json.dumps({"b": 50.0, "c": 400.0}))
    assert Schedule(graph, {"a", "b", "c"}, _read_seconds(tmp_path)).ready() == ["a", "c", "b"]
    own.parent.mkdir(parents=True)
    own.write_text(json.dumps({"c": 10.0}))
    assert Schedule(graph, {"a", "b", "c"}, _read_seconds(tmp_path)).ready() == ["a", "b", "c"]
    own.write_text("{not json")
    assert _read_seconds(tmp_path) == {"b": 50.0, "c": 400.0}
    prior.write_text("[1, 2]")
    assert _read_seconds(tmp_path) == {}

    shipped = _seconds_in(Path(__file__).resolve().parents[2].joinpath(*PRIOR_SECONDS_FILE))
    assert shipped["train@connect4_alphazero"] > 60  # the committed prior holds the real run's seconds
