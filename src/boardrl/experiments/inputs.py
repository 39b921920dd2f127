"""Fingerprints of the code and data each stage of each experiment uses: DVC's narrow dependencies.

Why: a DVC stage reruns when a dependency changes.  Depending on whole source folders retrains every tabular
experiment when someone adds ``learn/dqn.py``; listing files by hand in dvc.yaml cannot follow imports and
``foreach`` cannot give each experiment its own list.  So one cheap stage, ``inputs``, writes
``build/inputs/<id>.train.json``, ``<id>.curve.json`` and ``<id>.evaluate.json``: the sha256 of every ``boardrl``
source file in the import closure of what that stage runs (its learner, its game, its opponents' modules, the
referee, the stage code) plus the data it reads (the UCI table, Connect 4 only), and the stage's params slice
(``config.train_slice``, ``curve_slice``, ``evaluate_slice``).  ``train@<id>``, ``curve@<id>`` and
``evaluate@<id>`` depend on their file; it changes only when something they use changes.  Why the params slice
here rather than ``params: experiments.<id>`` in dvc.yaml: an experiment's entry also holds its curve opponents,
which only curve@<id> uses (the train stage saves snapshots; the curve stage plays them), and DVC cannot depend
on part of an entry.

The closure is static (``ast``): every ``import boardrl...`` of a module, at any depth, is followed, except the
imports inside functions of the *dispatch* modules (``make_game``, ``make_referee``), which import one module per
game id; the game's own module and its referee are roots instead.
"""

from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from boardrl.atomic_io import atomic_write_text
from boardrl.config import ExperimentSpec, Params, curve_slice, evaluate_slice, model_target, train_slice

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # src/boardrl
PACKAGE = "boardrl"
#: Modules whose function-level imports are per game id or per optional feature: only their module-level imports
#: count, and ``stage_roots`` adds the rest where a stage uses it (the game's module, its referee, UCI code).
DISPATCH_MODULES = frozenset({"boardrl.games", "boardrl.solvers.registry", "boardrl.experiments.evaluate"})
#: Function-level imports a stage never runs: ``train_seed`` measures the curve in training only for a sweep
#: (whose roots hold the curve code), so editing the curve code reruns curve@<id> and no train stage.
NOT_FOLLOWED = {"boardrl.experiments.train": frozenset({"boardrl.experiments.curve"})}
TRAIN_CODE = ("boardrl.experiments.train", "boardrl.config")
CURVE_CODE = ("boardrl.experiments.curve", "boardrl.config")
EVALUATE_CODE = ("boardrl.experiments.evaluate", "boardrl.config", "boardrl.agents.models")
UCI_CODE = ("boardrl.data.uci_table", "boardrl.evaluate.uci_protocols", "boardrl.evaluate.value_accuracy")
SWEEP_CODE = ("boardrl.sweeps.run", "boardrl.sweeps.study", "boardrl.sweeps.objective", "boardrl.sweeps.outputs")
UCI_TABLE = Path("data") / "processed" / "uci.parquet"


# ---------------------------------------------------------------------------------------------- the closure
def module_file(name: str) -> Path | None:
    """The source file of ``boardrl`` module ``name`` (a package's ``__init__.py``), or None."""
    parts = name.split(".")
    if parts[0] != PACKAGE:
        return None
    if len(parts) == 1:
        return PACKAGE_DIR / "__init__.py"
    rel = Path(*parts[1:])
    for candidate in (PACKAGE_DIR / rel / "__init__.py", PACKAGE_DIR / rel.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


@cache
def direct_imports(name: str) -> frozenset[str]:
    """The ``boardrl`` modules that module ``name`` imports (submodules named in ``from x import y`` included)."""
    path = module_file(name)
    if path is None:
        return frozenset()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if name in DISPATCH_MODULES else list(ast.walk(tree))
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == PACKAGE)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == PACKAGE:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names if module_file(f"{node.module}.{a.name}"))
    return frozenset(m for m in found if module_file(m) is not None) - NOT_FOLLOWED.get(name, frozenset())


def closure(roots: list[str]) -> list[str]:
    """Every ``boardrl`` module reachable from ``roots``, with the packages that contain them, sorted."""
    seen: set[str] = set()
    todo = [r for r in roots if module_file(r) is not None]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        parts = name.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]  # importing a.b.c runs a and a.b
        todo += list(direct_imports(name))
    return sorted(seen)


# ---------------------------------------------------------------------------------------------- roots
def _game_modules(game_id: str) -> list[str]:
    """The game's rules module and the referee module its descriptor names (what ``make_referee`` imports)."""
    from boardrl.games import make_game

    game = make_game(game_id)
    return [type(game).__module__, *filter(None, [game.descriptor.referee_module])]


