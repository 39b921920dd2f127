"""The generated report: figures, Markdown and HTML built from the pipeline's results.

``build_report(results_dir, out_dir)`` reads ``results/`` (formats in ``report/results.py``) and writes
``report.md``, ``index.html`` and ``figures/*.png``.  ``report/seeds.py`` holds every number the seeds
published, which the report prints beside ours.
"""

from boardrl.report.build import DEFAULT_UI, build_report
from boardrl.report.results import ReportError, load_results

__all__ = ["DEFAULT_UI", "ReportError", "build_report", "load_results"]
