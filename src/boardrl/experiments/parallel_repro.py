"""``dvc repro`` on several cores: independent stages run side by side, each through DVC itself.

Why: ``dvc repro`` runs one stage at a time, and most of the pipeline's stages keep one core busy (tabular
learners, scalar matches, DVC's and Python's start-up), so on the project's 2-core machine the default profile
left about a quarter of the machine idle.  DVC supports running stages in parallel by hand: ``dvc repro
--single-item <stage>`` takes the repository lock only to check and record the stage and releases it while the
stage's command runs, its read/write locks on the stage's dependencies and outputs refuse a clash, and
``--wait-for-lock`` makes a second process wait for the repository lock instead of failing.  So this module only
decides *when* to start each stage; DVC still decides whether a stage is out of date, runs it, caches its outputs
and writes ``dvc.lock``.  A stage starts once every stage it depends on (DVC's own graph) has finished.

Which stages share the cores: one-core stages run side by side, and a stage that keeps every core busy (torch's
training and play, the referee) runs alone (``stage_cores``).  What runs: the stages ``dvc status`` reports
changed, and everything downstream of them.  A downstream stage whose inputs came out unchanged is skipped, as
``dvc repro`` skips it, but without starting a DVC process for it: once its upstream stages have finished, one
``dvc status`` over all such stages that are ready says which are up to date (``up_to_date``).  Why: after any
edit under ``src/`` the cheap ``inputs`` stage reruns and every stage below it must be checked, and one ``dvc
repro --single-item`` each took about 5 s on this busy 2-core machine, over 10 minutes for the default
profile's 136 stages that then all came out unchanged.  A plain ``dvc repro`` follows, which finds
nothing left to do unless a stage was added meanwhile; it is the check that the parallel run left the pipeline
complete.  Results do not depend on the order or on what ran beside a stage: a model is a function of (game,
learner params, seed), and torch's thread count is part of the params (``learn/core/device.py``).

Each stage's output goes to ``.dvc/tmp/repro-logs/<stage>.log``; the terminal shows one progress bar over the
stages, a line per finished stage and the stage's notes and warnings.  After a failure no new stage starts, the running ones finish, and the
failed stage's log tail is printed.  How long each stage took is kept in ``.dvc/tmp/stage-seconds.json``, and the
next run starts the longest ready stage first (the others by their order in ``dvc.yaml``); a stage timed nowhere
starts before all of them, since one that turns out short cost only its own seconds there, while a long one
started last stretches the run's end by all of its (the full profile's seed-002 Connect 4 trainings, killed
before they ever finished, waited behind 70 curve stages that way).  A first run (a fresh
clone) has no such file, so ``pipeline/stage-seconds.json``, committed from a whole default run on the project's
2-core machine, stands in for the stages this machine has not timed yet: without it the longest training
(``train@connect4_alphazero``, the last experiment in params.yaml) started after everything before it and
stretched the run's end.  Only the order depends on these seconds, never a result.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from boardrl.atomic_io import atomic_write_json

LOG_DIR = (".dvc", "tmp", "repro-logs")
SECONDS_FILE = (".dvc", "tmp", "stage-seconds.json")
PRIOR_SECONDS_FILE = ("pipeline", "stage-seconds.json")  # committed: a whole default run's, for a first run
JOBS_ENV = "BOARDRL_REPRO_JOBS"  # stages side by side; default: the cores this process may use
LOG_TAIL_LINES = 25


@dataclass(frozen=True)
class StageGraph:
    """The pipeline's stages in ``dvc.yaml`` order and, for each, the stages whose outputs it reads; the paths
    its stages declare as outputs (relative to the project)."""

    order: tuple[str, ...]
    upstream: Mapping[str, frozenset[str]]
    outputs: frozenset[str] = frozenset()

    def downstream_closure(self, names: set[str]) -> set[str]:
        """``names`` and every stage that depends on one of them, directly or not."""
        below: dict[str, set[str]] = {n: set() for n in self.order}
        for stage, ups in self.upstream.items():
            for up in ups:
                below[up].add(stage)
        out, todo = set(), list(names)
        while todo:
            n = todo.pop()
            if n not in out:
                out.add(n)
                todo.extend(below.get(n, ()))
        return out


def load_graph(root: Path) -> StageGraph:
    """Read the stage graph through DVC's own index (no repository lock needed)."""
    from dvc.repo import Repo

    repo = Repo(str(root))
    try:
        graph = repo.index.graph  # edges point from a stage to the stages it depends on
        order = tuple(_address(s, root) for s in repo.index.stages)
        upstream = {_address(s, root): frozenset(_address(d, root) for d in graph.successors(s))
                    for s in graph.nodes}
        base = Path(root).resolve()
        outputs = frozenset(os.path.relpath(o.fs_path, base) for s in repo.index.stages for o in s.outs)
    finally:
        repo.close()
    return StageGraph(order, {n: upstream.get(n, frozenset()) for n in order}, outputs)


