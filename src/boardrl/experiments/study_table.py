"""A study's results table: the rows' rates as text (``results.md``, the report's "Studies" section) and as a
figure (``results.png``).

Why a module of its own: the report renders the same cells as ``results.md``, and must not depend on the code
that queues and runs studies (experiments/study.py).
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from typing import Any

from boardrl.experiments.study_spec import Study

CODE_COLUMNS = frozenset({0, 2})  # the experiment id and the DVC experiment's name
NUMERIC_FROM = 4  # seeds, budget, seconds and rates from here on
UCI_CLASSES = ("win", "draw", "loss")  # the UCI table's labels: the 8-ply position's value for the first player


def measures(row: dict[str, Any]) -> dict[str, float | None]:
    """A row's rates by label, as the figure draws them: win and loss against each opponent (and the wins as
    second, the seat that is lost against perfect play in Connect 4 and Conniption), the optimal-move rate, for
    tic-tac-toe the exact loss probability against perfect play per seat, and the UCI protocol's worst seed."""
    out: dict[str, float | None] = {}
    seats = row.get("seat_wins") or {}
    for opp, wl in row["opponents"].items():
        out[f"{opp} win"], out[f"{opp} loss"] = wl.get("win"), wl.get("loss")
        if opp in seats:
            out[f"{opp} win as second"] = seats[opp].get("as_second")
    out["optimal moves"] = row["optimal_move_rate"]
    for seat in ("as_first", "as_second"):
        if row.get("exact_vs_perfect"):
            out[f"exact loss {seat.replace('_', ' ')}"] = row["exact_vs_perfect"].get(f"loss_{seat}")
    for label, wins in (row.get("uci_seed000_wins") or {}).items():
        out[f"UCI {label} class, worst seed"] = min(wins) if wins else None
    return out


def _versus(wl: dict[str, Any], seats: dict[str, Any] | None, split: bool,
            each: dict[str, dict[str, float]] | None = None) -> str:
    """Win / loss over both seats, and where the row has them the wins as first and as second, then each
    seed's (``each``: seat -> seed -> rate) where there are two seeds or more: a target per seat is met or missed
    seed by seed, and the mean of three seeds can pass while one of them fails."""
    if not wl:
        return "-"
    both = f"{_rate(wl.get('win'))} / {_rate(wl.get('loss'))}"
    if not split:
        return both
    if not seats:
        return f"{both} (-)"
    by_seed = ""
    first, second = (each or {}).get("as_first") or {}, (each or {}).get("as_second") or {}
    if len(first) > 1:
        by_seed = "".join(f"; seed {k} {_rate(first[k])}, {_rate(second.get(k))}" for k in first)
    return f"{both} ({_rate(seats.get('as_first'))}, {_rate(seats.get('as_second'))}{by_seed})"


def _uci(wins: dict[str, list[float]] | None) -> str:
    """Each class's win rate per seed, in seed order: the protocol's target holds or fails seed by seed."""
    if not wins:
        return "-"
    return "; ".join(f"{label} " + " ".join(f"{w:.3f}" for w in wins.get(label, [])) for label in UCI_CLASSES)


def _rate(x: Any) -> str:
    return "-" if x is None else f"{x:.3f}"


def _seconds(values: list[float] | None) -> str:
    return f"{statistics.median(values):.0f}" if values else "-"


def _exact(block: dict[str, Any] | None, seeds: Any) -> str:
    if not block:
        return "-"
    first, second = block.get("loss_as_first"), block.get("loss_as_second")
    return f"{block.get('flawless_seeds')} of {block.get('measured_seeds', seeds)}; {_rate(first)} / {_rate(second)}"


@dataclass(frozen=True)
class TableText:
    """The results table as text: ``head``, one list of cells per row, and which columns hold names (experiment
    ids and DVC experiment names) that Markdown and the report show as code."""

    head: list[str]
    rows: list[list[str]]
    code: frozenset[int] = CODE_COLUMNS
    numeric_from: int = NUMERIC_FROM


def table_cells(table: list[dict[str, Any]]) -> TableText:
    """Per row the experiment, variation, DVC experiment, its commit, seeds, budget, median training seconds,
    optimal moves, the exact losses and the UCI protocol's wins where measured, and the win / loss against each
    opponent (with the wins as first and as second where the rows have them).  ``results.md`` and
    the report's "Studies" section both show it."""
    opponents = list(dict.fromkeys(o for r in table for o in r["opponents"]))
    exact = any(r.get("exact_vs_perfect") for r in table)
    uci = any(r.get("uci_seed000_wins") for r in table)
    split = any(r.get("seat_wins") for r in table)
    head = ["experiment", "variation", "DVC experiment", "commit", "seeds", "budget", "training s (median)",
            "optimal moves", *(["exact vs perfect: flawless seeds; loss first / second"] if exact else []),
            *(["reference system 000's UCI protocol: wins per class, each seed"] if uci else []),
            *[f"vs {o}: win / loss" + (" (wins as first, as second; each seed's)" if split else "")
              for o in opponents]]
    rows_out = []
    for r in table:
        cells = [r["experiment"], r["variation"], r["dvc_experiment"], r["rev"][:7],
                 str(r["seeds"] or "-"), str(r["budget"] or "-"), _seconds(r.get("train_seconds")),
                 _rate(r["optimal_move_rate"])]
        if exact:
            cells.append(_exact(r.get("exact_vs_perfect"), r["seeds"]))
        if uci:
            cells.append(_uci(r.get("uci_seed000_wins")))
        for o in opponents:
            cells.append(_versus(r["opponents"].get(o) or {}, (r.get("seat_wins") or {}).get(o), split,
                                 (r.get("seat_wins_per_seed") or {}).get(o)))
        rows_out.append(cells)
    return TableText(head, rows_out)


