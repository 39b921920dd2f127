"""`boardrl results`: every experiment's headline metrics on one line, narrow enough for a terminal.

`dvc metrics show` makes a column of every distinct key over all metrics files: one per ladder opponent and
rate, over a thousand characters wide for the default profile.  This reads the same files
(``results/metrics/<id>.json``, written by the evaluate stage) and prints, per experiment, its budget, seeds,
optimal-move rate and win/loss percentages against each ladder opponent, wrapping the opponents onto indented
lines instead of widening the table.  The full numbers, per seat and with intervals, are in the report.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

METRICS_DIR = Path("results") / "metrics"
VS = "vs:"  # the prefix of a ladder opponent's key in a metrics file (experiments/evaluate.py headline)
HEADER = ("experiment", "budget", "seeds", "optimal", "win/loss % against each opponent")


def load_metrics(root: Path, pattern: str = "") -> dict[str, dict[str, Any]]:
    """experiment id -> its metrics, for the ids containing ``pattern``, sorted by id."""
    folder = Path(root) / METRICS_DIR
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    return {f.stem: json.loads(f.read_text()) for f in files if pattern in f.stem}


def opponents(metrics: dict[str, Any]) -> list[str]:
    """``<opponent> <win>/<loss>`` in percent, in the ladder's order."""
    out = []
    for key, rates in metrics.items():
        if key.startswith(VS) and isinstance(rates, dict):
            out.append(f"{key[len(VS):]} {_pct(rates.get('win'))}/{_pct(rates.get('loss'))}")
    return out


def _pct(value: Any) -> str:
    return "-" if value is None else f"{100 * value:.0f}"


def render(table: dict[str, dict[str, Any]], width: int = 200) -> str:
    """The table as text no wider than ``width`` columns (``width`` >= 60): the opponents wrap onto indented
    lines, and go below the experiment's line altogether when its id leaves them under 30 columns."""
    if not table:
        return "no results/metrics/*.json yet: run `make repro` (or `make repro PROFILE=tiny` for a first look)"
    id_width = max(len(HEADER[0]), *(len(i) for i in table))
    lead = f"{{:<{id_width}}}  {{:>9}}  {{:>5}}  {{:>7}}"
    indent = len(lead.format("", "", "", "")) + 2
    beside = width - indent >= 30
    if not beside:
        indent = 4
    lines = [lead.format(*HEADER[:4]) + ("  " + HEADER[4] if beside else "")]
    for exp_id, m in table.items():
        optimal = m.get("optimal_move_rate")
        head = lead.format(exp_id, m.get("budget", "-"), m.get("seeds", "-"),
                           "-" if optimal is None else f"{100 * optimal:.1f}%")
        text = ", ".join(opponents(m)) or "-"
        wrapped = textwrap.wrap(text, width=width - indent, break_long_words=False) or ["-"]
        if beside:
            lines.append(head + "  " + wrapped.pop(0))
        else:
            lines.append(head)
        lines += [" " * indent + more for more in wrapped]
    return "\n".join(lines)
