"""Every player, by name: ``make_agent(game, "mcts:simulations=1000")`` and ``agent_names(game)``.

A spec is ``name`` or ``name:key=value,key=value``; values are read as bool (true/false), int, float, or else
text.  The keys are the agent's constructor arguments (see ``agent_keys``); search sizes have ceilings
(``SEARCH_LIMITS``), so an oversized spec is one error line before anything is built.  Each entry names the
module and class that implement it and is imported only when built, so one game's missing or broken module
never stops the others from working.

Names (and the games they exist for):

==================  =======================================================================================
random              every game: uniform over legal moves
semirandom          every game: seed 002's SemiRandom (first immediate win in action order, else random)
tactical            tic-tac-toe, Connect 4, Conniption: win, else block an immediate win, else random
alphabeta           every game: depth-limited alpha-beta (``depth``, ``evaluation``, ``tiebreak``)
maxmin              tic-tac-toe (max_depth 4), Connect 4 (5): seed 002's MaxMin
seed000_alphabeta   tic-tac-toe: seed 000's full-depth, deterministic AlphaBeta
mcts                every game: UCT (``simulations``, ``c``, ``solver``, ``rollout``)
puct                every game: batched PUCT with a rollout or uniform evaluator (``simulations``, ``c_puct``,
                    ``evaluator``, ``rollouts``, ``leaves_per_wave``); AlphaZero is ``model:<experiment>``
perfect             games with a referee: tic-tac-toe, Connect 4, Dots and Boxes up to 24 edges (3x3 boxes)
human               every game: moves typed at the terminal
pool                every game: each game one member drawn uniformly (``members=sols+cells+flip``)
moderate, advanced  Dots and Boxes: seed 001's players
model:<id>          a trained model: ``model:<experiment id>[,seed=K][,simulations=N]`` or ``model:<model directory>``
                    (AlphaZero also ``rollout_weight=W``, ``rollouts=R``: playouts in its leaf values)
conniption_random, sols, cells, hybrid, flip   Conniption: seed 004's minimax players (``max_depth``)
==================  =======================================================================================
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

from boardrl.agents.base import Agent, RandomAgent
from boardrl.agents.models import is_model_spec, load_model_agent, parse_model_options
from boardrl.errors import BoardRLError
from boardrl.games.base import Game

__all__ = [
    "Agent", "RandomAgent", "AgentSpecError", "agent_entry", "agent_keys", "agent_names", "check_search_limits",
    "make_agent", "parse_spec",
]


class AgentSpecError(BoardRLError):
    """An agent spec that names an unknown agent or key, a wrong value, or an agent of another game."""


# ---------------------------------------------------------------------------------------------- game sets
def _any(game: Game) -> bool:
    return True


def _ids(*ids: str) -> Callable[[Game], bool]:
    return lambda game: game.game_id in ids


def _dots(game: Game) -> bool:
    return game.game_id.startswith("dots_and_boxes_")


def _has_referee(game: Game) -> bool:
    """Whether the game's exact referee solves this board (its descriptor says, without loading a solver)."""
    return game.descriptor.has_referee


