"""Figures that MLflow runs carry (``mlflow.log_figure``): a stage's numbers at a glance in the UI.

Why here and not in the report: the report stage draws the project-wide figures from results/; these are the
per-run pictures logged with each train / evaluate run, so comparing runs side by side in the MLflow UI shows
them without building the report.  Matplotlib runs headless (Agg).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence
from boardrl.evaluate.stats import SEATS

OUTCOMES = (("win", "tab:green"), ("draw", "tab:gray"), ("loss", "tab:red"))


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def curve_figure(rows: Iterable[Sequence[Any]], title: str):
    """A matplotlib figure: combined W/D/L against training games, one panel per opponent."""
    plt = _pyplot()
    rows = [r for r in rows if r[2] == "combined"]
    opponents = list(dict.fromkeys(r[1] for r in rows))
    fig, axes = plt.subplots(1, max(1, len(opponents)), figsize=(4.2 * max(1, len(opponents)), 3.4),
                             squeeze=False, sharey=True)
    for ax, opp in zip(axes[0], opponents):
        pts = sorted((r for r in rows if r[1] == opp), key=lambda r: r[0])
        steps = [r[0] for r in pts]
        for col, label, colour in ((3, "win", "tab:green"), (4, "draw", "tab:gray"), (5, "loss", "tab:red")):
            ax.plot(steps, [float(r[col]) for r in pts], marker="o", ms=3, label=label, color=colour)
        positive = [s for s in steps if s > 0]
        ax.set_xscale("symlog", linthresh=min(positive) if positive else 1)
        ax.set_title(f"vs {opp}", fontsize=10)
        ax.set_xlabel("training games")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("rate (both seats)")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


def ladder_figure(opponents: Mapping[str, Mapping[str, Any]], title: str):
    """Stacked W/D/L bars per opponent and seat, with the win rate's 95% Wilson interval as an error bar."""
    plt = _pyplot()
    names = list(opponents)
    fig, axes = plt.subplots(1, len(SEATS), figsize=(4.0 * len(SEATS), 0.5 * max(3, len(names)) + 1.2),
                             sharey=True, squeeze=False)
    for ax, seat in zip(axes[0], SEATS):
        left = [0.0] * len(names)
        for outcome, colour in OUTCOMES:
            vals = [float(opponents[n][seat][outcome] or 0.0) for n in names]
            ax.barh(names, vals, left=left, color=colour, label=outcome)
            left = [a + b for a, b in zip(left, vals)]
        wins = [float(opponents[n][seat]["win"] or 0.0) for n in names]
        cis = [opponents[n][seat]["win_ci"] for n in names]
        ax.errorbar(wins, names, xerr=[[w - c[0] for w, c in zip(wins, cis)], [c[1] - w for w, c in zip(wins, cis)]],
                    fmt="none", ecolor="black", capsize=3, lw=1)
        ax.set_xlim(0, 1)
        ax.set_title(seat.replace("_", " "), fontsize=10)
        ax.invert_yaxis()
    axes[0][0].legend(fontsize=8, loc="lower right")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig
