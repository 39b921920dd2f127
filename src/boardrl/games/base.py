"""The Game and BatchedGame interfaces shared by every game in boardrl.

Why this shape: a state is a NamedTuple of Python ints that is *also* one row of the int64 array the batched
game works on.  The numba kernels of a game take and return those ints, so the scalar path (one state, Python
ints in, Python ints out) and the batched path (a numba loop over rows) run the very same compiled rule code
and cannot drift apart.  States are immutable and hashable for free (tuples), and a state of the wrong game is
caught by its type.

Actions are integers in ``range(game.num_actions)``; each game defines a human notation for them
(``format_move``/``parse_move``) and for whole move sequences (``format_moves``/``parse_moves``).

Scalar speed (human play, scripted and Python agents use ``legal_moves`` + ``play`` one state at a time): a call
into numba from Python costs more than the rules it runs, so a game's ``play`` of a legal move is one kernel call.
That kernel checks the move, applies it and also returns the successor's legal moves as bits, which the game
keeps in ``_memo`` (the last state its ``play`` returned, with those bits); ``legal_moves`` of that very object
(identity, not equality) is then a table lookup, and ``play`` from it skips re-validating the state and calls the
kernel's compiled entry point directly (``_kernels.trusted_entry``).  Any other state takes the validated path,
with the same errors as always.  The kernel is built from the same rule functions as the batched step, so the
rules stay in one place.  ``legal_moves`` returns a read-only array that may be shared between calls (copy it to
modify it): building a fresh array per call would cost as much as the move itself.

Neural seams: networks train on the batched engine, so every game also works on whole (N, width) int64 arrays
of state rows: ``encode_batch`` (input planes), ``symmetries_batch`` (data augmentation) and
``score_margin_batch`` (margin targets).  Each is defined to equal its scalar counterpart row by row, and the
scalar ``encode`` is by default the batched one on a single row, so the two cannot drift apart.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

import numpy as np

from boardrl.errors import BoardRLError

__all__ = ["BoardRLError", "IllegalMoveError", "NotationError", "WrongGameError", "Game", "BatchedGame",
           "GameDescriptor"]


@dataclass(frozen=True)
class GameDescriptor:
    """What the rest of boardrl needs to know about a game besides its rules, declared beside the rules.

    Why: the referee registry, the agent registry (which agents need a referee), the ``inputs`` stage (which
    referee module a stage's code includes) and the web page (a game's title and how to draw it) all read this, so
    a new game touches its own modules and ``params.yaml``, not a list in each of them.
    """

    title: str  # for people: the web page's menu
    notation: str  # one move in words (the web page's URLs and ``boardrl play`` take it)
    example: str  # a move string in that notation
    board: str  # how the web page draws it: "cells", "columns", "conniption" or "dots"
    referee: str | None = None  # "<module>:<class>" of its exact referee (``solvers.registry.make_referee``)
    has_referee: bool = False  # whether that referee solves this very board (Dots and Boxes: up to 24 edges)

    @property
    def referee_module(self) -> str | None:
        return self.referee.split(":")[0] if self.referee else None


class IllegalMoveError(BoardRLError):
    """A move that is not legal in the given state."""


class NotationError(BoardRLError):
    """A move string that cannot be parsed in the game's notation."""


class WrongGameError(BoardRLError):
    """A state that belongs to another game (or is not a state at all)."""


