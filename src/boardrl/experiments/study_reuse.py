"""A study's variation that finished at an earlier commit counts as done when nothing it ran has changed since.

Why: a study reruns a variation unless a DVC experiment of its name finished with its params, and ``dvc exp
show`` lists only the experiments of the workspace's commit.  DVC's run-cache cannot bring the older results back:
it never restores a stage with persistent outputs (treeverse/dvc#1852), and every train, curve and evaluate stage
here has them (a killed training resumes from its checkpoint).  So every commit, even one that touches only docs,
sent every variation of a study back to the queue: hours for the AlphaZero studies.

What "nothing changed" means is what the pipeline itself records: a stage's result is a function of its slice of
params, the code it runs and the data it reads, written to ``build/inputs/<id>.<stage>.json`` by stage
``inputs`` (``experiments/inputs.py``).  An experiment at an older commit is taken when, for every experiment the
study compares,

- its params.yaml equals the variation's params, as for an experiment of the workspace's commit;
- its recorded train, curve and evaluate inputs and the referee's equal what ``inputs`` computes now (the same
  sha256 of every module in each stage's import closure);
- it plays no trained model (``model:`` opponents, whose files no fingerprint covers here);
- the stage scripts (``pipeline/``) and ``dvc.yaml`` are those of the workspace.

Anything else runs again.

A fresh clone has no DVC experiments at all (they are local git refs; a clone of the repository brings none),
so the committed table, ``studies/<name>/results.json``, is the study's memory there: each row records the
``fingerprint`` of what its experiment ran (its params, its recorded stage inputs, its stage files' git blobs),
and a variation whose rows' fingerprint equals what this commit computes is done and keeps its rows
(``carried``).  Without that, one ``boardrl study`` in a fresh clone queued hours of variations whose results
the table already held, and ``--collect`` rewrote the table without them.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from boardrl.config import Params

EXPS_REFS = "refs/exps/"
STAGE_FILES = ("pipeline", "dvc.yaml")
VALIDATED_KEPT = 64  # parsed params ``validated`` keeps: more than the variations of every shipped study

_validated: dict[str, Params] = {}


def remember(memo: dict[Any, Any], key: Any, value: Any, most: int) -> None:
    """``memo[key] = value``, first dropping the oldest entries (dicts keep insertion order) so that at most
    ``most`` stay: a process that reads many projects (a test session) keeps only the latest."""
    memo.pop(key, None)
    while len(memo) >= most:
        del memo[next(iter(memo))]
    memo[key] = value


def validated(params: dict[str, Any]) -> Params:
    """``config.parse_params(params)``, once per distinct ``params`` in a process; shared, so read it only.

    Why: a study validates each variation (``study.variation_params``) and then fingerprints it (``current_inputs``),
    and the report stage does both for every variation of every study (``study_freshness``); the checks of
    ``parse_params`` were half the report's time there.  They read nothing but the data, so equal data (``repr``:
    exact for YAML's types, 1 and "1" told apart) gives an equal result.  A ``ConfigError`` is raised each time."""
    from boardrl.config import parse_params

    key = repr(params)
    if key not in _validated:
        remember(_validated, key, parse_params(params), VALIDATED_KEPT)
    return _validated[key]


def experiment_commits(root: Path, names: set[str]) -> dict[str, list[str]]:
    """{name: commits of the DVC experiments of that name at any baseline, newest first} (DVC keeps each as the
    git ref ``refs/exps/<baseline[:2]>/<baseline[2:]>/<name>``)."""
    res = subprocess.run(["git", "for-each-ref", "--sort=-committerdate", "--format=%(objectname) %(refname)",
                          EXPS_REFS], cwd=root, capture_output=True, text=True)
    out: dict[str, list[str]] = {}
    for line in res.stdout.splitlines() if res.returncode == 0 else []:
        commit, ref = line.split(" ", 1)
        parts = ref[len(EXPS_REFS):].split("/")
        if len(parts) == 3 and parts[2] in names:  # not DVC's own refs/exps/celery/...
            out.setdefault(parts[2], []).append(commit)
    return out


