"""params.yaml: the schema of every pipeline knob, its validation, and the slice each stage depends on.

Why validate up front: a typo (``eval_gmes``), an unknown game, learner or opponent, a string where a number
belongs or a negative budget would otherwise surface minutes into a run, as a traceback, after some outputs
were rewritten.  ``make repro`` checks the file before DVC reads it, and every stage script checks it again
before doing anything: a bad file gives one line, ``error: params.yaml: <key path>: <problem>``, exit status 2.

Layout (see params.yaml for the documented defaults):

    profile                                 default | tiny | full: which overlay of profiles/ produced the numbers
    study.{name, variation}                 only in a study's DVC experiments (studies/<name>.yaml): MLflow tags
    data.{source, url, timeout_s}           download stage
    prepare.{check_regenerated}             prepare stage
    train.{eval_games, curve, opponents.<game>}
    evaluate.{seed, games, optimal_positions, per_game.<game>.{opponents, optimal_plies, uci}}
    experiments.<id>.{game, learner, seeds, params, opponents, ladder}
    sweeps.<id>.{experiment, trials, budget, seeds, sampler_seed, space}   Optuna sweeps (stage sweep@<id>)

An experiment is keyed by a stable id: its stages are ``train@<id>`` and ``evaluate@<id>`` and its outputs live
under ``models/<id>/``, ``results/train/<id>/``, ``results/eval/<id>.json``.  ``params`` holds only what differs
from the learner's own defaults (``learn/<learner>.py``).  Settings that cannot change a result (worker
processes, progress bars) are not params: see ``runtime_processes``.  ``train_slice``/``evaluate_slice``
return exactly what a stage's numbers depend on; its params hash is computed from that slice.
``curve_slice`` is stage curve@<id>'s (the learning curve played against the train stage's snapshots).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import signal
import sys
import types
import typing
from pathlib import Path
from typing import Annotated, Any, Callable, Literal, NoReturn, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationError, field_validator

from boardrl.errors import BoardRLError

PARAMS_FILE = "params.yaml"
EXIT_BAD_PARAMS = 2
EXPERIMENT_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
PROCESSES_ENV = "BOARDRL_PROCESSES"


# ---------------------------------------------------------------------------------------------- limits
# Why upper limits: a budget is a promise of work and memory.  `games: 10**30` once passed validation, then the
# training loop's list of segment ends grew to 14 GB before the OOM killer ended it.  Every count in params.yaml
# has a ceiling well above what the `full` profile (profiles/full.yaml, the seeds' published budgets) asks for and
# below what fits in memory or ends in days on the 2 cores the project targets.

#: Training games or steps of one run, and any other count in those units (checkpoint_every, curve.first, decay):
#: 100 times the full profile's largest budget (10,000,000 games of dots_and_boxes_3x3_*).  The engines play about
#: a million games a second between the cheapest agents (docs/studies/speed.md) and learners far fewer, so 10^9
#: is hours to weeks of training: more is a slip of the keyboard, not a plan.
MAX_UNITS = 10**9
#: Checkpoints of one run (budget / checkpoint_every): the loop keeps one segment end per checkpoint and writes a
#: file at each; the full profile takes at most 25 (connect4_alphazero: 100,000 games every 4,096).
MAX_CHECKPOINTS = 10_000
#: Games per opponent, per curve point, per pairing or per UCI label: 50 times the largest configured (20,000
#: against random); a million games of the cheapest pairing take seconds, of a searching agent hours.
MAX_GAMES = 1_000_000
#: Positions the referee judges for the optimal-move rate: 50 times the configured 2,000, which take Connect 4's
#: referee 21-45 s on 2 busy cores (params.yaml), so at most about half an hour.
MAX_POSITIONS = 100_000
#: The UCI Connect-4 data set's positions: no label has more to sample.
UCI_POSITIONS = 67_557
#: Plies of random play before an optimal-move position: longer than any game here is meaningless.
MAX_PLIES = 1_000
#: Training seeds of one experiment or sweep (each is a whole run; the full profile trains at most 5).
MAX_SEEDS = 100
#: Optuna trials of one sweep (the shipped sweep runs 12; each trial trains every seed).
MAX_TRIALS = 10_000
#: Agents of one tournament: every ordered pair plays, so 32 agents are 1,024 pairings.
MAX_TOURNAMENT_AGENTS = 32

#: Learner params (experiments.<id>.params, nested ones included) with a ceiling of their own, by key: (limit,
#: why).  Every other whole number there is at most MAX_UNITS.  The learner models (learn/*.py) check the lower
#: bounds and types; these ceilings belong to params.yaml, which can ask for any size.
LEARNER_LIMITS: dict[str, tuple[int, str]] = {
    **dict.fromkeys(("simulations", "eval_simulations"), (10_000, "a search tree per game of a batch, up to ~1 KB "
                                                          "a simulation (25 times the largest configured: 400)")),
    **dict.fromkeys(("leaves_per_wave", "eval_leaves_per_wave"), (64, "each wave's paths are preallocated per "
                                                                  "simulation")),
    "eval_rollouts": (256, "playouts per evaluated leaf"),
    **dict.fromkeys(("parallel_games", "parallel_envs"), (65_536, "games held side by side in memory")),
    **dict.fromkeys(("buffer_size", "buffer", "window"), (2_000_000, "replay memory preallocated at up to ~0.7 KB a "
                                                      "transition; 10 times the largest configured (200,000)")),
    **dict.fromkeys(("batch_size", "batch"), (65_536, "one minibatch in memory")),
    **dict.fromkeys(("updates", "updates_per_epoch", "gradient_steps"), (100_000, "minibatches per learning phase")),
    **dict.fromkeys(("hidden", "head_hidden"), (4_096, "units of a layer: 4,096 x 4,096 weights are 64 MB")),
    "threads": (256, "torch threads"),
    "temperature_plies": (MAX_PLIES, "longer than any game here"),
}
#: Search nodes held at once by self-play (simulations x parallel_games trees): about 3 GB at ~300 bytes a node.
MAX_SEARCH_NODES = 10_000_000
#: Layers of a network's hidden list.
MAX_LAYERS = 16

#: A whole number that must be one: pydantic's lax mode would read ``true`` as 1 and "1000" as 1000.
Whole = Annotated[int, Strict()]
#: A number (a whole number is one too), never a boolean.
Number = Annotated[float, Strict()]
#: true or false, never 1 or "yes" in quotes.
Flag = Annotated[bool, Strict()]
#: Plies of a game.
PlyCount = Annotated[int, Strict(), Field(ge=0, le=MAX_PLIES)]


class ConfigError(BoardRLError):
    """A params file that does not fit the schema; ``key`` is the dotted path of the offending entry."""

    def __init__(self, key: str, problem: str, file: str = PARAMS_FILE) -> None:
        self.key, self.problem, self.file = key, problem, file
        super().__init__(f"{file}: {key}: {problem}" if key else f"{file}: {problem}")


# ---------------------------------------------------------------------------------------------- schema
class _Strict(BaseModel):
    """Unknown keys are errors (``extra="forbid"``); models are immutable once validated."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class DataParams(_Strict):
    source: Literal["auto", "online", "vendored"] = Field(description="auto = official URL, else vendored copy")
    url: str = Field(min_length=1, description="official address of the UCI Connect-4 zip")
    timeout_s: Number = Field(gt=0, le=600, description="network timeout of the download")


