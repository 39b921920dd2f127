"""Positions of the web app: move strings in URLs, replay, and what the page needs to draw a board.

Why a move string, not a state: a URL must restore a game, undo is dropping the last moves, and the move list
and the referee's review need every earlier position anyway.  The string is the game's own move notation (the
one ``boardrl solve`` and ``boardrl play`` read, ``Game.format_moves`` / ``Game.parse_moves``) with every space
written as a comma, so that it needs no escaping in a URL (each game's descriptor, ``GameDescriptor`` in
``games/base.py``, holds its line of this table and its title, and names the board drawing below):

==================  ===================================  ===========================================
game                a move                               example
==================  ===================================  ===========================================
tictactoe           cell 1-9, row-major                  ``159``
connect4            column 1-7 (1 = leftmost)            ``4453``
dots_and_boxes_RxC  edge number (seed 001's numbering)   ``0,12,3``
conniption          ``f`` flip, ``n`` none, ``1``-``7``  ``n4n,f3n`` (a comma between turns)
==================  ===================================  ===========================================

Every parser accepts commas and spaces between moves, so a string typed either way is read; the page always
writes the canonical form (``moves_text``).  A malformed or illegal string is a ``BoardRLError`` whose one line
says which move is wrong and why (the app turns it into a 400 answer).

Everything here is plain Python over the game's public interface, so it is tested without HTTP.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence

from boardrl.errors import BoardRLError
from boardrl.games import GAME_IDS, make_game
from boardrl.games.base import Game, IllegalMoveError, NotationError

#: Longest move string accepted: more than any game here can last (a 5x5 Dots and Boxes game has 60 edges of up
#: to 2 digits), and a bound on the work one request can ask for.
MAX_MOVES_TEXT = 400

@lru_cache(maxsize=32)
def game_for(game_id: str) -> Game:
    """The game of an id (one shared object per id: games are stateless apart from a one-slot memo)."""
    if not isinstance(game_id, str) or not game_id.strip():
        raise BoardRLError(f"name a game: {', '.join(GAME_IDS)}")
    return make_game(game_id.strip())


def game_name(game: Game) -> str:
    """The game's title, from its descriptor (``games/base.py`` ``GameDescriptor``)."""
    return game.descriptor.title


def moves_text(game: Game, actions: Sequence[int]) -> str:
    """The canonical URL form of a move sequence (module docstring): the game's notation, commas for spaces."""
    return game.format_moves([int(a) for a in actions]).replace(" ", ",")


def parse_actions(game: Game, text: str | None) -> list[int]:
    """The actions of a move string; ``NotationError`` (one line) when it is not the game's notation."""
    text = text or ""
    if len(text) > MAX_MOVES_TEXT:
        raise NotationError(f"{game.game_id}: move string of {len(text)} characters; at most {MAX_MOVES_TEXT}")
    return game.parse_moves(text)


@dataclass(frozen=True)
class Position:
    """A game reached by ``actions`` from the start; ``states[i]`` is the state before ``actions[i]``."""

    game: Game
    actions: tuple[int, ...]
    states: tuple[Any, ...]

    @property
    def state(self) -> Any:
        return self.states[-1]

    @property
    def text(self) -> str:
        return moves_text(self.game, self.actions)

    def movers(self) -> list[int]:
        """The player who made each move (Dots and Boxes and Conniption players move several times in a row)."""
        return [self.game.to_move(s) for s in self.states[:-1]]

    def play(self, action: int) -> "Position":
        """This position plus one move; ``IllegalMoveError`` (the game's own words) when it is not legal."""
        nxt = self.game.play(self.state, int(action))
        return Position(self.game, self.actions + (int(action),), self.states + (nxt,))

    def back_to(self, plies: int) -> "Position":
        return Position(self.game, self.actions[:plies], self.states[: plies + 1])


def replay(game: Game, text: str | None) -> Position:
    """The position a move string reaches; errors name the failing move's number and the legal choices."""
    actions = parse_actions(game, text)
    states = [game.initial_state()]
    for i, a in enumerate(actions):
        try:
            states.append(game.play(states[-1], a))
        except IllegalMoveError as exc:
            raise IllegalMoveError(f"move {i + 1} of {text!r}: {exc}") from None
    return Position(game, tuple(actions), tuple(states))


def parse_one(game: Game, text: str) -> int:
    """One move in the game's notation (a click sends the move's own label)."""
    moves = parse_actions(game, text)
    if len(moves) != 1:
        raise NotationError(f"{game.game_id}: expected one move, got {text!r}")
    return moves[0]


# ---------------------------------------------------------------------------------------------- views
def result_text(game: Game, state: Any) -> str | None:
    """"first player wins" / "second player wins" / "draw" (with the score where there is one); None if on."""
    if not game.is_over(state):
        return None
    winner = game.winner(state)
    text = "draw" if winner is None else f"{('first', 'second')[winner]} player wins"
    if game.descriptor.board == "dots":
        text += f" {state.score0}-{state.score1}"
    return text