class Game(ABC):
    """Rules of a two-player, alternating (or extra-turn) game with a fixed discrete action space.

    Players are 0 (moves first) and 1.  Subclasses set ``game_id``, ``num_actions`` and ``state_type`` (a
    NamedTuple whose fields are all ints, in the order of the batched state row).
    """

    game_id: ClassVar[str]
    num_actions: ClassVar[int]
    state_type: ClassVar[type]
    #: Shape of ``encode(state)``: (planes, height, width).
    encoding_shape: ClassVar[tuple[int, int, int]]
    #: Title, notation, board drawing and referee (see ``GameDescriptor``).
    descriptor: GameDescriptor

    #: ``(state, legal-move bits)`` for the last state this game's ``play`` returned: that state was made by the
    #: rule kernel from a checked state and move, so ``play`` trusts it and ``legal_moves`` reads its mask from
    #: the bits (module docstring, "Scalar speed").  One slot, compared by identity; a fresh object before the
    #: first move, so no argument can match it.
    _memo: tuple = (object(), 0)

    # ------------------------------------------------------------------ rules (subclasses implement)
    @abstractmethod
    def initial_state(self) -> Any: ...

    @abstractmethod
    def legal_moves(self, state: Any) -> np.ndarray:
        """Boolean mask of length ``num_actions``; all False once the game is over.

        Read-only, and possibly shared with other calls: copy it before modifying it.
        """

    @abstractmethod
    def _apply(self, state: Any, move: int) -> Any:
        """The successor state; ``move`` is known to be legal (``play`` checked it)."""

    @abstractmethod
    def to_move(self, state: Any) -> int:
        """0 or 1: the player whose decision it is."""

    @abstractmethod
    def is_over(self, state: Any) -> bool: ...

    @abstractmethod
    def returns(self, state: Any) -> tuple[float, float]:
        """Per-player result (+1 win, 0 draw, -1 loss) of a finished game; (0, 0) before the end."""

    @abstractmethod
    def render(self, state: Any) -> str:
        """A multi-line picture of the board for humans."""

    @abstractmethod
    def format_move(self, move: int) -> str: ...

    @abstractmethod
    def parse_move(self, text: str) -> int:
        """The action for one move in the game's notation; ``NotationError`` when malformed."""

    @abstractmethod
    def batched(self, n: int, auto_reset: bool = True) -> "BatchedGame": ...

    @abstractmethod
    def legal_mask_batch(self, states: np.ndarray) -> np.ndarray:
        """(N, num_actions) bool legality for an (N, width) int64 array of state rows (numba kernel)."""

    @abstractmethod
    def to_move_batch(self, states: np.ndarray) -> np.ndarray:
        """(N,) int8 player to move for an (N, width) int64 array of state rows."""

    @abstractmethod
    def encode_batch(self, states: np.ndarray) -> np.ndarray:
        """float32 (N, *encoding_shape) planes for an (N, width) int64 array of state rows.

        Row i is from the view of row i's player to move and equals ``encode`` of that state exactly: the
        batched path is what networks train on, the scalar path what agents play with.
        """

    # ------------------------------------------------------------------ shared behaviour
    def check_state(self, state: Any) -> None:
        """Raise ``WrongGameError`` unless ``state`` is a state of this game."""
        if type(state) is not self.state_type:
            raise WrongGameError(
                f"{self.game_id}: expected a {self.state_type.__name__}, got {type(state).__name__} {state!r}"
            )

    def legal_actions(self, state: Any) -> list[int]:
        return [int(a) for a in np.flatnonzero(self.legal_moves(state))]

    def play(self, state: Any, move: int) -> Any:
        """The state after ``move``; ``IllegalMoveError`` naming the legal choices when it is not legal."""
        self.check_state(state)
        mask = self.legal_moves(state)
        # A bool is an int to Python but a boolean index to numpy (mask[True] is a 2-d array): not an action.
        action = type(move) is not bool and isinstance(move, (int, np.integer)) and 0 <= move < self.num_actions
        if not (action and mask[move]):
            shown = self.format_move(int(move)) if action else repr(move)
            if self.is_over(state):
                raise IllegalMoveError(f"{self.game_id}: move {shown} is illegal: the game is over")
            raise IllegalMoveError(
                f"{self.game_id}: move {shown} is illegal here; legal moves: "
                + " ".join(self.format_move(a) for a in np.flatnonzero(mask))
            )
        return self._apply(state, int(move))

    def winner(self, state: Any) -> int | None:
        """0 or 1 for the winner of a finished game, None for a draw or an unfinished game."""
        r = self.returns(state)
        if r[0] > 0:
            return 0
        if r[1] > 0:
            return 1
        return None

    def symmetries(self, state: Any) -> list[tuple[Any, np.ndarray]]:
        """Images of ``state`` under the game's symmetry group, identity first.

        Each item is ``(image_state, action_map)`` with ``action_map[a]`` the image of action ``a``.
        Games without symmetries return only the identity.
        """
        return [(state, np.arange(self.num_actions))]

    def symmetries_batch(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``symmetries`` for an (N, width) int64 array of state rows, for augmenting training batches.

        Returns ``(images, action_maps)``: int64 (S, N, width) with ``images[k, i]`` the image of row i under
        symmetry k, and int64 (S, num_actions) with ``action_maps[k][a]`` the image of action a.  Same order
        and meaning as ``symmetries`` (identity first); a game's action maps do not depend on the state, so
        there is one per symmetry, not one per row.  Games without symmetries return only the identity.
        """
        rows = np.asarray(states, dtype=np.int64)
        return rows[None].copy(), np.arange(self.num_actions, dtype=np.int64)[None]

    def encode(self, state: Any) -> np.ndarray:
        """float32 planes of shape ``encoding_shape`` from the view of the player to move.

        By default ``encode_batch`` of a one-row batch: one code path, so scalar and batched encodings agree.
        """
        return self.encode_batch(np.asarray([state], dtype=np.int64))[0]

    def state_key(self, state: Any) -> int:
        """A compact integer that identifies the state within this game (for tables and caches)."""
        return hash(state)

    def parse_moves(self, text: str) -> list[int]:
        """Actions for a move string; default notation: moves separated by spaces or commas."""
        if not isinstance(text, str):
            raise NotationError(f"{self.game_id}: a move string must be text, got {type(text).__name__}")
        return [self.parse_move(tok) for tok in text.replace(",", " ").split()]

    def format_moves(self, moves: Sequence[int]) -> str:
        return " ".join(self.format_move(m) for m in moves)

    def replay(self, moves: str | Sequence[int], start: Any | None = None) -> Any:
        """The state reached by playing ``moves`` (a move string or actions) from ``start`` (default initial).

        Errors name the failing move's position in the sequence.
        """
        actions = self.parse_moves(moves) if isinstance(moves, str) else list(moves)
        state = self.initial_state() if start is None else start
        for i, a in enumerate(actions):
            try:
                state = self.play(state, a)
            except IllegalMoveError as exc:
                raise IllegalMoveError(f"move {i + 1} of {moves!r}: {exc}") from None
        return state

    def score_margin(self, state: Any) -> int | None:
        """Score difference (player 0 minus player 1) for games that keep a score; None otherwise."""
        return None

    def score_margin_batch(self, states: np.ndarray) -> np.ndarray | None:
        """(N,) int64 ``score_margin`` (player 0 minus player 1) of every state row; None without a score.

        The sign is absolute, not the mover's view, exactly as ``score_margin``: margin targets are then the
        same numbers the referee reports.
        """
        return None

    def decided_values_batch(self, states: np.ndarray) -> np.ndarray | None:
        """(N,) float32 exact values of unfinished state rows that short tactics settle, for the player to move:
        +1 when the mover can win before its turn ends, -1 when every line loses by the end of the opponent's
        next turn, 0 where neither holds (the value is then unknown, not a draw).  None for a game without
        such a check.

        Why: a search that stops at a leaf one turn before a forced loss needs this to see it; a network
        trained on a short budget often does not (``agents/puct.py``, ``TacticalEvaluator``).
        """
        return None

    def __getstate__(self) -> dict:
        """Pickle without ``_memo``: a cache of the last state played, not part of the game."""
        state = dict(self.__dict__)
        state.pop("_memo", None)
        return state

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.game_id!r})"


class DigitNotation:
    """Move notation for games whose actions are named by one digit 1..N: tic-tac-toe cells, Connect 4 columns.

    A move string is those digits, optionally separated by spaces or commas ("4453", "4 4 5 3").  Mixed into a
    ``Game`` subclass, which sets ``num_actions`` (at most 9) and ``move_noun`` (e.g. "columns 1-7").
    """

    game_id: ClassVar[str]
    num_actions: ClassVar[int]
    move_noun: ClassVar[str]

    def format_move(self, move: int) -> str:
        return str(int(move) + 1)

    def parse_move(self, text: str) -> int:
        t = str(text).strip()
        if len(t) != 1 or not ("1" <= t <= str(self.num_actions)):
            raise NotationError(f"{self.game_id}: bad move {text!r}; moves are {self.move_noun}")
        return int(t) - 1

    def parse_moves(self, text: str) -> list[int]:
        if not isinstance(text, str):
            raise NotationError(f"{self.game_id}: a move string must be text, got {type(text).__name__}")
        moves = []
        for ch in text:
            if ch in " ,":
                continue
            if not ("1" <= ch <= str(self.num_actions)):
                raise NotationError(
                    f"{self.game_id}: bad move {ch!r} in {text!r}; moves are {self.move_noun}"
                )
            moves.append(int(ch) - 1)
        return moves

    def format_moves(self, moves: Sequence[int]) -> str:
        return "".join(self.format_move(m) for m in moves)


class BatchedGame(ABC):
    """N independent games of one ``Game`` held as rows of an (N, width) int64 array.

    ``states[i]`` is exactly the field tuple of the scalar state (``game.state_type(*states[i])``).  ``step``
    plays one action in every unfinished game; with ``auto_reset`` a game that ends is recorded in
    ``final_states`` and restarted from the initial state, so self-play loops never stop.
    """

    def __init__(self, game: Game, n: int, auto_reset: bool = True) -> None:
        if n <= 0:
            raise BoardRLError(f"batch size must be positive, got {n}")
        self.game = game
        self.n = n
        self.auto_reset = auto_reset
        self.width = len(game.state_type._fields)
        self.states = np.empty((n, self.width), dtype=np.int64)
        self.final_states = np.zeros((n, self.width), dtype=np.int64)
        self.reset()

    # ------------------------------------------------------------------ per game (subclasses implement)
    @abstractmethod
    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Play ``actions[i]`` in game i (ignored for finished games).

        Returns ``(finished, returns)``: bool (N,) for games that ended on this step and float32 (N, 2)
        per-player results of those games (zeros elsewhere).  Illegal actions raise ``IllegalMoveError``.
        """

    # ------------------------------------------------------------------ shared behaviour
    def legal_mask(self) -> np.ndarray:
        """(N, num_actions) bool; rows of finished games (without auto-reset) are all False."""
        return self.game.legal_mask_batch(self.states)

    def to_move(self) -> np.ndarray:
        """(N,) int8: player to move in each game."""
        return self.game.to_move_batch(self.states)

    def done(self) -> np.ndarray:
        """(N,) bool: which games are over (only possible without auto-reset): no legal move left."""
        return ~self.legal_mask().any(axis=1)

    def reset(self) -> None:
        self.states[:] = np.asarray(self.game.initial_state(), dtype=np.int64)

    def state(self, i: int) -> Any:
        return self.game.state_type(*(int(v) for v in self.states[i]))

    def set_state(self, i: int, state: Any) -> None:
        self.game.check_state(state)
        self.states[i] = np.asarray(state, dtype=np.int64)

    def load(self, states: Sequence[Any]) -> None:
        """Put the given states into rows 0..len-1 (they must number exactly N)."""
        if len(states) != self.n:
            raise BoardRLError(f"load: expected {self.n} states, got {len(states)}")
        for i, s in enumerate(states):
            self.set_state(i, s)


def random_legal_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of a boolean mask (-1 for rows with none)."""
    from boardrl.games._kernels import pick_random_legal

    u = rng.random(mask.shape[0])
    return pick_random_legal(mask, u)
