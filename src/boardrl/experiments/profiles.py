"""Params profiles: `make repro PROFILE=tiny|full` as DVC experiments whose results stay apart and survive a kill.

A profile is an overlay in ``profiles/<name>.yaml`` with the same keys as params.yaml, listing only what differs
(dicts merge key by key; lists and values replace), plus an optional ``drop:`` list of dotted keys the profile
removes (e.g. ``experiments.<id>``: a quick profile that leaves out some experiments; passed as ``-S ~key``), and
an optional ``keep:`` mapping of a section to the ids it keeps (``keep: {experiments: [a, b]}``: every other
experiment is dropped; a first look that runs a handful of experiments without listing the forty it leaves out).
``default`` is params.yaml itself and runs ``dvc repro`` (with independent stages side by side on the available
cores: ``experiments/parallel_repro.py``).  Before anything runs, params.yaml with the overlay
applied is validated: a problem is one line, exit 2, before DVC prints anything.

Any other profile runs in its own persistent directory, ``.dvc/tmp/exps/profiles/<name>/`` (a git worktree of
HEAD plus the workspace's uncommitted changes, sharing the project's DVC cache and MLflow database): params.yaml
there is the validated params.yaml + overlay (``profile: <name>`` included), ``dvc repro`` runs the
pipeline with ``DVC_EXP_NAME`` set, and ``dvc exp save --name <profile>-<time>`` records the result as a DVC
experiment (``dvc exp show`` lists it beside the workspace, ``dvc exp apply <name>`` brings it into the
workspace; MLflow runs carry the profile and experiment name).  ``--workspace`` does the same in the workspace.

Why not ``dvc exp run --temp`` or DVC's queue (measured, DVC 3.67, SIGKILL of the run's process group during a
train stage): both run in a fresh random directory under ``.dvc/tmp/exps/``; the killed one stays on disk with
its checkpoints but nothing reuses it, and a queued task stays "Running" until ``dvc queue kill``.  The rerun
starts from scratch: stages with persistent outputs (training, evaluation) are never in DVC's run cache, so even
finished ones run again.  ``dvc exp run`` in the workspace keeps the files, but the rerun's first step,
``dvc checkout --force``, resets the unfinished stage's outputs to dvc.lock and deletes the checkpoints.  Only
``dvc repro`` in a directory that outlives the run keeps both: finished stages are skipped (dvc.lock is written
after each stage) and training resumes from ``models/<id>/seed-<k>/checkpoint``.  So rerunning the same
``make repro PROFILE=<name>`` continues the killed run, under the same experiment name.

    python -m boardrl.experiments.profiles check tiny          # validate only
    python -m boardrl.experiments.profiles run tiny [--workspace] [--name NAME]
    python -m boardrl.experiments.profiles args tiny            # the commands `run` would run
"""

from __future__ import annotations

import argparse
import copy
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from boardrl.config import EXIT_BAD_PARAMS, ConfigError, fail, parse_params, read_yaml
from boardrl.experiments.parallel_repro import StageGraph, load_graph, parallel_repro

DEFAULT = "default"
PROFILES_DIR = "profiles"
DROP = "drop"  # overlay key: dotted params keys the profile removes
KEEP_ONLY = "keep"  # overlay key: section -> the ids it keeps (the others are added to DROP)


def overlay_path(root: Path, name: str) -> Path:
    return Path(root) / PROFILES_DIR / f"{name}.yaml"


def load_overlay(root: Path, name: str) -> dict[str, Any]:
    """The overlay of profile ``name`` ({} for default); ``ConfigError`` naming the known profiles otherwise."""
    if name == DEFAULT:
        return {}
    path = overlay_path(root, name)
    if not path.is_file():
        known = sorted([DEFAULT] + [p.stem for p in (Path(root) / PROFILES_DIR).glob("*.yaml")])
        raise ConfigError("", f"unknown profile {name!r}; profiles: {', '.join(known)}", file="PROFILE")
    data = read_yaml(path) or {}
    if not isinstance(data, dict):
        raise ConfigError("", "the top level must be a mapping of params.yaml keys", file=path.name)
    drop = data.get(DROP, [])
    if not isinstance(drop, list) or not all(isinstance(k, str) and k for k in drop):
        raise ConfigError(DROP, "must be a list of dotted params keys, e.g. experiments.<id>", file=path.name)
    keep = data.pop(KEEP_ONLY, None)
    if keep is not None:
        data[DROP] = drop + [k for k in kept_only(read_yaml(Path(root) / "params.yaml"), keep, path.name)
                             if k not in drop]
    return {**data, "profile": name}


