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
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

EXPS_REFS = "refs/exps/"
STAGE_FILES = ("pipeline", "dvc.yaml")


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


def current_inputs(root: Path, params: dict[str, Any], exp_ids: list[str]) -> dict[str, Any] | None:
    """{build/inputs file: what stage ``inputs`` would write now} for the study's experiments under ``params``;
    None when one of them plays a trained model (a ``model:`` opponent, whose files no fingerprint covers here)."""
    from boardrl.config import parse_params
    from boardrl.experiments.inputs import SLICES, experiment_learners, referee_inputs, stage_inputs
    from boardrl.paths import ExperimentPaths

    parsed = parse_params(params)
    learners = experiment_learners(parsed)
    out: dict[str, Any] = {"build/inputs/referee.json": referee_inputs(parsed)}
    for exp_id in exp_ids:
        spec = parsed.spec(exp_id)
        if plays_a_model(spec):
            return None
        for stage in SLICES:
            path = ExperimentPaths(Path(root), exp_id).inputs(stage).relative_to(root)
            out[path.as_posix()] = stage_inputs(spec, stage, root, learners)
    return json.loads(json.dumps(out))  # as read back from the files: lists, not tuples


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