class PrepareParams(_Strict):
    check_regenerated: Flag = Field(description="compare the data with the 8-ply positions regenerated from the rules")


class Opponent(_Strict):
    """A benchmark opponent: an agent spec (``make_agent``) and, optionally, its own number of games."""

    agent: str = Field(min_length=1)
    games: Whole | None = Field(None, ge=2, le=MAX_GAMES, description="seats alternate, so at least one game per seat")

    @property
    def key(self) -> str:
        """The name results are filed under (the spec itself)."""
        return self.agent


def _as_opponent(value: Any) -> Any:
    """Accept the short form ``"random"`` for ``{agent: random}``."""
    return {"agent": value} if isinstance(value, str) else value


def _opponent_list(v: Any) -> Any:
    return [_as_opponent(o) for o in v] if isinstance(v, list) else v


class CurveParams(_Strict):
    """Learning-curve evaluation points: 0 (optional), then ``first`` * 10^(k / per_decade), then the end."""

    first: Whole = Field(ge=1, le=MAX_UNITS)
    per_decade: Whole = Field(ge=1, le=20)
    include_zero: Flag


class TrainParams(_Strict):
    eval_games: Whole = Field(ge=2, le=MAX_GAMES,
                              description="games per opponent at each curve point (seats alternate)")
    curve: CurveParams
    opponents: dict[str, list[Opponent]] = Field(description="per game: the learning curve's benchmark opponents")

    @field_validator("opponents", mode="before")
    @classmethod
    def _short_opponents(cls, v: Any) -> Any:
        return {g: _opponent_list(lst) for g, lst in v.items()} if isinstance(v, dict) else v


class UciParams(_Strict):
    """Connect 4 agents only: evaluation from the UCI start positions (seed 000's protocol and the full one) and
    the value accuracy on their labels."""

    seed000_games: Whole = Field(ge=1, le=MAX_GAMES,
                                 description="games per label, agent first, fresh random position each")
    full: Flag = Field(description="also play every position of each label with the agent in each seat")
    full_positions: Whole | None = Field(ge=1, le=UCI_POSITIONS,
                                         description="cap on positions per label for the full protocol")
    value_accuracy: Flag = Field(
        True, description="agents with a value (value_batch): read it as win/draw/loss on all 67,557 labels")


class GameEvaluation(_Strict):
    """How agents of one game are judged: the ladder, where positions for the optimal-move rate come from, UCI."""

    opponents: list[Opponent] = Field(description="the ladder, weakest first")
    optimal_plies: tuple[PlyCount, PlyCount] | None = Field(
        None, description="[lo, hi] plies of random play before a position (default: anywhere in a game)")
    uci: UciParams | None = Field(None, description="Connect 4 only: the UCI start-position protocols")

    @field_validator("opponents", mode="before")
    @classmethod
    def _short_opponents(cls, v: Any) -> Any:
        return _opponent_list(v)


