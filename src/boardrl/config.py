"""params.yaml: the schema of every pipeline knob, its validation, and the slices each stage depends on.

Why validate up front: a typo (``eval_gmes``), an unknown game or opponent, a string where a number belongs or
a negative budget would otherwise surface minutes into a run, as a traceback, after some outputs were
rewritten.  Every stage script calls ``load_params`` (or ``load_params_or_exit``) before doing anything, and a
bad file gives one line, ``error: params.yaml: <key path>: <problem>``, and exit status 2.

Layout (see params.yaml for the documented defaults):

    seed                                   shared by every stage
    data.{source, url, timeout_s}          download stage
    prepare.{check_regenerated}            prepare stage
    experiments: [{game, agent}, ...]      the train/evaluate matrix (agent = a learner name)
    train.{eval_games, processes, curve, opponents.<game>, learners.<game>.<agent>}
    evaluate.{games, optimal_positions, optimal_plies, processes, uci, opponents.<game>}

Per-game keys (``train.opponents.<game>``, ``train.learners.<game>.<agent>``, ``evaluate.opponents.<game>``)
let DVC rerun only the stages of the game whose params changed.  ``train_slice``/``evaluate_slice`` return
exactly what a stage depends on; its params hash is computed from that slice.
"""

from __future__ import annotations

import argparse
import math
import signal
import sys
import types
import typing
from pathlib import Path
from typing import Any, Callable, Literal, NoReturn, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from boardrl.errors import BoardRLError

PARAMS_FILE = "params.yaml"
EXIT_BAD_PARAMS = 2


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
    timeout_s: float = Field(gt=0, le=600, description="network timeout of the download")


class PrepareParams(_Strict):
    check_regenerated: bool = Field(description="compare the data with the 8-ply positions regenerated from the rules")


class Experiment(_Strict):
    game: str
    agent: str


class Opponent(_Strict):
    """A benchmark opponent: a ``make_agent`` spec and, optionally, its own number of games."""

    agent: str = Field(min_length=1)
    games: int | None = Field(None, ge=2, description="seats alternate, so at least one game per seat")

    @property
    def key(self) -> str:
        """The name results are filed under (the spec itself)."""
        return self.agent


def _as_opponent(value: Any) -> Any:
    """Accept the short form ``"random"`` for ``{agent: random}``."""
    return {"agent": value} if isinstance(value, str) else value


class CurveParams(_Strict):
    """Learning-curve evaluation points: 0 (optional), then ``first`` * 10^(k / per_decade), then the end."""

    first: int = Field(ge=1)
    per_decade: int = Field(ge=1, le=20)
    include_zero: bool


class TrainParams(_Strict):
    eval_games: int = Field(ge=2, description="games per opponent at each curve point (seats alternate)")
    processes: int = Field(ge=1, le=64)
    curve: CurveParams
    opponents: dict[str, list[Opponent]]
    learners: dict[str, dict[str, dict[str, Any]]]

    @field_validator("opponents", mode="before")
    @classmethod
    def _short_opponents(cls, v: Any) -> Any:
        return _opponents_short_form(v)


class UciParams(_Strict):
    """Connect 4 agents only: evaluation from the UCI start positions (seed 000's protocol and the full one)."""

    seed000_games: int = Field(ge=1, description="games per label, agent first, fresh random position each")
    full: bool = Field(description="also play every position of each label with the agent in each seat")
    full_positions: int | None = Field(ge=1, description="cap on positions per label for the full protocol")


class EvaluateParams(_Strict):
    games: int = Field(ge=2, description="games per opponent unless the opponent sets its own")
    optimal_positions: int = Field(ge=0, description="positions for the optimal-move rate (0 = skip)")
    optimal_plies: dict[str, tuple[int, int]] = Field(
        description="per game, [lo, hi] plies of random play before a position (default: anywhere in a game)"
    )
    processes: int = Field(ge=1, le=64)
    uci: UciParams
    opponents: dict[str, list[Opponent]]

    @field_validator("opponents", mode="before")
    @classmethod
    def _short_opponents(cls, v: Any) -> Any:
        return _opponents_short_form(v)


def _opponents_short_form(v: Any) -> Any:
    if isinstance(v, dict):
        return {g: [_as_opponent(o) for o in lst] if isinstance(lst, list) else lst for g, lst in v.items()}
    return v


class Params(_Strict):
    seed: int = Field(ge=0, lt=2**63)
    data: DataParams
    prepare: PrepareParams
    experiments: list[Experiment] = Field(min_length=1)
    train: TrainParams
    evaluate: EvaluateParams

    def experiment(self, game: str, agent: str) -> Experiment:
        """The experiment ``game``/``agent``; ``ConfigError`` naming the configured ones otherwise."""
        for e in self.experiments:
            if e.game == game and e.agent == agent:
                return e
        known = ", ".join(f"{e.game}/{e.agent}" for e in self.experiments)
        raise ConfigError("experiments", f"no experiment {game}/{agent}; configured: {known}")

    def learner_params(self, game: str, agent: str) -> BaseModel:
        """The validated params model of ``agent`` (a learner) for ``game``."""
        from boardrl.learn import LEARNER_PARAMS

        return LEARNER_PARAMS[agent].model_validate(self.train.learners[game][agent])


