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
from pathlib import Path

from boardrl.agents import agent_names
from boardrl.agents.models import AGENT_FILE, is_model_spec, project_root
from boardrl.errors import BoardRLError
from boardrl.games.base import Game
from boardrl.web.jobs import Lane
from boardrl.web.positions import Position

MAX_SPEC = 200
#: Not opponents in a browser: ``human`` reads moves from the server's terminal.
NOT_OPPONENTS = ("human",)


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


def check_spec(game: Game, spec: str) -> str:
    """The spec, stripped; ``BoardRLError`` for an empty, overlong or terminal-only one (before any work)."""
    spec = (spec or "").strip()
    if not spec:
        raise BoardRLError("name an opponent, e.g. random, perfect, mcts:simulations=1000 or model:<experiment id>")
    if len(spec) > MAX_SPEC:
        raise BoardRLError(f"opponent spec of {len(spec)} characters; at most {MAX_SPEC}")
    if not is_model_spec(spec) and spec.partition(":")[0].strip() in NOT_OPPONENTS:
        raise BoardRLError(f"{spec!r} reads moves from the server's terminal; you are the human here: "
                           f"pick an opponent: {', '.join(opponent_names(game))}")
    return spec


class Opponents:
    """Agents' moves, computed in the agents lane (one move at a time)."""

    def __init__(self) -> None:
        self.lane = Lane("agents")

    def reply(self, pos: Position, spec: str, seed: int) -> int:
        """The opponent's move in ``pos`` (checked legal in the lane); ``BoardRLError`` when the game is over."""
        game = pos.game
        spec = check_spec(game, spec)
        if game.is_over(pos.state):
            raise BoardRLError(f"{game.game_id}: the game is over ({pos.text or 'no moves'}); no move to make")
        return self.lane.call("agent_move", game.game_id, spec, pos.state, int(seed), len(pos.actions))

    def close(self) -> None:
        self.lane.close()
