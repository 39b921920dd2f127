"""How the report prints numbers: percentages with intervals, each linked to the MLflow run that produced it.

Why one module: every section prints rates the same way (``98.8% [97.8, 99.8]``) and links them the same way
(``<ui>/#/runs/<run id>``, a route the MLflow UI resolves to the run's experiment, the git commit in the
tooltip), so a reader can trust that equal-looking numbers mean the same thing everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from boardrl.report.document import Inline, Span
from boardrl.report.results import finite

DEFAULT_UI = "http://127.0.0.1:5000"


@dataclass(frozen=True)
class Links:
    """How numbers link to their provenance."""

    ui: str = DEFAULT_UI

    def run_url(self, run_id: str | None) -> str | None:
        return f"{self.ui.rstrip('/')}/#/runs/{run_id}" if run_id else None

    def number(self, value: str, prov: dict[str, Any]) -> Span:
        """``value`` linked to the MLflow run of ``prov``; the tooltip names run and commit."""
        run, commit = prov.get("mlflow_run_id"), prov.get("git_commit")
        if not run and not commit:
            return Span(value)
        title = f"MLflow run {run or 'unknown'}, git commit {commit or 'unknown'}"
        return Span(value, href=self.run_url(run), title=title)

    def provenance(self, prov: dict[str, Any]) -> Inline:
        """``run 1a2b3c4d · commit 0123456789``: the run linked, the commit as code."""
        run, commit = prov.get("mlflow_run_id"), prov.get("git_commit")
        spans: list[Span] = []
        spans.append(Span(f"run {run[:8]}", href=self.run_url(run), title=f"MLflow run {run}") if run
                     else Span("no MLflow run"))
        spans.append(Span(" · commit "))
        spans.append(Span((commit or "unknown")[:10], code=True))
        return spans


def pct(x: Any) -> str:
    """A rate as a percentage with one decimal; ``n/a`` when missing or NaN."""
    v = finite(x)
    return "n/a" if v is None else f"{100 * v:.1f}%"


def ci_text(ci: Any) -> str:
    """`` [lo, hi]`` in percent, or nothing when the interval is missing."""
    if not ci or len(ci) != 2 or finite(ci[0]) is None or finite(ci[1]) is None:
        return ""
    return f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def rate_with_ci(stats: dict[str, Any], out: str) -> str:
    """One seat block's rate of ``out`` with its ``<out>_ci`` interval."""
    return pct(stats.get(out)) + ci_text(stats.get(f"{out}_ci"))


def spread_text(s: dict[str, Any] | None) -> str:
    """An across-seeds statistic: IQM with its bootstrap interval; one seed has no interval worth printing."""
    if not s:
        return "n/a"
    if len(s.get("values") or []) < 2:
        return pct(s.get("iqm")) + " (one seed)"
    return pct(s.get("iqm")) + ci_text(s.get("ci"))


def seed_list(seeds: list[int]) -> str:
    """``0, 1, 2``, or ``none yet``."""
    return ", ".join(str(k) for k in seeds) if seeds else "none yet"
