"""The Learner base class: it owns the training loop, so a learner writes only what is its own.

In the way Stable-Baselines3's ``BaseAlgorithm`` does, ``Learner.train`` runs everything every learner shares:

- the **budget**, counted in the learner's ``unit`` (``"games"`` or ``"steps"``, the params field of that name);
- **segments** that end at every evaluation point, every ``checkpoint_every`` units and at the end, or, where
  such a place falls inside the learner's unit of work (a batch of games side by side, an epoch, a vector step),
  at the end of that unit: ``train_segment`` says how far it got;
- **evaluation points**: ``on_eval(done, agent)`` gets a frozen snapshot agent at the first count the training
  reached at or after each requested point; whatever it returns (a JSON-able record, e.g. the learning-curve
  rows) is kept in ``learner.evaluations`` keyed by that count, ``learner.curve_points`` maps each requested point
  to it, and both go into the checkpoint, so a resumed run hands back the whole curve, including the points
  measured before it was killed;
- **checkpoints** (learn/core/checkpoint.py) after each segment: the learner's state tree (numpy arrays, torch modules
  and optimizers, replay buffers, every random generator) plus torch's global random state when torch is in
  use, so a killed run resumes to exactly the result of an uninterrupted one (on CPU);
- a **tqdm progress bar** and a **metrics hook**: ``self.log_metrics({...}, step)`` from a learner (losses,
  epsilon) and the base's own throughput go to ``on_metrics`` (the pipeline sends them to MLflow with ``step``).

Why segments may overrun their end: a trained model must be a function of (game, learner params, seed) alone.
If a segment cut a unit of work short where a curve point or a checkpoint happens to fall, measuring the curve
more often (or checkpointing more often) would change the model.  So a learner plays its units whole and only the
budget itself cuts the last one; the curve records the exact count at which each point was measured.

A learner subclass implements ``setup`` (fresh state from the seed), ``train_segment(start, end)`` (advance from
``start`` to ``end`` units, or to the end of the unit of work in flight at ``end``, never past the budget; nothing
in flight at the count it returns), ``state_dict``/``load_state_dict`` and
``snapshot`` (a frozen agent of the current state); optionally ``records`` (per-run tables, e.g. a value
trace, that the pipeline writes beside the run's summary).  The checkpoint directory is removed when training
completes: a checkpoint only ever stands for an unfinished run, or, with ``keep_checkpoint``, for a run whose
results are not yet safely written: the caller (the pipeline's train stage) clears it through
``learner.checkpoint`` once they are, so a failure to write them loses no training.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Callable, ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from boardrl.agents.base import Agent
from boardrl.errors import BoardRLError
from boardrl.games.base import Game
from boardrl.learn.core.checkpoint import MANIFEST, Checkpoint

__all__ = [
    "EvalCallback", "Exploration", "Learner", "LearnError", "LearnerParams", "MANIFEST", "MetricsCallback",
    "check_eval_points", "fingerprint", "rng_from_json", "rng_state_json", "segment_ends",
]

EvalCallback = Callable[[int, Agent], Any]
MetricsCallback = Callable[[dict[str, float], int], None]
Unit = Literal["games", "steps"]


class LearnError(BoardRLError):
    """Bad learner input: unknown learner, params of the wrong learner, eval points outside the budget."""


class Exploration(BaseModel):
    """epsilon of epsilon-greedy as a function of training progress (in the learner's unit).

    constant: ``start`` throughout.  linear: ``start`` -> ``end`` over ``decay_games``, then ``end``.
    exponential: ``end + (start - end) * exp(-progress / decay_games)``.
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
    """Fields every learner has.  The budget field is named after the learner's unit (``games`` or ``steps``)."""

    model_config = ConfigDict(extra="forbid")

    # exclude: the model does not depend on it, so it is not part of the params a model, a checkpoint's
    # fingerprint or a params hash records (a checkpoint written every 1,000 units resumes under every 5,000).
    checkpoint_every: int = Field(10_000, ge=1, exclude=True,
                                  description="units (games or steps) between checkpoints")


class Learner(ABC):
    """A training algorithm that produces an Agent (see the module docstring for the contract)."""

    name: ClassVar[str]
    params_model: ClassVar[type[LearnerParams]]
    unit: ClassVar[Unit] = "games"
    #: A run of a few seconds that exercises everything the learner carries across segments: (game id,
    #: params).  Why on the class: the invariance test (tests/learn/test_training_invariance.py) finds every
    #: learner through the registry, so a new learner is covered by declaring this, without editing the test.
    small_run: ClassVar[tuple[str, dict[str, Any]] | None] = None
    #: Whose arithmetic trains it: "numpy" (numpy and numba: the same bits on every machine) or "torch" (the
    #: same bits on CPUs under boardrl/cpu_pins.py; not claimed on GPUs).  The report says which is which.
    arithmetic: ClassVar[Literal["numpy", "torch"]] = "numpy"
    #: A torch learner's CPU threads where its ``threads`` param and ``$BOARDRL_TORCH_THREADS`` leave them open
    #: (learn/core/device.py ``resolved_threads``); the experiment's curve and evaluation stages play on as many.
    default_threads: ClassVar[int] = 2

    def __init__(self) -> None:
        self.evaluations: dict[int, Any] = {}  # measured count -> on_eval's record
        self.curve_points: dict[int, int] = {}  # requested eval point -> the count it was measured at
        self.resumed_from = 0  # units done when this process started (0: a fresh run)
        self.checkpoint: Checkpoint | None = None  # the last run's checkpoint (``train(keep_checkpoint=True)``)
        self._on_metrics: MetricsCallback | None = None

    # ------------------------------------------------------------------ what a learner writes
    @abstractmethod
    def setup(self, game: Game, params: LearnerParams, seed: int, opponent: Agent | None) -> None:
        """Build fresh state (tables, networks, optimizers, buffers, random generators) from the seed."""

    @abstractmethod
    def train_segment(self, start: int, end: int) -> int | None:
        """Train from ``start`` to ``end`` units, or on to the end of the unit of work in flight at ``end``.

        Returns the count reached (None: exactly ``end``); it lies in ``end .. budget`` and nothing may be in
        flight there.  Where a unit ends must not depend on ``end``: only the budget may cut a unit short.
        """

    @abstractmethod
    def state_dict(self) -> dict[str, Any]:
        """Everything ``train_segment`` depends on, as a tree of arrays, tensors and plain values."""

    @abstractmethod
    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what ``state_dict`` returned (called after ``setup``)."""

    @abstractmethod
    def snapshot(self) -> Agent:
        """A frozen agent of the current state: later training must not change it."""

    def final_agent(self) -> Agent:
        """The agent ``train`` returns (default: a snapshot)."""
        return self.snapshot()

    def records(self) -> dict[str, list[dict[str, Any]]]:
        """Per-run tables this learner wants kept beside the model: name -> rows (flat JSON-able dicts).

        Why: some seed protocols report a quantity measured *during* training that no evaluation of the final
        agent can recover (seed 000 exp 01/02: Q(s0, a) after every episode).  The pipeline writes each table
        as ``results/train/<id>/seed-<k>/<name>.tsv``.  A learner keeps the rows in its ``state_dict`` so a
        resumed run hands back all of them.  Default: none.
        """
        return {}

    def check_game(self, game: Game, params: LearnerParams) -> None:
        """Refuse a game/params combination that cannot work (``LearnError``); default: everything works."""

    def opponent_spec(self, params: LearnerParams) -> str | None:
        """The agent spec this learner trains against (None = self-play); read from ``params.opponent``."""
        return getattr(params, "opponent", None)

    # ------------------------------------------------------------------ shared by every learner
    def log_metrics(self, metrics: dict[str, float], step: int) -> None:
        """Send training metrics (loss, epsilon, ...) to whoever listens (the pipeline: MLflow, with ``step``)."""
        if self._on_metrics is not None:
            self._on_metrics(metrics, int(step))

    def budget(self, params: LearnerParams) -> int:
        return int(getattr(params, self.unit))

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

    def train(
        self,
        game: Game,
        params: LearnerParams | dict,
        *,
        seed: int,
        checkpoint_dir: Path,
        eval_points: list[int],
        on_eval: EvalCallback | None = None,
        on_metrics: MetricsCallback | None = None,
        opponent: Agent | None = None,
        progress: bool = False,
        keep_checkpoint: bool = False,
    ) -> Agent:
        """Train (resuming from ``checkpoint_dir`` when it holds this run's checkpoint) and return the agent.

        ``opponent`` (an Agent) overrides the params' opponent spec.  ``learner.evaluations`` maps each eval
        point to what ``on_eval`` returned there, across interruptions.  ``keep_checkpoint``: leave the last
        checkpoint for the caller to clear (``learner.checkpoint.clear()``) after it has published the results.
        """
        p = self.check_params(params)
        total = self.budget(p)
        points = check_eval_points(eval_points, total, self.unit)
        self.check_game(game, p)
        opp = opponent if opponent is not None else self._make_opponent(game, self.opponent_spec(p))
        extra_fp = [repr(opponent)] if opponent is not None else []
        ckpt = Checkpoint(checkpoint_dir, fingerprint(self.name, game, p, seed, points + extra_fp))
        self.checkpoint = ckpt
        self._on_metrics = on_metrics
        self.setup(game, p, seed, opp)
        restored = self._restore(ckpt)
        if restored is None:  # a checkpoint this learner's code cannot use was set aside: start from scratch
            self.setup(game, p, seed, opp)
            restored = 0, 0.0
        done, seconds = restored
        self.resumed_from = done
        t0 = time.perf_counter()
        with _progress_bar(total, done, self.unit, f"{self.name} on {game.game_id}", progress) as bar:
            if done == 0 and 0 in points:
                self._evaluate(0, [0], on_eval)
            for end in segment_ends(total, points, p.checkpoint_every):
                if end <= done:
                    continue
                reached = self._run_segment(done, end, total)
                bar.update(reached - done)
                due = [q for q in points if done < q <= reached]
                done = reached
                if due:
                    self._evaluate(done, due, on_eval)
                if done < total:
                    self._save(ckpt, done, seconds + time.perf_counter() - t0)
        if not keep_checkpoint:
            ckpt.clear()
        agent = self.final_agent()
        agent.stats = {**getattr(agent, "stats", {}), "seconds": seconds + time.perf_counter() - t0}
        return agent

    # ------------------------------------------------------------------ the loop's pieces
    def _run_segment(self, start: int, end: int, total: int) -> int:
        """Run one segment; the count reached (``end``, or the end of the unit in flight there)."""
        t = time.perf_counter()
        returned = self.train_segment(start, end)
        reached = end if returned is None else int(returned)
        if not end <= reached <= total:
            raise LearnError(f"{self.name}: a segment asked to reach {end} {self.unit} stopped at {reached} "
                             f"(it must lie in {end}..{total})")
        rate = (reached - start) / max(time.perf_counter() - t, 1e-9)
        self.log_metrics({f"{self.unit}_per_s": rate}, reached)
        return reached

    def _evaluate(self, done: int, requested: list[int], on_eval: EvalCallback | None) -> None:
        """Measure the snapshot at ``done`` for the requested points that fell in the segment just run."""
        record = on_eval(done, self.snapshot()) if on_eval is not None else None
        self.evaluations[int(done)] = record
        self.curve_points.update({int(q): int(done) for q in requested})

    def _save(self, ckpt: Checkpoint, done: int, seconds: float) -> None:
        state = {"learner": self.state_dict(), "torch_rng": _torch_rng_state()}
        evaluations = {str(k): v for k, v in sorted(self.evaluations.items())}
        points = {str(k): v for k, v in sorted(self.curve_points.items())}
        ckpt.save(done, state, {"evaluations": evaluations, "curve_points": points, "seconds": seconds})

    def _restore(self, ckpt: Checkpoint) -> tuple[int, float] | None:
        """(units done, seconds spent) from the checkpoint, after loading the learner's state; (0, 0) fresh.

        None when the checkpoint read well (its hashes match) but its state does not fit this learner's code, e.g.
        after an edit that kept the run's fingerprint: it is set aside with one line (``Checkpoint.discard``) and
        the caller sets the learner up afresh, since ``load_state_dict`` may have changed part of its state.
        """
        self.evaluations, self.curve_points = {}, {}
        loaded = ckpt.load()
        if loaded is None:
            return 0, 0.0
        try:
            self.load_state_dict(loaded.state["learner"])
            _set_torch_rng_state(loaded.state.get("torch_rng"))
            evaluations = {int(k): v for k, v in loaded.extra.get("evaluations", {}).items()}
            curve_points = {int(k): int(v) for k, v in loaded.extra.get("curve_points", {}).items()}
        except (KeyError, IndexError, TypeError, ValueError, AttributeError, RuntimeError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            ckpt.discard(ckpt.dir / MANIFEST, f"its state does not fit this learner ({type(exc).__name__}: {first})")
            self.evaluations, self.curve_points = {}, {}
            return None
        self.evaluations, self.curve_points = evaluations, curve_points
        return loaded.done, float(loaded.extra.get("seconds", 0.0))

    @staticmethod
    def _make_opponent(game: Game, spec: str | None) -> Agent | None:
        if spec is None:
            return None
        from boardrl.agents import make_agent

        return make_agent(game, spec)


# ---------------------------------------------------------------------------------------------- helpers
def _progress_bar(total: int, done: int, unit: str, desc: str, show: bool):
    from tqdm import tqdm

    return tqdm(total=total, initial=done, unit=unit[:-1], unit_scale=True, desc=desc, file=sys.stderr,
                dynamic_ncols=True, mininterval=1.0, disable=not show)


def _torch_rng_state() -> dict[str, Any] | None:
    """torch's global random state (CPU and CUDA) when torch is in use; None for runs that never import it."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    state = {"cpu": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_torch_rng_state(state: dict[str, Any] | None) -> None:
    if state is None:
        return
    import torch

    torch.set_rng_state(state["cpu"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def check_eval_points(eval_points: list[int], total: int, unit: str = "games") -> list[int]:
    """Sorted unique eval points; each must lie in 0..total."""
    pts = sorted({int(p) for p in eval_points})
    bad = [p for p in pts if p < 0 or p > total]
    if bad:
        raise LearnError(f"eval points {bad} lie outside 0..{total} (the training budget in {unit})")
    return pts


def segment_ends(total: int, eval_points: list[int], checkpoint_every: int) -> list[int]:
    """Where segments end: positive eval points, multiples of checkpoint_every, and the end."""
    ends = {p for p in eval_points if p > 0}
    ends.update(range(checkpoint_every, total, checkpoint_every))
    ends.add(total)
    return sorted(ends)


def fingerprint(learner: str, game: Game, params: BaseModel, seed: int, eval_points: list) -> str:
    """Hash of everything that determines a training trajectory; a checkpoint only resumes a run with the same."""
    blob = json.dumps(
        {"learner": learner, "game": game.game_id, "params": params.model_dump(mode="json"), "seed": int(seed),
         "eval_points": list(eval_points)},
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def rng_state_json(rng: np.random.Generator) -> dict:
    """The generator's full state as JSON-able data (PCG64 state ints are arbitrary-precision in JSON)."""
    return rng.bit_generator.state


def rng_from_json(state: dict) -> np.random.Generator:
    bitgen = getattr(np.random, state["bit_generator"])()
    bitgen.state = state
    return np.random.Generator(bitgen)