def kept_only(params: Any, keep: Any, file: str) -> list[str]:
    """The dotted keys that ``keep`` (section -> ids kept) leaves out; each kept id must exist (a typo would
    silently run nothing)."""
    if not isinstance(keep, dict) or not all(isinstance(v, list) for v in keep.values()):
        raise ConfigError(KEEP_ONLY, "must map a params section to the ids it keeps, e.g. experiments: [<id>]",
                          file=file)
    drops = []
    for section, ids in keep.items():
        have = params.get(section) if isinstance(params, dict) else None
        if not isinstance(have, dict):
            raise ConfigError(f"{KEEP_ONLY}.{section}", "is not a section of ids in params.yaml", file=file)
        unknown = [i for i in ids if i not in have]
        if unknown:
            raise ConfigError(f"{KEEP_ONLY}.{section}", f"{unknown[0]!r} is not a key of params.yaml {section}",
                              file=file)
        drops += [f"{section}.{k}" for k in have if k not in ids]
    return drops


def drop_keys(data: dict[str, Any], keys: list[str], file: str) -> dict[str, Any]:
    """``data`` without the dotted ``keys`` (each must exist: a typo would silently keep the experiment)."""
    out = copy.deepcopy(data)
    for key in keys:
        *parents, last = key.split(".")
        node = out
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
        if not isinstance(node, dict) or last not in node:
            raise ConfigError(DROP, f"{key!r} is not a key of params.yaml", file=file)
        del node[last]
    return out


def merge(base: Any, overlay: Any) -> Any:
    """``base`` with ``overlay`` applied: dicts merge key by key, anything else replaces."""
    if isinstance(base, dict) and isinstance(overlay, dict):
        out = copy.deepcopy(base)
        for k, v in overlay.items():
            out[k] = merge(out.get(k), v)
        return out
    return copy.deepcopy(overlay)


def effective_params(root: Path, name: str, workspace: bool = False) -> dict[str, Any]:
    """params.yaml with the profile's overlay applied, validated (``ConfigError`` naming the key otherwise).

    ``workspace``: a params.yaml that already names the profile is a killed workspace run's, taken as it is."""
    overlay = load_overlay(root, name)
    drop = overlay.pop(DROP, [])
    base = read_yaml(Path(root) / "params.yaml")
    if workspace and name != DEFAULT and isinstance(base, dict) and base.get("profile") == name:
        data = base
    else:
        data = drop_keys(merge(base, overlay), drop, f"{PROFILES_DIR}/{name}.yaml")
    try:
        parse_params(data)
    except ConfigError as exc:
        file = "params.yaml" if name == DEFAULT else f"params.yaml + {PROFILES_DIR}/{name}.yaml"
        raise ConfigError(exc.key, exc.problem, file=file) from None
    return data