def _address(stage, root: Path) -> str:
    """The stage's name as ``dvc`` takes it in ``root``: ``name`` in ``dvc.yaml``, else ``<file>:<name>``
    (DVC's own ``addressing`` is relative to the current directory, not to the project)."""
    dvcfile = Path(stage.path).resolve()
    if dvcfile == (Path(root).resolve() / "dvc.yaml"):
        return stage.name
    return f"{os.path.relpath(dvcfile, Path(root).resolve())}:{stage.name}"


def changed_stages(root: Path, env: Mapping[str, str], names: list[str] | None = None) -> set[str]:
    """The stages ``dvc status`` reports out of date (new, changed dependencies or params, missing outputs): of the
    whole pipeline, or of ``names`` only (each alone, not what it depends on)."""
    res = subprocess.run(["dvc", "--wait-for-lock", "status", "--json", *(names or [])], cwd=root, env=dict(env),
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"dvc status failed: {(res.stderr.strip().splitlines() or ['?'])[-1]}")
    return set(json.loads(res.stdout or "{}"))


@dataclass
class Schedule:
    """Which stages may start: those to run whose upstream stages (among those to run) all finished."""

    graph: StageGraph
    to_run: set[str]
    seconds: Mapping[str, float] = field(default_factory=dict)
    cores: Mapping[str, int] = field(default_factory=dict)  # cores a stage keeps busy (default 1)
    done: set[str] = field(default_factory=set)
    started: set[str] = field(default_factory=set)

    def ready(self) -> list[str]:
        """Stages that may start now: those never timed, then the longest known, each in ``dvc.yaml`` order."""
        rank = {n: i for i, n in enumerate(self.graph.order)}
        free = [n for n in self.to_run - self.started
                if all(u in self.done or u not in self.to_run for u in self.graph.upstream[n])]
        return sorted(free, key=lambda n: (-self.seconds.get(n, math.inf), rank[n]))

    def finished(self) -> bool:
        return self.done >= self.to_run

    def to_start(self, jobs: int, running: list[str]) -> list[str]:
        """The ready stages that fit beside the running ones in ``jobs`` cores (one stage always may run)."""
        free = jobs - sum(self.cores.get(n, 1) for n in running)
        out = []
        for name in self.ready():
            need = min(self.cores.get(name, 1), jobs)
            if need <= free or not (running or out):
                out.append(name)
                free -= need
        return out


def stage_cores(root: Path, jobs: int) -> dict[str, int]:
    """The cores each stage keeps busy: the train, curve and evaluate stages of a torch learner's experiment
    its torch threads (``boardrl.learn.stage_threads``: the param, ``$BOARDRL_TORCH_THREADS``, the learner's
    default), the ``referee`` stage, sweeps and tournaments all of them, everything else one.

    Why: torch's OpenMP threads spin while they wait for each other, so a stage of two threads that shares the
    cores with anything runs many times slower (measured: a small conv net's training took 25 times as long with
    a second copy beside it).  Such a stage runs alone.  Threads that sleep while they wait
    (``OMP_WAIT_POLICY=PASSIVE``) do not make sharing pay: beside one one-core stage, ``train@connect4_alphazero``
    took 869 s instead of 477 (2026-12-01), about one core's worth.  A one-thread torch stage has no team to wait
    for and pairs like any other (Connect 4's DQN trained in 117 s beside a busy core, 97 s alone).
    """
    from boardrl.config import load_params
    from boardrl.learn import stage_threads

    if not (root / "params.yaml").is_file():
        return {}  # not a boardrl pipeline: nothing is known about its stages
    params = load_params(root / "params.yaml")
    cores: dict[str, int] = {"referee": jobs}
    cores.update({f"sweep@{sid}": jobs for sid in params.sweeps})
    cores.update({f"tournament@{tid}": jobs for tid in params.tournaments})
    for exp_id, e in params.experiments.items():
        threads = stage_threads(e.learner, params.learner_params(exp_id))  # the param, the environment, the learner
        if threads is not None:
            cores.update({f"{stage}@{exp_id}": threads for stage in ("train", "curve", "evaluate")})
    return cores


