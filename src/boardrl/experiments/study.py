"""Studies: a named comparison of settings, run as DVC experiments through DVC's queue and tracked in MLflow.

A study is ``studies/<name>.yaml``::

    description: what is compared, and why
    base_profile: tiny                  # optional: a profiles/<name>.yaml overlay applied first
    experiments: [tictactoe_td0]        # the experiments compared; the others, sweeps, tournaments: dropped
    common:                             # optional: dotted params keys set in every variation
      experiments.tictactoe_td0.seeds: [0, 1, 2]
    variations:                         # name -> dotted params keys and values (dicts merge, lists replace)
      constant: {experiments.tictactoe_td0.params.lr_end: null}
      falling: {experiments.tictactoe_td0.params.lr_end: 0.0001}

``boardrl study <name> [--jobs N]`` (``make study NAME=<name> JOBS=N``) then

1. validates every variation's params (params.yaml + base profile + drops + common + variation, through
   ``config.parse_params``) before anything is queued: a problem is one ``error:`` line naming the study file and
   the key, exit 2;
2. skips each variation whose DVC experiment ``<study>-<variation>`` exists with exactly these params, so a killed
   study, rerun, continues where it stopped (a failed, stale or outdated one runs again), also one of an earlier
   commit where nothing it ran has changed since, or one whose row in the committed ``results.json`` records the
   fingerprint of what it ran that this commit still computes (``study_reuse``: a fresh clone has no DVC
   experiments);
3. queues the others, ``dvc exp run --queue --name <study>-<variation>`` with the variation's params.yaml (the
   pipeline without the experiments, sweeps and tournaments the study does not compare; ``study: {name,
   variation}`` in the params tags every MLflow run ``study`` / ``study_variation``); starts ``dvc queue start
   -j N`` and waits for them;
4. writes the results table, ``studies/<name>/results.md`` (Markdown), ``results.png`` (matplotlib) and
   ``results.json``, from the metrics files of the experiments as ``dvc exp show --json`` reports them (carried
   rows as the committed table has them), each row with its fingerprint.

Why ``studies/<name>/`` and not ``reports/studies/``: ``reports/`` is the report stage's DVC output, which that
stage replaces as a whole (and ``dvc status`` would call modified), so anything else written there is lost.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from boardrl.config import ConfigError, parse_params, read_yaml
from boardrl.cores import available_cores
from boardrl.experiments.profiles import DROP, drop_keys, leaves, load_overlay, merge
from boardrl.experiments.study_reuse import (carried, current_fingerprint, recorded_fingerprint, remember, reused,
                                             validated)
from boardrl.experiments.study_spec import STUDIES_DIR, Study, load_study
from boardrl.experiments.study_table import UCI_CLASSES, figure, markdown, stale_note

METRICS = "results/metrics/{id}.json"
PENDING = ("Queued", "Running")
ABSENT_POLLS = 3  # polls a queue entry may be missing from DVC's listing before it counts as removed (wait_for)
PARAMS_BACKUP = (".dvc", "tmp", "boardrl-study-params.yaml")  # the workspace's params.yaml while queueing
PARSED_KEPT = 4  # params.yaml texts whose parse ``shipped_params`` keeps (a test session reads many copies)

_parsed: dict[bytes, Any] = {}  # params.yaml's text -> its parse


@dataclass(frozen=True)
class Finished:
    """A finished DVC experiment: its commit, params.yaml and metrics files."""

    rev: str
    params: dict[str, Any]
    metrics: dict[str, Any]
    earlier: bool = False  # of an earlier commit than the workspace's (study_reuse)
    rows: tuple[dict[str, Any], ...] = ()  # carried from the committed results.json (its DVC experiment is not here)


# ---------------------------------------------------------------------------------------------- params
def nest(dotted: dict[str, Any], key: str, file: str) -> dict[str, Any]:
    """``{"a.b": 1}`` -> ``{"a": {"b": 1}}``; ``ConfigError`` at ``key`` when one key lies inside another."""
    out: dict[str, Any] = {}
    for path, value in dotted.items():
        *parents, last = str(path).split(".")
        node = out
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"{key}.{path}", "lies inside another key of the same variation", file=file)
        if last in node:
            raise ConfigError(f"{key}.{path}", "set twice (or inside another key)", file=file)
        node[last] = value
    return out


def study_drops(params: dict[str, Any], keep: list[str], file: str) -> list[str]:
    """Dotted keys the study removes: the experiments it does not compare, every sweep and every tournament
    (none of them is what a study compares, and each would cost every variation its run time)."""
    known = params.get("experiments") or {}
    missing = [e for e in keep if e not in known]
    if missing:
        raise ConfigError("experiments", f"not in params.yaml (after the base profile): {', '.join(missing)}",
                          file=file)
    drops = [f"experiments.{e}" for e in known if e not in keep]
    return drops + [f"{section}.{k}" for section in ("sweeps", "tournaments") for k in params.get(section) or {}]


def prune(overlay: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    """``overlay`` without what lies under the dotted ``keys`` (absent keys are fine)."""
    out = merge({}, overlay)
    for key in keys:
        *parents, last = key.split(".")
        node = out
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.pop(last, None)
    return out


def shipped_params(root: Path) -> Any:
    """``root``'s params.yaml as ``read_yaml`` gives it, parsed once per distinct text; a copy each call.

    Why: every variation reads it twice (``overlay``, ``variation_params``), and the report stage checks every
    variation of every study (``study_freshness``): 78 reads of the 39 shipped variations, at about 0.06 to 0.1 s
    each with PyYAML's own parser, were most of the report stage's time.  A parse depends on the text alone, so
    the text is the key; a file rewritten while it was parsed is not kept.  Here and not in ``config.read_yaml``:
    that module is in every training stage's code fingerprint, and changing it would make every study row stale."""
    path = Path(root) / "params.yaml"
    text = _content(path)
    if text not in _parsed:
        data = read_yaml(path)  # an unreadable file: its one-line ConfigError
        if text is None or _content(path) != text:
            return data
        remember(_parsed, text, data, PARSED_KEPT)
    return copy.deepcopy(_parsed[text])


