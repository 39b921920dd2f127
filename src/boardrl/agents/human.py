"""HumanAgent: a person at a terminal plays through the same Agent interface as every other player.

It prints the board (``game.render``) and a prompt to ``output``, reads one move in the game's notation from
``input`` (default stdin/stdout), and asks again, showing the error, until the move parses and is legal.  The
end of the input raises a clean ``BoardRLError`` so a match started from a script ends with one line, not a
traceback from ``input()``.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

import numpy as np

from boardrl.agents.base import Agent
from boardrl.errors import BoardRLError
from boardrl.games.base import Game


class HumanAgent(Agent):
    """Reads moves from a text stream; re-asks on malformed or illegal input."""

    def __init__(
        self, game: Game, input: TextIO | None = None, output: TextIO | None = None, name: str = "human"
    ) -> None:
        super().__init__(game, name)
        self.input = input
        self.output = output

    def _streams(self) -> tuple[TextIO, TextIO]:
        # looked up at call time so that a redirected sys.stdin / sys.stdout (pytest, notebooks) is honoured
        return (self.input or sys.stdin, self.output or sys.stdout)

    def act(self, state: Any, rng: np.random.Generator) -> int:
        self.game.check_state(state)
        if self.game.is_over(state):
            raise BoardRLError(f"{self.name}: no legal move, the game is over")
        inp, out = self._streams()
        legal = self.game.legal_actions(state)
        choices = " ".join(self.game.format_move(a) for a in legal)
        out.write(self.game.render(state) + "\n")
        player = self.game.to_move(state)
        while True:
            out.write(f"player {player} to move; legal moves: {choices}\nyour move> ")
            out.flush()
            line = inp.readline()
            if line == "":
                raise BoardRLError(f"{self.name}: input ended before a move was given")
            text = line.strip()
            try:
                move = self.game.parse_move(text)
                if move not in legal:
                    self.game.play(state, move)  # raises the game's own "illegal here; legal moves: ..." error
                    raise BoardRLError(f"move {text} is illegal here; legal moves: {choices}")
                return move
            except BoardRLError as exc:
                out.write(f"{exc}\n")