def default_jobs() -> int:
    """``$BOARDRL_REPRO_JOBS``, else the cores this process may use."""
    from boardrl.cores import available_cores

    raw = os.environ.get(JOBS_ENV)
    if raw is None:
        return available_cores()
    try:
        jobs = int(raw)
    except ValueError:
        raise SystemExit(f"error: ${JOBS_ENV} must be a positive integer, got {raw!r}") from None
    if jobs < 1:
        raise SystemExit(f"error: ${JOBS_ENV} must be a positive integer, got {raw!r}")
    return jobs


def stage_command(name: str) -> list[str]:
    return ["dvc", "--wait-for-lock", "repro", "--single-item", name]


#: Which of the named stages DVC finds up to date (the rest must run).
UpToDate = Callable[[list[str]], set[str]]


def up_to_date(root: Path, env: Mapping[str, str]) -> UpToDate:
    """The named stages that one ``dvc status`` (``changed_stages``) does not report.  When DVC cannot answer,
    none: each is then started, and DVC decides as before."""
    def check(names: list[str]) -> set[str]:
        try:
            return set(names) - changed_stages(root, env, names)
        except (RuntimeError, ValueError):
            return set()
    return check


def log_path(root: Path, name: str) -> Path:
    return root.joinpath(*LOG_DIR) / f"{name.replace('/', '_')}.log"


def _read_seconds(root: Path) -> dict[str, float]:
    """Each stage's seconds: this machine's last real run of it, else the committed prior; {} for neither."""
    return {**_seconds_in(root.joinpath(*PRIOR_SECONDS_FILE)), **_seconds_in(root.joinpath(*SECONDS_FILE))}


def _seconds_in(path: Path) -> dict[str, float]:
    try:
        data = json.loads(path.read_text())
        return {str(k): float(v) for k, v in data.items()}
    except (OSError, ValueError, AttributeError, TypeError):
        return {}


def _write_seconds(root: Path, seconds: Mapping[str, float]) -> None:
    path = root.joinpath(*SECONDS_FILE)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, dict(sorted(seconds.items())))


def _log_lines(path: Path) -> list[str]:
    """A stage's log as lines, progress-bar redraws (carriage returns) split apart; [] if unreadable."""
    try:
        return path.read_text(errors="replace").replace("\r", "\n").splitlines()
    except OSError:
        return []


def _tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    return "\n".join(_log_lines(path)[-lines:])


Launcher = Callable[[str, Path], subprocess.Popen]


