"""Learner records that are Q-value traces (reference system 000's experiments 01 and 02) in the report.

Two places: the experiment's own section (the trace figure of its first seed and, per seed, the convergence
episode and the final values), and the trace rows of the reference systems' tables (``trace_cells``: the
convergence episodes of the reproduction's seeds beside the system's "about 800" / "about 3,500").  The targets
(Q(s0, 9) = +1, the other moves -1) belong to the system's position s0, so they are applied only to experiments
that a reference trace row names as its reproduction; any other traced experiment gets its figure without targets.
"""

from __future__ import annotations

from pathlib import Path

import boardrl.report.figure_cache as figure_cache
from boardrl.report.document import Block, Heading, Image, Paragraph, Span, Table, text
from boardrl.report.reference_systems import REFERENCE_NUMBERS, ReferenceNumber
from boardrl.report.results import Experiment
from boardrl.report.traces import DEFAULT_TOL, SYSTEM000_S0_TARGETS, read_trace, trace_figure, trace_summary

TRACE = "trace"
#: Experiments reproducing a reference system's Q-value trace from s0: their traces are judged against s0's exact
#: values.
S0_EXPERIMENTS = frozenset(r for n in REFERENCE_NUMBERS if n.metric == "trace" for r in n.reproduction)


def _targets(e: Experiment) -> dict[str, float] | None:
    return SYSTEM000_S0_TARGETS if e.id in S0_EXPERIMENTS else None


def _traced(e: Experiment) -> dict[int, Path]:
    return {k: s.records[TRACE] for k, s in e.seeds.items() if TRACE in s.records}


def trace_blocks(e: Experiment, fig_dir: Path) -> list[Block]:
    """The trace figure of the first traced seed and a table of every seed's convergence; nothing untraced."""
    traced = _traced(e)
    if not traced:
        return []
    targets = _targets(e)
    first = min(traced)
    rows_first = read_trace(traced[first])
    name = f"trace_{e.key}.png"
    figure_cache.draw(fig_dir / name, trace_figure, rows_first, targets, title=f"{e.id}, seed {first}: Q(s0, a)")
    table_rows = []
    actions: list[str] = []
    for k, path in traced.items():
        summary = trace_summary(read_trace(path), targets or {}, DEFAULT_TOL) if targets else None
        final = summary["final_q"] if summary else _final(read_trace(path))
        actions = actions or list(final)
        conv = summary["converged_at"] if summary else None
        shown = "-" if not targets else (f"{conv:,}" if conv is not None else "not within the run")
        table_rows.append([text(str(k)), text(shown), *(text(f"{final[a]:+.3f}") for a in actions)])
    what = (f"converged = every traced Q within {DEFAULT_TOL:g} of its exact value (+1 for 9, -1 for 1, 2, 4, 6) "
            "from that game to the end" if targets else "no exact values to converge to")
    return [
        Heading(3, "Q-value trace"),
        Paragraph(text("Q(s0, a) of the start position after every training game (", Span(
            f"results/train/{e.id}/seed-<k>/trace.tsv", code=True), f"); {what}. The figure shows seed {first}.")),
        Image(f"figures/{name}", f"Q-value trace of {e.id}, seed {first}"),
        Table(["Seed", "Converged at game", *(f"final Q(s0, {a})" for a in actions)], table_rows,
              numeric=frozenset(range(1, 2 + len(actions)))),
    ]


def _final(rows: list[dict]) -> dict[str, float]:
    last = max(r["game"] for r in rows)
    return {str(r["action"]): float(r["q"]) for r in rows if r["game"] == last}


def trace_cells(n: ReferenceNumber, e: Experiment) -> tuple[str, str] | None:
    """(ours, verdict) of a reference trace row: each seed's convergence episode against the system's."""
    traced = _traced(e)
    if not traced:
        return None
    conv = {k: trace_summary(read_trace(p), SYSTEM000_S0_TARGETS, DEFAULT_TOL)["converged_at"]
            for k, p in traced.items()}
    ours = "converged at game " + ", ".join(f"{c:,}" if c is not None else "never" for c in conv.values()) + \
        f" (seed{'s' if len(conv) > 1 else ''} {', '.join(map(str, conv))}; tol {DEFAULT_TOL:g})"
    if any(c is None for c in conv.values()):
        return ours, "not reached: a seed's values did not converge within the budget"
    worst = max(conv.values())
    if n.value is not None and worst <= n.value:
        return ours, f"reproduced: the same values, every seed by game {worst:,} (published: about {int(n.value):,})"
    return ours, f"reproduced values, converging later than the published about {int(n.value or 0):,}"