class EvaluateParams(_Strict):
    seed: Whole = Field(ge=0, lt=2**63, description="seed of evaluation games and position sets (same for all)")
    games: Whole = Field(ge=2, le=MAX_GAMES, description="games per opponent unless the opponent sets its own")
    optimal_positions: Whole = Field(ge=0, le=MAX_POSITIONS,
                                     description="positions for the optimal-move rate (0 = skip)")
    per_game: dict[str, GameEvaluation]


class Experiment(_Strict):
    """One experiment: a learner trained on a game with one or more seeds, then evaluated."""

    game: str = Field(min_length=1)
    learner: str = Field(min_length=1)
    seeds: list[Whole] = Field(default_factory=lambda: [0], min_length=1, max_length=MAX_SEEDS,
                               description="training seeds")
    params: dict[str, Any] = Field(default_factory=dict, description="learner params that differ from its defaults")
    opponents: list[Opponent] | None = Field(None, description="learning-curve opponents (default: train.opponents)")
    ladder: list[Opponent] | None = Field(None, description="evaluation ladder (default: evaluate.per_game)")
    uci: UciParams | None = Field(None, description="Connect 4: UCI protocol settings for this experiment (default: "
                                  "evaluate.per_game.connect4.uci; e.g. fewer full-protocol positions for agents "
                                  "that search every move)")
    description: str = ""

    @field_validator("opponents", "ladder", mode="before")
    @classmethod
    def _short_opponents(cls, v: Any) -> Any:
        return _opponent_list(v)

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, v: list[int]) -> list[int]:
        if any(s < 0 or s >= 2**63 for s in v):
            raise ValueError("seeds must lie in 0 .. 2^63-1")
        if len(set(v)) != len(v):
            raise ValueError(f"a seed is listed twice in {v}")
        return v


class SweepParams(_Strict):
    """One Optuna sweep over an experiment's learner params (boardrl.sweeps): the DVC stage sweep@<id>."""

    experiment: str = Field(min_length=1, description="the experiment whose learner params are searched")
    trials: Whole = Field(ge=1, le=MAX_TRIALS, description="finished trials (complete or pruned) the study should have")
    budget: Whole | None = Field(None, ge=1, le=MAX_UNITS,
                                 description="training budget per trial and seed (default: the experiment's)")
    seeds: list[Whole] = Field(default_factory=lambda: [0], min_length=1, max_length=MAX_SEEDS,
                               description="training seeds averaged per trial")
    sampler_seed: Whole = Field(0, ge=0, lt=2**63, description="seed of the TPE sampler")
    space: dict[str, Any] = Field(default_factory=dict, description="narrowed dimensions: {key: {low, high} | {choices} | null}")


class TournamentParams(_Strict):
    """Stage ``tournament@<id>``: a fixed-seat round robin among fixed players (seed 004's validation table,
    or one agent against itself for a random-vs-random baseline)."""

    game: str = Field(min_length=1, description="game id")
    agents: list[str] = Field(min_length=1, max_length=MAX_TOURNAMENT_AGENTS,
                              description="agent specs; every ordered pair plays, self-pairs too")
    games: Whole = Field(ge=1, le=MAX_GAMES, description="games per ordered pairing, the row agent always first")
    seed: Whole = Field(0, ge=0, lt=2**63, description="seed of the pairings' games")


class StudyLabel(_Strict):
    """Which study variation a DVC experiment runs (set by ``boardrl study`` in the variation's params.yaml): MLflow
    runs carry it as tags, and no stage's numbers depend on it."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", description="the study (studies/<name>.yaml)")
    variation: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", description="the variation of the study")


class Params(_Strict):
    profile: str = Field("default", pattern=r"^[a-z0-9_-]+$", description="the overlay that produced the numbers")
    study: StudyLabel | None = Field(None, description="set only in a study's DVC experiments (boardrl study)")
    data: DataParams
    prepare: PrepareParams
    train: TrainParams
    evaluate: EvaluateParams
    experiments: dict[str, Experiment] = Field(min_length=1)
    sweeps: dict[str, SweepParams] = Field(default_factory=dict)
    tournaments: dict[str, TournamentParams] = Field(default_factory=dict)

    def experiment(self, exp_id: str) -> Experiment:
        """The experiment ``exp_id``; ``ConfigError`` naming the configured ones otherwise."""
        try:
            return self.experiments[exp_id]
        except KeyError:
            known = ", ".join(self.experiments)
            raise ConfigError("experiments", f"no experiment {exp_id!r}; configured: {known}") from None

    def learner_params(self, exp_id: str) -> BaseModel:
        """The validated params model of the experiment's learner (its defaults plus the experiment's params)."""
        from boardrl.learn import learner_params_model

        e = self.experiment(exp_id)
        return learner_params_model(e.learner).model_validate(e.params)

    def budget(self, exp_id: str) -> tuple[str, int]:
        """(unit, amount) of the experiment's training budget: its learner's unit ("games" or "steps")."""
        from boardrl.learn import learner_unit

        unit = learner_unit(self.experiment(exp_id).learner)
        return unit, int(getattr(self.learner_params(exp_id), unit))

    def curve_opponents(self, exp_id: str) -> list[Opponent]:
        e = self.experiment(exp_id)
        return list(e.opponents) if e.opponents is not None else list(self.train.opponents[e.game])

    def ladder(self, exp_id: str) -> list[Opponent]:
        e = self.experiment(exp_id)
        return list(e.ladder) if e.ladder is not None else list(self.evaluate.per_game[e.game].opponents)

    def uci(self, exp_id: str) -> UciParams | None:
        """The UCI protocol settings of ``exp_id``: its own, else its game's (None: not measured)."""
        e = self.experiment(exp_id)
        game_uci = self.evaluate.per_game[e.game].uci
        return e.uci if e.uci is not None and game_uci is not None else game_uci


