"""Reading the pipeline's result files (the formats the train and evaluate stages write).

An experiment is keyed by a stable id (``tictactoe_tabular_q``) and trained with one or more seeds:

    results/curves/<id>/seed-<k>.tsv           step  opponent  seat  win  draw  loss  games
    results/train/<id>/seed-<k>/summary.json   provenance of the training run (SUMMARY_KEYS)
    results/train/<id>/seed-<k>/<name>.tsv     a learner's records (e.g. trace.tsv: reference system 000's Q trace)
    results/eval/<id>.json                     {"experiment", "game", "learner", "profile", "unit", "budget",
                                                "seeds": {"<k>": {"opponents", "optimal_move_rate", "uci",
                                                                  "exact_vs_perfect" (tic-tac-toe),
                                                                  "provenance", ...}},
                                                "across_seeds": {"seeds", "opponents", "optimal_move_rate"}}

Why the checks: every problem is a one-line ``ReportError`` naming the file and what is wrong with it, so a
broken stage output is found at once instead of surfacing as a strange figure.  The evaluation file is read as
the model the evaluate stage validates it with before writing it (``evaluate/schema.py``), extended where the
report relies on a block the stage lets pass through (``report/evaluation.py``): the report reads typed attributes,
never the file's dicts.  ``read_curve`` is the one reader of the curve TSV in the project.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import ValidationError

from boardrl.errors import BoardRLError
from boardrl.evaluate.schema import validation_line
from boardrl.evaluate.stats import SEATS
from boardrl.report.evaluation import (AcrossReading, EvalProvenance, EvaluationReading, MatchReading, SeedReading,
                                      UCIReading)

CURVE_COLUMNS = ("step", "opponent", "seat", "win", "draw", "loss", "games")
SUMMARY_KEYS = ("experiment", "game", "learner", "seed", "profile", "unit", "budget", "seconds", "mlflow_run_id",
                "git_commit", "params_hash", "dvc_exp_name")
#: The keys every file of one experiment must agree on (the eval file states them once at its top).
IDENTITY_KEYS = ("experiment", "game", "learner", "profile", "unit", "budget")
UNITS = ("games", "steps")
OUTCOMES = ("win", "draw", "loss")
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
SEED_DIR = re.compile(r"^seed-(0|[1-9][0-9]*)$")


class ReportError(BoardRLError):
    """Missing or malformed results."""


@dataclass(frozen=True)
class SeedResult:
    """What the pipeline produced for one training seed of an experiment; any part may be missing."""

    curve: pd.DataFrame | None = None
    summary: dict[str, Any] | None = None
    evaluation: SeedReading | None = None  # this seed's block of results/eval/<id>.json
    records: dict[str, Path] = field(default_factory=dict)  # learner records: results/train/<id>/seed-<k>/<name>.tsv

    @property
    def opponents(self) -> dict[str, MatchReading]:
        return self.evaluation.opponents if self.evaluation is not None else {}

    @property
    def train_provenance(self) -> dict[str, Any]:
        return self.summary or {}

    @property
    def training_seconds(self) -> float | None:
        """Seconds spent training this seed, summed over every segment of a resumed run; ``seconds`` (the last
        stage run's wall time) only for summaries written before ``training_seconds`` was recorded."""
        tp = self.train_provenance
        return finite(tp.get("training_seconds", tp.get("seconds")))

    @property
    def eval_run(self) -> EvalProvenance | None:
        """The evaluate run behind this seed's numbers; None before it ran."""
        return self.evaluation.provenance if self.evaluation is not None else None

    @property
    def eval_provenance(self) -> dict[str, Any]:
        """``eval_run`` as a plain record (empty before it ran): the form the links read for train, evaluate and
        tournament runs alike."""
        return self.eval_run.model_dump() if self.eval_run is not None else {}

    @property
    def uci(self) -> UCIReading | None:
        return self.evaluation.uci if self.evaluation is not None else None


@dataclass(frozen=True)
class Experiment:
    """Everything the pipeline produced for one experiment id: its identity and the results of each seed."""

    id: str
    game: str
    learner: str
    profile: str | None
    unit: str | None
    budget: int | None
    seeds: dict[int, SeedResult]
    across_seeds: AcrossReading | None = None  # the eval file's across-seeds summary (IQM, bootstrap interval)
    sources: tuple[str, ...] = field(default=())

    @property
    def key(self) -> str:
        """File-name and anchor stem (ids are already safe in both)."""
        return self.id

    @property
    def evaluated(self) -> dict[int, SeedResult]:
        """The seeds that have an evaluation, in seed order."""
        return {k: s for k, s in self.seeds.items() if s.evaluation is not None}

    @property
    def opponents(self) -> list[str]:
        """Every ladder opponent of any evaluated seed, in the evaluate stage's order."""
        return list(dict.fromkeys(name for s in self.evaluated.values() for name in s.opponents))


# ---------------------------------------------------------------------------------------------- single files
def read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ReportError(f"{path}: expected a JSON object, found {type(data).__name__}")
    return data


def read_curve(path: Path) -> pd.DataFrame:
    """The learning-curve TSV with typed columns; rates may be NaN (an opponent without a result).

    The one reader of ``curve.tsv`` in the project, so the file's contract is checked in one place.
    """
    try:
        frame = pd.read_csv(path, sep="\t", dtype={"opponent": str, "seat": str})
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ReportError(f"{path}: not a readable TSV ({exc})") from None
    missing = [c for c in CURVE_COLUMNS if c not in frame.columns]
    if missing:
        raise ReportError(f"{path}: missing column(s) {', '.join(missing)}; expected {' '.join(CURVE_COLUMNS)}")
    bad_seats = sorted(set(frame["seat"].astype(str)) - set(SEATS))
    if bad_seats:
        raise ReportError(f"{path}: unknown seat(s) {', '.join(bad_seats)}; seats are {', '.join(SEATS)}")
    for col in ("step", "win", "draw", "loss", "games"):
        frame[col] = pd.to_numeric(frame[col], errors="coerce")
    if frame["step"].isna().any() or (frame["step"] < 0).any():
        raise ReportError(f"{path}: column step must hold non-negative integers")
    frame["step"] = frame["step"].astype(int)
    return frame


def read_summary(path: Path, seed: int) -> dict[str, Any]:
    """A training run's provenance (``summary.json``), checked against the seed directory it sits in."""
    data = read_json(path)
    _check_provenance(data, "", path, seed)
    return data


def _check_provenance(prov: Any, where: str, path: Path, seed: int) -> None:
    if not isinstance(prov, dict):
        raise ReportError(f"{path}: {where}provenance must be an object")
    missing = [k for k in ("experiment", "game", "learner", "seed") if k not in prov]
    if missing:
        raise ReportError(f"{path}: {where}missing key(s) {', '.join(missing)}; expected {', '.join(SUMMARY_KEYS)}")
    if prov["seed"] != seed:
        raise ReportError(f"{path}: {where}seed is {prov['seed']!r}, expected {seed}")
    _check_unit_budget(prov, where, path)


def _check_unit_budget(data: dict[str, Any], where: str, path: Path) -> None:
    unit, budget = data.get("unit"), data.get("budget")
    if unit is not None and unit not in UNITS:
        raise ReportError(f"{path}: {where}unit must be one of {', '.join(UNITS)}, found {unit!r}")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 0):
        raise ReportError(f"{path}: {where}budget must be a non-negative integer, found {budget!r}")


