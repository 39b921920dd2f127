"""The Referee interface: exact game values and optimal moves, used to judge agents.

``solve(state)`` returns a ``Verdict`` from the view of the player to move.  ``optimal_moves`` are the moves
that keep the exact game value: for win/draw/loss games (tic-tac-toe, Connect 4) every move that keeps the
win (or the draw) is optimal, however fast; for Dots and Boxes the value is the final score margin, so a move
is optimal when it keeps the best achievable margin.

``make_referee`` (``solvers/registry.py``) gives a game's referee; it lives apart because it imports the
concrete referees, which import this interface.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

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


class RememberingReferee(Referee):
    """Another referee's verdicts, each position judged once, optionally kept in a file between processes.

    Why: evaluations judge the same seeded position sets again and again (every seed's agent, a search agent's
    network alone, every experiment of the game), and one Connect 4 verdict costs up to a second of search.
    ``store`` is a cache, not a result: verdicts are exact, and the file is read only when it was written by the
    same referee code (``code``: a fingerprint of the solver's and the game's source), otherwise ignored.
    ``known`` is a file of the same format that is only read (the ``referee`` stage's output, a DVC output
    that no other process may rewrite); its verdicts count as known, not as added.
    """

    def __init__(self, referee: Referee, store: str | Path | None = None, known: str | Path | None = None) -> None:
        super().__init__(referee.game)
        self.referee = referee
        self.verdicts: dict[tuple, Verdict] = {}
        self.store = Path(store) if store is not None else None
        self.code = _source_fingerprint(type(referee), type(referee.game))
        self.added = 0
        for path in (self.store, known):
            if path is not None:
                self.verdicts.update(self._read(Path(path)))

    def solve(self, state: Any) -> Verdict:
        key = tuple(state)
        verdict = self.verdicts.get(key)
        if verdict is None:
            verdict = self.verdicts[key] = self.referee.solve(state)
            self.added += 1
        return verdict

    def add(self, states: Sequence[Any], verdicts: Sequence[Verdict]) -> None:
        """Record verdicts found elsewhere (worker processes of the same referee code) as found here."""
        for state, verdict in zip(states, verdicts, strict=True):
            self.verdicts[tuple(state)] = verdict
        self.added += len(verdicts)

    def save(self) -> None:
        """Write every verdict known to ``store`` when this process added any."""
        if self.store is None or not self.added:
            return
        self.write(self.store)
        self.added = 0

    def write(self, path: str | Path) -> None:
        """Write every verdict known to ``path``, atomically, in the format ``store`` and ``known`` read."""
        write_verdicts(path, self.game.game_id, self.code, self.verdicts)

    def _read(self, path: Path) -> dict[tuple, Verdict]:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("game") != self.game.game_id or data.get("code") != self.code:
                return {}
            return {tuple(k): Verdict(value, tuple(moves), margin, score)
                    for k, value, moves, margin, score in data["verdicts"]}
        except (OSError, ValueError, KeyError, TypeError):
            return {}  # missing, unreadable or from another version: judge afresh


def _source_fingerprint(*classes: type) -> str:
    """sha256 over the source files defining ``classes`` (with the referee interface's own)."""
    digest = hashlib.sha256()
    for path in sorted({inspect.getsourcefile(c) for c in (*classes, Referee)}):
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()


def write_verdicts(path: str | Path, game_id: str, code: str | None, verdicts: dict[tuple, Verdict]) -> None:
    """Write ``verdicts`` (state row -> verdict) to ``path`` atomically, in the file format ``RememberingReferee``
    reads; ``code`` None (no referee code) makes a file that reads back as no verdicts for any referee."""
    from boardrl.atomic_io import atomic_write_json

    rows = [[list(k), v.value, list(v.optimal_moves), v.margin, v.score] for k, v in verdicts.items()]
    atomic_write_json(Path(path), {"game": game_id, "code": code, "verdicts": rows})
