"""The referee registry: which referee class judges which game id (``make_referee``).

Why a module of its own: the concrete referees (``solvers/tictactoe.py``, ``solvers/connect4.py``,
``solvers/dots_and_boxes.py``) import ``Referee`` and ``Verdict`` from ``solvers/base.py``; when the dispatch
lived in ``base.py`` too, ``base.py`` imported them back (inside the function), an import circle.  Here the
interface imports no concrete solver, and only this module knows them all.  Each referee is imported inside
``make_referee``, for its game id only, so asking for one game's referee loads (and compiles) no other solver.
"""

from __future__ import annotations

from boardrl.games.base import Game
from boardrl.solvers.base import Referee


def make_referee(game: Game) -> Referee:
    """The referee for a game; ``BoardRLError`` when none exists (e.g. Conniption, Dots and Boxes > 3x3)."""
    from boardrl.errors import BoardRLError

    gid = game.game_id
    if gid == "tictactoe":
        from boardrl.solvers.tictactoe import TicTacToeReferee

        return TicTacToeReferee(game)
    if gid == "connect4":
        from boardrl.solvers.connect4 import Connect4Referee

        return Connect4Referee(game)
    if gid.startswith("dots_and_boxes_"):
        from boardrl.solvers.dots_and_boxes import DotsAndBoxesReferee

        return DotsAndBoxesReferee(game)  # raises BoardRLError itself for boards it cannot solve
    raise BoardRLError(f"no referee for {gid}; referees exist for tictactoe, connect4, dots_and_boxes up to 3x3")