def experiment_learners(params: Params) -> dict[str, str]:
    """{experiment id: learner} of every experiment: what a ``model:<id>`` opponent needs to know of another."""
    return {exp_id: e.learner for exp_id, e in params.experiments.items()}


def _agent_modules(game_id: str, specs: list[str], learners: Mapping[str, str]) -> list[str]:
    """The modules behind agent specs (a ``model:<id>`` opponent brings the learner module of that experiment)."""
    from boardrl.agents import agent_entry, parse_spec
    from boardrl.games import make_game

    game = make_game(game_id)
    out = []
    for spec in specs:
        target = model_target(spec)
        if target is not None:
            other = learners.get(target)
            out += ["boardrl.agents.models"] + ([f"boardrl.learn.{other}"] if other else [])
            continue
        out.append(agent_entry(game, parse_spec(spec)[0]).module)
    return out


def stage_roots(spec: ExperimentSpec, stage: str, learners: Mapping[str, str]) -> list[str]:
    """The modules a stage of the experiment runs, before following imports (``learners``: every experiment's
    learner, for ``model:<id>`` opponents)."""
    roots = [f"boardrl.learn.{spec.learner}", *_game_modules(spec.game)]
    if stage == "train":
        opponent = getattr(spec.learner_params, "opponent", None)
        return roots + list(TRAIN_CODE) + _agent_modules(spec.game, [opponent] if opponent else [], learners)
    if stage == "curve":
        agents = [o.agent for o in spec.curve_opponents]
        return roots + list(CURVE_CODE) + _agent_modules(spec.game, agents, learners)
    agents = [o.agent for o in spec.ladder]
    uci = list(UCI_CODE) if spec.game_evaluation.uci is not None else []
    return roots + list(EVALUATE_CODE) + uci + _agent_modules(spec.game, agents, learners)


# ---------------------------------------------------------------------------------------------- fingerprints
def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@cache
def _source_hash(path: Path) -> str:
    """sha256 of a source file, once per process (every experiment's closure shares most files)."""
    return sha256(path)


def code_fingerprint(roots: list[str]) -> dict[str, str]:
    """{source path: sha256} of every module in the closure of ``roots``, sorted by path."""
    return dict(_code_fingerprint(tuple(roots)))