# ---------------------------------------------------------------------------------------------- entries
@dataclass(frozen=True)
class AgentEntry:
    """One registry name: where its class lives, which games it plays, and fixed constructor arguments."""

    name: str
    module: str
    attr: str
    games: Callable[[Game], bool]
    where: str  # the games, in words, for error messages
    fixed: dict[str, Any] = field(default_factory=dict)
    hidden: tuple[str, ...] = ()  # constructor arguments that a spec may not set (streams, objects)

    def factory(self) -> Callable[..., Agent]:
        return getattr(importlib.import_module(self.module), self.attr)

    def keys(self) -> list[str]:
        """Constructor arguments a spec may set: everything but the game, the name and the fixed ones."""
        params = inspect.signature(self.factory()).parameters.values()
        skip = {"self", "game", "name", *self.fixed, *self.hidden}
        return [p.name for p in params if p.name not in skip and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


_A = "boardrl.agents."
_TACTICAL = "tictactoe, connect4, conniption"
_PERFECT = "tictactoe, connect4, dots_and_boxes up to 24 edges (3x3, 2x4, 1x7)"
#: seed 004's minimax players: registry name -> evaluation of ``ConniptionAI``.  The one copy of these names:
#: ``agents/conniption.py`` reads them from here (importing that module here would defeat the lazy imports).
CONNIPTION_AI_AGENTS = {
    "conniption_random": "random", "sols": "sols", "cells": "cells", "hybrid": "hybrid", "flip": "flip"
}

ENTRIES: tuple[AgentEntry, ...] = (
    AgentEntry("random", _A + "base", "RandomAgent", _any, "every game"),
    AgentEntry("semirandom", _A + "simple", "SemiRandomAgent", _any, "every game"),
    AgentEntry("tactical", _A + "simple", "TacticalAgent", _ids("tictactoe", "connect4"), _TACTICAL),
    AgentEntry("tactical", _A + "conniption", "TacticalConniptionAgent", _ids("conniption"), _TACTICAL),
    AgentEntry("alphabeta", _A + "alphabeta", "AlphaBetaAgent", _any, "every game"),
    AgentEntry("maxmin", _A + "alphabeta", "MaxMinAgent", _ids("tictactoe", "connect4"), "tictactoe, connect4"),
    AgentEntry("seed000_alphabeta", _A + "alphabeta", "Seed000AlphaBetaAgent", _ids("tictactoe"), "tictactoe"),
    AgentEntry("mcts", _A + "mcts", "MCTSAgent", _any, "every game"),
    AgentEntry("puct", _A + "puct", "PUCTAgent", _any, "every game"),
    AgentEntry("perfect", _A + "perfect", "PerfectAgent", _has_referee, _PERFECT, hidden=("referee",)),
    AgentEntry("human", _A + "human", "HumanAgent", _any, "every game", hidden=("input", "output", "undo")),
    AgentEntry("pool", _A + "pool", "PoolAgent", _any, "every game"),
    AgentEntry("moderate", _A + "dots_and_boxes", "ModerateAgent", _dots, "dots_and_boxes_RxC"),
    AgentEntry("advanced", _A + "dots_and_boxes", "AdvancedAgent", _dots, "dots_and_boxes_RxC"),
    *(
        AgentEntry(name, _A + "conniption", "ConniptionAI", _ids("conniption"), "conniption", fixed={"evaluation": key})
        for name, key in CONNIPTION_AI_AGENTS.items()
    ),
)


def agent_entry(game: Game, name: str) -> AgentEntry:
    """The registry entry of agent ``name`` for ``game``; ``AgentSpecError`` naming the choices otherwise."""
    known = [e for e in ENTRIES if e.name == name]
    if not known:
        raise AgentSpecError(f"unknown agent {name!r}; agents for {game.game_id}: {', '.join(agent_names(game))}"
                             "; a trained model: model:<experiment id>")
    for e in known:
        if e.games(game):
            return e
    raise AgentSpecError(
        f"agent {name!r} does not play {game.game_id} (it plays {known[0].where}); "
        f"agents for {game.game_id}: {', '.join(agent_names(game))}"
    )


# ---------------------------------------------------------------------------------------------- public API
def _game(game: Game | str) -> Game:
    if isinstance(game, Game):
        return game
    if isinstance(game, str):
        from boardrl.games import make_game

        return make_game(game)
    raise AgentSpecError(f"expected a Game or a game id, got {type(game).__name__} {game!r}")


def agent_names(game: Game | str) -> list[str]:
    """The agent names that exist for ``game``, in registry order."""
    g = _game(game)
    out: list[str] = []
    for e in ENTRIES:
        if e.name not in out and e.games(g):
            out.append(e.name)
    return out


def agent_keys(game: Game | str, name: str) -> list[str]:
    """The keys a spec may set for agent ``name`` at ``game``."""
    g = _game(game)
    return agent_entry(g, name).keys()


def _value(text: str) -> bool | int | float | str:
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text.strip()


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"name:key=value,key=value"`` -> ``(name, {key: value})``; values become bool, int, float or text."""
    if not isinstance(spec, str) or not spec.strip():
        raise AgentSpecError(f"an agent spec must be a non-empty string like 'mcts:simulations=1000', got {spec!r}")
    name, _, rest = spec.strip().partition(":")
    name = name.strip()
    kwargs: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, text = part.partition("=")
        key = key.strip()
        if not eq or not key or not text.strip():
            raise AgentSpecError(f"agent spec {spec!r}: {part!r} is not key=value")
        if key in kwargs:
            raise AgentSpecError(f"agent spec {spec!r}: key {key!r} given twice")
        kwargs[key] = _value(text)
    return name, kwargs


# ---------------------------------------------------------------------------------------------- search limits
#: The largest search a spec may ask for, by key: (limit, why).  Why: ``mcts:simulations=100000000`` once grew a
#: process to 5.9 GB, and ``=2000000000`` died of MemoryError; a spec is typed by people (the CLI, the web app,
#: params.yaml), so a slip of a few zeros must be one error line, not a machine out of memory.  The limits lie far
#: above what any configured or studied opponent uses (``mcts:simulations=1000``, ``alphabeta:depth=6``).
SEARCH_LIMITS: dict[str, tuple[int, str]] = {
    # UCT grows one node (~60 bytes) per simulation and plays about 1,000 simulations a millisecond: 100,000 are
    # 6 MB and a tenth of a second a move.
    "simulations": (100_000, "one tree node per simulation"),
    # Deeper than any game here lasts is no stronger, and the Python search recurses once per ply.
    "depth": (64, "plies searched"),
    "max_depth": (64, "plies searched"),
    "rollouts": (256, "playouts per evaluated position"),
    "leaves_per_wave": (64, "each wave's paths are preallocated per simulation"),
}
#: Tighter limits of agents that search a batch of positions at once (a match hands them up to 128 games in
#: lock-step), each tree holding up to ~1 KB a simulation: 10,000 simulations x 128 trees stay near 1 GB.
BATCH_SEARCH_LIMITS: dict[str, tuple[int, str]] = {
    "simulations": (10_000, "a tree per position of a batch, up to ~1 KB a simulation"),
}
#: Agents (and ``model:`` specs) whose searches run over batches.
BATCH_SEARCHERS = ("puct", "model")


def search_limit_problem(name: str, kwargs: dict[str, Any]) -> str | None:
    """Why the search a spec asks for is too large (one line), or None: see ``SEARCH_LIMITS``."""
    for key, value in kwargs.items():
        limit = (BATCH_SEARCH_LIMITS if name in BATCH_SEARCHERS else {}).get(key) or SEARCH_LIMITS.get(key)
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if limit is not None and number and value > limit[0]:  # a float too: some agents round it
            shown = f"{value:,}" if isinstance(value, int) else f"{value:g}"
            return f"{key} is at most {limit[0]:,} ({limit[1]}), got {shown}"
    return None


def check_search_limits(spec: str) -> None:
    """``AgentSpecError`` when ``spec`` asks for a search larger than ``SEARCH_LIMITS`` allow; cheap (nothing is
    built or loaded), so a server checks it before handing the spec to a worker."""
    if is_model_spec(spec):
        name, kwargs = "model", parse_model_options(spec)[1]
    else:
        name, kwargs = parse_spec(spec)
    problem = search_limit_problem(name, kwargs)
    if problem:
        raise AgentSpecError(f"agent spec {spec.strip()!r}: {problem}")


def make_agent(game: Game | str, spec: str) -> Agent:
    """Build the agent a spec describes for ``game`` (a Game or a game id); the agent's name is the spec.

    Errors (``AgentSpecError``, a ``BoardRLError``) are one line naming the legal choices: unknown agent, agent
    of another game, unknown key, or a value the agent refuses.
    """
    g = _game(game)
    check_search_limits(spec)
    if is_model_spec(spec):
        return load_model_agent(g, spec)
    name, kwargs = parse_spec(spec)
    entry = agent_entry(g, name)
    legal = entry.keys()
    for key in kwargs:
        if key not in legal:
            choices = ", ".join(legal) if legal else "none"
            raise AgentSpecError(f"agent {name!r} has no key {key!r}; keys: {choices}")
    factory = entry.factory()
    try:
        agent = factory(g, **entry.fixed, **kwargs)
    except BoardRLError as exc:
        raise AgentSpecError(f"agent spec {spec!r}: {exc}") from None
    agent.name = spec.strip()
    return agent
