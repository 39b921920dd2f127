"""The report's matplotlib figures, drawn with the object API (``Figure``, no pyplot, no global backend state).

Each figure function takes only what it draws (ids, curves, readings), never a whole ``Experiment``: the figure
cache (``report/figure_cache.py``) keys an entry on the arguments, and an experiment also carries file paths,
MLflow run ids and training times, which differ between two runs of equal numbers and would make every figure
miss.

Colours: win green, draw grey, loss red everywhere; the seeds of an experiment are shades of the same colour
(lighter = later seed), so several seeds read as one family.  Intervals are the ones the evaluate stage
computed (drawn as error bars): 95% Wilson for one seed's games, percentile bootstrap over seeds for an IQM.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from boardrl.report.evaluation import MatchReading, SeatReading, UCIReading
from boardrl.report.results import SEATS, Experiment, finite

OUTCOMES = ("win", "draw", "loss")
COLOURS = {"win": "#2a9d3f", "draw": "#8c8c8c", "loss": "#d1342f"}
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


def _shade(colour: str, k: int, n: int) -> tuple[float, float, float]:
    """Seed ``k`` of ``n`` in ``colour``'s family: from the full colour towards white, so seeds stay apart."""
    from matplotlib.colors import to_rgb

    mix = 0.6 * k / max(n - 1, 1)
    r, g, b = to_rgb(colour)
    return (r + (1 - r) * mix, g + (1 - g) * mix, b + (1 - b) * mix)


def _combined(curve: pd.DataFrame, opponent: str) -> pd.DataFrame:
    rows = curve[(curve["opponent"] == opponent) & (curve["seat"] == "combined")]
    return rows.sort_values("step")


def _curve_panel(ax: Any, curves: dict[int, pd.DataFrame], opponent: str, unit: str, linthresh: float) -> None:
    """Combined W/D/L against ``opponent``: a thin line per seed and, with several seeds, their mean in bold."""
    per_seed = {k: _combined(c, opponent) for k, c in curves.items()}
    for out in OUTCOMES:
        for i, rows in enumerate(per_seed.values()):
            ax.plot(rows["step"], rows[out], color=_shade(COLOURS[out], i, len(per_seed)), marker=".",
                    linewidth=1.0 if len(per_seed) > 1 else 2.0, markersize=3)
        if len(per_seed) > 1:
            mean = pd.concat(per_seed.values()).groupby("step")[out].mean()
            ax.plot(mean.index, mean.to_numpy(), color=COLOURS[out], linewidth=2.4)
    ax.set_xscale("symlog", linthresh=linthresh)
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"vs {opponent}")
    ax.set_xlabel(f"training {unit}")
    ax.set_ylabel("rate (combined seats)")
    ax.grid(alpha=0.3)


def curves_of(exp: Experiment) -> dict[int, pd.DataFrame]:
    """The seeds' learning curves that have rows, by seed: what ``learning_curve`` draws."""
    return {k: s.curve for k, s in exp.seeds.items() if s.curve is not None and len(s.curve)}


def learning_curve(exp_id: str, learner: str, game: str, unit: str, curves: dict[int, pd.DataFrame]) -> Figure:
    """W/D/L (combined seats) against each benchmark opponent vs training progress, one line per seed (log x);
    ``curves`` are the seeds' non-empty curves (``curves_of``)."""
    opponents = list(dict.fromkeys(o for c in curves.values() for o in c["opponent"]))
    fig, axes = _grid(len(opponents))
    steps = pd.concat([c["step"] for c in curves.values()])
    positive = steps[steps > 0]
    linthresh = float(positive.min()) if len(positive) else 1.0
    for ax, opp in zip(axes, opponents):
        _curve_panel(ax, curves, opp, unit, linthresh)
    _curve_legend(fig, sorted(curves))
    fig.suptitle(f"{exp_id}: learning curves\n{learner} on {game}")
    return fig


def _curve_legend(fig: Figure, seeds: list[int]) -> None:
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=COLOURS[o], linewidth=2) for o in OUTCOMES]
    labels = list(OUTCOMES)
    if len(seeds) > 1:
        handles += [Line2D([], [], color=_shade("#000000", i, len(seeds)), linewidth=1) for i in range(len(seeds))]
        labels += [f"seed {k}" for k in seeds]
        handles.append(Line2D([], [], color="black", linewidth=2.4))
        labels.append("mean of seeds")
    else:
        labels = [f"{o} (seed {seeds[0]})" for o in OUTCOMES] if seeds else labels
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), frameon=False)


def _outcome_legend(fig: Figure) -> None:
    from matplotlib.patches import Patch

    handles = [Patch(color=COLOURS[o]) for o in OUTCOMES]
    fig.legend(handles, list(OUTCOMES), loc="outside lower center", ncols=3, frameon=False)


def _errors(stats: list[SeatReading], out: str) -> tuple[np.ndarray, np.ndarray]:
    """Bar heights and asymmetric error lengths from rates and their intervals (0 if absent)."""
    heights, err = [], [[], []]
    for s in stats:
        v = finite(s.rate(out)) or 0.0
        ci = s.interval(out) or (v, v)
        lo, hi = finite(ci[0]), finite(ci[1])
        heights.append(v)
        err[0].append(max(0.0, v - (lo if lo is not None else v)))
        err[1].append(max(0.0, (hi if hi is not None else v) - v))
    return np.array(heights), np.array(err)


