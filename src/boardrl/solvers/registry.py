"""The referee registry: which referee class judges which game id (``make_referee``).

Why a module of its own: the concrete referees (``solvers/tictactoe.py``, ``solvers/connect4.py``,
``solvers/dots_and_boxes.py``) import ``Referee`` and ``Verdict`` from ``solvers/base.py``; when the dispatch
lived in ``base.py`` too, ``base.py`` imported them back (inside the function), an import circle.  Here the
interface imports no concrete solver, and each game names its referee in its descriptor.  The referee is imported inside
``make_referee``, for that game only, so asking for one game's referee loads (and compiles) no other solver.
"""

from __future__ import annotations

import importlib

from boardrl.errors import BoardRLError
from boardrl.games.base import Game
from boardrl.solvers.base import Referee


def make_referee(game: Game) -> Referee:
    """The referee its game's descriptor names (``games/base.py`` ``GameDescriptor``); ``BoardRLError`` when the
    game has none (Conniption) or it cannot solve this board (Dots and Boxes beyond 24 edges)."""
    spec = game.descriptor.referee
    if spec is None:
        raise BoardRLError(f"no referee for {game.game_id}; referees exist for tictactoe, connect4, "
                           "dots_and_boxes up to 3x3")
    module, cls = spec.split(":")
    return getattr(importlib.import_module(module), cls)(game)  # Dots and Boxes refuses boards it cannot solve