# ---------------------------------------------------------------------------------------------- slices
def download_slice(p: Params) -> dict[str, Any]:
    return {"data": p.data.model_dump(mode="json")}


def prepare_slice(p: Params) -> dict[str, Any]:
    return {"prepare": p.prepare.model_dump(mode="json")}


def train_slice(p: Params, game: str, agent: str) -> dict[str, Any]:
    """Exactly the params the train stage of ``game``/``agent`` depends on (mirrors dvc.yaml)."""
    t = p.train
    return {
        "seed": p.seed,
        "game": game,
        "agent": agent,
        "train": {
            "eval_games": t.eval_games,
            "processes": t.processes,
            "curve": t.curve.model_dump(mode="json"),
            "opponents": [o.model_dump(mode="json") for o in t.opponents[game]],
            "learner": p.learner_params(game, agent).model_dump(mode="json"),
        },
    }


def evaluate_slice(p: Params, game: str, agent: str) -> dict[str, Any]:
    """The params of the evaluate stage of ``game``/``agent``: its own keys and the learner params of the model."""
    e = p.evaluate
    return {
        "seed": p.seed,
        "game": game,
        "agent": agent,
        "learner": p.learner_params(game, agent).model_dump(mode="json"),
        "evaluate": {
            "games": e.games,
            "optimal_positions": e.optimal_positions,
            "optimal_plies": list(e.optimal_plies[game]) if game in e.optimal_plies else None,
            "processes": e.processes,
            "uci": e.uci.model_dump(mode="json"),
            "opponents": [o.model_dump(mode="json") for o in e.opponents[game]],
        },
    }


def eval_points(games: int, curve: CurveParams) -> list[int]:
    """Log-spaced training-game counts: [0,] first * 10^(k/per_decade) to 2 significant digits, then ``games``.

    With first=100 and per_decade=3: 0, 100, 220, 460, 1000, 2200, 4600, 10000, ..., games.
    """
    points = {0} if curve.include_zero else set()
    k = 0
    while True:
        value = curve.first * 10 ** (k / curve.per_decade)
        digits = 10 ** max(0, int(math.floor(math.log10(value))) - 1)
        point = int(round(value / digits) * digits)
        if point >= games:
            break
        points.add(point)
        k += 1
    points.add(int(games))
    return sorted(points)


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
    msg = err["msg"]
    if "input" in err and kind not in ("model_type", "dict_type", "list_type"):
        shown = repr(err["input"])
        msg += f" (got {shown if len(shown) <= 60 else shown[:57] + '...'})"
    return loc, msg


def _from_validation_error(exc: ValidationError, root_model: Any, prefix: tuple[Any, ...] = ()) -> ConfigError:
    errors = exc.errors()
    loc, problem = _problem(errors[0], root_model)
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


def agent_spec_problem(game_id: str, spec: str) -> str | None:
    """Why ``spec`` is not a valid agent for ``game_id`` (the library's own message), or None when it is."""
    from boardrl.agents import make_agent, parse_spec
    from boardrl.games import make_game

    try:
        if parse_spec(spec)[0] == "human":
            return "agent 'human' waits for moves typed at a terminal; a pipeline stage cannot use it"
        make_agent(make_game(game_id), spec)
    except BoardRLError as exc:
        return str(exc)
    return None


def _check_opponents(game: str, opponents: list[Opponent], key: str) -> None:
    seen: set[str] = set()
    for i, opp in enumerate(opponents):
        if opp.key in seen:
            raise ConfigError(f"{key}[{i}]", f"opponent {opp.key!r} is listed twice")
        seen.add(opp.key)
        problem = agent_spec_problem(game, opp.agent)
        if problem:
            raise ConfigError(f"{key}[{i}]", problem)


def _check_learner(p: Params, game: str, agent: str, key: str) -> None:
    from boardrl.learn import LEARNER_PARAMS

    raw = p.train.learners.get(game, {}).get(agent)
    if raw is None:
        raise ConfigError(key, f"missing: experiment {game}/{agent} needs its learner params here (may be {{}})")
    model = LEARNER_PARAMS[agent]
    try:
        learner = model.model_validate(raw)
    except ValidationError as exc:
        raise _from_validation_error(exc, model, tuple(key.split("."))) from None
    spec = getattr(learner, "opponent", None)
    if isinstance(spec, str):
        problem = agent_spec_problem(game, spec)
        if problem:
            raise ConfigError(f"{key}.opponent", problem)


