"""DVC stage `tournament@<id>`: a fixed-seat round robin among fixed players (params `tournaments.<id>`).

    python pipeline/tournament.py --tournament conniption_seed004

Seed 004 validated its Conniption players by 100 games per ordered pairing, the row player always first; this
stage plays the same protocol on our engine and writes results/tournaments/<id>.json, which the report sets
beside the seed's table.  The work is ``boardrl.experiments.tournament``.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from boardrl.config import exit_on_sigterm, load_params_or_exit, stage_entry
from boardrl.experiments.tournament import run_tournament

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tournament", required=True, help="id of an entry of params `tournaments`")
    ap.add_argument("--params", default=str(ROOT / "params.yaml"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    params = load_params_or_exit(args.params)
    signal.signal(signal.SIGTERM, exit_on_sigterm)  # SystemExit: the MLflow run closes FAILED
    out = run_tournament(params, args.tournament, ROOT)
    print(f"tournament: {args.tournament}: {len(out['pairings'])} pairings of {out['games']} games in "
          f"{out['provenance']['seconds']:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    stage_entry(main)