# ---------------------------------------------------------------------------------------------- slices
def download_slice(p: Params) -> dict[str, Any]:
    return {"data": p.data.model_dump(mode="json")}


def prepare_slice(p: Params) -> dict[str, Any]:
    return {"prepare": p.prepare.model_dump(mode="json")}


def _experiment_head(p: Params, exp_id: str) -> dict[str, Any]:
    e = p.experiment(exp_id)
    return {"experiment": exp_id, "game": e.game, "learner": e.learner, "seeds": list(e.seeds),
            "learner_params": p.learner_params(exp_id).model_dump(mode="json")}


def train_slice(p: Params, exp_id: str) -> dict[str, Any]:
    """Exactly the params the train stage of ``exp_id`` depends on (build/inputs/<id>.train.json carries it).

    Not the curve's opponents or games per point: the train stage saves a snapshot at each curve point and
    stage curve@<id> plays them (``curve_slice``), so changing how the curve is measured retrains nothing.  Only
    whether there is a curve at all (no opponents: no snapshots) and where it is measured.
    """
    return {**_experiment_head(p, exp_id), "train": {
        "curve_points": eval_points(p.budget(exp_id)[1], p.train.curve),
        "snapshots": bool(p.curve_opponents(exp_id)),
    }}


def curve_slice(p: Params, exp_id: str) -> dict[str, Any]:
    """The params of stage curve@<id>: the curve's opponents, each with its resolved number of games."""
    return {**_experiment_head(p, exp_id), "curve": {
        "opponents": [{"agent": o.agent, "games": o.games or p.train.eval_games} for o in p.curve_opponents(exp_id)],
    }}


def tournament_slice(p: Params, tid: str) -> dict[str, Any]:
    return {"tournament": tid, **p.tournaments[tid].model_dump(mode="json")}


def evaluate_slice(p: Params, exp_id: str) -> dict[str, Any]:
    """The params of the evaluate stage of ``exp_id``: its own keys and the learner params of the model."""
    e = p.experiment(exp_id)
    per_game = p.evaluate.per_game[e.game]
    return {**_experiment_head(p, exp_id), "evaluate": {
        "seed": p.evaluate.seed,
        "games": p.evaluate.games,
        "optimal_positions": p.evaluate.optimal_positions,
        "optimal_plies": list(per_game.optimal_plies) if per_game.optimal_plies else None,
        "uci": p.uci(exp_id).model_dump(mode="json") if p.uci(exp_id) else None,
        "opponents": [o.model_dump(mode="json") for o in p.ladder(exp_id)],
    }}


def eval_points(total: int, curve: CurveParams) -> list[int]:
    """Log-spaced training progress points: [0,] first * 10^(k/per_decade) to 2 significant digits, then ``total``.

    With first=100 and per_decade=3: 0, 100, 220, 460, 1000, 2200, 4600, 10000, ..., total.
    """
    points = {0} if curve.include_zero else set()
    k = 0
    while True:
        value = curve.first * 10 ** (k / curve.per_decade)
        digits = 10 ** max(0, int(math.floor(math.log10(value))) - 1)
        point = int(round(value / digits) * digits)
        if point >= total:
            break
        points.add(point)
        k += 1
    points.add(int(total))
    return sorted(points)


def runtime_processes() -> int:
    """Worker processes for matches of scalar agents: ``$BOARDRL_PROCESSES`` (default 1).

    Not a param: match results do not depend on it (each game's seed is fixed in advance), so changing it must
    not rerun anything.
    """
    raw = os.environ.get(PROCESSES_ENV, "1")
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if not 1 <= n <= 64:
        raise ConfigError("", f"${PROCESSES_ENV} must be a whole number from 1 to 64, got {raw!r}", file="environment")
    return n