REFEREE_INPUTS = "build/inputs/referee.json"


def input_files(root: Path, exp_id: str) -> dict[str, str]:
    """{stage: its build/inputs file, relative to ``root``} of one experiment."""
    from boardrl.experiments.inputs import SLICES
    from boardrl.paths import ExperimentPaths

    return {stage: ExperimentPaths(Path(root), exp_id).inputs(stage).relative_to(root).as_posix()
            for stage in SLICES}


def current_inputs(root: Path, params: dict[str, Any], exp_ids: list[str]) -> dict[str, Any] | None:
    """{build/inputs file: what stage ``inputs`` would write now} for the study's experiments under ``params``;
    None when one of them plays a trained model (a ``model:`` opponent, whose files no fingerprint covers here)."""
    from boardrl.experiments.inputs import experiment_learners, referee_inputs, stage_inputs

    parsed = validated(params)
    learners = experiment_learners(parsed)
    out: dict[str, Any] = {REFEREE_INPUTS: referee_inputs(parsed)}
    for exp_id in exp_ids:
        spec = parsed.spec(exp_id)
        if plays_a_model(spec):
            return None
        for stage, path in input_files(root, exp_id).items():
            out[path] = stage_inputs(spec, stage, root, learners)
    return json.loads(json.dumps(out))  # as read back from the files: lists, not tuples


def reads_uci_table(root: Path, params: dict[str, Any], exp_ids: list[str]) -> bool:
    """Whether a stage of ``exp_ids`` under ``params`` reads the UCI table: its inputs, and so the fingerprint of
    a variation, then record the table's sha256 ("missing" where the workspace lacks it)."""
    from boardrl.experiments.inputs import UCI_TABLE

    now = current_inputs(root, params, exp_ids) or {}
    return any(str(UCI_TABLE) in (v.get("data") or {}) for v in now.values() if isinstance(v, dict))


