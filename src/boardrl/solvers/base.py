"""The Referee interface: exact game values and optimal moves, used to judge agents.

``solve(state)`` returns a ``Verdict`` from the view of the player to move.  ``optimal_moves`` are the moves
that keep the exact game value: for win/draw/loss games (tic-tac-toe, Connect 4) every move that keeps the
win (or the draw) is optimal, however fast; for Dots and Boxes the value is the final score margin, so a move
is optimal when it keeps the best achievable margin.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from boardrl.games.base import Game


@dataclass(frozen=True)
class Verdict:
    """Exact value of a position for the player to move."""

    value: int  # +1 win, 0 draw, -1 loss under perfect play
    optimal_moves: tuple[int, ...]  # empty when the game is over
    margin: int | None = None  # Dots and Boxes: final score margin (mover minus opponent) under perfect play
    score: int | None = None  # Connect 4: positive = mover wins, larger = sooner (see solvers/connect4.py)

    def to_json(self, game: Game) -> dict:
        out: dict[str, Any] = {
            "value": self.value,
            "optimal_moves": [game.format_move(m) for m in self.optimal_moves],
        }
        if self.margin is not None:
            out["margin"] = self.margin
        if self.score is not None:
            out["score"] = self.score
        return out


class Referee(ABC):
    """Exact solver for one game."""

    def __init__(self, game: Game) -> None:
        self.game = game

    @abstractmethod
    def solve(self, state: Any) -> Verdict: ...

    def value(self, state: Any) -> int:
        return self.solve(state).value

    def is_optimal(self, state: Any, move: int) -> bool:
        return move in self.solve(state).optimal_moves


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
