"""The opponent in the browser: any agent by name, through the project's own ``make_agent``.

An opponent is named exactly as everywhere else (``perfect``, ``mcts:simulations=2000``, ``model:<experiment
id>[,seed=K]``), and a bad name is ``make_agent``'s own one-line error.  Agents play in a child process (the
"agents" lane of ``jobs.py``: a numba search must not freeze the server), which builds each (game, name) once
and keeps it, because building can be slow (a trained model, a referee's tables).

Reproducible replies: the agent is ``reset()`` and given a generator seeded with ``(seed, ply)`` at every move,
so a URL (moves + opponent + seed) always gets the same reply, whoever asks and after whatever undo.  The cost:
an agent that remembers something through a game (``pool`` keeps its drawn member) starts afresh at each move.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Sequence

from boardrl.agents import agent_names, check_search_limits
from boardrl.agents.models import AGENT_FILE, is_model_spec, parse_model_spec, project_root
from boardrl.tracking.registry import ALIAS_TARGET
from boardrl.config import EXPERIMENT_ID
from boardrl.errors import BoardRLError
from boardrl.games.base import Game
from boardrl.web.jobs import Busy, Lane
from boardrl.web.positions import Position

MAX_SPEC = 200
#: Not opponents in a browser: ``human`` reads moves from the server's terminal.
NOT_OPPONENTS = ("human",)
#: Seconds an opponent may think about one move (waiting for the agents process included); past it the search is
#: stopped and the request answered 503.  The largest searches a spec may ask for (``agents.SEARCH_LIMITS``) bound
#: memory, not time: ``alphabeta:depth=30`` at Connect 4 would hold the agents process for hours.
AGENT_TIMEOUT_S = 60.0
#: Agent requests that may wait for the agents process at once (each holds one of the server's 40 threads).
MAX_AGENT_WAITERS = 8


class ModelOutsideError(BoardRLError):
    """A ``model:`` spec naming a directory outside the directories the server may load models from (403)."""


def opponent_names(game: Game) -> list[str]:
    """Built-in agents that can play ``game`` from the web app."""
    return [n for n in agent_names(game) if n not in NOT_OPPONENTS]


def trained_models(game: Game, root: Path | None = None) -> list[str]:
    """``model:<experiment id>`` for every experiment with a saved model of ``game`` under ``<project>/models``."""
    out = []
    for path in sorted((root or project_root()).glob(f"models/*/seed-*/model/{AGENT_FILE}")):
        try:
            meta = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        spec = f"model:{path.parents[2].name}"
        if meta.get("game") == game.game_id and spec not in out:
            out.append(spec)
    return out


def check_spec(game: Game, spec: str, model_dirs: Sequence[Path] = ()) -> str:
    """The spec, stripped; ``BoardRLError`` for an empty, overlong or terminal-only one, a search over the limits
    (``agents.SEARCH_LIMITS``) or a model outside ``model_dirs`` (before any work)."""
    spec = (spec or "").strip()
    if not spec:
        raise BoardRLError("name an opponent, e.g. random, perfect, mcts:simulations=1000 or model:<experiment id>")
    if len(spec) > MAX_SPEC:
        raise BoardRLError(f"opponent spec of {len(spec)} characters; at most {MAX_SPEC}")
    if not is_model_spec(spec) and spec.partition(":")[0].strip() in NOT_OPPONENTS:
        raise BoardRLError(f"{spec!r} reads moves from the server's terminal; you are the human here: "
                           f"pick an opponent: {', '.join(opponent_names(game))}")
    check_search_limits(spec)
    if is_model_spec(spec):
        check_model_place(spec, model_dirs or [project_root()])
    return spec


def _inside(path: str, dirs: Sequence[Path]) -> bool:
    """Whether ``path`` lies in one of ``dirs``, read as written (``..`` resolved, symbolic links not followed:
    a link inside the project, such as DVC's cache, was put there by its owner)."""
    where = Path(os.path.abspath(path))
    return any(where.is_relative_to(os.path.abspath(d)) for d in dirs)


def check_model_place(spec: str, model_dirs: Sequence[Path]) -> None:
    """``ModelOutsideError`` unless ``spec`` names an experiment id or a directory inside ``model_dirs``.

    Why: a model is code and data the server loads on request, and a server may answer other machines
    (``--host``); by default it loads only what the project holds.  Checked on the name alone, before any file
    is looked at, so a refused path reveals nothing about the file system."""
    target = parse_model_spec(spec)[0]
    if EXPERIMENT_ID.match(target) and not (Path(target) / AGENT_FILE).is_file():
        return  # models/<id>/seed-K/model under the project root
    if ALIAS_TARGET.match(target):
        return  # a registered model of the project's MLflow store, fetched into its cache/registry
    if not _inside(target, model_dirs):
        shown = ", ".join(str(d) for d in model_dirs)
        raise ModelOutsideError(f"{spec!r}: the server loads models only from {shown}; start it with "
                                "--allow-model-path DIR to allow another directory")


class Opponents:
    """Agents' moves, computed in the agents lane (one move at a time, ``AGENT_TIMEOUT_S`` at most each)."""

    def __init__(self, model_dirs: Sequence[Path] = (), timeout_s: float = AGENT_TIMEOUT_S,
                 max_waiters: int = MAX_AGENT_WAITERS) -> None:
        self.lane = Lane("agents")
        self.model_dirs = [Path(os.path.abspath(d)) for d in (*model_dirs, project_root())]
        self.timeout_s, self.max_waiters = timeout_s, max_waiters
        self._waiters = 0
        self._count = threading.Lock()

    def reply(self, pos: Position, spec: str, seed: int) -> int:
        """The opponent's move in ``pos`` (checked legal in the lane); ``BoardRLError`` when the game is over."""
        game = pos.game
        spec = check_spec(game, spec, self.model_dirs)
        if game.is_over(pos.state):
            raise BoardRLError(f"{game.game_id}: the game is over ({pos.text or 'no moves'}); no move to make")
        with self._count:
            if self._waiters >= self.max_waiters:
                raise Busy(f"{self._waiters} opponents' moves are being computed or wait already; ask again shortly")
            self._waiters += 1
        try:
            return self.lane.call("agent_move", game.game_id, spec, pos.state, int(seed), len(pos.actions),
                                  timeout=self.timeout_s)
        finally:
            with self._count:
                self._waiters -= 1

    def close(self) -> None:
        self.lane.close()