def stale_note(name: str, stale: tuple[str, ...]) -> str | None:
    """What a reader of study ``name``'s table must know of the rows of ``stale``: variations whose rows ran with
    params, code, data or stage files that have changed since (``study_freshness``); None when there are none."""
    if not stale:
        return None
    which = ", ".join(f"`{v}`" for v in stale)
    return (f"Not this commit's results: the rows of {which} ran with params, code, data or stage files that have "
            f"changed since (the fingerprint each row records in `studies/{name}/results.json` is not the one this "
            f"commit computes). Their figures are those of the commit each row names; `boardrl study {name}` "
            "reruns them.")


def markdown(study: Study, table: list[dict[str, Any]], note: str | None = None) -> str:
    """The study's description, its variations' settings, one row per experiment and variation, and ``note``
    (``stale_note``, ``study_freshness.freshness_note``) below the table."""
    lines = [f"# Study `{study.name}`", "", study.spec.description.strip(), "",
             f"Generated by `boardrl study {study.name}` from `{study.file}`; every number is a metrics file of the "
             f"DVC experiment named in its row (`dvc exp show`), whose MLflow runs carry the tags `study = "
             f"{study.name}` and `study_variation = <variation>`.  A clone without that experiment keeps its row while the "
             f"row's fingerprint of what it ran (params, stage inputs, stage scripts) is what the clone's commit "
             f"computes.  Rates are interquartile means over the seeds.",
             "", "| variation | settings |", "|---|---|"]
    for v, keys in study.spec.variations.items():
        settings = ", ".join(f"`{k}` = `{json.dumps(val)}`" for k, val in keys.items()) or "(params.yaml's own)"
        lines.append(f"| {v} | {settings} |")
    if study.spec.common:
        lines.append("| (every variation) | " + ", ".join(f"`{k}` = `{json.dumps(val)}`"
                                                        for k, val in study.spec.common.items()) + " |")
    text = table_cells(table)
    lines += ["", "| " + " | ".join(text.head) + " |", "|" + "---|" * len(text.head)]
    for row in text.rows:
        lines.append("| " + " | ".join(f"`{c}`" if i in text.code else c for i, c in enumerate(row)) + " |")
    if not table:
        lines.append("| (no variation has finished) |" + " |" * (len(text.head) - 1))
    if note:
        lines += ["", note]
    return "\n".join(lines) + "\n"


def figure(study: Study, table: list[dict[str, Any]]):
    """Grouped bars, one panel per experiment: each of its ``measures``, one bar per variation."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    ids = list(dict.fromkeys(r["experiment"] for r in table)) or ["(no variation has finished)"]
    variations = list(study.spec.variations)
    timed = bool(study.spec.versus_time)
    fig, axes = plt.subplots(len(ids), 2 if timed else 1, figsize=(15 if timed else 9, 2.8 * len(ids)),
                             squeeze=False, gridspec_kw={"width_ratios": [3, 2]} if timed else None)
    if timed:
        for ax, exp_id in zip(axes[:, 1], ids):
            versus_time(ax, study, [r for r in table if r["experiment"] == exp_id])
    for ax, exp_id in zip(axes[:, 0], ids):
        mine = {r["variation"]: measures(r) for r in table if r["experiment"] == exp_id}
        labels = list(dict.fromkeys(k for m in mine.values() for k in m))
        x, width = np.arange(len(labels)), 0.8 / max(1, len(variations))
        for i, v in enumerate(variations):
            values = [np.nan if mine.get(v, {}).get(k) is None else mine[v][k] for k in labels]
            ax.bar(x + (i - (len(variations) - 1) / 2) * width, values, width, label=v)
        ax.set_xticks(x, labels, rotation=30, ha="right", fontsize=8)
        ax.set_ylim(0, 1)
        ax.set_title(exp_id, fontsize=10)
        ax.legend(fontsize=8)
    fig.suptitle(f"study {study.name}", fontsize=11)
    fig.tight_layout()
    return fig


def versus_time(ax, study: Study, table: list[dict[str, Any]]) -> None:
    """Win rate (both seats) against each of ``versus_time``'s opponents over the median training wall time:
    one marker per variation, named beside it, so settings that cost the same time stand side by side."""
    for opp, marker in zip(study.spec.versus_time, "os^Dv<>"):
        points = [(statistics.median(r["train_seconds"]), r["opponents"][opp]["win"], r["variation"]) for r in table
                  if r.get("train_seconds") and (r["opponents"].get(opp) or {}).get("win") is not None]
        if not points:
            continue
        ax.scatter([p[0] for p in points], [p[1] for p in points], marker=marker, label=f"vs {opp}")
        for x, y, name in points:
            ax.annotate(name, (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("training wall time, s (median over seeds)", fontsize=8)
    ax.set_ylabel("win rate, both seats", fontsize=8)
    ax.set_title("win rate over training time", fontsize=10)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