def _content(path: Path) -> bytes | None:
    """The file's bytes; None when it cannot be read."""
    try:
        return path.read_bytes()
    except OSError:
        return None


def overlay(root: Path, study: Study, variation: str) -> dict[str, Any]:
    """The variation as a profile overlay (the shape of profiles/<name>.yaml, ``drop`` included): the base
    profile, the drops, ``common``, the variation's keys, and ``study: {name, variation}``."""
    spec = study.spec
    base = load_overlay(root, spec.base_profile) if spec.base_profile else {}
    base_drops = base.pop(DROP, [])
    profile_file = f"profiles/{spec.base_profile}.yaml"
    shipped = shipped_params(root)
    params = drop_keys(merge(shipped, base), base_drops, profile_file)
    drops = study_drops(params, spec.experiments, study.file)
    changes = merge(nest(spec.common, "common", study.file),
                    nest(spec.variations[variation], f"variations.{variation}", study.file))
    for key, _ in leaves(changes):
        hit = next((d for d in drops if key == d or key.startswith(d + ".")), None)
        if hit:
            where = "common" if key in spec.common else f"variations.{variation}"
            raise ConfigError(f"{where}.{key}", f"{hit} is dropped: list it under experiments", file=study.file)
    out = merge(prune(base, drops), changes)
    out["study"] = {"name": study.name, "variation": variation}
    # what only the base profile adds (the full profile's own experiments) is pruned above; params.yaml lacks it
    return {**out, DROP: base_drops + [d for d in drops if _has_key(shipped, d)]}


def _has_key(tree: dict[str, Any], dotted: str) -> bool:
    """Whether the dotted key is present in the nested ``tree``."""
    *parents, last = dotted.split(".")
    for part in parents:
        tree = tree.get(part) if isinstance(tree, dict) else None
    return isinstance(tree, dict) and last in tree


def variation_params(root: Path, study: Study, variation: str) -> dict[str, Any]:
    """params.yaml as the variation's DVC experiment will have it, validated (``ConfigError`` naming the study
    file and the key otherwise)."""
    ov = overlay(root, study, variation)
    drops = ov.pop(DROP)
    data = drop_keys(merge(shipped_params(root), ov), drops, study.file)
    try:
        validated(data)
    except ConfigError as exc:
        raise _blame(study, variation, exc) from None
    return data


def _blame(study: Study, variation: str, exc: ConfigError) -> ConfigError:
    """The error at the study key that set the offending params key, else at the params key."""
    spec = study.spec
    for where, keys in ((f"variations.{variation}", spec.variations[variation]), ("common", spec.common)):
        for key in keys:
            if exc.key == key or exc.key.startswith(key + ".") or key.startswith(exc.key + "."):
                return ConfigError(f"{where}.{key}", exc.problem, file=study.file)
    return ConfigError(exc.key, exc.problem, file=f"params.yaml + {study.file} (variation {variation})")


def validate(root: Path, study: Study) -> dict[str, dict[str, Any]]:
    """Every variation's params, validated before anything is queued."""
    return {v: variation_params(root, study, v) for v in study.spec.variations}


