"""Reading the pipeline's result files (the formats the train and evaluate stages write).

    results/train/<game>-<agent>/curve.tsv      step  opponent  seat  win  draw  loss  games
    results/train/<game>-<agent>/summary.json   provenance of the training run
    results/eval/<game>-<agent>.json            {"opponents", "optimal_move_rate", "uci", "provenance", ...}

Every problem is a one-line ``ReportError`` naming the file and what is wrong with it, so a broken stage output
is found at once instead of surfacing as a strange figure.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from boardrl.errors import BoardRLError
from boardrl.evaluate.stats import SEATS

CURVE_COLUMNS = ("step", "opponent", "seat", "win", "draw", "loss", "games")
PROVENANCE_KEYS = ("game", "agent", "games_trained", "seconds", "seed", "mlflow_run_id", "git_commit",
                   "params_hash", "dvc_exp_name")


class ReportError(BoardRLError):
    """Missing or malformed results."""


@dataclass
class Experiment:
    """Everything the pipeline produced for one (game, agent) pair; parts may be missing."""

    game: str
    agent: str
    curve: pd.DataFrame | None = None
    summary: dict[str, Any] | None = None
    evaluation: dict[str, Any] | None = None
    sources: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.game}-{self.agent}"

    @property
    def opponents(self) -> dict[str, dict[str, Any]]:
        return (self.evaluation or {}).get("opponents") or {}

    @property
    def eval_provenance(self) -> dict[str, Any]:
        return (self.evaluation or {}).get("provenance") or {}

    @property
    def train_provenance(self) -> dict[str, Any]:
        return self.summary or {}


def _split_name(name: str, where: Path) -> tuple[str, str]:
    """``<game>-<agent>``: game ids never contain '-', so the first '-' separates them."""
    game, sep, agent = name.partition("-")
    if not sep or not game or not agent:
        raise ReportError(f"{where}: name {name!r} is not <game>-<agent>")
    return game, agent


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ReportError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ReportError(f"{path}: expected a JSON object, found {type(data).__name__}")
    return data


def read_curve(path: Path) -> pd.DataFrame:
    """The learning-curve TSV with typed columns; rates may be NaN (an opponent without a result)."""
    try:
        frame = pd.read_csv(path, sep="\t", dtype={"opponent": str, "seat": str})
    except (OSError, ValueError) as exc:
        raise ReportError(f"{path}: not a readable TSV ({exc})") from None
    missing = [c for c in CURVE_COLUMNS if c not in frame.columns]
    if missing:
        raise ReportError(f"{path}: missing column(s) {', '.join(missing)}; expected {' '.join(CURVE_COLUMNS)}")
    bad_seats = sorted(set(frame["seat"]) - set(SEATS))
    if bad_seats:
        raise ReportError(f"{path}: unknown seat(s) {', '.join(bad_seats)}; seats are {', '.join(SEATS)}")
    for col in ("step", "win", "draw", "loss", "games"):
        frame[col] = pd.to_numeric(frame[col], errors="coerce")
    if frame["step"].isna().any() or (frame["step"] < 0).any():
        raise ReportError(f"{path}: column step must hold non-negative integers")
    frame["step"] = frame["step"].astype(int)
    return frame


def _check_seat_block(block: Any, where: str, path: Path) -> None:
    if not isinstance(block, dict):
        raise ReportError(f"{path}: {where} must be an object")
    for seat in SEATS:
        stats = block.get(seat)
        if not isinstance(stats, dict) or any(k not in stats for k in ("win", "draw", "loss", "games")):
            raise ReportError(f"{path}: {where}.{seat} needs win, draw, loss and games")


def read_evaluation(path: Path) -> dict[str, Any]:
    data = _read_json(path)
    opponents = data.get("opponents")
    if not isinstance(opponents, dict):
        raise ReportError(f"{path}: missing the 'opponents' object")
    for name, block in opponents.items():
        _check_seat_block(block, f"opponents.{name}", path)
    rate = data.get("optimal_move_rate")
    if rate is not None and not (isinstance(rate, (int, float)) and 0.0 <= rate <= 1.0):
        raise ReportError(f"{path}: optimal_move_rate must be a number in [0, 1] or null, found {rate!r}")
    uci = data.get("uci")
    if uci is not None:
        for label, block in (uci.get("full") or {}).items():
            _check_seat_block(block, f"uci.full.{label}", path)
    return data


def load_results(results_dir: Path) -> list[Experiment]:
    """Every experiment found under ``results_dir``, sorted by game then agent."""
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise ReportError(f"results directory {results_dir} not found; run the pipeline first (`dvc repro`)")
    found: dict[tuple[str, str], Experiment] = {}

    def get(game: str, agent: str) -> Experiment:
        return found.setdefault((game, agent), Experiment(game, agent))

    train_dir = results_dir / "train"
    for d in sorted(p for p in train_dir.glob("*") if p.is_dir() and not p.name.startswith(".")):
        exp = get(*_split_name(d.name, d))
        if (d / "curve.tsv").is_file():
            exp.curve = read_curve(d / "curve.tsv")
            exp.sources.append(str(d / "curve.tsv"))
        if (d / "summary.json").is_file():
            exp.summary = _read_json(d / "summary.json")
            exp.sources.append(str(d / "summary.json"))
    for f in sorted((results_dir / "eval").glob("*.json")):
        if f.name.startswith("."):
            continue
        exp = get(*_split_name(f.stem, f))
        exp.evaluation = read_evaluation(f)
        exp.sources.append(str(f))
    experiments = [e for e in found.values() if e.curve is not None or e.summary or e.evaluation]
    if not experiments:
        raise ReportError(
            f"no results under {results_dir}: expected train/<game>-<agent>/curve.tsv or eval/<game>-<agent>.json"
        )
    return sorted(experiments, key=lambda e: (e.game, e.agent))


def finite(x: Any) -> float | None:
    """A float, or None for missing / NaN values."""
    if x is None:
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v
