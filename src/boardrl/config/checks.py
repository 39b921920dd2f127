"""Checks across sections: games, learners, agents and models named in params.yaml exist and fit."""

from __future__ import annotations

import typing
from typing import Any

from boardrl.config.errors import ConfigError, from_validation_error, short_text, union_members
from boardrl.config.limits import (
    LEARNER_LIMITS,
    MAX_CHECKPOINTS,
    MAX_LAYERS,
    MAX_SEARCH_NODES,
    MAX_UNITS,
)
from boardrl.config.schema import EXPERIMENT_ID, Experiment, Opponent, Params
from boardrl.errors import BoardRLError
from pydantic import BaseModel, ValidationError


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
        raise from_validation_error(exc, model, ("experiments", exp_id, "params")) from None
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
    return [m for member in union_members(tp) for m in ([member] if member is tp else _members(member))]


def _value_problem(key: str, value: Any, annotation: Any, loc: str) -> tuple[str, str] | None:
    """(key path, problem) of one raw learner value: a boolean for a number, or a count over its ceiling."""
    members = _members(annotation)
    if isinstance(value, bool):
        numeric = bool not in members and any(m in (int, float) for m in members)
        return (loc, f"a boolean is not a number (got {value!r})") if numeric else None
    if isinstance(value, int) and int in members:
        limit, why = LEARNER_LIMITS.get(key, (MAX_UNITS, "100 times the full profile's largest budget"))
        return (loc, f"at most {limit:,} ({why}), got {short_text(f'{value:,}')}") if value > limit else None
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
    from boardrl.learn.core.space import SpaceError, experiment_space

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


def cross_check(p: Params, only_experiment: str | None = None) -> None:
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
