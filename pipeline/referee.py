"""DVC stage `referee`: the exact verdict on every position the evaluate stages judge, found once, on every core.

    python pipeline/referee.py

Writes build/referee/<game>.json for each game an experiment plays (an empty file where the game has no referee
or no positions are asked for); every evaluate@<id> depends on its game's file and reads it, so no evaluate
stage searches, and their times no longer depend on which one DVC runs first.  The work is
``boardrl.experiments.referee``.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

from boardrl.config import exit_on_sigterm, load_params_or_exit, stage_entry
from boardrl.cores import available_cores
from boardrl.experiments.referee import run_referee

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--params", default=str(ROOT / "params.yaml"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    params = load_params_or_exit(args.params)
    signal.signal(signal.SIGTERM, exit_on_sigterm)  # atomic writes leave the previous files
    progress = os.environ.get("BOARDRL_PROGRESS", "1") != "0"  # as train.py: not a param
    summary = run_referee(params, ROOT, processes=available_cores(), progress=progress)
    total = sum(s["positions"] for s in summary.values())
    print(f"referee: {total:,} verdicts for {len(summary)} game(s)", file=sys.stderr)


if __name__ == "__main__":
    stage_entry(main)