def check_cores(study: Study, wanted: dict[str, dict[str, Any]], jobs: int, cores: int) -> None:
    """``ConfigError`` when ``jobs`` variations side by side would run more torch threads than ``cores``.

    Why refuse rather than run: torch's OpenMP threads spin while they wait for each other, so a two-thread
    training beside another one runs several times slower (measured here: Connect 4 AlphaZero's self-play took
    four times as long at ``--jobs 2``, so the study took longer than one variation at a time), and its
    training seconds, which a study compares, would measure the crowding.  Not by lowering the threads
    silently: the thread count is part of what a model computes (learn/core/device.py ``resolved_threads``), so
    a study's models would then depend on its ``--jobs``.  Setting ``threads`` under ``common`` says so.
    """
    if jobs <= 1:
        return
    from boardrl.learn import stage_threads

    for variation, data in wanted.items():
        params = parse_params(data)
        for exp_id in study.spec.experiments:
            threads = stage_threads(params.experiments[exp_id].learner, params.learner_params(exp_id)) or 1
            if threads > 1 and jobs * threads > cores:  # one-thread stages share cores without spinning
                raise ConfigError("common", f"--jobs {jobs} runs {jobs} variations side by side, and {exp_id} "
                                  f"({variation}) trains on {threads} torch threads: {jobs * threads} threads on "
                                  f"{cores} cores run several times slower; use --jobs {max(1, cores // threads)}, "
                                  f"or set experiments.{exp_id}.params.threads: {max(1, cores // jobs)} under "
                                  "common (it changes the models' bits)", file=study.file)


def exp_name(study: Study, variation: str) -> str:
    return f"{study.name}-{variation}"


def queue_command(study: Study, variation: str) -> list[str]:
    """``dvc exp run --queue`` of one variation: DVC's queue takes the workspace's state, whose params.yaml is
    the variation's at that moment (``queue_variation``).  The whole pipeline of the study's params (its
    experiments and the report): with stage targets instead, DVC cannot commit an experiment whose dvc.lock
    names outputs (the report's) that are not in the cache."""
    return ["dvc", "exp", "run", "--queue", "--name", exp_name(study, variation)]


# ---------------------------------------------------------------------------------------------- DVC
def dvc_env() -> dict[str, str]:
    """This interpreter's bin/ first on PATH: DVC's queue workers and the stages find ``dvc`` and ``python``.

    And ``src``, relative, first on PYTHONPATH: Python makes it absolute against the directory each stage starts
    in, which is the queue's copy of the workspace taken when the variation was queued.  So a stage imports the
    code that DVC hashed for it, not the installed workspace's (an editable install), which may have been edited
    since: a study runs for hours while someone works on the code, and its experiments would then record one
    code and run another."""
    env = os.environ.copy()
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(["src", *filter(None, [env.get("PYTHONPATH")])])
    return env


def dvc(root: Path, *args: str, quiet: bool = False) -> subprocess.CompletedProcess:
    """Run ``dvc``; ``quiet``: its output to /dev/null (``dvc queue start`` leaves workers holding any pipe)."""
    out = subprocess.DEVNULL if quiet else subprocess.PIPE
    return subprocess.run(["dvc", *args], cwd=root, env=dvc_env(), stdout=out, stderr=out, text=True)


def finished(root: Path) -> dict[str, Finished]:
    """Finished experiments of the workspace's baseline commit, by name (``dvc exp show --json``); those of
    earlier commits: ``finished_or_reused``."""
    res = dvc(root, "exp", "show", "--json")
    if res.returncode != 0:
        raise ConfigError("", f"dvc exp show failed: {res.stderr.strip().splitlines()[-1:]}", file="DVC")
    out = {}
    for baseline in json.loads(res.stdout or "[]"):
        for exp in baseline.get("experiments") or []:
            for rev in exp.get("revs") or []:
                data = rev.get("data") or {}
                state = (exp.get("executor") or {}).get("state", "success")  # None: not run by an executor
                if rev.get("name") and state == "success" and not rev.get("error"):
                    metrics = {p: (m or {}).get("data", {}) for p, m in (data.get("metrics") or {}).items()}
                    params = ((data.get("params") or {}).get("params.yaml") or {}).get("data", {})
                    out[rev["name"]] = Finished(rev["rev"], params, metrics)
    return out