def _wdl_bars(ax: Any, names: list[str], stats: list[SeatReading]) -> None:
    x = np.arange(len(names))
    width = 0.26
    for k, out in enumerate(OUTCOMES):
        h, e = _errors(stats, out)
        ax.bar(x + (k - 1) * width, h, width, yerr=e, color=COLOURS[out], capsize=2)
    ax.set_xticks(x, names, rotation=30, ha="right")
    ax.set_ylim(0, 1.05)
    ax.grid(axis="y", alpha=0.3)


def wdl_bars(exp_id: str, seed: int, opponents: dict[str, MatchReading]) -> Figure:
    """Final W/D/L of one seed against each opponent of the ladder, one panel per seat, with 95% intervals."""
    names = list(opponents)
    fig, axes = _grid(len(SEATS), width=max(4.6, 0.9 * len(names) + 1.5))
    for ax, seat in zip(axes, SEATS):
        _wdl_bars(ax, names, [opponents[n].seats[seat] for n in names])
        ax.set_title(SEAT_LABELS[seat])
        ax.set_ylabel("rate")
    _outcome_legend(fig)
    fig.suptitle(f"{exp_id}, seed {seed}: final evaluation\n(95% Wilson intervals)")
    return fig


@dataclass(frozen=True)
class RatePoint:
    """One optimal-move rate in the figure: a seed's (Wilson interval) or an experiment's IQM (bootstrap)."""

    label: str
    rate: float
    ci: tuple[float, float] | None
    headline: bool = False


def zoomed_limits(points: list[RatePoint]) -> tuple[float, float]:
    """The x range (percent) that shows every rate and interval: zoomed in on them when they span less than half
    the scale, so that rates of 100% with intervals down to 99.8% are told apart from rates of 99.8%."""
    lows = [100 * min(p.rate, p.ci[0] if p.ci else p.rate) for p in points]
    highs = [100 * max(p.rate, p.ci[1] if p.ci else p.rate) for p in points]
    lo, hi = min(lows), min(100.0, max(highs))
    span = max(hi - lo, 0.05)
    if span >= 50.0:
        return 0.0, 101.0
    return max(0.0, lo - 0.25 * span), min(101.0, hi + 0.08 * span)


def optimal_rates(groups: list[tuple[str, list[RatePoint]]]) -> Figure:
    """Optimal-move rates, one band per experiment: each seed's rate with its 95% Wilson interval and, with
    several seeds, their IQM with its bootstrap interval (diamond).  The axis is zoomed to the intervals
    (``zoomed_limits``) and each point's value is printed beside the plot, so equal rates still say how far
    below them the true rate may lie."""
    from matplotlib.transforms import blended_transform_factory

    from boardrl.report.links import with_ci

    rows = [(exp_id, p) for exp_id, points in groups for p in points]
    fig = Figure(figsize=(9.0, 0.36 * len(rows) + 0.45 * len(groups) + 1.6), layout="constrained")
    ax = fig.subplots()
    y, labels, yticks = 0.0, [], []
    right = blended_transform_factory(ax.transAxes, ax.transData)
    for g, (exp_id, points) in enumerate(groups):
        if g:
            ax.axhline(y - 0.75, color="#bbbbbb", linewidth=0.8)
        for p in points:
            lo, hi = (p.ci if p.ci else (p.rate, p.rate))
            err = [[100 * max(0.0, p.rate - lo)], [100 * max(0.0, hi - p.rate)]]
            ax.errorbar([100 * p.rate], [y], xerr=err, fmt="D" if p.headline else "o",
                        color="#173f73" if p.headline else "#3a6fb0", markersize=7 if p.headline else 5,
                        capsize=4, elinewidth=2.2 if p.headline else 1.2)
            ax.text(1.01, y, with_ci(p.rate, p.ci), transform=right, va="center", fontsize=8,
                    fontweight="bold" if p.headline else "normal")
            yticks.append(y)
            labels.append(f"{exp_id}: {p.label}")
            y += 1.0
        y += 0.5
    ax.set_yticks(yticks, labels, fontsize=8)
    ax.invert_yaxis()
    lo, hi = zoomed_limits([p for _, p in rows])
    ax.set_xlim(lo, hi)
    if hi >= 100.0 > lo:
        ax.axvline(100.0, color="#2a9d3f", linestyle="--", linewidth=1)
    zoom = "" if (lo, hi) == (0.0, 101.0) else f" (axis zoomed to {lo:.3g}-{min(hi, 100):.4g}%)"
    ax.set_xlabel(f"% of moves that keep the exact game value{zoom}")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title("Optimal-move rates\neach seed with its 95% Wilson interval; diamond: IQM over seeds with its "
                 "bootstrap interval", fontsize=10)
    return fig


def uci_results(exp_id: str, seed: int, uci: UCIReading) -> Figure:
    """Connect 4 from the UCI start positions by label for one seed: reference system 000's protocol and the full
    protocol."""
    panels: list[tuple[str, dict[str, SeatReading]]] = []
    if uci.seed000:
        panels.append(("reference system 000: agent first vs random", uci.seed000))
    for seat in SEATS:
        if uci.full:
            panels.append((f"full protocol, {SEAT_LABELS[seat]}", {k: v.seats[seat] for k, v in uci.full.items()}))
    fig, axes = _grid(len(panels), ncols=2)
    for ax, (title, by_label) in zip(axes, panels):
        labels = list(by_label)
        _wdl_bars(ax, [f"{lab} positions" for lab in labels], [by_label[lab] for lab in labels])
        ax.set_title(title)
        ax.set_ylabel("rate")
    _outcome_legend(fig)
    fig.suptitle(f"{exp_id}, seed {seed}: UCI start positions by label\n(95% Wilson intervals)")
    return fig
