"""HumanAgent: a person at a terminal plays through the same Agent interface as every other player.

It prints the board (``game.render``) and a prompt naming the side to move ("X to move"), reads one move in the
game's notation from ``input`` (default stdin/stdout), and asks again, showing the error, until the move parses
and is legal.  A position with one legal move is played at once (a person should not have to type a forced
move), with a line saying so.

Besides moves it reads commands: ``help`` (``?``) explains the notation and the commands, ``quit`` (``q``)
raises ``Quit``, and ``undo`` (``u``), when the agent was made with ``undo=True`` (``boardrl play``, which owns the
game's history), raises ``Undo``.  The end of the input (Ctrl-D) raises ``InputEnded``.  All three are
``BoardRLError``s, so a match started from a script ends with one line, not a traceback from ``input()``, while
``boardrl play`` catches them and ends (or takes back moves) cleanly.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

import numpy as np

from boardrl.agents.base import Agent
from boardrl.errors import BoardRLError
from boardrl.games.base import Game

QUIT = ("quit", "q", "exit")
UNDO = ("undo", "u")
HELP = ("help", "h", "?")


class Quit(BoardRLError):
    """The person typed ``quit``."""


class Undo(BoardRLError):
    """The person asked to take back their last move (and the replies after it)."""


class InputEnded(BoardRLError):
    """The input ended (Ctrl-D, or the end of a piped file) before a move was given."""


def side_name(game: Game, player: int) -> str:
    """The symbol the board shows for ``player``: X / O, or P0 / P1 for Dots and Boxes (whose boxes show no
    symbol), so that a prompt names a side the way the board draws it."""
    if game.game_id.startswith("dots_and_boxes_"):
        return f"P{player}"
    return ("X", "O")[player]


def seat_text(game: Game, player: int) -> str:
    """E.g. "X (first)": the side and when it moves."""
    return f"{side_name(game, player)} ({('first', 'second')[player]})"


def notation_help(game: Game) -> str:
    """How to write a move of ``game``, in a line."""
    gid = game.game_id
    if gid == "conniption":
        return "each turn is three stage-moves: f (flip the board) or n (no flip), a column 1-7, then f or n"
    if gid.startswith("dots_and_boxes_"):
        return f"an edge number 0-{game.num_actions - 1}, as drawn on the board"
    noun = getattr(game, "move_noun", None)
    return f"one of {noun}" if noun else "a move in the game's notation"


class HumanAgent(Agent):
    """Reads moves (and the commands help, quit and, with ``undo=True``, undo) from a text stream; re-asks on
    malformed or illegal input; plays a forced move itself."""

    def __init__(self, game: Game, input: TextIO | None = None, output: TextIO | None = None, name: str = "human",
                 undo: bool = False) -> None:
        super().__init__(game, name)
        self.input = input
        self.output = output
        self.undo = undo

    def _streams(self) -> tuple[TextIO, TextIO]:
        # looked up at call time so that a redirected sys.stdin / sys.stdout (pytest, notebooks) is honoured
        return (self.input or sys.stdin, self.output or sys.stdout)

    def help_text(self) -> str:
        commands = "help (?) shows this, quit (q) ends the game"
        if self.undo:
            commands += ", undo (u) takes back your last move and the reply to it"
        return f"moves: {notation_help(self.game)}\ncommands: {commands}; Ctrl-D also ends the game"

    def act(self, state: Any, rng: np.random.Generator) -> int:
        self.game.check_state(state)
        if self.game.is_over(state):
            raise BoardRLError(f"{self.name}: no legal move, the game is over")
        inp, out = self._streams()
        legal = self.game.legal_actions(state)
        side = side_name(self.game, self.game.to_move(state))
        if len(legal) == 1:
            out.write(f"{side}: the only legal move is {self.game.format_move(legal[0])}; played for you\n")
            return int(legal[0])
        choices = " ".join(self.game.format_move(a) for a in legal)
        out.write(self.game.render(state) + "\n")
        while True:
            out.write(f"{side} to move; legal moves: {choices} (help: ?)\nyour move> ")
            out.flush()
            move = self._read(inp, out, state, legal, choices)
            if move is not None:
                return move

    def _read(self, inp: TextIO, out: TextIO, state: Any, legal: list[int], choices: str) -> int | None:
        """One line: a legal move, a command (raises, or prints help), or an error shown; None to ask again."""
        line = inp.readline()
        if line == "":
            raise InputEnded(f"{self.name}: input ended before a move was given")
        text = line.strip()
        word = text.lower()
        if word in QUIT:
            raise Quit(f"{self.name}: quit")
        if word in HELP:
            out.write(self.help_text() + "\n")
            return None
        if word in UNDO:
            if self.undo:
                raise Undo(f"{self.name}: undo")
            out.write("undo is only available in `boardrl play`\n")
            return None
        try:
            move = self.game.parse_move(text)
            if move not in legal:
                self.game.play(state, move)  # raises the game's own "illegal here; legal moves: ..." error
                raise BoardRLError(f"move {text} is illegal here; legal moves: {choices}")
            return move
        except BoardRLError as exc:
            out.write(f"{exc}\n")
            return None