# ---------------------------------------------------------------------------------------------- errors
def _loc_text(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _unwrap(tp: Any) -> list[Any]:
    """The members of a union annotation (or the annotation itself)."""
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        return [a for a in typing.get_args(tp) if a is not type(None)]
    return [tp]


def _model_at(model: Any, loc: tuple[Any, ...]) -> Any:
    """The pydantic model class that validates the value at ``loc`` inside ``model`` (None if not a model)."""
    tp: Any = model
    for part in loc:
        nxt = None
        for cand in _unwrap(tp):
            if isinstance(cand, type) and issubclass(cand, BaseModel):
                field = cand.model_fields.get(part) if isinstance(part, str) else None
                if field is not None:
                    nxt = field.annotation
            elif typing.get_origin(cand) is dict:
                nxt = typing.get_args(cand)[1]
            elif typing.get_origin(cand) is list and isinstance(part, int):
                nxt = typing.get_args(cand)[0]
            if nxt is not None:
                break
        if nxt is None:
            return None
        tp = nxt
    models = [c for c in _unwrap(tp) if isinstance(c, type) and issubclass(c, BaseModel)]
    return models[0] if models else None


def _problem(err: dict[str, Any], root_model: Any) -> tuple[tuple[Any, ...], str]:
    """(location, one-line description) of a pydantic error, in words a params.yaml author understands."""
    loc = tuple(err["loc"])
    kind = err["type"]
    if kind == "extra_forbidden":
        parent = _model_at(root_model, loc[:-1])
        known = ", ".join(parent.model_fields) if parent is not None else ""
        return loc, "unknown key" + (f"; known keys here: {known}" if known else "")
    if kind == "missing":
        return loc, "missing (every knob lives in params.yaml)"
    if isinstance(err.get("input"), bool) and kind in ("int_type", "float_type"):
        return loc, f"a boolean is not a number (got {err['input']!r})"
    msg = err["msg"]
    if "input" in err and kind not in ("model_type", "dict_type", "list_type"):
        shown = repr(err["input"])
        msg += f" (got {shown if len(shown) <= 60 else shown[:57] + '...'})"
    return loc, msg


def _short(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def _first_error(errors: list[dict[str, Any]]) -> dict[str, Any]:
    """The error to show: an unknown key before anything else (a misspelled key also makes its right spelling
    "missing", and the unknown one is what the author typed)."""
    unknown = [e for e in errors if e["type"] == "extra_forbidden"]
    return unknown[0] if unknown else errors[0]


def _did_you_mean(err: dict[str, Any], root_model: Any) -> str:
    import difflib

    parent = _model_at(root_model, tuple(err["loc"])[:-1])
    if err["type"] != "extra_forbidden" or parent is None:
        return ""
    close = difflib.get_close_matches(str(err["loc"][-1]), list(parent.model_fields), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _from_validation_error(exc: ValidationError, root_model: Any, prefix: tuple[Any, ...] = ()) -> ConfigError:
    errors = exc.errors()
    first = _first_error(errors)
    loc, problem = _problem(first, root_model)
    problem += _did_you_mean(first, root_model)
    if len(errors) > 1:
        problem += f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})"
    return ConfigError(_loc_text(prefix + loc), problem)


# ---------------------------------------------------------------------------------------------- cross-checks
def _check_game(game: str, key: str) -> None:
    from boardrl.games import make_game

    try:
        make_game(game)
    except BoardRLError as exc:
        raise ConfigError(key, str(exc)) from None


def model_target(spec: str) -> str | None:
    """The experiment id or path of a valid ``model:<id-or-path>[,seed=K]`` spec; None for any other spec."""
    from boardrl.agents.models import is_model_spec, parse_model_spec

    return parse_model_spec(spec)[0] if is_model_spec(spec) else None


def agent_spec_problem(game_id: str, spec: str, experiments: dict[str, Experiment] | None = None,
                       models_allowed: bool = True) -> str | None:
    """Why ``spec`` is not a valid agent for ``game_id`` in a pipeline stage, or None when it is.

    ``model:<id>`` must name an experiment of the same game (its model is trained by the pipeline before any
    evaluation); a stage that trains cannot depend on another experiment's model, so there it is refused.
    """
    from boardrl.agents import make_agent, parse_spec
    from boardrl.agents.models import is_model_spec
    from boardrl.games import make_game

    if is_model_spec(spec):
        return _model_spec_problem(game_id, spec, experiments, models_allowed)
    try:
        if parse_spec(spec)[0] == "human":
            return "agent 'human' waits for moves typed at a terminal; a pipeline stage cannot use it"
        make_agent(make_game(game_id), spec)
    except BoardRLError as exc:
        return str(exc)
    return None


def _model_spec_problem(game_id: str, spec: str, experiments: dict[str, Experiment] | None,
                        models_allowed: bool) -> str | None:
    if not models_allowed:
        return (f"{spec!r}: a trained model can be a ladder opponent (evaluate), not a training or learning-curve "
                "opponent: train stages do not depend on other experiments' models")
    from boardrl.agents import check_search_limits
    from boardrl.agents.models import parse_model_spec

    try:
        target, seed = parse_model_spec(spec)
        check_search_limits(spec)
    except BoardRLError as exc:
        return str(exc)
    if experiments is None:
        return None
    if target not in experiments:
        return f"{spec!r}: no experiment {target!r}; experiments: {', '.join(experiments)}"
    if experiments[target].game != game_id:
        return f"{spec!r}: experiment {target!r} plays {experiments[target].game}, not {game_id}"
    if seed is not None and seed not in experiments[target].seeds:
        return f"{spec!r}: experiment {target!r} trains seeds {experiments[target].seeds}, not {seed}"
    return None


def _check_opponents(game: str, opponents: list[Opponent], key: str, experiments: dict[str, Experiment],
                     models_allowed: bool) -> None:
    seen: set[str] = set()
    for i, opp in enumerate(opponents):
        if opp.key in seen:
            raise ConfigError(f"{key}[{i}]", f"opponent {opp.key!r} is listed twice")
        seen.add(opp.key)
        problem = agent_spec_problem(game, opp.agent, experiments, models_allowed)
        if problem:
            raise ConfigError(f"{key}[{i}]", problem)


def _check_learner(p: Params, exp_id: str) -> None:
    from boardrl.learn import learner_names, learner_params_model

    e = p.experiments[exp_id]
    key = f"experiments.{exp_id}"
    if e.learner not in learner_names():
        raise ConfigError(f"{key}.learner", f"unknown learner {e.learner!r}; known learners: {', '.join(learner_names())}")
    model = learner_params_model(e.learner)
    try:
        learner = model.model_validate(e.params)
    except ValidationError as exc:
        raise _from_validation_error(exc, model, ("experiments", exp_id, "params")) from None
    _check_learner_sizes(e.params, model, learner, f"{key}.params")
    spec = getattr(learner, "opponent", None)
    if isinstance(spec, str):
        problem = agent_spec_problem(e.game, spec, p.experiments, models_allowed=False)
        if problem:
            raise ConfigError(f"{key}.params.opponent", problem)
    source = getattr(learner, "transfer_from", None)
    if isinstance(source, str):  # a train stage depends on its own inputs only (dvc.yaml foreach)
        raise ConfigError(f"{key}.params.transfer_from", "a pipeline experiment cannot read another model "
                          "(its train stage would not depend on it); use transfer_source to train the source "
                          "in the same stage")


def _members(tp: Any) -> list[Any]:
    """The types an annotation admits: ``Annotated`` and ``Optional``/unions unwrapped."""
    if typing.get_origin(tp) is typing.Annotated:
        return _members(typing.get_args(tp)[0])
    return [m for member in _unwrap(tp) for m in ([member] if member is tp else _members(member))]


def _value_problem(key: str, value: Any, annotation: Any, loc: str) -> tuple[str, str] | None:
    """(key path, problem) of one raw learner value: a boolean for a number, or a count over its ceiling."""
    members = _members(annotation)
    if isinstance(value, bool):
        numeric = bool not in members and any(m in (int, float) for m in members)
        return (loc, f"a boolean is not a number (got {value!r})") if numeric else None
    if isinstance(value, int) and int in members:
        limit, why = LEARNER_LIMITS.get(key, (MAX_UNITS, "100 times the full profile's largest budget"))
        return (loc, f"at most {limit:,} ({why}), got {_short(f'{value:,}')}") if value > limit else None
    if isinstance(value, dict):
        models = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]
        return _model_problem(value, models[0], loc) if models else None
    if isinstance(value, list):
        items = [typing.get_args(m)[0] for m in members if typing.get_origin(m) is list and typing.get_args(m)]
        if key == "hidden" and len(value) > MAX_LAYERS:
            return loc, f"at most {MAX_LAYERS} layers, got {len(value)}"
        for i, item in enumerate(value if items else ()):
            found = _value_problem(key, item, items[0], f"{loc}[{i}]")
            if found:
                return found
    return None