def _seed_number(key: str, path: Path) -> int:
    if not re.fullmatch(r"0|[1-9][0-9]*", key):
        raise ReportError(f"{path}: seeds key {key!r} is not a seed number")
    return int(key)


def read_evaluation(path: Path) -> EvaluationReading:
    """``results/eval/<id>.json`` as the evaluate stage's own model (``evaluate/schema.py``), extended by the blocks
    the report reads (``report/evaluation.py``), its seeds keyed by int in seed order.

    The keys are checked first so that a file of another layout says what it lacks, not the model's first field."""
    data = read_json(path)
    missing = [k for k in ("experiment", "game", "learner", "seeds", "across_seeds") if k not in data]
    if missing:
        raise ReportError(f"{path}: missing key(s) {', '.join(missing)}; expected {', '.join(IDENTITY_KEYS)}, "
                          "seeds, across_seeds")
    if not isinstance(data["seeds"], dict) or not data["seeds"]:
        raise ReportError(f"{path}: 'seeds' must be a non-empty object keyed by seed")
    for k in data["seeds"]:
        _seed_number(k, path)
    try:
        return EvaluationReading.model_validate(data)
    except ValidationError as exc:
        raise ReportError(f"{path}: {validation_line(exc)}") from None


def identity(block: EvaluationReading | EvalProvenance) -> dict[str, Any]:
    """The identity keys a file or a run states (``IDENTITY_KEYS``; None where it does not say)."""
    return block.model_dump(include=set(IDENTITY_KEYS))