def leaves(tree: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """(dotted key, value) of every leaf of the overlay; lists are leaves (they replace)."""
    out = []
    for k, v in tree.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and v:
            out += leaves(v, key + ".")
        else:
            out.append((key, v))
    return out


def hydra_value(value: Any) -> str:
    """A value in the override grammar ``dvc exp run -S`` reads (Hydra's): strings quoted, lists and dicts inline."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):  # Hydra escapes only backslashes before a quote or the end, then quotes
        return "'" + re.sub(r"(\\+)(?='|$)", r"\1\1", value).replace("'", "\\'") + "'"
    if isinstance(value, list):
        return "[" + ",".join(hydra_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{hydra_value(v)}" for k, v in value.items()) + "}"
    raise ConfigError("", f"cannot pass a {type(value).__name__} to dvc exp run -S", file="profile")


def set_args(overlay: dict[str, Any]) -> list[str]:
    """``-S ++key=value`` for every leaf (``++`` adds the key when params.yaml lacks it), ``-S ~key`` for each
    dropped key."""
    overlay = dict(overlay)
    args = []
    for key in overlay.pop(DROP, []):
        args += ["-S", f"~{key}"]
    for key, value in leaves(overlay):
        args += ["-S", f"++{key}={hydra_value(value)}"]
    return args


RUNS_DIR = (".dvc", "tmp", "exps", "profiles")  # under .dvc/tmp/exps: MLflow resolves the project past it
RUN_STATE = (".dvc", "tmp", "boardrl-profile-run.json")  # in a run directory: the name of an unfinished run
KEEP = ("dvc.lock", "params.yaml")  # a run directory's own: what has run there, and the profile's params


@dataclass(frozen=True)
class ProfileRun:
    """Where and under which DVC experiment name a profile runs (``resumed``: an unfinished run's name)."""

    profile: str
    directory: Path
    exp_name: str
    resumed: bool


def run_dir(root: Path, name: str) -> Path:
    """The persistent directory of profile ``name``'s runs."""
    return Path(root).joinpath(*RUNS_DIR, name)


def plan(root: Path, name: str, workspace: bool = False, exp_name: str | None = None) -> ProfileRun:
    """Where profile ``name`` runs and its experiment name: the unfinished run's there, else ``exp_name`` or
    ``<name>-<date>-<time>``."""
    directory = Path(root) if workspace else run_dir(root, name)
    state = _read_state(directory)
    if exp_name is None and state.get("profile") == name and state.get("exp_name"):
        return ProfileRun(name, directory, state["exp_name"], True)
    return ProfileRun(name, directory, exp_name or f"{name}-{time.strftime('%Y%m%d-%H%M%S')}", False)


def _read_state(directory: Path) -> dict[str, Any]:
    try:
        return json.loads(directory.joinpath(*RUN_STATE).read_text())
    except (OSError, ValueError):
        return {}


def _git(cwd: Path, *args: str, input: bytes | None = None) -> bytes:
    return subprocess.run(["git", *args], cwd=cwd, input=input, check=True, capture_output=True).stdout


def sync_run_dir(root: Path, directory: Path) -> None:
    """Make ``directory`` a worktree of ``root``'s HEAD plus its uncommitted changes (what ``dvc exp run
    --temp`` would run), keeping what the directory's earlier runs left: dvc.lock and the untracked outputs.

    Tracked files go back to the workspace's at every start (README's headline block included: it shows the
    profile's numbers again only when the report stage reruns)."""
    root, directory = Path(root).resolve(), Path(directory)
    head = _git(root, "rev-parse", "HEAD").decode().strip()
    if not (directory / ".git").exists():
        _git(root, "worktree", "prune")  # a directory deleted by hand leaves a registration behind
        directory.parent.mkdir(parents=True, exist_ok=True)
        _git(root, "worktree", "add", "--detach", str(directory), head)
    drop_stale_git_locks(directory)
    lock = directory / "dvc.lock"
    saved = lock.read_bytes() if lock.exists() else None
    _git(directory, "checkout", "-q", "-f", "--detach", head)
    if saved is not None:
        lock.write_bytes(saved)
    diff = _git(root, "diff", "HEAD", "--binary", "--", ".", *(f":!{k}" for k in KEEP))
    if diff.strip():
        _git(directory, "apply", "--binary", "-", input=diff)
    untracked = _git(root, "ls-files", "-z", "--others", "--exclude-standard").decode().split("\0")
    for rel in filter(None, untracked):
        if (root / rel).is_file():
            (directory / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / rel, directory / rel)
    _share_cache(root, directory)


GIT_LOCKS = ("index.lock", "HEAD.lock")  # what git's checkout and apply hold in a worktree's own git directory


def drop_stale_git_locks(directory: Path) -> list[str]:
    """Remove the lock files that a git command killed in ``directory``'s worktree left in its own git directory;
    the names removed.

    Why: SIGKILL gives git no chance to remove its ``index.lock``, and every later checkout there refuses ("remove
    the file manually to continue"), so a profile run killed during its own ``git checkout`` or ``git apply`` could
    not be rerun (found by tests/pipeline/test_fault_injection.py).  Only called while ``only_run`` holds the
    directory, so no live run of ours is using the worktree."""
    git_dir = Path(_git(directory, "rev-parse", "--absolute-git-dir").decode().strip())
    removed = [name for name in GIT_LOCKS if (git_dir / name).is_file()]
    for name in removed:
        (git_dir / name).unlink()
    if removed:
        print(f"note: removed {', '.join(removed)} from {git_dir}: left by a killed run", file=sys.stderr,
              flush=True)
    return removed


@contextmanager
def only_run(directory: Path) -> Iterator[None]:
    """Hold ``<directory>.lock`` while a profile runs in ``directory``: a second run there is refused with one line.

    The kernel drops the lock when its holder dies, SIGKILL included, so while it is held whatever lock files
    the directory's worktree holds were left by a killed run (``drop_stale_git_locks``)."""
    path = Path(f"{Path(directory).resolve()}.lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fail(f"{directory}: another run of this profile is running there; wait for it to end or stop it")
        yield


def _share_cache(root: Path, directory: Path) -> None:
    """Point the run directory's DVC at the project's cache, so outputs are stored once and ``dvc exp apply``
    finds them in the project."""
    from dvc.repo import Repo

    with Repo(str(root)) as repo:
        cache = repo.cache.local_cache_dir
    (directory / ".dvc" / "config.local").write_text(f"[cache]\n    dir = {cache}\n")


def write_params(root: Path, directory: Path, name: str) -> None:
    """``directory``'s params.yaml: ``root``'s with the overlay applied.

    In the run directory it is the validated ``effective_params`` itself (DVC's ``-S`` writer corrupts the file
    when a drop empties a mapping whose key line carries a comment, DVC 3.67); in the workspace, DVC's own
    ``-S`` parser applies the overrides so the user's file keeps its comments, and a params.yaml that already
    names this profile (a killed run's) stays as it is."""
    import yaml
    from dvc.utils.hydra import apply_overrides

    from boardrl.atomic_io import atomic_write_text

    target = Path(directory) / "params.yaml"
    if Path(directory).resolve() != Path(root).resolve():
        atomic_write_text(target, yaml.safe_dump(effective_params(root, name), sort_keys=False))
    elif (read_yaml(target) or {}).get("profile") != name:
        apply_overrides(target, set_args(load_overlay(root, name))[1::2])


def stage_env(run: ProfileRun) -> dict[str, str]:
    """The environment of ``dvc repro``: the experiment's name for the stages' provenance (as ``dvc exp run``
    sets it), the run directory's ``src/`` first so the stages run the code the experiment records, and this
    interpreter's bin/ first on PATH so ``dvc`` is found from a shell without the venv (``boardrl publish
    --recheck``)."""
    env = os.environ.copy()
    env["DVC_EXP_NAME"] = run.exp_name
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    src = str(run.directory.resolve() / "src")
    env["PYTHONPATH"] = os.pathsep.join([src, *filter(None, [env.get("PYTHONPATH")])])
    return env


def commands(run: ProfileRun) -> list[list[str]]:
    """``dvc repro``, then ``dvc exp save`` (the same name again, ``--force``, when resuming)."""
    save = ["dvc", "exp", "save", "--name", run.exp_name, *(["--force"] if run.resumed else [])]
    return [["dvc", "repro"], save]


def untracked_outputs(directory: Path) -> list[str]:
    """Outputs kept in git (``cache: false``) that git does not track yet: ``dvc exp save`` must be told."""
    from dvc.repo import Repo

    with Repo(str(directory)) as repo:
        outs = [str(Path(o.fs_path).relative_to(Path(repo.root_dir).resolve())) for o in repo.index.outs
                if not o.use_cache]
    listed = _git(directory, "ls-files", "-z", "--others", "--exclude-standard", "--", *outs).decode() if outs else ""
    return [p for p in listed.split("\0") if p]


LOCK = "dvc.lock"
GOOD_LOCK = (".dvc", "tmp", "boardrl-dvc.lock.good")  # the last dvc.lock that DVC would accept, per directory


def guard_lock(directory: Path) -> Path | None:
    """Keep a rerun from being blocked by a damaged ``dvc.lock``; the place it was moved to, if it was damaged.

    DVC rewrites dvc.lock in place after every stage, so a kill -9 at that moment leaves a truncated file that
    every later ``dvc repro`` refuses ("validation failed").  A lock DVC accepts is copied aside before each run;
    a damaged one is moved to ``dvc.lock.damaged-<UTC time>`` (not deleted) with one line, and the last good copy
    put back.  DVC then finds the stages that finished after that copy changed and reruns them: their outputs
    are a function of params and seed, so they come out the same (tests/pipeline/test_fault_injection.py).
    """
    lock, good = directory / LOCK, directory.joinpath(*GOOD_LOCK)
    if not lock.is_file():
        return None
    problem = _lock_problem(lock)
    if problem is None:
        good.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(lock, good)
        return None
    aside = lock.with_name(f"{LOCK}.damaged-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}")
    os.replace(lock, aside)
    if good.is_file():
        shutil.copyfile(good, lock)
    kept = "the last good one is back" if good.is_file() else "DVC checks every stage again"
    print(f"error: {lock}: {problem}; moved to {aside.name}, {kept}", file=sys.stderr, flush=True)
    return aside


def prune_lock(directory: Path, graph: StageGraph | None = None) -> list[str]:
    """Drop ``dvc.lock``'s entries of stages that the pipeline in ``directory`` (``graph``, read when not given)
    does not have, and their outputs; the names dropped.

    Why: DVC keeps the entry of a stage that left the pipeline, and after every stage it runs it parses and
    rewrites the whole lock, round trip in pure Python.  A profile that drops experiments starts from the
    workspace's lock (every experiment's entries: 146 KB, 0.85 s a stage); pruned to the tiny profile's own
    stages it costs about 0.2 s.  DVC also leaves such a stage's outputs in place, where the report stage (which
    reads every file under ``results/``) and ``dvc metrics show`` would go on showing an experiment that
    params.yaml no longer defines.  So they are deleted first (DVC's cache keeps them: an older commit's
    ``dvc checkout`` brings them back), except a path that a stage of the pipeline declares, or one inside or
    around such a path; then the lock is written atomically (a kill in between leaves entries whose outputs are
    gone, which the next run drops).  Nothing is touched when nothing is stale.
    """
    import yaml
    from dvc.utils.serialize import dumps_yaml, parse_yaml_for_update

    from boardrl.atomic_io import atomic_write_text

    lock = Path(directory) / LOCK
    if not lock.is_file():
        return []
    entries = (yaml.load(lock.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}).get("stages")
    graph = graph or load_graph(Path(directory))
    stale = sorted(set(entries or ()) - set(graph.order))
    if not stale:
        return []
    outputs = [out["path"] for name in stale for out in entries[name].get("outs") or () if "path" in out]
    removed = remove_outputs(Path(directory), outputs, keep=graph.outputs)
    data = parse_yaml_for_update(lock.read_text(), str(lock))
    for name in stale:
        del data["stages"][name]
    atomic_write_text(lock, dumps_yaml(data))
    if removed:
        print(f"{len(stale)} stage(s) left the pipeline ({', '.join(stale[:3])}{', ...' if len(stale) > 3 else ''}): "
              f"removed their {len(removed)} output(s); DVC's cache keeps them", file=sys.stderr, flush=True)
    return stale


def remove_outputs(root: Path, paths: list[str], keep: frozenset[str]) -> list[str]:
    """Delete each of ``paths`` (relative to ``root``) that exists, lies inside ``root`` and neither equals, holds
    nor lies inside one of ``keep``; the paths deleted."""
    base = root.resolve()
    kept = [base / k for k in keep]
    removed = []
    for rel in paths:
        target = (base / rel).resolve()
        if base not in target.parents or not (target.exists() or target.is_symlink()):
            continue
        if any(target == k or k in target.parents or target in k.parents for k in kept):
            continue
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        else:
            target.unlink()
        removed.append(rel)
    return removed


RWLOCK = (".dvc", "tmp", "rwlock")  # DVC's record of which process reads or writes which path, rewritten per stage


def guard_rwlock(directory: Path) -> Path | None:
    """Keep a rerun from being blocked by a damaged ``.dvc/tmp/rwlock``; the place it was moved to, if damaged.

    DVC rewrites this JSON file as each stage takes and frees its paths, so a kill -9 at that moment leaves it
    empty or cut off, and every later ``dvc repro`` stops with "Unable to read RWLock-file" (found by
    tests/pipeline/test_fault_injection.py).  A damaged one is moved to ``rwlock.damaged-<UTC time>`` with one
    line, and DVC starts a new one.  An intact one keeps only the entries of processes that still run
    (``release_dead_holders``)."""
    from dvc.rwlock import SCHEMA
    from voluptuous import Invalid

    rwlock = directory.joinpath(*RWLOCK)
    try:
        SCHEMA(json.loads(rwlock.read_text()))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, Invalid) as exc:
        aside = rwlock.with_name(f"rwlock.damaged-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}")
        os.replace(rwlock, aside)
        print(f"error: {rwlock}: damaged ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__}); moved "
              f"to {aside.name}, DVC starts a new one", file=sys.stderr, flush=True)
        return aside
    release_dead_holders(rwlock)
    return None


def _process_gone(pid: int) -> bool:
    """True when ``pid`` names no process, or only a zombie (killed, never reaped)."""
    import psutil

    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True
    except psutil.AccessDenied:
        return False  # it exists; someone else's process is not ours to call dead


def release_dead_holders(rwlock: Path) -> list[int]:
    """Drop the rwlock entries of processes that are gone or zombies; their pids, sorted.

    DVC drops an entry whose pid does not exist, but a zombie exists: a ``dvc repro`` killed with its process
    group stays one for as long as nobody reaps it, and in a container whose first process does not reap orphans
    (CI's) that is forever, so every rerun stopped with "'data/raw/...' is busy, it is being blocked by (PID n)".
    Edited under DVC's own ``rwlock.lock``, so a live DVC process never sees half an edit."""
    from dvc.lock import make_lock

    from boardrl.atomic_io import atomic_write_text

    with make_lock(str(rwlock.with_name("rwlock.lock")), tmp_dir=str(rwlock.parent), hardlink_lock=False):
        lock = json.loads(rwlock.read_text())
        gone = sorted({info["pid"] for infos in lock.get("read", {}).values() for info in infos}
                      | {info["pid"] for info in lock.get("write", {}).values()})
        gone = [pid for pid in gone if _process_gone(int(pid))]
        if not gone:
            return []
        lock["read"] = {path: kept for path, infos in lock.get("read", {}).items()
                        if (kept := [info for info in infos if info["pid"] not in gone])}
        lock["write"] = {path: info for path, info in lock.get("write", {}).items() if info["pid"] not in gone}
        atomic_write_text(rwlock, json.dumps(lock))
    return gone


def _lock_problem(lock: Path) -> str | None:
    """Why DVC would refuse ``lock`` (its own schema), or None."""
    import yaml
    from dvc.schema import COMPILED_LOCKFILE_SCHEMA

    try:
        COMPILED_LOCKFILE_SCHEMA(yaml.load(lock.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    except Exception as exc:  # noqa: BLE001 -- a YAML error or a schema violation: both mean DVC refuses it
        return f"damaged ({str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__})"
    return None


def run_profile(root: Path, name: str, workspace: bool = False, exp_name: str | None = None) -> int:
    """Run profile ``name`` (validated before) and save it as a DVC experiment; the exit status of DVC."""
    if name == DEFAULT:
        _start_tracking(root)
        guard_lock(root)
        guard_rwlock(root)
        graph = load_graph(root)  # read once: DVC's index of a pipeline this size takes about a second
        prune_lock(root, graph)
        return parallel_repro(root, graph=graph)
    if workspace:
        return _run_planned(root, plan(root, name, True, exp_name), True)
    with only_run(run_dir(root, name)):  # planned once alone there: an unfinished run's name is read then
        return _run_planned(root, plan(root, name, False, exp_name), False)


def _run_planned(root: Path, run: ProfileRun, workspace: bool) -> int:
    """``run_profile`` of a planned run: sync its directory (unless ``workspace``), run, save."""
    name = run.profile
    _start_tracking(run.directory)
    if not workspace:
        sync_run_dir(root, run.directory)
    write_params(root, run.directory, name)
    guard_lock(run.directory)
    guard_rwlock(run.directory)
    graph = load_graph(run.directory)
    prune_lock(run.directory, graph)
    state = run.directory.joinpath(*RUN_STATE)
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text(json.dumps({"profile": name, "exp_name": run.exp_name}))
    say = "resuming" if run.resumed else "running"
    print(f"profile {name}: {say} DVC experiment {run.exp_name} in {run.directory}", file=sys.stderr, flush=True)
    _, save = commands(run)
    status = parallel_repro(run.directory, stage_env(run), graph=graph)
    if status != 0:
        print(f"profile {name}: stopped (exit {status}); rerun the same command to continue {run.exp_name}",
              file=sys.stderr, flush=True)
        return status
    for path in untracked_outputs(run.directory):
        save += ["--include-untracked", path]
    status = subprocess.call(save, cwd=run.directory)
    if status == 0:
        state.unlink()
        if not workspace:
            print(first_look(root, run), file=sys.stderr, flush=True)
    return status


def _start_tracking(directory: Path) -> None:
    """Have the MLflow tracking service of ``directory``'s store start while DVC starts (tracking/service.py)."""
    from boardrl.tracking.service import start_soon
    from boardrl.tracking.store import tracking_uri

    start_soon(tracking_uri(directory))


def applied_params(root: Path) -> str | None:
    """Why the default run must not start on the workspace's params.yaml: it holds a profile's or a study
    variation's values (``dvc exp apply`` of such an experiment rewrites params.yaml), so a plain ``make repro``
    would silently train the other budgets and record them as the default profile's."""
    data = read_yaml(Path(root) / "params.yaml") or {}
    profile = data.get("profile", DEFAULT) if isinstance(data, dict) else DEFAULT
    study = data.get("study") if isinstance(data, dict) else None
    if profile == DEFAULT and not study:
        return None
    what = f"study {study.get('name')!r} variation {study.get('variation')!r}" if isinstance(study, dict) \
        else f"profile {profile!r}"
    return (f"params.yaml holds the values of {what} (dvc exp apply writes them into the workspace), not the "
            f"default profile's; `git checkout params.yaml` brings the default back")


def first_look(root: Path, run: ProfileRun) -> str:
    """What a finished profile run left and the commands that open it, with the real paths and names: its files
    stay in the run directory, apart from the workspace's."""
    where = os.path.relpath(run.directory, Path(root).resolve()) if run.directory.is_absolute() else str(run.directory)
    data = read_yaml(run.directory / "params.yaml") or {}
    exp_id, spec = next(iter((data.get("experiments") or {}).items()), (None, {}))
    lines = [f"profile {run.profile}: saved as DVC experiment {run.exp_name}; its outputs stay in {where}/",
             f"  report      {where}/reports/index.html",
             f"  metrics     dvc exp show --rev {run.exp_name} --only-changed",
             f"  MLflow      make ui  (runs tagged dvc_exp_name = {run.exp_name})"]
    if exp_id:
        lines.append(f"  play        BOARDRL_ROOT={where} .venv/bin/boardrl match {spec.get('game')} "
                     f"model:{exp_id} random --games 20")
    lines.append(f"  (dvc exp apply {run.exp_name} would put its params.yaml in the workspace: the default run "
                 f"refuses those until `git checkout params.yaml`)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m boardrl.experiments.profiles", description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=("check", "run", "args"))
    ap.add_argument("profile")
    ap.add_argument("--root", type=Path, default=Path.cwd())
    ap.add_argument("--workspace", action="store_true", help="run in the workspace instead of the profile's "
                    "persistent directory")
    ap.add_argument("--name", help="DVC experiment name (default: an unfinished run's, else <profile>-<date>-<time>)")
    args = ap.parse_args(argv)
    try:
        effective_params(args.root, args.profile, workspace=args.workspace)
    except ConfigError as exc:
        fail(str(exc), EXIT_BAD_PARAMS)
    if args.action == "check":
        return
    if args.action == "args":
        if args.profile == DEFAULT:
            print("dvc repro")
            return
        run = plan(args.root, args.profile, args.workspace, args.name)
        print(f"cd {run.directory}")
        print(f"DVC_EXP_NAME={run.exp_name} dvc repro")
        print(" ".join(commands(run)[1]))
        return
    problem = applied_params(args.root) if args.profile == DEFAULT else None
    if problem:
        fail(problem, EXIT_BAD_PARAMS)
    if shutil.which("dvc") is None:
        fail("'dvc' is not on PATH; run through `make repro` (it puts the project's .venv/bin first)")
    try:
        status = run_profile(args.root, args.profile, args.workspace, args.name)
    except subprocess.CalledProcessError as exc:  # git: no commit yet, a worktree it refuses
        problem = (exc.stderr or b"").decode(errors="replace").strip().splitlines()[-1:] or [f"exit {exc.returncode}"]
        fail(f"{' '.join(exc.cmd[:3])}: {problem[0]}")
    raise SystemExit(status)


if __name__ == "__main__":
    main()
