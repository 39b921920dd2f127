"""DVC stage `report`: results/ -> reports/report.md, reports/index.html, reports/figures/*.png.

    python pipeline/report.py [--results results] [--out reports] [--ui http://127.0.0.1:5000]

Reads every experiment under results/ (results/train/<id>/seed-<k>/summary.json, results/curves/<id>/seed-<k>.tsv and
results/eval/<id>.json; the UCI data checks of the prepare stage when present) and writes the report
atomically: a failed build leaves the previous report.
Bad or missing results give one line `error: ...` on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from boardrl.config import stage_entry
from boardrl.errors import BoardRLError
from boardrl.report import DEFAULT_UI, build_report

ROOT = Path(__file__).resolve().parents[1]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=Path, default=ROOT / "results", help="the pipeline's results directory")
    ap.add_argument("--out", type=Path, default=ROOT / "reports", help="where to write the report")
    ap.add_argument("--ui", default=DEFAULT_UI, help="MLflow UI address the numbers link to (make ui)")
    ap.add_argument("--data-summary", type=Path, default=ROOT / "data" / "processed" / "summary.json",
                    help="the prepare stage's summary (skipped when absent)")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    try:
        files = build_report(args.results, args.out, ui=args.ui, data_summary=args.data_summary)
    except BoardRLError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(2) from None
    print(f"report: {len(files)} files in {args.out}", file=sys.stderr)


if __name__ == "__main__":
    stage_entry(main)