# ---------------------------------------------------------------------------------------------- one experiment
@dataclass
class _Parts:
    """What was read for one experiment, before its identity is settled."""

    train: dict[int, tuple[pd.DataFrame | None, dict[str, Any] | None, dict[str, Path]]] = field(default_factory=dict)
    evaluation: EvaluationReading | None = None
    stated: list[tuple[Path, dict[str, Any]]] = field(default_factory=list)  # files that state identity keys
    sources: list[str] = field(default_factory=list)


def _read_seed_dir(d: Path, seed: int, parts: _Parts) -> None:
    curve_path, summary_path = d.parents[2] / "curves" / d.parent.name / f"{d.name}.tsv", d / "summary.json"
    curve = read_curve(curve_path) if curve_path.is_file() else None
    summary = read_summary(summary_path, seed) if summary_path.is_file() else None
    if curve is None and summary is None:
        return
    records = {p.stem: p for p in sorted(d.glob("*.tsv")) if not p.name.startswith(".")}
    parts.train[seed] = (curve, summary, records)
    parts.sources += [str(p) for p in (curve_path, summary_path) if p.is_file()]
    if summary is not None:
        parts.stated.append((summary_path, summary))


def _read_train_dir(d: Path, parts: _Parts) -> None:
    for old in ("curve.tsv", "summary.json"):
        if (d / old).is_file():
            raise ReportError(f"{d / old}: results in the old layout train/<game>-<agent>/; expected "
                              "train/<id>/seed-<k>/ (rerun the train stage)")
    for sub in sorted(p for p in d.iterdir() if p.is_dir() and not p.name.startswith(".")):
        m = SEED_DIR.match(sub.name)
        if m is None:
            raise ReportError(f"{sub}: not a seed directory; expected {d}/seed-<k>")
        _read_seed_dir(sub, int(m.group(1)), parts)


def _settle(exp_id: str, stated: list[tuple[Path, dict[str, Any]]]) -> dict[str, Any]:
    """The identity keys all files agree on; a file that disagrees (or names another id) is an error."""
    settled: dict[str, Any] = {"experiment": exp_id}
    first: dict[str, Path] = {}
    for path, data in stated:
        for key in IDENTITY_KEYS:
            value = data.get(key)
            if value is None:
                continue
            if key in settled and settled[key] != value:
                origin = f"the id {exp_id!r}" if key == "experiment" else f"{first[key]}'s {settled[key]!r}"
                raise ReportError(f"{path}: {key} {value!r} disagrees with {origin}")
            settled.setdefault(key, value)
            first.setdefault(key, path)
    return settled


def _assemble(exp_id: str, parts: _Parts) -> Experiment:
    ident = _settle(exp_id, parts.stated)
    if "game" not in ident or "learner" not in ident:
        raise ReportError(f"{parts.sources[0]}: no summary.json or evaluation of experiment {exp_id!r} states its "
                          "game and learner")
    ev = parts.evaluation
    eval_seeds = ev.seeds if ev is not None else {}
    seeds = {
        k: SeedResult(*parts.train.get(k, (None, None, {}))[:2], evaluation=eval_seeds.get(k),
                      records=parts.train.get(k, (None, None, {}))[2])
        for k in sorted(set(parts.train) | set(eval_seeds))
    }
    return Experiment(id=exp_id, game=ident["game"], learner=ident["learner"], profile=ident.get("profile"),
                      unit=ident.get("unit"), budget=ident.get("budget"), seeds=seeds,
                      across_seeds=ev.across_seeds if ev is not None else None, sources=tuple(parts.sources))


def check_id(exp_id: str, where: Path) -> str:
    """``exp_id`` when it is a valid experiment id (it becomes file names, anchors and MLflow tags)."""
    if not ID_PATTERN.match(exp_id):
        raise ReportError(f"{where}: {exp_id!r} is not an experiment id (lower-case letters, digits, '_' and '-', "
                          "starting with a letter or digit)")
    return exp_id


