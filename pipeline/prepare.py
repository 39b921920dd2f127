"""DVC stage `prepare`: data/raw/connect-4.data -> data/processed/uci.parquet + data/processed/summary.json.

Checks the published facts (67,557 rows; 44,473 win / 16,635 loss / 6,449 draw; 4 stones each) and, with
``prepare.check_regenerated``, that the rows equal the 8-ply positions regenerated from the rules modulo
mirror symmetry.  A failed check writes nothing.  Logic: boardrl.data.uci_table.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from boardrl.config import fail, load_params_or_exit, prepare_slice, stage_entry
from boardrl.data import uci_download, uci_table
from boardrl.errors import BoardRLError
from boardrl.atomic_io import atomic_write_json
from boardrl.tracking.provenance import params_hash

ROOT = Path(__file__).resolve().parents[1]

RAW = ROOT / "data" / "raw" / uci_download.DATA
OUT_DIR = ROOT / "data" / "processed"


def build_summary(check_regenerated: bool) -> tuple[object, dict]:
    """(table, summary) after every check has passed."""
    if not RAW.is_file():
        raise BoardRLError(f"{RAW.relative_to(ROOT)} is missing: run the download stage first (dvc repro download)")
    raw = RAW.read_bytes()
    uci_download.verify(uci_download.DATA, raw, str(RAW.relative_to(ROOT)))
    frame = uci_table.uci_frame(raw.decode("ascii"))
    summary: dict = {**uci_table.check_facts(frame), "sha256": uci_download.sha256(raw)}
    summary["regenerated"] = uci_table.compare_with_rules(frame) if check_regenerated else None
    return frame, summary


def main() -> None:
    params = load_params_or_exit(ROOT / "params.yaml")
    t0 = time.perf_counter()
    try:
        frame, summary = build_summary(params.prepare.check_regenerated)
    except BoardRLError as exc:
        fail(str(exc))
    uci_table.write_parquet(frame, OUT_DIR / "uci.parquet")
    atomic_write_json(OUT_DIR / "summary.json", summary)
    seconds = time.perf_counter() - t0
    print(f"prepare: {summary['rows']} rows {summary['classes']} -> data/processed/uci.parquet", file=sys.stderr)
    _track(params, summary, seconds)


def _track(params, summary: dict, seconds: float) -> None:
    from boardrl.tracking.mlflow_runs import log_artifact, log_metrics, stage_run

    sl = prepare_slice(params)
    with stage_run(ROOT, stage="prepare", mlflow_experiment="connect4", run_name="prepare", game="connect4",
                   params=sl, params_hash=params_hash(sl), profile=params.profile):
        regen = summary["regenerated"] or {}
        log_metrics({"rows": summary["rows"], **{f"class/{k}": v for k, v in summary["classes"].items()},
                     "regenerated/classes": regen.get("classes"), "regenerated/symmetric": regen.get("symmetric"),
                     "seconds": seconds})
        log_artifact(OUT_DIR / "summary.json")


if __name__ == "__main__":
    stage_entry(main)
