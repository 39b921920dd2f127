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

What the page colours: each move's *outcome class* (win, draw or loss for the mover), not its mark, and a star
on the best score within a class (``best_in_class``).  Why: in a lost Connect 4 position every move keeps the
loss, so every move is "optimal", yet -2 (the slowest loss) and -4 are not equally good; colouring by mark
painted them all green.  The page also says which meaning "optimal" has (``OPTIMAL_MEANING``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from boardrl.games.base import Game
from boardrl.solvers.base import Referee

KINDS = {"result": "outcome", "score": "Connect 4 score", "margin": "final margin"}
OUTCOMES = {1: "win", 0: "draw", -1: "loss"}
#: What "optimal" means for each kind of value, shown on the page under the referee's summary.
OPTIMAL_MEANING = {
    "result": "Colours: the outcome each move leads to for the side to move (green win, grey draw, red loss). "
              "\u201cOptimal\u201d (as in the optimal-move rate) means value-keeping: the move keeps the "
              "position's outcome.",
    "score": "Colours: the outcome each move leads to for the side to move (green win, grey draw, red loss); "
             "\u2605 marks the best score within an outcome (the fastest win, the slowest loss). "
             "\u201cOptimal\u201d (as in the optimal-move rate) means value-keeping: the move keeps the "
             "position's outcome, however slow the win; \u201cbest\u201d means the best score.",
    "margin": "Colours: the outcome each move leads to for the side to move (green win, grey draw, red loss); "
              "\u2605 marks the best final margin within an outcome. \u201cOptimal\u201d means the best final "
              "margin: in Dots and Boxes the value is the margin itself, so optimal = best.",
}
#: The best score of an outcome class, in words (``summary_text``).
CLASS_BEST = {"win": "fastest win", "draw": "draw", "loss": "slowest loss"}


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


def outcome_of(v: int) -> str:
    """"win", "draw" or "loss": the outcome class of a value (for the player it belongs to)."""
    return OUTCOMES[_sign(v)]


def outcome_classes(mv: MoveValues) -> dict[int, tuple[str, bool]]:
    """Each move's outcome class and whether it has the best value within that class.

    ``best_in_class`` is True only where the class's values differ: a star on every draw (or on every move of a
    tic-tac-toe class, where a class has one value) would say nothing.
    """
    by_class: dict[str, list[int]] = {}
    for v in mv.values.values():
        by_class.setdefault(outcome_of(v), []).append(v)
    out = {}
    for a, v in mv.values.items():
        vals = by_class[outcome_of(v)]
        out[a] = (outcome_of(v), v == max(vals) and len(set(vals)) > 1)
    return out


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


def _labels(game: Game, actions: list[int]) -> str:
    return ", ".join(game.format_move(a) for a in sorted(actions))


def summary_text(game: Game, mv: MoveValues) -> str:
    """The referee's verdict in a sentence or two: the value, then each outcome class with its starred moves.

    E.g. "Lost for the side to move: -2: loss, the opponent wins in 9 moves. Every move loses; ★ the slowest
    loss (-2): 2, 3, 6.  Value-keeping (“optimal”) moves: all 7."
    """
    classes = outcome_classes(mv)
    head = {"win": "Won", "draw": "Drawn", "loss": "Lost"}[outcome_of(mv.best)]
    parts = [f"{head} for the side to move ({value_text(mv, mv.best)})."]
    present = [c for c in ("win", "draw", "loss") if any(k == c for k, _ in classes.values())]
    for c in present:
        members = [a for a, (k, _) in classes.items() if k == c]
        verb = {"win": "win", "draw": "draw", "loss": "lose"}[c]
        line = f"Every move {verb}s" if len(present) == 1 else f"{'Moves that ' + verb}: {_labels(game, members)}"
        starred = [a for a in members if classes[a][1]]
        if starred:
            what = "best margin" if mv.kind == "margin" else CLASS_BEST[c]
            line += f"; \u2605 {what} ({mv.values[starred[0]]:+d}): {_labels(game, starred)}"
        parts.append(line + ".")
    optimal = mv.optimal_moves()
    word = "Best-margin (\u201coptimal\u201d)" if mv.kind == "margin" else "Value-keeping (\u201coptimal\u201d)"
    shown = f"all {len(optimal)}" if len(optimal) == len(mv.values) and len(optimal) > 1 else _labels(game, optimal)
    parts.append(f"{word} moves: {shown}.")
    return " ".join(parts)


def values_json(game: Game, mv: MoveValues) -> dict[str, Any]:
    """The per-move values for the page: move label, value, words, best / optimal / mistake, outcome class and
    whether the move has the best value of its class; the summary and what "optimal" means here."""
    moves = []
    classes = outcome_classes(mv)
    for a in sorted(mv.values):
        v = mv.values[a]
        mark = "best" if v == mv.best else "optimal" if mv.optimal(a) else "mistake"
        outcome, best_in_class = classes[a]
        moves.append({"move": game.format_move(a), "value": v, "text": value_text(mv, v), "mark": mark,
                      "outcome": outcome, "best_in_class": best_in_class})
    out: dict[str, Any] = {"kind": mv.kind, "unit": KINDS[mv.kind], "values": moves,
                           "optimal_meaning": OPTIMAL_MEANING[mv.kind]}
    if mv.values:
        out["value"] = mv.best
        out["text"] = value_text(mv, mv.best)
        out["optimal_moves"] = [game.format_move(a) for a in mv.optimal_moves()]
        out["best_moves"] = [game.format_move(a) for a in sorted(mv.values) if mv.values[a] == mv.best]
        out["summary"] = summary_text(game, mv)
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
            text = f"mistake: {was} → {now} (score {v:+d} instead of {best:+d}, {lost} point{'s' * (lost != 1)} lost)"
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