def load_experiment(results_dir: Path, exp_id: str) -> Experiment | None:
    """Everything under ``results_dir`` for experiment ``exp_id``; None when nothing has been produced yet."""
    results_dir = Path(results_dir)
    check_id(exp_id, results_dir)
    parts = _Parts()
    train_dir = results_dir / "train" / exp_id
    if train_dir.is_dir():
        _read_train_dir(train_dir, parts)
    eval_path = results_dir / "eval" / f"{exp_id}.json"
    if eval_path.is_file():
        parts.evaluation = read_evaluation(eval_path)
        parts.stated.append((eval_path, identity(parts.evaluation)))
        parts.stated += [(eval_path, identity(b.provenance)) for b in parts.evaluation.seeds.values()
                         if b.provenance is not None]
        parts.sources.append(str(eval_path))
    if not parts.train and parts.evaluation is None:
        return None
    return _assemble(exp_id, parts)


# ---------------------------------------------------------------------------------------------- all experiments
def experiment_ids(results_dir: Path) -> list[str]:
    """The ids that have a train directory or an evaluation file, sorted; hidden (temporary) names skipped."""
    results_dir = Path(results_dir)
    names: dict[str, Path] = {}
    train_dir, eval_dir = results_dir / "train", results_dir / "eval"
    if train_dir.is_dir():
        names.update((p.name, p) for p in train_dir.iterdir() if p.is_dir() and not p.name.startswith("."))
    if eval_dir.is_dir():
        names.update((p.stem, p) for p in eval_dir.glob("*.json") if not p.name.startswith("."))
    return sorted(check_id(name, where) for name, where in names.items())


def load_results(results_dir: Path) -> list[Experiment]:
    """Every experiment found under ``results_dir``, sorted by game, learner, then id."""
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise ReportError(f"results directory {results_dir} not found; run the pipeline first (`dvc repro`)")
    found = [load_experiment(results_dir, i) for i in experiment_ids(results_dir)]
    experiments = [e for e in found if e is not None]
    if not experiments:
        raise ReportError(
            f"no results under {results_dir}: expected train/<id>/seed-<k>/summary.json or eval/<id>.json"
        )
    return sorted(experiments, key=lambda e: (e.game, e.learner, e.id))


def finite(x: Any) -> float | None:
    """A float, or None for missing / NaN values."""
    if x is None:
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


# ---------------------------------------------------------------------------------------------- tournaments
TOURNAMENT_KEYS = ("tournament", "game", "agents", "games", "pairings", "totals", "provenance")
PAIRING_KEYS = ("first", "second", "games", "first_wins", "draws", "second_wins")


def read_tournament(path: Path) -> dict[str, Any]:
    """One ``results/tournaments/<id>.json`` (stage tournament@<id>), its keys and counts checked."""
    data = read_json(path)
    missing = [k for k in TOURNAMENT_KEYS if k not in data]
    if missing:
        raise ReportError(f"{path}: missing key(s) {', '.join(missing)}")
    for i, p in enumerate(data["pairings"]):
        if not isinstance(p, dict) or any(k not in p for k in PAIRING_KEYS):
            raise ReportError(f"{path}: pairings[{i}] needs the keys {', '.join(PAIRING_KEYS)}")
        if p["first_wins"] + p["draws"] + p["second_wins"] != p["games"]:
            raise ReportError(f"{path}: pairings[{i}]: wins, draws and losses do not add up to its games")
    for agent in data["agents"]:
        if not all("wins" in (data["totals"].get(agent) or {}).get(seat, {}) for seat in ("first", "second")):
            raise ReportError(f"{path}: totals.{agent} needs wins and games for the seats first and second")
    return data


def load_tournaments(results_dir: Path) -> dict[str, dict[str, Any]]:
    """{id: tournament} of every ``results/tournaments/<id>.json`` (none yet: empty)."""
    directory = Path(results_dir) / "tournaments"
    if not directory.is_dir():
        return {}
    return {check_id(p.stem, p): read_tournament(p) for p in sorted(directory.glob("*.json"))
            if not p.name.startswith(".")}