def finished_or_reused(root: Path, study: Study, wanted: dict[str, dict[str, Any]]) -> dict[str, Finished]:
    """``finished``, plus each variation not done at this commit that finished at an earlier one with nothing it
    ran changed since (``study_reuse``: the same params, stage inputs and stage scripts)."""
    done = finished(root)
    todo = {exp_name(study, v): p for v, p in wanted.items() if not is_done(done, exp_name(study, v), p)}
    metrics = [METRICS.format(id=e) for e in study.spec.experiments]
    for name, (commit, files) in (reused(root, study.spec.experiments, todo, metrics) if todo else {}).items():
        done[name] = Finished(commit, todo[name], files, earlier=True)
    committed = committed_rows(root, study)
    exp_ids = list(study.spec.experiments)
    for variation, params in wanted.items():
        name = exp_name(study, variation)
        if is_done(done, name, params) or not committed:
            continue
        rows_v = carried(committed, variation, exp_ids, lambda: current_fingerprint(root, params, exp_ids))
        if rows_v:
            done[name] = Finished(rows_v[0]["rev"], params, {}, earlier=True, rows=tuple(rows_v))
    return done


def prepare_data(root: Path, study: Study, wanted: dict[str, dict[str, Any]], say: Callable[[str], None]) -> None:
    """Make the UCI table (``dvc repro prepare``) when a compared stage reads it and the workspace lacks it.

    Why: whether a variation is done compares the stage inputs it recorded, the table's sha256 among them, with
    the workspace's; a fresh clone has no table, so every variation that reads it would run again."""
    from boardrl.experiments.inputs import UCI_TABLE
    from boardrl.experiments.study_reuse import reads_uci_table

    if (Path(root) / UCI_TABLE).is_file() or not wanted:
        return
    if not reads_uci_table(root, next(iter(wanted.values())), list(study.spec.experiments)):
        return
    say(f"study {study.name}: making {UCI_TABLE} (dvc repro prepare): finished variations are recognised by it")
    res = dvc(root, "repro", "prepare")
    if res.returncode != 0:
        raise ConfigError("", f"dvc repro prepare failed: {' '.join(res.stderr.split())[-500:]}", file="DVC")


def committed_rows(root: Path, study: Study) -> list[dict[str, Any]]:
    """The rows of the study's results.json as the workspace has it; none when it is missing or unreadable."""
    try:
        rows_ = json.loads((out_dir(root, study) / "results.json").read_text()).get("rows")
    except (OSError, ValueError, AttributeError):
        return []
    return [r for r in rows_ if isinstance(r, dict)] if isinstance(rows_, list) else []


def queue_status(root: Path, ask_if: tuple[str, ...] | None = None) -> tuple[dict[str, str], bool]:
    """(name -> status of each queue entry: Queued, Running, Success, Failed; whether a worker is alive).

    Alive: a worker answers celery's ping, or an experiment the queue started still runs.  The ping alone is not
    enough: it waits one second for the answer, and a worker whose experiment trains on every core often misses
    that; six misses in a row once made ``wait_for`` kill a healthy variation 15 minutes into its training.
    ``ask_if``: look for a worker only when an entry has one of these statuses (False otherwise), for a caller to
    whom the answer matters only then; the ping's second with no worker to answer was most of a finished study's
    reading of the queue.  None: always."""
    from dvc.repo import Repo

    with Repo(str(root)) as repo:
        q = repo.experiments.celery_queue
        entries = {e["name"]: e["status"] for e in q.status() if e.get("name")}
        asked = ask_if is None or any(s in ask_if for s in entries.values())
        alive = asked and (experiment_running(Path(q.proc.wdir)) or bool(q.worker_status()))
    return entries, alive


