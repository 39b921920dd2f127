"""What the referee says about a position's moves, and about each move of a game already played.

Why its own module: the page's "show the referee" toggle must show, for every legal move, the exact value the
project's referees compute (``boardrl.solvers``) and nothing invented here, and must mark each move of the game
as best, optimal or a mistake by the same rule the optimal-move rate uses (``Referee`` keeps "optimal" =
value-keeping).  The referees are used only through their public methods:

* Connect 4: ``Connect4Referee.move_scores`` (exact score per column: positive = the mover wins, larger =
  sooner; ``solvers/connect4.py``);
* Dots and Boxes: ``DotsAndBoxesReferee.move_margins`` (final margin, mover minus opponent, boxes already taken
  included);
* any other referee (tic-tac-toe): ``solve`` of each successor, its value turned to the mover's view.

A move is *best* when its value equals the best value, *optimal* when it keeps the game's outcome (win, draw or
loss; a slower Connect 4 win is optimal but not best), otherwise a *mistake*, by ``best - value`` in the game's
unit (Connect 4 score points, Dots and Boxes boxes of margin, tic-tac-toe outcome steps).  Dots and Boxes has
no slower win: its value is the margin itself, so optimal = best, as for ``DotsAndBoxesReferee.solve``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from boardrl.games.base import Game
from boardrl.solvers.base import Referee

KINDS = {"result": "outcome", "score": "Connect 4 score", "margin": "final margin"}
OUTCOMES = {1: "win", 0: "draw", -1: "loss"}


def _sign(v: int) -> int:
    return (v > 0) - (v < 0)


@dataclass(frozen=True)
class MoveValues:
    """Exact value of each legal move of one position, from the view of the player to move there."""

    kind: str  # "result" (+1/0/-1), "score" (Connect 4) or "margin" (Dots and Boxes)
    values: dict[int, int]  # action -> value after playing it, for the mover
    plies: int  # stones on the board (Connect 4 labels count moves from here)

    @property
    def best(self) -> int:
        return max(self.values.values())

    def optimal(self, action: int) -> bool:
        v = self.values[action]
        return v == self.best if self.kind == "margin" else _sign(v) == _sign(self.best)

    def optimal_moves(self) -> list[int]:
        return sorted(a for a in self.values if self.optimal(a))


def move_values(referee: Referee, game: Game, state: Any) -> MoveValues:
    """The referee's exact value of every legal move of ``state`` (empty once the game is over)."""
    plies = int(getattr(state, "plies", 0))
    if game.is_over(state):
        return MoveValues("result", {}, plies)
    if hasattr(referee, "move_scores"):  # Connect 4: exact scores in one search per column
        scores = referee.move_scores(state)
        return MoveValues("score", {c: int(v) for c, v in enumerate(scores) if v is not None}, plies)
    if hasattr(referee, "move_margins"):  # Dots and Boxes: one table lookup per edge
        return MoveValues("margin", {int(e): int(m) for e, m in referee.move_margins(state).items()}, plies)
    mover, values = game.to_move(state), {}
    for a in game.legal_actions(state):
        child = game.play(state, a)
        v = referee.solve(child).value
        values[a] = v if game.to_move(child) == mover else -v  # a Verdict is for the player to move there
    return MoveValues("result", values, plies)


def value_text(mv: MoveValues, v: int) -> str:
    """A move's value in words: "win", "+3: win in 2", "-2: loses by 2 boxes"."""
    outcome = OUTCOMES[_sign(v)]
    if mv.kind == "score":
        if v > 0:
            n = 22 - v - mv.plies // 2  # own moves to the win, this one included (score = 22 - winning stone)
            return f"{v:+d}: win in {n} move{'s' * (n != 1)}"
        if v < 0:
            n = 22 + v - (mv.plies + 1) // 2  # the opponent's moves to its win
            return f"{v:+d}: loss, the opponent wins in {n} move{'s' * (n != 1)}"
        return "0: draw"
    if mv.kind == "margin":
        if v == 0:
            return "0: draw"
        return f"{v:+d}: {'wins' if v > 0 else 'loses'} by {abs(v)} box{'es' * (abs(v) != 1)}"
    return outcome


def values_json(game: Game, mv: MoveValues) -> dict[str, Any]:
    """The per-move values for the page: move label, value, words, and best / optimal / mistake."""
    moves = []
    for a in sorted(mv.values):
        v = mv.values[a]
        mark = "best" if v == mv.best else "optimal" if mv.optimal(a) else "mistake"
        moves.append({"move": game.format_move(a), "value": v, "text": value_text(mv, v), "mark": mark,
                      "outcome": OUTCOMES[_sign(v)]})
    out: dict[str, Any] = {"kind": mv.kind, "unit": KINDS[mv.kind], "values": moves}
    if mv.values:
        out["value"] = mv.best
        out["text"] = value_text(mv, mv.best)
        out["optimal_moves"] = [game.format_move(a) for a in mv.optimal_moves()]
    return out


def judge(game: Game, mv: MoveValues, action: int) -> dict[str, Any]:
    """One played move against the referee: its mark, value, the best value, how much it lost, in words.

    ``short`` is what the move list shows beside the mark's sign (✓ / ✗), ``text`` the full sentence.
    """
    v, best = mv.values[action], mv.best
    lost = best - v
    was, now = OUTCOMES[_sign(best)], OUTCOMES[_sign(v)]
    if v == best:
        mark, short, text = "best", "best", f"best ({value_text(mv, v)})"
    elif mv.optimal(action):  # Connect 4 only: the outcome kept, more slowly
        mark, short = "optimal", f"optimal, -{lost}"
        text = f"optimal: keeps the {now}, {lost} below the best score ({value_text(mv, v)}; best {best:+d})"
    else:
        mark = "mistake"
        if mv.kind == "margin":
            boxes = f"{lost} box{'es' * (lost != 1)}"
            short = f"-{boxes}"
            text = f"mistake: {boxes} of margin lost ({v:+d} instead of {best:+d})"
            if was != now:
                text += f", {was} → {now}"
        elif mv.kind == "score":
            short = f"{was} → {now}, -{lost}"
            text = f"mistake: {was} → {now} (score {v:+d} instead of {best:+d}, {lost} points lost)"
        else:
            short, text = f"{was} → {now}", f"mistake: {was} → {now}"
    return {"mark": mark, "value": v, "best": best, "lost": lost, "short": short, "text": text}


def review(game: Game, actions: tuple[int, ...], states: tuple[Any, ...],
           values_of: Callable[[Any], MoveValues | None]) -> list[dict[str, Any]]:
    """Each played move judged (``None`` fields while its position's values are still being computed)."""
    out = []
    for i, (state, action) in enumerate(zip(states, actions)):
        mv = values_of(state)
        row: dict[str, Any] = {"ply": i + 1, "player": game.to_move(state), "move": game.format_move(action)}
        row.update(judge(game, mv, action) if mv is not None else {"mark": None, "short": "…", "text": "computing"})
        out.append(row)
    return out
