"""Trained models as agents by name: ``model:<experiment id>[,seed=K]`` or ``model:<path to a model directory>``.

Why here: a trained model must be usable wherever agents are named (ladder opponents in params, ``make_agent``,
``boardrl match``, ``boardrl play``), through the same registry as the built-in players.  An experiment id is
looked up under ``<project>/models/<id>/seed-<K>/model`` (the project is ``$BOARDRL_ROOT``, else the current
directory, where DVC runs every stage); without ``seed=`` the lowest trained seed is used.
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


def parse_model_spec(spec: str) -> tuple[str, int | None]:
    """(target, seed or None) of ``model:<target>[,seed=K]``; one-line ``BoardRLError`` when malformed."""
    body = spec.strip()[len(PREFIX):]
    target, *options = [part.strip() for part in body.split(",")]
    if not target:
        raise BoardRLError(f"agent spec {spec!r}: name an experiment id or a model directory after 'model:'")
    seed = None
    for opt in options:
        key, _, value = opt.partition("=")
        if key.strip() != "seed" or not value.strip().isdigit():
            raise BoardRLError(f"agent spec {spec!r}: {opt!r} is not seed=<whole number> (the only option)")
        seed = int(value)
    return target, seed


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
    agent.name = spec.strip()
    return agent
