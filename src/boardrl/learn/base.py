"""The Learner interface and what every learner shares: params, exploration schedules, checkpoints.

A learner turns a game and a params model into an Agent.  The pipeline's train stage (and any library user)
calls ``train(game, params, seed=..., checkpoint_dir=..., eval_points=[...], on_eval=...)``:

- ``eval_points`` are numbers of training games (log-spaced in the pipeline); at each one the learner calls
  ``on_eval(games_played, agent)`` with a frozen greedy agent, so learning curves come for free.
- Training runs in *segments* that end at every eval point, every ``checkpoint_every`` games and at the end.
  No game is in flight at a segment end, so a checkpoint there (model + RNG state + counters) is the whole
  truth: a killed run resumes from its last checkpoint and ends with exactly the result of an uninterrupted
  run with the same seed.  Because the segment ends are part of that trajectory, the checkpoint's fingerprint
  covers game, learner, params, seed and eval points; a checkpoint with another fingerprint is ignored.
- Eval points at or before the checkpoint a run resumes from are not called again (their results were
  delivered before the checkpoint was written); callers keep what they measured (the pipeline keeps it in the
  checkpoint directory).
- When training completes the checkpoint directory is removed: a checkpoint only ever stands for an
  unfinished run, so re-running a finished experiment (say, with new code) trains afresh.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import warnings
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Callable, ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from boardrl.agents.base import Agent
from boardrl.atomic_io import atomic_save_npz, atomic_write_json
from boardrl.errors import BoardRLError
from boardrl.games.base import Game

EvalCallback = Callable[[int, Agent], None]
CHECKPOINT_FORMAT = 1
MANIFEST = "checkpoint.json"


class LearnError(BoardRLError):
    """Bad learner input: unknown learner, params of the wrong learner, eval points outside the budget."""


class Exploration(BaseModel):
    """epsilon of epsilon-greedy as a function of training games played.

    constant: ``start`` throughout.  linear: ``start`` -> ``end`` over ``decay_games``, then ``end``.
    exponential: ``end + (start - end) * exp(-games / decay_games)``.
    """

    model_config = ConfigDict(extra="forbid")

    schedule: Literal["constant", "linear", "exponential"] = "constant"
    start: float = Field(1.0, ge=0.0, le=1.0)
    end: float = Field(0.1, ge=0.0, le=1.0)
    decay_games: int = Field(10_000, ge=1)

    def epsilon(self, games: int) -> float:
        if self.schedule == "constant":
            return self.start
        if self.schedule == "linear":
            frac = min(1.0, games / self.decay_games)
            return self.start + (self.end - self.start) * frac
        return self.end + (self.start - self.end) * math.exp(-games / self.decay_games)


class LearnerParams(BaseModel):
    """Fields every learner has.  ``games`` is the training budget (complete games)."""

    model_config = ConfigDict(extra="forbid")

    games: int = Field(ge=1)
    checkpoint_every: int = Field(10_000, ge=1, description="games between checkpoints")


class Learner(ABC):
    """A training algorithm that produces an Agent (see the module docstring for the contract)."""

    name: ClassVar[str]
    params_model: ClassVar[type[LearnerParams]]

    @abstractmethod
    def train(
        self,
        game: Game,
        params: LearnerParams | dict,
        *,
        seed: int,
        checkpoint_dir: Path,
        eval_points: list[int],
        on_eval: EvalCallback,
    ) -> Agent: ...

    def check_params(self, params: LearnerParams | dict | None) -> LearnerParams:
        """The params as this learner's model (a dict is validated; another learner's model is refused)."""
        if params is None:
            params = {}
        if isinstance(params, dict):
            try:
                return self.params_model(**params)
            except ValidationError as exc:
                err = exc.errors()[0]
                where = ".".join(str(p) for p in err["loc"]) or "params"
                raise LearnError(f"{self.name} params: {where}: {err['msg']}") from None
        if type(params) is not self.params_model:
            raise LearnError(f"{self.name} needs {self.params_model.__name__}, got {type(params).__name__}")
        return params


def check_eval_points(eval_points: list[int], games: int) -> list[int]:
    """Sorted unique eval points; each must lie in 0..games."""
    pts = sorted({int(p) for p in eval_points})
    bad = [p for p in pts if p < 0 or p > games]
    if bad:
        raise LearnError(f"eval points {bad} lie outside 0..{games} (the training budget in games)")
    return pts


def segment_ends(games: int, eval_points: list[int], checkpoint_every: int) -> list[int]:
    """Game counts where a segment ends: positive eval points, multiples of checkpoint_every, and the end."""
    ends = {p for p in eval_points if p > 0}
    ends.update(range(checkpoint_every, games, checkpoint_every))
    ends.add(games)
    return sorted(ends)


def fingerprint(learner: str, game: Game, params: BaseModel, seed: int, eval_points: list[int]) -> str:
    """Hash of everything that determines a training trajectory; a checkpoint only resumes a run with the same."""
    blob = json.dumps(
        {"learner": learner, "game": game.game_id, "params": params.model_dump(mode="json"), "seed": int(seed),
         "eval_points": list(eval_points)},
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


class Checkpoint:
    """A checkpoint directory: named numpy arrays plus a JSON manifest written last.

    Arrays go to files named after the game count (``arrays-<games>.npz``); the manifest points at the current
    one and is replaced atomically, so a run killed while writing leaves the previous checkpoint intact.
    """

    def __init__(self, directory: Path, fingerprint: str) -> None:
        self.dir = Path(directory)
        self.fingerprint = fingerprint

    def load(self) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None:
        """(manifest, arrays) of a checkpoint with our fingerprint, or None to start fresh."""
        path = self.dir / MANIFEST
        if not path.is_file():
            return None
        try:
            manifest = json.loads(path.read_text())
            if manifest.get("fingerprint") != self.fingerprint or manifest.get("format") != CHECKPOINT_FORMAT:
                warnings.warn(f"ignoring checkpoint in {self.dir}: it belongs to other params, seed or eval points",
                              stacklevel=3)
                return None
            with np.load(self.dir / manifest["arrays"]) as data:
                arrays = {k: data[k] for k in data.files}
        except (OSError, ValueError, KeyError, json.JSONDecodeError) as exc:
            warnings.warn(f"ignoring unreadable checkpoint in {self.dir}: {exc}", stacklevel=3)
            return None
        return manifest, arrays

    def save(self, games_done: int, state: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        name = f"arrays-{games_done:012d}.npz"
        atomic_save_npz(self.dir / name, **arrays)
        manifest = {"format": CHECKPOINT_FORMAT, "fingerprint": self.fingerprint, "games_done": games_done,
                    "arrays": name, **state}
        atomic_write_json(self.dir / MANIFEST, manifest)
        for old in self.dir.glob("arrays-*.npz"):
            if old.name != name:
                old.unlink(missing_ok=True)

    def clear(self) -> None:
        """Remove the whole checkpoint directory: it belongs to one unfinished run.

        Callers may keep their own resume state there (the pipeline keeps the curve points it measured); it is
        meant to go with the checkpoint, so a finished run leaves nothing that a later run could resume from.
        """
        if self.dir.is_dir():
            shutil.rmtree(self.dir)


def rng_state_json(rng: np.random.Generator) -> dict:
    """The generator's full state as JSON-able data (PCG64 state ints are arbitrary-precision in JSON)."""
    return rng.bit_generator.state


def rng_from_json(state: dict) -> np.random.Generator:
    bitgen = getattr(np.random, state["bit_generator"])()
    bitgen.state = state
    return np.random.Generator(bitgen)