@cache
def _code_fingerprint(roots: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """``code_fingerprint``, once per process and roots, as ``_source_hash`` and ``direct_imports`` are: the report
    checks 39 study variations of 3 stages each, and walking the same closures again took a second and a half."""
    files = [module_file(m) for m in closure(list(roots))]
    return tuple(sorted((str(f.relative_to(PACKAGE_DIR.parent)), _source_hash(f)) for f in files))


SLICES = {"train": train_slice, "curve": curve_slice, "evaluate": evaluate_slice}


def stage_inputs(spec: ExperimentSpec, stage: str, root: Path, learners: Mapping[str, str]) -> dict[str, Any]:
    """{"params": the stage's slice, "code": {source path: sha256}, "data": {path: sha256}} of one stage of the
    experiment."""
    code = code_fingerprint(stage_roots(spec, stage, learners))
    data: dict[str, str] = {}
    trains_on_uci = stage == "train" and getattr(spec.learner_params, "starts", None) == "uci"
    if trains_on_uci or (stage == "evaluate" and spec.game_evaluation.uci is not None):
        table = Path(root) / UCI_TABLE
        data[str(UCI_TABLE)] = sha256(table) if table.is_file() else "missing"
    data.update(book_inputs(code))
    return {"experiment": spec.id, "stage": stage, "params": SLICES[stage](spec), "code": code, "data": data}


def book_inputs(code: dict[str, str]) -> dict[str, str]:
    """The Connect 4 opening book's sha256 (or "missing") where the stage's code holds the Connect 4 solver:
    the book decides how the referee answers (the same values, but a stage that judges positions with it is a
    different computation from one that searches)."""
    if "boardrl/solvers/connect4.py" not in code:
        return {}
    from boardrl.solvers.connect4_book import default_path

    book = default_path()
    return {str(book.relative_to(PACKAGE_DIR.parent.parent)): sha256(book) if book.is_file() else "missing"}


def sweep_inputs(params: Params, sweep_id: str) -> dict[str, Any]:
    """The code fingerprint of sweep ``sweep_id``: its experiment's training code plus the sweep modules."""
    spec = params.spec(params.sweeps[sweep_id].experiment)
    code = code_fingerprint(stage_roots(spec, "train", experiment_learners(params)) + list(SWEEP_CODE))
    return {"sweep": sweep_id, "stage": "sweep", "code": code, "data": {}}


TOURNAMENT_CODE = ("boardrl.experiments.tournament", "boardrl.evaluate.tournament", "boardrl.config")


def tournament_inputs(params: Params, tid: str) -> dict[str, Any]:
    """The code fingerprint of stage ``tournament@<tid>``: its modules, the game and the players' modules."""
    t = params.tournaments[tid]
    roots = (list(TOURNAMENT_CODE) + _game_modules(t.game)  # the referee: a `perfect` player judges with it
             + _agent_modules(t.game, list(t.agents), experiment_learners(params)))
    code = code_fingerprint(roots)
    return {"tournament": tid, "stage": "tournament", "code": code, "data": book_inputs(code)}


REFEREE_CODE = ("boardrl.experiments.referee", "boardrl.config")


def referee_inputs(params: Params) -> dict[str, Any]:
    """The games stage ``referee`` judges (those some experiment plays) and its code fingerprint: its modules,
    and each game's module and referee."""
    from boardrl.experiments.referee import stage_games

    modules = [m for g in stage_games(params) for m in _game_modules(g)]
    code = code_fingerprint(list(REFEREE_CODE) + modules)
    return {"stage": "referee", "games": stage_games(params), "code": code, "data": book_inputs(code)}


REPORT_CODE = ("boardrl.report", "boardrl.config")


def report_inputs() -> dict[str, Any]:
    """The code fingerprint of stage ``report``: the report package's closure, which holds what it runs beyond
    ``report/`` (the config it validates params.yaml with, the Conniption solver it asks for forced wins)."""
    return {"stage": "report", "code": code_fingerprint(list(REPORT_CODE)), "data": {}}


def _write_if_changed(target: Path, data: dict[str, Any]) -> Path:
    text = json.dumps(data, indent=1) + "\n"
    if not target.is_file() or target.read_text() != text:
        atomic_write_text(target, text)
    return target


def write_inputs(params: Params, root: Path) -> list[Path]:
    """Write ``build/inputs/<id>.<stage>.json`` for every experiment, ``<id>.sweep.json`` for every sweep and
    ``<id>.tournament.json`` for every tournament, ``referee.json`` and ``report.json``; files of removed experiments and sweeps
    go."""
    from boardrl.paths import ExperimentPaths

    written = []
    learners = experiment_learners(params)
    for exp_id in params.experiments:
        paths = ExperimentPaths(Path(root), exp_id)
        spec = params.spec(exp_id)
        for stage in SLICES:
            written.append(_write_if_changed(paths.inputs(stage), stage_inputs(spec, stage, root, learners)))
    for sweep_id in params.sweeps:
        target = Path(root) / "build" / "inputs" / f"{sweep_id}.sweep.json"
        written.append(_write_if_changed(target, sweep_inputs(params, sweep_id)))
    for tid in params.tournaments:
        target = Path(root) / "build" / "inputs" / f"{tid}.tournament.json"
        written.append(_write_if_changed(target, tournament_inputs(params, tid)))
    written.append(_write_if_changed(Path(root) / "build" / "inputs" / "referee.json", referee_inputs(params)))
    written.append(_write_if_changed(Path(root) / "build" / "inputs" / "report.json", report_inputs()))
    directory = Path(root) / "build" / "inputs"
    for stale in set(directory.glob("*.json")) - set(written):
        stale.unlink()
    return written


def ladder_models(spec: ExperimentSpec, root: Path) -> dict[str, Any]:
    """{agent spec: {file: sha256}} of the trained models the experiment's ladder names with ``model:``."""
    from boardrl.agents.models import model_dir

    out: dict[str, Any] = {}
    for opp in spec.ladder:
        if model_target(opp.agent) is None:
            continue
        try:
            directory = model_dir(opp.agent, Path(root))
        except ValueError:
            out[opp.agent] = "missing"
            continue
        out[opp.agent] = {str(p.relative_to(directory)): sha256(p) for p in sorted(directory.rglob("*"))
                          if p.is_file()}
    return out


def write_ladder_models(params: Params, root: Path) -> list[Path]:
    """Write ``build/models/<id>.json`` for every experiment (``{}`` when its ladder names no trained model)."""
    from boardrl.paths import ExperimentPaths

    written = []
    for exp_id in params.experiments:
        target = ExperimentPaths(Path(root), exp_id).ladder_models
        models = ladder_models(params.spec(exp_id), root)
        atomic_write_text(target, json.dumps(models, indent=1, sort_keys=True) + "\n")
        written.append(target)
    for stale in set((Path(root) / "build" / "models").glob("*.json")) - set(written):
        stale.unlink()
    return written
