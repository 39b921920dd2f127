"""Game rules.  ``make_game(game_id)`` is the one way to get a game from its id.

Ids: ``tictactoe``, ``connect4``, ``dots_and_boxes_RxC`` (e.g. ``dots_and_boxes_2x2``), ``conniption``.
"""

from __future__ import annotations

import re

from boardrl.errors import BoardRLError
from boardrl.games.base import BatchedGame, Game, IllegalMoveError, NotationError, WrongGameError

GAME_IDS = ("tictactoe", "connect4", "dots_and_boxes_2x2", "dots_and_boxes_3x3", "conniption")
_DOTS = re.compile(r"^dots_and_boxes_(\d+)x(\d+)$")


def make_game(game_id: str) -> Game:
    """The game for an id; ``BoardRLError`` naming the known ids otherwise."""
    if game_id == "tictactoe":
        from boardrl.games.tictactoe import TicTacToe

        return TicTacToe()
    if game_id == "connect4":
        from boardrl.games.connect4 import Connect4

        return Connect4()
    if game_id == "conniption":
        from boardrl.games.conniption import Conniption

        return Conniption()
    m = _DOTS.match(game_id or "")
    if m and 1 <= int(m.group(1)) <= 5 and 1 <= int(m.group(2)) <= 5:
        from boardrl.games.dots_and_boxes import DotsAndBoxes

        return DotsAndBoxes(int(m.group(1)), int(m.group(2)))
    raise BoardRLError(
        f"unknown game {game_id!r}; known games: {', '.join(GAME_IDS)} (or dots_and_boxes_RxC, R and C in 1..5)"
    )


__all__ = [
    "BatchedGame", "BoardRLError", "Game", "IllegalMoveError", "NotationError", "WrongGameError", "GAME_IDS",
    "make_game",
]