def fingerprint(params: dict[str, Any], inputs: dict[str, Any], stage_blobs: dict[str, str]) -> str:
    """sha256 of what decides a variation's results: its params.yaml, its stages' recorded inputs (params slice,
    code and data hashes) and the git blobs of the stage scripts and dvc.yaml."""
    text = json.dumps({"params": params, "inputs": inputs, "stage_files": stage_blobs}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def current_fingerprint(root: Path, params: dict[str, Any], exp_ids: list[str]) -> str | None:
    """The ``fingerprint`` this workspace gives a variation of ``params``; None when it plays a trained model."""
    now = current_inputs(root, params, exp_ids)
    return None if now is None else fingerprint(params, now, workspace_stage_blobs(root))


def recorded_fingerprint(root: Path, commit: str, params: dict[str, Any], exp_ids: list[str]) -> str | None:
    """The ``fingerprint`` of the DVC experiment at ``commit``, from the inputs its own stage ``inputs`` wrote
    and its stage files; None when it plays a trained model or DVC cannot read them there."""
    from dvc.api import DVCFileSystem
    from dvc.exceptions import DvcException

    from boardrl.config import ConfigError, parse_params

    try:
        parsed = parse_params(params)
        if any(plays_a_model(parsed.spec(e)) for e in exp_ids):
            return None
        fs = DVCFileSystem(str(root), rev=commit)
        paths = [REFEREE_INPUTS, *(p for e in exp_ids for p in input_files(root, e).values())]
        inputs = {path: json.loads(fs.read_text(path)) for path in paths}
        return fingerprint(params, inputs, commit_stage_blobs(root, commit))
    except (ConfigError, DvcException, OSError, ValueError, subprocess.CalledProcessError):
        return None


def workspace_stage_blobs(root: Path) -> dict[str, str]:
    """{path: git blob id of the working tree's file} of the tracked stage files (what would run now)."""
    files = subprocess.run(["git", "ls-files", "-z", "--", *STAGE_FILES], cwd=root, capture_output=True,
                           check=True).stdout.decode().split("\0")
    files = sorted(f for f in files if f and (Path(root) / f).is_file())
    blobs = subprocess.run(["git", "hash-object", "--stdin-paths"], cwd=root, input="\n".join(files) + "\n",
                           capture_output=True, text=True, check=True).stdout.split() if files else []
    return dict(zip(files, blobs))


def commit_stage_blobs(root: Path, commit: str) -> dict[str, str]:
    """{path: git blob id} of the stage files at ``commit``."""
    out = subprocess.run(["git", "ls-tree", "-r", "-z", commit, "--", *STAGE_FILES], cwd=root, capture_output=True,
                         check=True).stdout.decode()
    entries = (e.split("\t", 1) for e in out.split("\0") if e)
    return dict(sorted((path, meta.split()[2]) for meta, path in entries))


def carried(rows: list[dict[str, Any]], variation: str, exp_ids: list[str], now: Callable[[], str | None]
            ) -> list[dict[str, Any]] | None:
    """The committed ``rows`` of ``variation``, one per experiment in ``exp_ids``, when each records a
    fingerprint equal to ``now()`` (computed only then); else None (the variation runs again)."""
    mine = {r.get("experiment"): r for r in rows if r.get("variation") == variation}
    if not exp_ids or any(not (mine.get(e) or {}).get("fingerprint") for e in exp_ids):
        return None
    current = now()
    if current is None or any(mine[e]["fingerprint"] != current for e in exp_ids):
        return None
    return [mine[e] for e in exp_ids]


def plays_a_model(spec: Any) -> bool:
    """The experiment trains against, is judged against or measures its curve against a trained model."""
    from boardrl.config import model_target

    opponent = getattr(spec.learner_params, "opponent", None)
    agents = [o.agent for o in [*spec.ladder, *spec.curve_opponents]] + ([opponent] if opponent else [])
    return any(isinstance(a, str) and model_target(a) is not None for a in agents)


def same_stage_files(root: Path, commit: str) -> bool:
    """The stage scripts and dvc.yaml of ``commit`` are the workspace's."""
    res = subprocess.run(["git", "diff", "--quiet", commit, "--", *STAGE_FILES], cwd=root, capture_output=True)
    return res.returncode == 0


def reused(root: Path, exp_ids: list[str], wanted: dict[str, dict[str, Any]],
           outputs: list[str]) -> dict[str, tuple[str, dict[str, Any]]]:
    """{experiment name: (its commit, {each of ``outputs``: its JSON there})} of each wanted experiment (``wanted``:
    name -> params) that finished at an earlier commit with nothing changed since; the newest such one."""
    commits = experiment_commits(root, set(wanted))
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for name, params in wanted.items():
        now = current_inputs(root, params, exp_ids) if commits.get(name) else None
        for commit in commits.get(name, []) if now is not None else []:
            found = _read_if_unchanged(root, commit, params, now, outputs)
            if found is not None:
                out[name] = (commit, found)
                break
    return out


def _read_if_unchanged(root: Path, commit: str, params: dict[str, Any], inputs: dict[str, Any],
                       outputs: list[str]) -> dict[str, Any] | None:
    """``outputs`` read at ``commit`` when its params, recorded inputs and stage files are today's; else None
    (also when DVC cannot read them there: the variation then simply runs again)."""
    import yaml
    from dvc.api import DVCFileSystem
    from dvc.exceptions import DvcException

    try:
        fs = DVCFileSystem(str(root), rev=commit)
        if yaml.safe_load(fs.read_text("params.yaml")) != params or not same_stage_files(root, commit):
            return None
        if any(json.loads(fs.read_text(path)) != data for path, data in inputs.items()):
            return None
        return {path: json.loads(fs.read_text(path)) for path in outputs}
    except (DvcException, OSError, ValueError, yaml.YAMLError):
        return None