def _launcher(root: Path, env: Mapping[str, str]) -> Launcher:
    def launch(name: str, log: Path) -> subprocess.Popen:
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "wb") as out:  # the child keeps its own descriptor
            return subprocess.Popen(stage_command(name), cwd=root, env=dict(env), stdout=out,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    return launch


def run_stages(root: Path, schedule: Schedule, jobs: int, launch: Launcher, say: Callable[[str], None],
               progress: Callable[[list[str]], None] = lambda running: None, poll_s: float = 0.2,
               unchanged: UpToDate | None = None, known_changed: frozenset[str] = frozenset()) -> int:
    """Start ready stages, at most ``jobs`` at once, until all finished or one failed; DVC's exit status.

    With ``unchanged``, a ready stage outside ``known_changed`` (those ``dvc status`` reported before the run) is
    first checked with the others ready then, and skipped without a start when it is up to date."""
    running: dict[str, tuple[subprocess.Popen, float]] = {}
    skip = (lambda: None) if unchanged is None else _skipper(schedule, unchanged, set(known_changed), say)
    try:
        return _run(root, schedule, jobs, launch, say, progress, poll_s, running, skip)
    except KeyboardInterrupt:  # Ctrl-C reached the stages too (one process group): let DVC record what it can
        for proc, _ in running.values():
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
        say("stopped: rerun the same command to continue (finished stages are kept, training resumes)")
        return 130


def _skipper(schedule: Schedule, unchanged: UpToDate, checked: set[str],
             say: Callable[[str], None]) -> Callable[[], None]:
    """Marks done, unstarted, the ready stages DVC finds up to date; each stage is asked about once, when it
    first is ready (its upstream stages have finished, so their outputs are what it will read)."""
    rank = {n: i for i, n in enumerate(schedule.graph.order)}

    def skip() -> None:
        while fresh := [n for n in schedule.ready() if n not in checked]:
            checked.update(fresh)
            for name in sorted(unchanged(fresh), key=rank.__getitem__):
                schedule.started.add(name)
                schedule.done.add(name)
                say(f"{name}: unchanged, skipped")
    return skip


def _run(root: Path, schedule: Schedule, jobs: int, launch: Launcher, say: Callable[[str], None],
         progress: Callable[[list[str]], None], poll_s: float,
         running: dict[str, tuple[subprocess.Popen, float]], skip: Callable[[], None]) -> int:
    seconds = _seconds_in(root.joinpath(*SECONDS_FILE))  # this machine's own; the prior is only read
    failure = 0
    while running or (not failure and not schedule.finished()):
        if not failure:
            skip()
            for name in schedule.to_start(jobs, list(running)):
                schedule.started.add(name)
                running[name] = (launch(name, log_path(root, name)), time.monotonic())
                progress(sorted(running))
        if not running:
            break  # nothing can start: only possible after a failure
        time.sleep(poll_s)
        for name, (proc, t0) in list(running.items()):
            rc = proc.poll()
            if rc is None:
                continue
            del running[name]
            took = time.monotonic() - t0
            if rc == 0:
                schedule.done.add(name)
                outcome = _outcome(log_path(root, name))
                if outcome == "done":  # a skip's second would rank a long stage last in the next real run
                    seconds[name] = round(took, 1)
                    _write_seconds(root, seconds)
                say(f"{name}: {outcome} in {took:.0f} s")
                for line in _notes(log_path(root, name)):
                    say(f"  {line}")
            else:
                failure = failure or rc
                log = log_path(root, name)
                say(f"error: stage {name} failed (exit {rc}); its output is in {log}:\n{_tail(log)}")
            progress(sorted(running))
    return failure


#: A stage's lines that are meant for the person at the terminal (the rest stays in its log).
NOTE_PREFIXES = ("note:", "warning:", "WARNING:")


def _notes(log: Path) -> list[str]:
    """The stage's notes and warnings (an offline download's fallback, a resumed training, ...)."""
    return [line.strip() for line in _log_lines(log) if line.startswith(NOTE_PREFIXES)]


def _outcome(log: Path) -> str:
    text = _tail(log, 5)
    return "unchanged, skipped" if "didn't change, skipping" in text else "done"


def parallel_repro(root: Path, env: Mapping[str, str] | None = None, jobs: int | None = None,
                   graph: StageGraph | None = None) -> int:
    """Bring the pipeline in ``root`` (``graph``, read when not given) up to date, ``jobs`` stages at a time; the
    exit status (0: up to date)."""
    from tqdm import tqdm

    env = dict(os.environ if env is None else env)
    jobs = default_jobs() if jobs is None else jobs
    if jobs <= 1:
        return subprocess.call(["dvc", "repro"], cwd=root, env=env)
    graph = graph or load_graph(root)
    changed = changed_stages(root, env)
    to_run = graph.downstream_closure(changed)
    schedule = Schedule(graph, to_run, _read_seconds(root), stage_cores(root, jobs))
    print(f"repro: {len(to_run)} of {len(graph.order)} stages to check, {jobs} at a time (logs: "
          f"{Path(*LOG_DIR)}/)", file=sys.stderr, flush=True)
    with tqdm(total=len(to_run), desc="stages", unit="stage", file=sys.stderr, dynamic_ncols=True) as bar:
        def say(line: str) -> None:
            bar.write(line, file=sys.stderr)
            bar.n = len(schedule.done)
            bar.refresh()

        def progress(running: list[str]) -> None:
            bar.set_postfix_str(", ".join(running), refresh=True)

        status = run_stages(root, schedule, jobs, _launcher(root, env), say, progress,
                            unchanged=up_to_date(root, env), known_changed=frozenset(changed))
    if status != 0:
        return status
    return subprocess.call(["dvc", "repro"], cwd=root, env=env)  # the check: nothing should be left to run
