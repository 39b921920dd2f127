"""The generated report: figures, Markdown and HTML built from the pipeline's results.

``build_report(results_dir, out_dir)`` reads ``results/`` (layout and checks in ``report/results.py``: one
experiment id, one or more training seeds) and writes ``report.md``, ``index.html`` and ``figures/*.png``.
``report/reference_systems.py`` holds every number the reference systems published, which the report prints beside
ours.
``report/sweeps.py`` reads ``results/sweeps/<id>/`` (Optuna sweeps) for the report's "Sweeps" section.

``build_report`` is imported on first use: ``boardrl.report.results`` (the one reader of the curve TSV and the
result files) is used by code that draws nothing, and should not have to load matplotlib.
"""

from __future__ import annotations

from typing import Any

from boardrl.report.links import DEFAULT_UI
from boardrl.report.results import Experiment, ReportError, SeedResult, load_experiment, load_results, read_curve
from boardrl.report.sweeps import Sweep, load_sweeps

__all__ = ["DEFAULT_UI", "Experiment", "ReportError", "SeedResult", "Sweep", "build_report", "load_experiment",
           "load_results", "load_sweeps", "read_curve"]


def __getattr__(name: str) -> Any:
    if name == "build_report":
        from boardrl.report.build import build_report

        return build_report
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
