"""The report's matplotlib figures, drawn with the object API (``Figure``, no pyplot, no global backend state).

Colours: win green, draw grey, loss red everywhere; seats: combined solid, as first dashed, as second dotted.
Intervals are the 95% Wilson intervals the evaluate stage computed (drawn as error bars).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from boardrl.report.results import SEATS, Experiment, finite

OUTCOMES = ("win", "draw", "loss")
COLOURS = {"win": "#2a9d3f", "draw": "#8c8c8c", "loss": "#d1342f"}
SEAT_STYLES = {"combined": "-", "as_first": "--", "as_second": ":"}
SEAT_LABELS = {"as_first": "as first", "as_second": "as second", "combined": "combined"}
DPI = 110


def save(fig: Figure, path: Path) -> None:
    """PNG without a software stamp, so the same numbers give the same bytes."""
    fig.savefig(path, format="png", dpi=DPI, metadata={"Software": None})


def _grid(n: int, ncols: int = 3, width: float = 4.6, height: float = 3.4) -> tuple[Figure, list[Any]]:
    ncols = min(ncols, max(n, 1))
    nrows = -(-max(n, 1) // ncols)
    fig = Figure(figsize=(width * ncols, height * nrows + 0.6), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel().tolist()
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes[:n]


def learning_curve(exp: Experiment) -> Figure:
    """W/D/L against each benchmark opponent vs training games (log x; 0 sits on the linear part)."""
    curve: pd.DataFrame = exp.curve
    opponents = list(dict.fromkeys(curve["opponent"]))
    fig, axes = _grid(len(opponents))
    positive = curve.loc[curve["step"] > 0, "step"]
    linthresh = float(positive.min()) if len(positive) else 1.0
    for ax, opp in zip(axes, opponents):
        sub = curve[curve["opponent"] == opp]
        for seat in SEATS:
            rows = sub[sub["seat"] == seat].sort_values("step")
            for out in OUTCOMES:
                ax.plot(rows["step"], rows[out], SEAT_STYLES[seat], color=COLOURS[out], marker=".",
                        linewidth=2.0 if seat == "combined" else 1.2)
        ax.set_xscale("symlog", linthresh=linthresh)
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"vs {opp}")
        ax.set_xlabel("training games")
        ax.set_ylabel("rate")
        ax.grid(alpha=0.3)
    _legend(fig)
    fig.suptitle(f"{exp.agent} on {exp.game}: learning curves")
    return fig


def _legend(fig: Figure) -> None:
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=COLOURS[o], linewidth=2) for o in OUTCOMES]
    handles += [Line2D([], [], color="black", linestyle=SEAT_STYLES[s]) for s in SEATS]
    labels = [*OUTCOMES, *(SEAT_LABELS[s] for s in SEATS)]
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), frameon=False)


def _outcome_legend(fig: Figure) -> None:
    from matplotlib.patches import Patch

    handles = [Patch(color=COLOURS[o]) for o in OUTCOMES]
    fig.legend(handles, list(OUTCOMES), loc="outside lower center", ncols=3, frameon=False)


def _errors(stats: list[dict[str, Any]], out: str) -> tuple[np.ndarray, np.ndarray]:
    """Bar heights and asymmetric error lengths from rates and their ``<out>_ci`` intervals (0 if absent)."""
    heights, err = [], [[], []]
    for s in stats:
        v = finite(s.get(out)) or 0.0
        ci = s.get(f"{out}_ci") or [v, v]
        lo, hi = finite(ci[0]), finite(ci[1])
        heights.append(v)
        err[0].append(max(0.0, v - (lo if lo is not None else v)))
        err[1].append(max(0.0, (hi if hi is not None else v) - v))
    return np.array(heights), np.array(err)


def _wdl_bars(ax: Any, names: list[str], stats: list[dict[str, Any]]) -> None:
    x = np.arange(len(names))
    width = 0.26
    for k, out in enumerate(OUTCOMES):
        h, e = _errors(stats, out)
        ax.bar(x + (k - 1) * width, h, width, yerr=e, color=COLOURS[out], capsize=2)
    ax.set_xticks(x, names, rotation=30, ha="right")
    ax.set_ylim(0, 1.05)
    ax.grid(axis="y", alpha=0.3)


def wdl_bars(exp: Experiment) -> Figure:
    """Final W/D/L against each opponent of the ladder, one panel per seat, with 95% intervals."""
    names = list(exp.opponents)
    fig, axes = _grid(len(SEATS), width=max(4.6, 0.9 * len(names) + 1.5))
    for ax, seat in zip(axes, SEATS):
        _wdl_bars(ax, names, [exp.opponents[n][seat] for n in names])
        ax.set_title(SEAT_LABELS[seat])
        ax.set_ylabel("rate")
    _outcome_legend(fig)
    fig.suptitle(f"{exp.agent} on {exp.game}: final evaluation (95% Wilson intervals)")
    return fig


def optimal_rates(items: list[tuple[str, float, list[float] | None]]) -> Figure:
    """Optimal-move rate of each experiment (label, rate, [lo, hi])."""
    fig = Figure(figsize=(7.5, 0.5 * len(items) + 1.4), layout="constrained")
    ax = fig.subplots()
    y = np.arange(len(items))
    rates = np.array([r for _, r, _ in items])
    lo = np.array([r - (ci[0] if ci else r) for _, r, ci in items])
    hi = np.array([(ci[1] if ci else r) - r for _, r, ci in items])
    ax.barh(y, rates, xerr=np.vstack([lo, hi]), color="#3a6fb0", capsize=3)
    ax.set_yticks(y, [label for label, _, _ in items])
    ax.invert_yaxis()
    ax.set_xlim(0, 1.02)
    ax.set_xlabel("share of moves that keep the exact game value")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title("Optimal-move rates (95% Wilson intervals)")
    return fig


def uci_results(exp: Experiment) -> Figure:
    """Connect 4 from the UCI start positions by label: seed 000's protocol and the full protocol."""
    uci = (exp.evaluation or {}).get("uci") or {}
    panels = []
    if uci.get("seed000"):
        panels.append(("seed 000 protocol: agent first vs random", uci["seed000"]))
    for seat in SEATS:
        if uci.get("full"):
            panels.append((f"full protocol, {SEAT_LABELS[seat]}", {k: v[seat] for k, v in uci["full"].items()}))
    fig, axes = _grid(len(panels), ncols=2)
    for ax, (title, by_label) in zip(axes, panels):
        labels = list(by_label)
        _wdl_bars(ax, [f"{lab} positions" for lab in labels], [by_label[lab] for lab in labels])
        ax.set_title(title)
        ax.set_ylabel("rate")
    _outcome_legend(fig)
    fig.suptitle(f"{exp.agent} on {exp.game}: UCI start positions by label (95% Wilson intervals)")
    return fig
