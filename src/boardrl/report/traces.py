"""Q-value traces (reference system 000's experiments 01 and 02): when did Q(s0, a) converge, and the figure of it.

SEEDS.md "Seed 000", Experiments and Reported results: from s0 (X on 3 and 5, O on 7 and 8, X to move) Q(s0, 9)
goes to +1 and Q(s0, {1,2,4,6}) to -1, "after about 800 episodes" against AlphaBeta (exp 01) and "after about
3,500 episodes" in self-play (exp 02).  The system shows a figure only, so "converged" needs a definition:

    the convergence episode is the first game g such that after g and after every later game of the run,
    every traced action's Q lies within ``tol`` of its target.

``tol`` = 0.05 (``DEFAULT_TOL``): the targets are +-1, so 0.05 is 2.5% of the value range, far below the gap of
2 between the winning move and the losing ones (greedy play is right long before), and small enough that a
reader of the system's figure would call the curves "at" +-1.  The bound matters: Q(s0, 9) (and, against the
system's AlphaBeta, Q(s0, 2)) bootstraps on later states, so the last approach is slow (alpha = 0.1 closes 10%
of the gap per visit).  Measured with seeds 0, 1, 2 and 23 (tabular_q, parallel_games 1): exp 01 converges at
games 339-497 with tol 0.1, 443-643 with 0.05, 581-783 with 0.02; exp 02 at 1,295-2,076, 1,719-2,360 and
2,408-2,733.  0.05 is the loosest of these that a plot at the system's scale shows as converged.

Rows are what ``tabular_q`` records with ``trace: true`` (``results/train/<id>/seed-<k>/trace.tsv``):
``{game, action, q}``, one row per legal action of s0 after each game (1-based), actions in move notation.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, Mapping, Sequence

from boardrl.report.results import ReportError

#: Game-theoretic values of s0's moves for X (reference system 000, exp 01/02): only 9 (block and fork) wins.
SYSTEM000_S0_TARGETS: dict[str, float] = {"1": -1.0, "2": -1.0, "4": -1.0, "6": -1.0, "9": 1.0}
#: The reference system's reported convergence (episodes): exp 01 vs AlphaBeta, exp 02 self-play.
SYSTEM000_REPORTED = {"exp01": 800, "exp02": 3_500}
DEFAULT_TOL = 0.05
#: action -> (games ascending, Q after each)
Series = dict[str, tuple[list[int], list[float]]]


def read_trace(path: Path) -> list[dict[str, Any]]:
    """The rows of a ``trace.tsv`` (game int, action str, q float)."""
    with Path(path).open(newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t")
        if reader.fieldnames != ["game", "action", "q"]:
            raise ReportError(f"{path}: expected columns game, action, q; got {reader.fieldnames}")
        try:
            return [{"game": int(r["game"]), "action": r["action"], "q": float(r["q"])} for r in reader]
        except (TypeError, ValueError) as exc:
            raise ReportError(f"{path}: malformed row ({exc})") from None


def series(rows: Sequence[Mapping[str, Any]]) -> Series:
    """Per action (in first-seen order): its games (ascending) and Q values after them."""
    by_action: dict[str, dict[int, float]] = {}
    for r in rows:
        by_action.setdefault(str(r["action"]), {})[int(r["game"])] = float(r["q"])
    return {a: (sorted(d), [d[g] for g in sorted(d)]) for a, d in by_action.items()}


def _checked(rows: Sequence[Mapping[str, Any]], targets: Mapping[str, float]) -> Series:
    if not rows:
        raise ReportError("Q-value trace: no rows")
    s = series(rows)
    missing = [a for a in targets if a not in s]
    if missing:
        raise ReportError(f"Q-value trace: no rows for target action(s) {missing}; traced: {list(s)}")
    return s


def convergence_episode(rows: Sequence[Mapping[str, Any]], targets: Mapping[str, float],
                        tol: float = DEFAULT_TOL) -> int | None:
    """The first game after which every action in ``targets`` stays within ``tol`` of its target to the end
    of the run; None if some action is still outside at the last game.  Actions without a target are ignored.
    """
    s = _checked(rows, targets)
    first = min(s[a][0][0] for a in targets)
    last_bad = None
    for a, target in targets.items():
        for g, q in zip(*s[a]):
            if abs(q - target) > tol and (last_bad is None or g > last_bad):
                last_bad = g
    if last_bad is None:
        return first
    later = sorted({g for a in targets for g in s[a][0] if g > last_bad})
    return later[0] if later else None


def trace_summary(rows: Sequence[Mapping[str, Any]], targets: Mapping[str, float],
                  tol: float = DEFAULT_TOL) -> dict[str, Any]:
    """{final_q: {action: Q after the last game}, converged_at: game or None, tol, games: the last game}."""
    s = _checked(rows, targets)
    return {"final_q": {a: qs[-1] for a, (_, qs) in s.items()},
            "converged_at": convergence_episode(rows, targets, tol), "tol": tol,
            "games": max(games[-1] for games, _ in s.values())}


def trace_figure(rows: Sequence[Mapping[str, Any]], targets: Mapping[str, float] | None = None,
                 tol: float = DEFAULT_TOL, title: str = "Q(s0, a) during training"):
    """Q(s0, a) against training games, one line per action; targets dotted with their +-tol band, and the
    convergence episode as a vertical line.  Returns a matplotlib ``Figure`` (object API, no pyplot)."""
    from matplotlib.figure import Figure

    s = series(rows)
    if not s:
        raise ReportError("Q-value trace: no rows")
    fig = Figure(figsize=(6.4, 3.8), layout="constrained")
    ax = fig.subplots()
    for i, (action, (games, qs)) in enumerate(s.items()):
        colour = f"C{i % 10}"
        ax.plot(games, qs, color=colour, linewidth=1.2, label=f"a = {action}")
        if targets and action in targets:
            ax.axhline(targets[action], color=colour, linestyle=":", linewidth=0.8)
    if targets:
        for value in sorted(set(targets.values())):
            ax.axhspan(value - tol, value + tol, color="0.85", zorder=0)
        conv = convergence_episode(rows, targets, tol)
        if conv is not None:
            ax.axvline(conv, color="black", linestyle="--", linewidth=1.0)
            ax.annotate(f"converged at {conv} (tol {tol:g})", (conv, 0.0), xytext=(4, 4),
                        textcoords="offset points", fontsize=8)
    ax.set_xlabel("training games (episodes)")
    ax.set_ylabel("Q(s0, a)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="center right")
    return fig