def _model_problem(data: dict[str, Any], model: type[BaseModel], loc: str) -> tuple[str, str] | None:
    for key, value in data.items():
        field = model.model_fields.get(key) if isinstance(key, str) else None
        found = _value_problem(key, value, field.annotation, f"{loc}.{key}") if field is not None else None
        if found:
            return found
    return None


def _check_learner_sizes(raw: dict[str, Any], model: type[BaseModel], learner: BaseModel, key: str) -> None:
    """Ceilings of learner params (the limits section) and no booleans for numbers, on the values as written.

    Why on the raw values: the learner models (learn/*.py) read ``true`` as 1 (pydantic's lax mode), and the
    params of a learner are theirs to define, while what params.yaml may ask for is checked here, for every
    learner alike."""
    found = _model_problem(raw, model, key)
    if found:
        raise ConfigError(*found)
    for unit in ("games", "steps"):
        budget, every = getattr(learner, unit, None), getattr(learner, "checkpoint_every", None)
        if isinstance(budget, int) and isinstance(every, int) and budget > every * MAX_CHECKPOINTS:
            raise ConfigError(f"{key}.checkpoint_every", f"{budget:,} {unit} every {every:,} are more than "
                              f"{MAX_CHECKPOINTS:,} checkpoints; checkpoint at least every "
                              f"{-(-budget // MAX_CHECKPOINTS):,} {unit}")
    sims, games = getattr(learner, "simulations", None), getattr(learner, "parallel_games", None)
    if isinstance(sims, int) and isinstance(games, int) and sims * games > MAX_SEARCH_NODES:
        raise ConfigError(f"{key}.parallel_games", f"{games:,} games searching {sims:,} simulations hold "
                          f"{sims * games:,} tree nodes at once; at most {MAX_SEARCH_NODES:,}")


