"""DVC stage `inputs`: fingerprints of the code and data each experiment's stages use.

    python pipeline/inputs.py            # build/inputs/<id>.train.json, <id>.curve.json, <id>.evaluate.json
    python pipeline/inputs.py --models   # build/models/<id>.json: trained models named by ladders (model:<id>)

Why: train@<id>, curve@<id> and evaluate@<id> depend on these files (code fingerprints and each stage's params
slice) instead of whole source folders and whole experiment entries, so adding a learner module, editing another
game or changing the learning curve's opponents retrains nothing that does not use it
(boardrl.experiments.inputs).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from boardrl.config import load_params_or_exit, stage_entry
from boardrl.experiments.inputs import write_inputs, write_ladder_models

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", action="store_true", help="write the ladder-model fingerprints instead")
    ap.add_argument("--params", default=str(ROOT / "params.yaml"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    params = load_params_or_exit(args.params)
    written = write_ladder_models(params, ROOT) if args.models else write_inputs(params, ROOT)
    print(f"inputs: {len(written)} fingerprint files", file=sys.stderr)


if __name__ == "__main__":
    stage_entry(main)
