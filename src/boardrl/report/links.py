"""How the report prints numbers: percentages with intervals, each linked to the MLflow run that produced it.

Why one module: every section prints rates the same way (``98.8% [97.8, 99.8]``, with more decimals only
where a rate or bound would otherwise print as 0 or 100 without being so: 0 of 10,000 is
``0.000% [0.000, 0.038]``) and links them the same way (``<ui>/#/runs/<run id>``, a route the MLflow UI
resolves to the run's experiment, the git commit in the tooltip), so a reader can trust that equal-looking
numbers mean the same thing everywhere.

Experiment ids link to their section the same way everywhere too (``Links.experiment``), and the git commit is
said once, in the report's header (``Links.commit``): a provenance cell names a commit only where it differs.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

from boardrl.report.document import Inline, Ref, Span, slug
from boardrl.report.evaluation import SeatReading, SpreadReading
from boardrl.report.results import finite

DEFAULT_UI = "http://127.0.0.1:5000"


@dataclass(frozen=True)
class Links:
    """How numbers link to their provenance, and experiment ids to their sections.

    ``commit``: the report's git commit, stated once in its header; ``pages``: the page of each experiment's
    section (experiment id -> page key), so an id links there from any page.
    """

    ui: str = DEFAULT_UI
    commit: str | None = None
    pages: dict[str, str] = field(default_factory=dict, hash=False)

    def experiment(self, exp_id: str, shown: str | None = None) -> Span:
        """``exp_id`` in code, linked to its section where the report has one (``shown``: other text)."""
        page = self.pages.get(exp_id)
        return Span(shown or exp_id, code=True, ref=Ref(page, slug(exp_id)) if page else None)

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
        """``run 1a2b3c4d``, the run linked; ``· commit 0123456789`` after it only where the commit is not the
        report's."""
        run, commit = prov.get("mlflow_run_id"), prov.get("git_commit")
        spans: list[Span] = []
        spans.append(Span(f"run {run[:8]}", href=self.run_url(run), title=f"MLflow run {run}") if run
                     else Span("no MLflow run"))
        if self.commit is None or commit != self.commit:
            spans += [Span(" · commit "), Span((commit or "unknown")[:10], code=True)]
        return spans


def commit_count(provs: Iterable[dict[str, Any]]) -> tuple[str | None, int, int]:
    """The commit most runs of ``provs`` were made at (ties: the first met), how many were, and of how many runs
    (provenance blocks that are empty, stages not run, are not runs)."""
    found = [p.get("git_commit") for p in provs if p]
    counts = Counter(c for c in found if c)
    if not counts:
        return None, 0, len(found)
    commit, n = counts.most_common(1)[0]
    return commit, n, len(found)


#: Most decimal places a percentage gets (0 of 10^7 games: the Wilson upper bound is 0.0000384%).
MOST_PLACES = 6


def places(*rates: Any, least: int = 1) -> int:
    """Decimal places for printing ``rates`` in percent: ``least``, or more where a rate strictly between 0 and
    1 would otherwise print as 0 or 100.

    Why: 0 losses in 10,000 games has the Wilson interval [0, 0.038%]; at one decimal it would print as
    [0.0, 0.0], a certainty the data do not give.  Such a rate gets two significant digits of its distance
    from the boundary (0.038), and every number printed with it the same places ([0.000, 0.038]).
    """
    out = least
    for r in rates:
        v = finite(r)
        if v is None or not 1e-12 < v < 1.0 - 1e-12:  # 0 and 1 (up to float noise) print as 0 and 100
            continue
        shown = float(f"{100 * v:.{out}f}")
        if shown in (0.0, 100.0):
            gap = 100 * min(v, 1.0 - v)
            out = max(out, min(MOST_PLACES, 1 - math.floor(math.log10(gap))))
    return out


def pct(x: Any, digits: int | None = None) -> str:
    """A rate as a percentage with one decimal (more where it would print as 0 or 100 but is neither, or
    ``digits``); ``n/a`` when missing or NaN."""
    v = finite(x)
    return "n/a" if v is None else f"{100 * v:.{places(v) if digits is None else digits}f}%"


def interval(ci: Any) -> tuple[float, float] | None:
    """``ci`` as two finite bounds, or None when it is missing or not two numbers."""
    if not ci or len(ci) != 2 or finite(ci[0]) is None or finite(ci[1]) is None:
        return None
    return float(ci[0]), float(ci[1])


def ci_text(ci: Any, digits: int | None = None) -> str:
    """`` [lo, hi]`` in percent (one decimal, more where a bound would print as 0 or 100 but is neither, or
    ``digits``), or nothing when the interval is missing."""
    bounds = interval(ci)
    if bounds is None:
        return ""
    d = places(*bounds) if digits is None else digits
    return f" [{100 * bounds[0]:.{d}f}, {100 * bounds[1]:.{d}f}]"


def with_ci(rate: Any, ci: Any) -> str:
    """``98.8% [97.8, 99.8]``; rate and interval share their decimal places (``0.000% [0.000, 0.038]``)."""
    d = places(rate, *(interval(ci) or ()))
    return pct(rate, d) + ci_text(ci, d)


def rate_with_ci(stats: SeatReading, out: str) -> str:
    """One seat block's rate of ``out`` with its interval."""
    return with_ci(stats.rate(out), stats.interval(out))


def spread_text(s: SpreadReading | None) -> str:
    """An across-seeds statistic: IQM with its bootstrap interval; one seed has no interval worth printing."""
    if s is None:
        return "n/a"
    if len(s.values) < 2:
        return pct(s.iqm) + " (one seed)"
    return with_ci(s.iqm, s.ci)


def seed_list(seeds: list[int]) -> str:
    """``0, 1, 2``, or ``none yet``."""
    return ", ".join(str(k) for k in seeds) if seeds else "none yet"


def seed_names(seeds: list[int]) -> str:
    """``seed 7``, ``seeds 0, 1, 2`` or ``none yet``: a bare ``7`` under a "seeds" heading reads as a count."""
    if not seeds:
        return "none yet"
    return f"seed{'s' if len(seeds) > 1 else ''} {seed_list(seeds)}"
