"""Trained models as agents by name: ``model:<experiment id>[,seed=K][,simulations=N]`` or ``model:<path>``.

Why here: a trained model must be usable wherever agents are named (ladder opponents in params, ``make_agent``,
``boardrl match``, ``boardrl play``), through the same registry as the built-in players.  An experiment id is
looked up under ``<project>/models/<id>/seed-<K>/model`` (the project is ``$BOARDRL_ROOT``, else the current
directory, where DVC runs every stage); without ``seed=`` the lowest trained seed is used.  ``simulations=N``
sets the search budget of an agent that searches (AlphaZero) and is refused for the others.
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


MODEL_OPTIONS = ("seed", "simulations")


def parse_model_spec(spec: str) -> tuple[str, int | None]:
    """(target, seed or None) of ``model:<target>[,seed=K][,simulations=N]``; one-line error when malformed."""
    target, options = parse_model_options(spec)
    return target, options.get("seed")


def parse_model_options(spec: str) -> tuple[str, dict[str, int]]:
    """(target, {option: whole number}) of a model spec; the options are ``MODEL_OPTIONS``."""
    body = spec.strip()[len(PREFIX):]
    target, *parts = [part.strip() for part in body.split(",")]
    if not target:
        raise BoardRLError(f"agent spec {spec!r}: name an experiment id or a model directory after 'model:'")
    options: dict[str, int] = {}
    for opt in parts:
        key, _, value = (x.strip() for x in opt.partition("="))
        if key not in MODEL_OPTIONS or not value.isdigit():
            raise BoardRLError(f"agent spec {spec!r}: {opt!r} is not seed=<whole number> or "
                               "simulations=<whole number>")
        options[key] = int(value)
    if options.get("simulations") == 0:
        raise BoardRLError(f"agent spec {spec!r}: simulations must be at least 1")
    return target, options


def model_dir(spec: str, root: Path | None = None) -> Path:
    """The model directory a ``model:`` spec names (checked to hold a saved agent)."""
    from boardrl.experiments.paths import ExperimentPaths, seeds_in

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
    simulations = parse_model_options(spec)[1].get("simulations")
    if simulations is not None:
        if not hasattr(agent, "with_simulations"):
            raise BoardRLError(f"agent spec {spec!r}: simulations= applies to agents that search (AlphaZero); "
                               f"this model is a {getattr(agent, 'kind', type(agent).__name__)} agent")
        agent = agent.with_simulations(simulations)
    agent.name = spec.strip()
    return agent
