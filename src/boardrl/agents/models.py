"""Trained models as agents by name: ``model:<experiment id>[,seed=K][,simulations=N]...`` or ``model:<path>``.

Why here: a trained model must be usable wherever agents are named (ladder opponents in params, ``make_agent``,
``boardrl match``, ``boardrl play``), through the same registry as the built-in players.  An experiment id is
looked up under ``<project>/models/<id>/seed-<K>/model`` (the project is ``$BOARDRL_ROOT``, else the current
directory, where DVC runs every stage); without ``seed=`` the lowest trained seed is used.  ``simulations=N``
sets the search budget of an agent that searches (AlphaZero), ``rollout_weight=W`` / ``rollouts=R`` its share of
random playouts in the leaf value (``agents/puct.py``, ``MixedEvaluator``), ``tactics=0|1`` the exact short-tactics
leaf values (``TacticalEvaluator``), ``search=puct|gumbel`` its search method (``agents/gumbel.py``); they are
refused for the others.
"""

from __future__ import annotations

import os
from pathlib import Path

from boardrl.agents.base import Agent
from boardrl.errors import BoardRLError
from boardrl.games.base import Game

PREFIX = "model:"
ROOT_ENV = "BOARDRL_ROOT"
AGENT_FILE = "agent.json"


def is_model_spec(spec: str) -> bool:
    return isinstance(spec, str) and spec.strip().startswith(PREFIX)


def project_root() -> Path:
    return Path(os.environ.get(ROOT_ENV) or Path.cwd())


#: Options of a model spec: seed picks the trained seed; the others override an AlphaZero model's search.
WHOLE_OPTIONS = ("seed", "simulations", "rollouts")
SEARCH_OPTIONS = ("simulations", "rollout_weight", "rollouts", "tactics", "search")
OPTIONS_HELP = ("seed=<whole number>, simulations=<whole number>, rollouts=<whole number>, "
                "search=<puct or gumbel>, rollout_weight=<0 to 1> or tactics=<0 or 1>")


def parse_model_spec(spec: str) -> tuple[str, int | None]:
    """(target, seed or None) of ``model:<target>[,seed=K][,simulations=N]``; one-line error when malformed."""
    target, options = parse_model_options(spec)
    return target, options.get("seed")


def parse_model_options(spec: str) -> tuple[str, dict[str, int | float | bool | str]]:
    """(target, {option: value}) of a model spec: whole numbers for ``WHOLE_OPTIONS``, a fraction in [0, 1] for
    ``rollout_weight``; a one-line error naming the spec otherwise."""
    body = spec.strip()[len(PREFIX):]
    target, *parts = [part.strip() for part in body.split(",")]
    if not target:
        raise BoardRLError(f"agent spec {spec!r}: name an experiment id or a model directory after 'model:'")
    options: dict[str, int | float | bool | str] = {}
    for opt in parts:
        key, _, value = (x.strip() for x in opt.partition("="))
        parsed = _option_value(key, value)
        if parsed is None:
            raise BoardRLError(f"agent spec {spec!r}: {opt!r} is not {OPTIONS_HELP}")
        options[key] = parsed
    for key in ("simulations", "rollouts"):
        if options.get(key) == 0:
            raise BoardRLError(f"agent spec {spec!r}: {key} must be at least 1")
    return target, options


def _option_value(key: str, value: str) -> int | float | bool | str | None:
    """The value of one ``key=value`` option, or None when the key is unknown or the value malformed."""
    if key in WHOLE_OPTIONS:
        return int(value) if value.isdigit() else None
    if key == "tactics":
        return {"0": False, "1": True}.get(value)
    if key == "search":
        return value if value in ("puct", "gumbel") else None
    if key == "rollout_weight":
        try:
            weight = float(value)
        except ValueError:
            return None
        return weight if 0.0 <= weight <= 1.0 else None
    return None


def model_dir(spec: str, root: Path | None = None) -> Path:
    """The model directory a ``model:`` spec names (checked to hold a saved agent)."""
    from boardrl.paths import ExperimentPaths, seeds_in

    target, seed = parse_model_spec(spec)
    as_path = Path(target)
    if (as_path / AGENT_FILE).is_file():
        return as_path
    paths = ExperimentPaths(root or project_root(), target)
    trained = [s for s in seeds_in(paths.models) if (paths.model(s) / AGENT_FILE).is_file()]
    if seed is None and trained:
        seed = trained[0]
    if seed is None or seed not in trained:
        have = f"trained seeds: {', '.join(map(str, trained))}" if trained else "no trained seed"
        raise BoardRLError(f"agent spec {spec!r}: no saved model at {paths.model(seed or 0)} ({have}); "
                           f"name an experiment id with a trained model or a directory holding {AGENT_FILE}")
    return paths.model(seed)


def load_model_agent(game: Game, spec: str) -> Agent:
    """The agent saved where ``spec`` points; its name is the spec."""
    from boardrl.agents.learned import load_agent

    agent = load_agent(game, None, model_dir(spec))
    search = {k: v for k, v in parse_model_options(spec)[1].items() if k in SEARCH_OPTIONS}
    if search:
        if not hasattr(agent, "with_search"):
            named = " and ".join(f"{key}=" for key in search)
            raise BoardRLError(f"agent spec {spec!r}: {named} {'applies' if len(search) == 1 else 'apply'} to agents "
                               f"that search (AlphaZero); this model is a "
                               f"{getattr(agent, 'kind', type(agent).__name__)} agent")
        agent = agent.with_search(**search)
    agent.name = spec.strip()
    return agent