def position_json(pos: Position) -> dict[str, Any]:
    """Everything the page draws: the board, whose turn, the legal moves (as notation), the move history."""
    game, state = pos.game, pos.state
    over = game.is_over(state)
    movers = pos.movers()
    return {
        "game": game.game_id,
        "moves": pos.text,
        "plies": len(pos.actions),
        "to_move": None if over else game.to_move(state),
        "over": over,
        "winner": game.winner(state) if over else None,
        "result": result_text(game, state),
        "legal": [game.format_move(a) for a in game.legal_actions(state)],
        # ``after``: the move string up to and including the move (undo and "go back to here" need no notation).
        "history": [
            {"ply": i + 1, "player": p, "move": game.format_move(a), "after": moves_text(game, pos.actions[: i + 1])}
            for i, (a, p) in enumerate(zip(pos.actions, movers))
        ],
        "board": board_json(pos),
        "text": game.render(state),
    }


def board_json(pos: Position) -> dict[str, Any]:
    """The board in a form the page draws without knowing the rules: cells, or dots, edges and boxes."""
    draw = _BOARDS.get(pos.game.descriptor.board)
    if draw is None:  # pragma: no cover - every game of make_game names a board drawn here
        raise BoardRLError(f"the web app cannot draw {pos.game.game_id} (board {pos.game.descriptor.board!r})")
    return draw(pos)


def _tictactoe(pos: Position) -> dict[str, Any]:
    s = pos.state
    cells = [0 if s.x >> i & 1 else 1 if s.o >> i & 1 else None for i in range(9)]
    return {"kind": "cells", "rows": 3, "cols": 3, "cells": cells, "moves": [str(i + 1) for i in range(9)],
            "last": pos.actions[-1] if pos.actions else None}


def _grid(p0: int, mask: int, rows: int = 6, cols: int = 7) -> list[list[int | None]]:
    """Rows top to bottom of a 7-bit-per-column bitboard pair: 0 / 1 for the owner, None for empty."""
    out = []
    for r in range(rows - 1, -1, -1):
        out.append([None if not mask >> (7 * c + r) & 1 else 0 if p0 >> (7 * c + r) & 1 else 1 for c in range(cols)])
    return out


def _connect4(pos: Position) -> dict[str, Any]:
    from boardrl.games.connect4 import to_absolute

    p0, p1 = to_absolute(pos.state)
    last = None
    if pos.actions:
        col = pos.actions[-1]
        height = bin(pos.state.mask >> (7 * col) & 0x3F).count("1")
        last = [6 - height, col]  # [row from the top, column]
    return {"kind": "columns", "rows": 6, "cols": 7, "cells": _grid(p0, p0 | p1),
            "moves": [str(c + 1) for c in range(7)], "last": last}


def _conniption(pos: Position) -> dict[str, Any]:
    game, s = pos.game, pos.state
    return {
        "kind": "columns", "rows": 6, "cols": 7, "cells": _grid(s.p0, s.mask), "moves": [str(c + 1) for c in range(7)],
        "last": None, "stage": s.stage, "flips_left": [game.flips_left(s, 0), game.flips_left(s, 1)],
        "upside_down": game.is_down(s), "flip_forbidden": bool(s.last_flip),
        "buttons": [{"move": "f", "label": "flip the board"}, {"move": "n", "label": "no flip"}],
    }


def _dots(pos: Position) -> dict[str, Any]:
    """Dots, edges (who drew each) and boxes (who took each), found by replaying the moves."""
    game, geo = pos.game, pos.game.geo
    drawn_by: dict[int, int] = {}
    owner: list[int | None] = [None] * geo.num_boxes
    for state, edge, mover in zip(pos.states, pos.actions, pos.movers()):
        drawn_by[edge] = mover
        after = state.edges | (1 << edge)
        for b in geo.edge_boxes[edge]:
            if b >= 0 and after & int(geo.box_masks[b]) == int(geo.box_masks[b]):
                owner[int(b)] = mover
    edges = []
    for e, (y, x) in enumerate(geo.edge_yx):
        y, x = int(y), int(x)
        a = [y // 2, x // 2]  # [dot row, dot column] of the edge's first end
        b = [a[0], a[1] + 1] if y % 2 == 0 else [a[0] + 1, a[1]]
        edges.append({"move": game.format_move(e), "from": a, "to": b, "by": drawn_by.get(e)})
    boxes = [{"row": int(r) // 2, "col": int(c) // 2, "owner": owner[i]} for i, (r, c) in enumerate(geo.box_yx)]
    s = pos.state
    return {"kind": "dots", "rows": game.rows, "cols": game.cols, "edges": edges, "boxes": boxes,
            "score": [s.score0, s.score1], "last": game.format_move(pos.actions[-1]) if pos.actions else None}


#: The board drawings, by the ``board`` a game's descriptor names.
_BOARDS = {"cells": _tictactoe, "columns": _connect4, "conniption": _conniption, "dots": _dots}
