"""DVC stage `report`: results/ -> reports/ (an index and a page per game), docs/headline.json, README.md.

    python pipeline/report.py [--results results] [--out reports] [--ui http://127.0.0.1:5000]
    python pipeline/report.py --readme-only     # README's headline block from the committed docs/headline.json

Reads every experiment under results/ (results/train/<id>/seed-<k>/summary.json, results/curves/<id>/seed-<k>.tsv and
results/eval/<id>.json; the UCI data checks of the prepare stage when present) and writes the report
atomically: a failed build leaves the previous report.  The report is an index (report.md and index.html: the
headline table, contents, every experiment linked to its section, the reference systems' numbers beside ours)
and one page per game (<game>.md and <game>.html), with figures/*.png.  Then the headline table
(report/headline.py): its data to docs/headline.json (committed to git), and its Markdown into README.md between the headline markers.  README is
not a DVC output (people edit the rest of it); tests/report/test_headline.py checks that its block is what
docs/headline.json renders to, and `--readme-only` renews the block without results (after a renderer change).
Bad or missing results give one line `error: ...` on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from boardrl.atomic_io import atomic_write_text
from boardrl.config import stage_entry
from boardrl.errors import BoardRLError
from boardrl.report import DEFAULT_UI, build_report, headline, load_results

ROOT = Path(__file__).resolve().parents[1]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=Path, default=ROOT / "results", help="the pipeline's results directory")
    ap.add_argument("--out", type=Path, default=ROOT / "reports", help="where to write the report")
    ap.add_argument("--ui", default=DEFAULT_UI, help="MLflow UI address the numbers link to (make ui)")
    ap.add_argument("--data-summary", type=Path, default=ROOT / "data" / "processed" / "summary.json",
                    help="the prepare stage's summary (skipped when absent)")
    ap.add_argument("--headline", type=Path, default=ROOT / headline.JSON_PATH, help="the headline table's data")
    ap.add_argument("--readme", type=Path, default=ROOT / "README.md", help="the README that shows the table")
    ap.add_argument("--readme-only", action="store_true",
                    help="only renew README's block from --headline (no results needed)")
    return ap.parse_args(argv)


def write_readme(readme: Path, table: headline.Headline | None) -> None:
    """README.md with its headline block rendered from ``table`` (unchanged files are not rewritten)."""
    old = readme.read_text()
    new = headline.with_block(old, table)
    if new != old:
        atomic_write_text(readme, new)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    try:
        if args.readme_only:
            write_readme(args.readme, headline.load(args.headline))
            print(f"report: README block from {args.headline}", file=sys.stderr)
            return
        files = build_report(args.results, args.out, ui=args.ui, data_summary=args.data_summary)
        table = headline.headline(load_results(args.results))
        atomic_write_text(args.headline, headline.dump(table))
        write_readme(args.readme, table)
    except BoardRLError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(2) from None
    print(f"report: {len(files)} files in {args.out}, {args.headline.name}, README block", file=sys.stderr)


if __name__ == "__main__":
    stage_entry(main)