def experiment_running(proc_dir: Path) -> bool:
    """Whether a process that DVC's queue started (``<proc_dir>/<key>/<key>.json``, dvc-task's record of it) has
    no return code yet and its pid is a live process of this machine.  Read here rather than through dvc-task's
    ``ProcessManager.processes()``, which raises on a record caught half-written."""
    import psutil

    for info_file in Path(proc_dir).glob("*/*.json"):
        try:
            info = json.loads(info_file.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(info, dict) or info.get("returncode") is not None:
            continue
        pid = info.get("pid")
        if isinstance(pid, int) and pid > 0 and psutil.pid_exists(pid):
            return True
    return False


def discard(root: Path, name: str, status: str | None) -> None:
    """Take a failed or stale queue entry away (``dvc queue kill`` marks a dead Running one failed)."""
    if status == "Running":
        dvc(root, "queue", "kill", name)
    if status is not None:
        dvc(root, "queue", "remove", name)


# ---------------------------------------------------------------------------------------------- running
def is_done(results: dict[str, Finished], name: str, params: dict[str, Any]) -> bool:
    """An experiment ``name`` finished with exactly ``params`` (else the study or params.yaml changed since)."""
    return name in results and results[name].params == params


def plan(wanted: dict[str, dict[str, Any]], study: Study, done: dict[str, Finished],
         queued: dict[str, str], alive: bool) -> tuple[list[str], list[str], list[str]]:
    """(variations to skip, to wait for, to queue).  Done: an experiment of that name with exactly these
    params; waited for: queued, or running on a live worker; everything else runs (again)."""
    skip, wait, run = [], [], []
    for variation, params in wanted.items():
        name = exp_name(study, variation)
        if is_done(done, name, params):
            skip.append(variation)
        elif queued.get(name) == "Queued" or (queued.get(name) == "Running" and alive):
            wait.append(variation)
        else:
            run.append(variation)
    return skip, wait, run


def chosen(study: Study, only: tuple[str, ...] | None) -> tuple[str, ...]:
    """The variations this run may queue: ``only`` (``--only``), checked against the study, else all of them.

    Why a subset: a long study (hours a variation) is rerun over several sittings; the variations left out keep
    their committed rows, flagged stale where they are (``stale_rows``), until a later run reaches them."""
    every = tuple(study.spec.variations)
    if only is None:
        return every
    unknown = [v for v in only if v not in every]
    if unknown or not only:
        raise ConfigError("variations", f"--only names {', '.join(map(repr, unknown)) or 'nothing'}, which is no "
                          f"variation of the study (its variations: {', '.join(every)})", file=study.file)
    return tuple(v for v in every if v in only)


def run_study(root: Path, name: str, jobs: int = 1, poll_s: float = 5.0,
              say: Callable[[str], None] = lambda m: print(m, file=sys.stderr, flush=True),
              collect: bool = False, only: tuple[str, ...] | None = None) -> int:
    """Validate, queue what is not done, wait, write the table; 0 when every variation (of ``only``) finished.

    ``collect``: queue and wait for nothing, only write the table of the variations finished so far (a study
    stopped part way, whose finished variations are worth reading while the rest waits for machine time).
    ``only``: queue and wait for these variations alone (``chosen``); the table still has every variation."""
    root = Path(root)
    if restore_params(root):
        say(f"study {name}: params.yaml restored from {'/'.join(PARAMS_BACKUP)} (a study was killed while queueing)")
    study = load_study(root, name)
    picked = chosen(study, only)
    wanted = validate(root, study)
    prepare_data(root, study, wanted, say)
    done = finished_or_reused(root, study, wanted)
    queued, alive = queue_status(root, ask_if=("Running",))  # plan: a live worker matters to a running entry
    skip, wait, run = plan(wanted, study, done, queued, alive)
    left_out = [v for v in run if v not in picked]
    run, wait = [v for v in run if v in picked], [v for v in wait if v in picked]
    if left_out:
        say(f"study {name}: not queued (--only): {', '.join(exp_name(study, v) for v in left_out)}")
    in_flight = bool(wait)  # queued or running in DVC's queue: they may finish while this command runs
    for v in skip:
        found = done[exp_name(study, v)]
        since = (f", carried from {STUDIES_DIR}/{name}/results.json: the fingerprint of what it ran still holds"
                 if found.rows else ", of an earlier commit: nothing it ran has changed since" if found.earlier
                 else "")
        say(f"study {name}: {exp_name(study, v)} is done (DVC experiment {found.rev[:7]}{since})")
    if collect:
        run, wait = [], []
    elif run:
        check_cores(study, {v: wanted[v] for v in run}, jobs, available_cores())
    for v in run:
        _queue(root, study, v, wanted[v], done, queued.get(exp_name(study, v)), say)
    results = None
    if run or wait:
        init_tracking(root)
        start_workers(root, jobs)
        wait_for(root, [exp_name(study, v) for v in run + wait], jobs, poll_s, say)
        if jobs > 1:
            results = _retry_alone(root, study, wanted, run + wait, poll_s, say)
    if results is None:  # what was read at the start still holds when nothing ran or could finish since
        results = finished_or_reused(root, study, wanted) if run or wait or in_flight else done
    files = write_results(root, study, wanted, results)
    say(f"study {name}: " + ", ".join(str(f.relative_to(root)) for f in files))
    missing = [exp_name(study, v) for v, p in wanted.items()
               if v in picked and not is_done(results, exp_name(study, v), p)]
    if missing:
        say(f"study {name}: not finished: {', '.join(missing)} (`dvc queue logs <name>`; rerun to retry)")
    return 1 if missing else 0


def _retry_alone(root: Path, study: Study, wanted: dict[str, dict[str, Any]], ran: list[str], poll_s: float,
                 say: Callable[[str], None]) -> dict[str, Finished] | None:
    """Run once more, one at a time, the variations that failed side by side; the finished experiments when none
    had failed (read here anyway, so the caller need not read them again), else None.

    Why: DVC's queue workers race when several run at once (treeverse/dvc#10673: identical outputs of two
    experiments, such as the shared download stage, go into one cache together), and a variation then fails in
    a stage that has nothing wrong with it (seen here: ``download`` failing on "No such file or directory" for
    its own output).  Alone, nothing races; a variation that fails again is reported as not finished.  Only a
    "Failed" entry runs again: one that left DVC's queue without an experiment was taken out by hand (``dvc queue
    remove``) while the study waited, and queueing it again undid that (it did here, once: a four-hour variation).
    """
    results, (queued, _) = finished_or_reused(root, study, wanted), queue_status(root, ask_if=())
    unfinished = [v for v in ran if not is_done(results, exp_name(study, v), wanted[v])]
    failed = [v for v in unfinished if queued.get(exp_name(study, v)) == "Failed"]
    for v in unfinished:
        if v not in failed:
            say(f"study {study.name}: {exp_name(study, v)} left DVC's queue without failing (removed by hand?): "
                "not run again")
    if not failed:
        return results
    say(f"study {study.name}: {', '.join(exp_name(study, v) for v in failed)} failed beside another variation "
        "(DVC's parallel workers can race: treeverse/dvc#10673); running it again alone")
    for v in failed:
        _queue(root, study, v, wanted[v], results, queued.get(exp_name(study, v)), say)
    start_workers(root, 1)
    wait_for(root, [exp_name(study, v) for v in failed], 1, poll_s, say)
    return None


def _queue(root: Path, study: Study, variation: str, params: dict[str, Any], done: dict[str, Finished],
           status: str | None, say: Callable[[str], None]) -> None:
    name = exp_name(study, variation)
    if name in done:  # an experiment of that name with other params: the study or params.yaml changed
        dvc(root, "exp", "remove", name)
    discard(root, name, status)
    queue_variation(root, study, variation, params)
    say(f"study {study.name}: queued {name}")


def queue_variation(root: Path, study: Study, variation: str, params: dict[str, Any]) -> None:
    """Queue one variation with exactly its validated params: params.yaml holds them while ``dvc exp run
    --queue`` takes the workspace's state, then the workspace's own file is back (``restore_params``).

    Why not ``dvc exp run --queue -S ...``: DVC's ``-S`` writer corrupts params.yaml when the last entry of a
    mapping whose key line carries a comment goes (``sweeps:  # ...`` becomes ``{}`` on a line of its own; DVC
    3.67), and a study drops every sweep and tournament.  DVC itself rewrites the workspace's params.yaml for
    the moment it queues ``-S`` overrides; this does the same, with a backup that the next run restores after
    a kill.
    """
    import yaml

    from boardrl.atomic_io import atomic_write_bytes, atomic_write_text

    target, backup = Path(root) / "params.yaml", Path(root).joinpath(*PARAMS_BACKUP)
    backup.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(backup, target.read_bytes())
    try:
        atomic_write_text(target, yaml.safe_dump(params, sort_keys=False))
        res = subprocess.run(queue_command(study, variation), cwd=root, env=dvc_env(), capture_output=True,
                             text=True)
    finally:
        restore_params(root)
    if res.returncode != 0:
        raise ConfigError("", f"dvc exp run --queue {exp_name(study, variation)} failed: "
                          f"{' '.join(res.stderr.split())[-500:]}", file="DVC")


def restore_params(root: Path) -> bool:
    """Put back the workspace's params.yaml saved by ``queue_variation`` (after a kill); True when it did."""
    backup = Path(root).joinpath(*PARAMS_BACKUP)
    if not backup.is_file():
        return False
    os.replace(backup, Path(root) / "params.yaml")
    return True


def init_tracking(root: Path) -> None:
    """Create the project's MLflow database before the workers start: variations starting side by side on a
    missing database race through its schema migration, and one of them fails (measured)."""
    from boardrl.tracking.mlflow_runs import DB_NAME, configure

    if not (Path(root) / DB_NAME).is_file():
        configure(root).MlflowClient().search_experiments()


def start_workers(root: Path, jobs: int) -> None:
    dvc(root, "queue", "start", "-j", str(jobs), quiet=True)


def wait_for(root: Path, names: list[str], jobs: int, poll_s: float, say: Callable[[str], None]) -> None:
    """Until none of ``names`` is queued or running; workers that died are replaced, and an entry left
    "Running" by a dead worker is marked failed.

    An entry missing from DVC's listing keeps its last status for ``ABSENT_POLLS`` polls, then counts as removed:
    between leaving the queue and showing as running, a task is briefly in neither list, and a study once took a
    variation that was starting for finished (it wrote its table and stopped waiting while the variation ran)."""
    last: dict[str, str] = {}
    absent = dict.fromkeys(names, 0)
    idle = 0
    while True:
        status, alive = queue_status(root)
        now = {}
        for n in names:
            absent[n] = 0 if n in status else absent[n] + 1
            now[n] = status[n] if n in status else last.get(n, "Queued") if absent[n] < ABSENT_POLLS else "Removed"
        for n, s in now.items():
            if last.get(n) != s:
                say(f"study: {n}: {s}")
        last = now
        pending = [n for n, s in now.items() if s in PENDING]
        if not pending:
            return
        idle = 0 if alive else idle + 1
        if idle >= 6:  # six polls without a worker: it died (or never came up)
            for n in pending:
                if now[n] == "Running":
                    dvc(root, "queue", "kill", n)
            start_workers(root, jobs)
            idle = 0
        time.sleep(poll_s)


# ---------------------------------------------------------------------------------------------- results
def out_dir(root: Path, study: Study) -> Path:
    return Path(root) / STUDIES_DIR / study.name


@functools.lru_cache(maxsize=8)
def _commit_files(root: str, rev: str) -> Any:
    """DVC's view of the files of commit ``rev`` (git and DVC-cached alike), opened once per commit: a study's
    rows read a commit's timings and evaluations for each of its experiments, and opening one indexes the repo."""
    from dvc.api import DVCFileSystem

    return DVCFileSystem(root, rev=rev)


def training_seconds(root: Path, rev: str, exp_id: str) -> list[float]:
    """Each seed's training wall time in the DVC experiment at ``rev``: ``results/train/<id>/seed-<k>/summary.json``
    from DVC's cache.  Why not a metrics file: those must be byte-equal on every rerun, and wall time is not.  A
    seed whose summary is missing or unreadable is left out, and none where DVC cannot open the experiment (the
    table then says "-": the study's numbers stand without its timings)."""
    from dvc.exceptions import DvcException

    try:
        fs = _commit_files(str(root), rev)
        paths = sorted(fs.glob(f"results/train/{exp_id}/seed-*/summary.json"))
    except (DvcException, OSError):
        return []
    out = []
    for path in paths:
        try:
            out.append(float(json.loads(fs.read_text(path))["training_seconds"]))
        except (DvcException, OSError, KeyError, TypeError, ValueError):
            continue
    return out


def evaluation_details(root: Path, rev: str, exp_id: str) -> dict[str, Any]:
    """What the metrics file leaves out, from the evaluate stage's ``results/eval/<id>.json`` at ``rev`` (a DVC
    output): ``seat_wins``, the interquartile mean over seeds of the win rate against each opponent as first and
    as second, ``seat_wins_per_seed``, the same rates of each seed (``{opponent: {seat: {seed: rate}}}``: the
    spread over training runs, which a mean hides), and ``uci_seed000_wins``, each seed's win rate per label class under reference system 000's UCI
    protocol (agent first from drawn 8-ply positions of each class) where the experiment is judged that way.
    Empty where DVC cannot open the file.

    Why: the metrics file keeps one summary per opponent over both seats, while a study may turn on one seat
    (Conniption's second), and the protocol's target (>= 97% in every class) is met or missed seed by seed."""
    from dvc.exceptions import DvcException

    from boardrl.evaluate.seeds import iqm

    try:
        seeds = json.loads(_commit_files(str(root), rev).read_text(f"results/eval/{exp_id}.json"))["seeds"]
        order = sorted(seeds, key=int)
        per_seed = [seeds[k] for k in order]
        opponents = [o for o in dict.fromkeys(o for s in per_seed for o in s.get("opponents") or {})
                     if all(o in (s.get("opponents") or {}) for s in per_seed)]
        each = {o: {seat: {k: float(seeds[k]["opponents"][o][seat]["win"]) for k in order}
                    for seat in ("as_first", "as_second")} for o in opponents}
        out: dict[str, Any] = {"seat_wins": {o: {seat: iqm(list(rates.values())) for seat, rates in by_seat.items()}
                                             for o, by_seat in each.items()},
                               "seat_wins_per_seed": each}
        uci = [((s.get("uci") or {}).get("seed000") or {}) for s in per_seed]
        if uci and all(uci):
            out["uci_seed000_wins"] = {label: [float(u[label]["win"]) for u in uci] for label in UCI_CLASSES}
        return out
    except (DvcException, OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def stale_rows(committed: list[dict[str, Any]], wanted: dict[str, dict[str, Any]],
               results: dict[str, Finished], study: Study) -> dict[str, tuple[dict[str, Any], ...]]:
    """The committed rows of each wanted variation that is not done: rows that ran with something changed since.

    Why keep them: a study stopped part way, or collected after a code change, would otherwise lose results that
    took hours, and its table would read as if they had never been measured.  Kept, they are flagged as stale
    below the table (``study_table.stale_note``), and a rerun of their variation replaces them."""
    out: dict[str, tuple[dict[str, Any], ...]] = {}
    for variation, params in wanted.items():
        if not is_done(results, exp_name(study, variation), params):
            kept = tuple(r for r in committed if r.get("variation") == variation)
            if kept:
                out[variation] = kept
    return out


def rows(study: Study, wanted: dict[str, dict[str, Any]], results: dict[str, Finished],
         seconds: Callable[[str, str], list[float]] = lambda rev, exp_id: [],
         fingerprints: Callable[[str, dict[str, Any]], str | None] = lambda rev, params: None,
         details: Callable[[str, str], dict[str, Any]] = lambda rev, exp_id: {},
         stale: dict[str, tuple[dict[str, Any], ...]] | None = None) -> list[dict[str, Any]]:
    """One row per (experiment, variation) that finished with the wanted params: its metrics file's numbers,
    ``seconds(rev, experiment)``: each seed's training wall time, ``fingerprints(rev, params)``: what it ran
    (``study_reuse.fingerprint``) and ``details(rev, experiment)``: ``evaluation_details``.  A carried variation
    keeps its committed rows as they are, and so does a variation of ``stale`` (``stale_rows``), in the order of
    the wanted variations."""
    stale = stale or {}
    ran = {v: results[exp_name(study, v)] for v, p in wanted.items() if is_done(results, exp_name(study, v), p)}
    fingerprint_of = {v: fingerprints(found.rev, wanted[v]) for v, found in ran.items() if not found.rows}
    out = []
    for exp_id in study.spec.experiments:
        for variation in wanted:
            found = ran.get(variation)
            if found is None or found.rows:
                out.extend(r for r in (found.rows if found else stale.get(variation, ()))
                           if r.get("experiment") == exp_id)
                continue
            m = found.metrics.get(METRICS.format(id=exp_id), {})
            more = details(found.rev, exp_id)
            out.append({"experiment": exp_id, "variation": variation, "dvc_experiment": exp_name(study, variation),
                        "rev": found.rev, "seeds": m.get("seeds"), "budget": m.get("budget"),
                        "train_seconds": seconds(found.rev, exp_id),
                        "optimal_move_rate": m.get("optimal_move_rate"), "exact_vs_perfect": m.get("exact_vs_perfect"),
                        "opponents": {k[3:]: v for k, v in m.items() if k.startswith("vs:") and isinstance(v, dict)},
                        "seat_wins": more.get("seat_wins"), "seat_wins_per_seed": more.get("seat_wins_per_seed"),
                        "uci_seed000_wins": more.get("uci_seed000_wins"),
                        "fingerprint": fingerprint_of[variation]})
    return out


def write_results(root: Path, study: Study, wanted: dict[str, dict[str, Any]],
                  results: dict[str, Finished]) -> list[Path]:
    """``results.md``, ``results.png`` and ``results.json`` under ``studies/<name>/`` (each written atomically);
    the committed rows of variations not done now stay, flagged (``stale_rows``)."""
    import matplotlib.pyplot as plt

    from boardrl.atomic_io import atomic_write_json, atomic_write_text, atomic_writer

    exp_ids = list(study.spec.experiments)
    stale = stale_rows(committed_rows(root, study), wanted, results, study)
    table = rows(study, wanted, results, lambda rev, exp_id: training_seconds(root, rev, exp_id),
                 lambda rev, params: recorded_fingerprint(root, rev, params, exp_ids),
                 lambda rev, exp_id: evaluation_details(root, rev, exp_id), stale)
    d = out_dir(root, study)
    d.mkdir(parents=True, exist_ok=True)
    md, png, js = d / "results.md", d / "results.png", d / "results.json"
    atomic_write_text(md, markdown(study, table, stale_note(study.name, tuple(stale))))
    fig = figure(study, table)
    with atomic_writer(png) as f:
        fig.savefig(f, format="png", dpi=110)
    plt.close(fig)
    atomic_write_json(js, {"study": study.name, "rows": table})
    return [md, png, js]


def check(root: Path, name: str) -> None:
    """Validate study ``name`` (every variation); ``ConfigError`` on the first problem."""
    validate(root, load_study(root, name))