def _check_experiment(p: Params, exp_id: str, deep: bool = True) -> None:
    """The experiment's id, game and tables; with ``deep`` also its learner params, opponents and ladder."""
    e = p.experiments[exp_id]
    key = f"experiments.{exp_id}"
    if not EXPERIMENT_ID.match(exp_id):
        raise ConfigError(key, "an experiment id is 1-64 characters: lower-case letters, digits, '_' and '-', "
                               "starting with a letter or digit (it names stages, files and MLflow runs)")
    _check_game(e.game, f"{key}.game")
    for section, where in (("train", f"train.opponents.{e.game}"), ("evaluate", f"evaluate.per_game.{e.game}")):
        table = p.train.opponents if section == "train" else p.evaluate.per_game
        if e.game not in table:
            raise ConfigError(where, f"missing: experiment {exp_id} plays {e.game} and needs it")
    if not deep:
        return
    _check_learner(p, exp_id)
    if e.opponents is not None:
        _check_opponents(e.game, e.opponents, f"{key}.opponents", p.experiments, models_allowed=False)
    if e.ladder is not None:
        _check_opponents(e.game, e.ladder, f"{key}.ladder", p.experiments, models_allowed=True)


def _check_per_game(p: Params, only_game: str | None = None) -> None:
    for game, opponents in p.train.opponents.items():
        if only_game not in (None, game):
            continue
        _check_game(game, f"train.opponents.{game}")
        _check_opponents(game, opponents, f"train.opponents.{game}", p.experiments, models_allowed=False)
    for game, block in p.evaluate.per_game.items():
        if only_game not in (None, game):
            continue
        key = f"evaluate.per_game.{game}"
        _check_game(game, key)
        _check_opponents(game, block.opponents, f"{key}.opponents", p.experiments, models_allowed=True)
        if block.optimal_plies is not None:
            lo, hi = block.optimal_plies
            if not 0 <= lo <= hi:
                raise ConfigError(f"{key}.optimal_plies", f"needs 0 <= lo <= hi, got [{lo}, {hi}]")
        if block.uci is not None and game != "connect4":
            raise ConfigError(f"{key}.uci", "the UCI start positions are Connect 4 positions; only connect4 has uci")


def _check_sweep(p: Params, sweep_id: str) -> None:
    s = p.sweeps[sweep_id]
    key = f"sweeps.{sweep_id}"
    if not EXPERIMENT_ID.match(sweep_id):
        raise ConfigError(key, "a sweep id is 1-64 characters: lower-case letters, digits, '_' and '-'")
    if s.experiment not in p.experiments:
        raise ConfigError(f"{key}.experiment", f"no experiment {s.experiment!r}; experiments: {', '.join(p.experiments)}")
    from boardrl.learn.space import SpaceError, experiment_space

    e = p.experiments[s.experiment]
    try:
        experiment_space(e.learner, e.params, s.space, s.budget)
    except SpaceError as exc:
        raise ConfigError(key, str(exc)) from None


def _check_tournament(p: Params, tid: str) -> None:
    t, key = p.tournaments[tid], f"tournaments.{tid}"
    if not EXPERIMENT_ID.match(tid):
        raise ConfigError(key, "a tournament id is 1-64 characters: lower-case letters, digits, '_' and '-'")
    _check_game(t.game, f"{key}.game")
    if len(set(t.agents)) != len(t.agents):
        raise ConfigError(f"{key}.agents", f"an agent is listed twice in {t.agents}")
    _check_opponents(t.game, [Opponent(agent=a) for a in t.agents], f"{key}.agents", p.experiments,
                     models_allowed=False)


def _cross_check(p: Params, only_experiment: str | None = None) -> None:
    """Every cross-section rule, or with ``only_experiment`` the rules of what that experiment's stages read.

    Why the scope: a per-experiment stage (train, evaluate; ~110 of them in `make repro`) pays for every check
    at start-up.  Checking all 55 experiments' learners, ladders and the sweeps and tournaments cost each stage
    about a second, and importing every learner's params model imports torch (1.5 s more), which a tabular
    stage never needs.  `make repro` validates the whole file once before DVC starts; each stage then checks
    its own experiment in full, its game's opponent tables, and of the other experiments the cheap rules (id,
    game, tables): a typo anywhere in the file still stops every stage.
    """
    for exp_id in p.experiments:
        _check_experiment(p, exp_id, deep=only_experiment in (None, exp_id))
    if only_experiment is None:
        _check_per_game(p)
        for sweep_id in p.sweeps:
            _check_sweep(p, sweep_id)
        for tid in p.tournaments:
            _check_tournament(p, tid)
    elif only_experiment in p.experiments:  # an unknown id is the stage's own one-line error
        _check_per_game(p, p.experiments[only_experiment].game)


# ---------------------------------------------------------------------------------------------- loading
def parse_params(data: Any, only_experiment: str | None = None) -> Params:
    """Validate already-loaded YAML data; ``ConfigError`` with the key path of the first problem.

    ``only_experiment``: check only what that experiment's stages read (see ``_cross_check``)."""
    if not isinstance(data, dict):
        raise ConfigError("", f"the top level must be a mapping of sections, got {type(data).__name__}")
    try:
        params = Params.model_validate(data)
    except ValidationError as exc:
        raise _from_validation_error(exc, Params) from None
    _cross_check(params, only_experiment)
    return params