def _cross_check(p: Params) -> None:
    from boardrl.learn import LEARNER_PARAMS

    seen: set[tuple[str, str]] = set()
    for i, e in enumerate(p.experiments):
        _check_game(e.game, f"experiments[{i}].game")
        if e.agent not in LEARNER_PARAMS:
            raise ConfigError(
                f"experiments[{i}].agent", f"unknown learner {e.agent!r}; known learners: {', '.join(LEARNER_PARAMS)}"
            )
        if (e.game, e.agent) in seen:
            raise ConfigError(f"experiments[{i}]", f"{e.game}/{e.agent} is listed twice")
        seen.add((e.game, e.agent))
        for section in ("train", "evaluate"):
            if e.game not in getattr(p, section).opponents:
                raise ConfigError(f"{section}.opponents.{e.game}", f"missing: experiment {e.game}/{e.agent} needs it")
        _check_learner(p, e.game, e.agent, f"train.learners.{e.game}.{e.agent}")
    for section in ("train", "evaluate"):
        for game, opponents in getattr(p, section).opponents.items():
            _check_game(game, f"{section}.opponents.{game}")
            _check_opponents(game, opponents, f"{section}.opponents.{game}")
    for game, (lo, hi) in p.evaluate.optimal_plies.items():
        _check_game(game, f"evaluate.optimal_plies.{game}")
        if not 0 <= lo <= hi:
            raise ConfigError(f"evaluate.optimal_plies.{game}", f"needs 0 <= lo <= hi, got [{lo}, {hi}]")
    for game, by_agent in p.train.learners.items():
        _check_game(game, f"train.learners.{game}")
        for agent in by_agent:
            if agent not in LEARNER_PARAMS:
                raise ConfigError(
                    f"train.learners.{game}.{agent}",
                    f"unknown learner {agent!r}; known learners: {', '.join(LEARNER_PARAMS)}",
                )
            if (game, agent) not in seen:
                _check_learner(p, game, agent, f"train.learners.{game}.{agent}")


# ---------------------------------------------------------------------------------------------- loading
def parse_params(data: Any) -> Params:
    """Validate already-loaded YAML data; ``ConfigError`` with the key path of the first problem."""
    if not isinstance(data, dict):
        raise ConfigError("", f"the top level must be a mapping of sections, got {type(data).__name__}")
    try:
        params = Params.model_validate(data)
    except ValidationError as exc:
        raise _from_validation_error(exc, Params) from None
    _cross_check(params)
    return params


def load_params(path: str | Path = PARAMS_FILE) -> Params:
    """Read and validate a params file; ``ConfigError`` (one line, with the key path) on any problem."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError("", f"cannot read {p}: {exc.strerror or exc}", file=p.name) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError("", f"not valid YAML: {where}{problem}", file=p.name) from None
    try:
        return parse_params(data)
    except ConfigError as exc:
        raise ConfigError(exc.key, exc.problem, file=p.name) from None


def load_params_or_exit(path: str | Path = PARAMS_FILE) -> Params:
    """``load_params`` for stage scripts: on a problem print ``error: ...`` (one line) and exit with status 2."""
    try:
        return load_params(path)
    except ConfigError as exc:
        fail(str(exc), EXIT_BAD_PARAMS)


def fail(message: str, status: int = 1) -> NoReturn:
    """Print one ``error:`` line on stderr and exit (stage scripts never end with a bare traceback)."""
    print(f"error: {message}", file=sys.stderr, flush=True)
    raise SystemExit(status)


T = TypeVar("T")


def run_experiment_stage(params_path: str | Path, game: str, agent: str, run: Callable[[Params, str, str], T]) -> T:
    """Entry of a per-experiment stage (train, evaluate): validate, then run, every failure one ``error:`` line.

    Params and the (game, agent) pair are checked before any work (exit 2).  SIGTERM (``dvc`` or a user stopping
    the stage) becomes SystemExit, so context managers unwind: the MLflow run is closed as FAILED instead of
    being left RUNNING, and atomic writes leave the previous outputs.
    """
    params = load_params_or_exit(params_path)
    try:
        params.experiment(game, agent)
    except ConfigError as exc:
        fail(str(exc), EXIT_BAD_PARAMS)
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        return run(params, game, agent)
    except BoardRLError as exc:
        fail(str(exc))


def _exit_on_sigterm(signum: int, frame: Any) -> NoReturn:
    fail("stopped by SIGTERM; previous outputs are kept", 128 + signum)


def experiment_stage_args(argv: list[str] | None, description: str, params_default: Path) -> argparse.Namespace:
    """Command line of a per-experiment stage: ``--game`` and ``--agent`` name one item of params `experiments`."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--game", required=True, help="game id of an item of params `experiments`")
    ap.add_argument("--agent", required=True, help="learner name of that item")
    ap.add_argument("--params", default=str(params_default), help=argparse.SUPPRESS)
    return ap.parse_args(argv)