def read_yaml(path: str | Path) -> Any:
    """The YAML data of ``path``; ``ConfigError`` (one line, with the line number) when unreadable."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError("", f"cannot read {p}: {exc.strerror or exc}", file=p.name) from None
    try:
        return _load_unique(text, p.name)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError("", f"not valid YAML: {where}{problem}", file=p.name) from None


def _load_unique(text: str, file: str) -> Any:
    """``yaml.safe_load`` that refuses a key given twice in one mapping.

    Why: YAML says keys are unique, but PyYAML keeps the last silently, so an edit below an older value of the
    same key (a second ``games:``) would change nothing, and DVC, which refuses such a file, fails later with a
    message of many lines.  The nodes are checked before they are built, so the error names the key's path."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_unique_keys(node, "", set(), file)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _check_unique_keys(node: yaml.Node, path: str, seen: set[int], file: str) -> None:
    if id(node) in seen:  # an alias: checked where its anchor stands
        return
    seen.add(id(node))
    if isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _check_unique_keys(item, f"{path}[{i}]", seen, file)
    elif isinstance(node, yaml.MappingNode):
        first: dict[tuple[str, str], int] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                continue
            where = f"{path}.{key_node.value}" if path else key_node.value
            line = key_node.start_mark.line + 1
            ident = (key_node.tag, key_node.value)
            if ident in first:
                raise ConfigError(where, f"key given twice (lines {first[ident]} and {line}); YAML allows a key "
                                  "once per mapping: keep one", file=file)
            first[ident] = line
            _check_unique_keys(value_node, where, seen, file)


def load_params(path: str | Path = PARAMS_FILE, only_experiment: str | None = None) -> Params:
    """Read and validate a params file; ``ConfigError`` (one line, with the key path) on any problem."""
    data = read_yaml(path)
    try:
        return parse_params(data, only_experiment)
    except ConfigError as exc:
        raise ConfigError(exc.key, exc.problem, file=Path(path).name) from None


def load_params_or_exit(path: str | Path = PARAMS_FILE, only_experiment: str | None = None) -> Params:
    """``load_params`` for stage scripts: on a problem print ``error: ...`` (one line) and exit with status 2."""
    try:
        return load_params(path, only_experiment)
    except ConfigError as exc:
        fail(str(exc), EXIT_BAD_PARAMS)


def fail(message: str, status: int = 1) -> NoReturn:
    """Print one ``error:`` line on stderr and exit (stage scripts never end with a bare traceback)."""
    print(f"error: {message}", file=sys.stderr, flush=True)
    raise SystemExit(status)


T = TypeVar("T")


def run_experiment_stage(params_path: str | Path, exp_id: str, run: Callable[[Params, str], T]) -> T:
    """Entry of a per-experiment stage (train, evaluate): validate, then run, every failure one ``error:`` line.

    Params and the experiment id are checked before any work (exit 2).  SIGTERM (``dvc`` or a user stopping
    the stage) becomes SystemExit, so context managers unwind: the MLflow run is closed as FAILED instead of
    being left RUNNING, and atomic writes leave the previous outputs.
    """
    params = load_params_or_exit(params_path, only_experiment=exp_id)
    try:
        params.experiment(exp_id)
        runtime_processes()
    except ConfigError as exc:
        fail(str(exc), EXIT_BAD_PARAMS)
    signal.signal(signal.SIGTERM, exit_on_sigterm)
    try:
        return run(params, exp_id)
    except BoardRLError as exc:
        fail(str(exc))
    except OSError as exc:  # permissions, a full disk: one line naming the path (atomic writes kept the old outputs)
        fail(os_error_text(exc))


def stage_entry(main: Callable[[], Any]) -> NoReturn:
    """Run a stage script's ``main``: a ``BoardRLError`` or a file-system error anywhere is one ``error:`` line.

    A stage that finished leaves through ``exit_now``: the pipeline starts over a hundred stage processes, and
    the interpreter's teardown of torch, numba and MLflow modules costs each about a second (measured).
    """
    try:
        main()
    except BoardRLError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(os_error_text(exc))
    exit_now(0)


def exit_now(status: int) -> NoReturn:
    """Exit at once after the ``atexit`` handlers (MLflow's among them) and a flush of stdout and stderr.

    Everything a stage writes is complete by then (atomic renames, committed MLflow rows); only the freeing of
    module objects is skipped.
    """
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)


def os_error_text(exc: OSError) -> str:
    """``<path>: <reason>`` of a file-system error, for one ``error:`` line."""
    where = exc.filename if exc.filename is not None else ""
    reason = exc.strerror or str(exc)
    return f"{where}: {reason}; previous outputs are kept" if where else f"{reason}; previous outputs are kept"


def exit_on_sigterm(signum: int, frame: Any) -> NoReturn:
    fail("stopped by SIGTERM; previous outputs are kept", 128 + signum)


def experiment_stage_args(argv: list[str] | None, description: str, params_default: Path) -> argparse.Namespace:
    """Command line of a per-experiment stage: ``--experiment ID`` names an entry of params `experiments`."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--experiment", required=True, help="id of an entry of params `experiments`")
    ap.add_argument("--params", default=str(params_default), help=argparse.SUPPRESS)
    return ap.parse_args(argv)
