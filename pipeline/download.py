"""DVC stage `download`: the UCI Connect-4 data into data/raw/ (connect-4.data, connect-4.names).

Official address first (params ``data.url``, ``data.timeout_s``), the copy in data/vendor/ when it cannot be
reached (``data.source: auto``; ``online`` / ``vendored`` force one source).  Both are checked against the
published sha256 sums before anything is written.  Logic: boardrl.data.uci_download.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from boardrl.config import download_slice, fail, load_params_or_exit, stage_entry
from boardrl.data import uci_download
from boardrl.errors import BoardRLError
from boardrl.tracking.provenance import params_hash

ROOT = Path(__file__).resolve().parents[1]

OUT_DIR = ROOT / "data" / "raw"
VENDOR_DIR = ROOT / "data" / "vendor"


def main() -> None:
    params = load_params_or_exit(ROOT / "params.yaml")
    t0 = time.perf_counter()
    try:
        got = uci_download.obtain(
            params.data.source, url=params.data.url, timeout_s=params.data.timeout_s, vendor_dir=VENDOR_DIR
        )
        paths = uci_download.write_raw(got, OUT_DIR)
    except BoardRLError as exc:
        fail(str(exc))
    seconds = time.perf_counter() - t0
    print(f"download: {got.source} copy from {got.origin} -> {', '.join(str(p.relative_to(ROOT)) for p in paths)}",
          file=sys.stderr)
    _track(params, got, seconds)


def _track(params, got: uci_download.Obtained, seconds: float) -> None:
    """One MLflow run for this execution (experiment connect4: the data set is Connect 4's)."""
    from boardrl.tracking.mlflow_runs import log_metrics, set_tags, stage_run

    sl = download_slice(params)
    with stage_run(ROOT, stage="download", mlflow_experiment="connect4", run_name="download", game="connect4",
                   params=sl, params_hash=params_hash(sl), profile=params.profile):
        set_tags({"data_source": got.source, "data_origin": got.origin,
                  "sha256_data": uci_download.sha256(got.files[uci_download.DATA])})
        log_metrics({"seconds": seconds, "bytes": len(got.files[uci_download.DATA])})


if __name__ == "__main__":
    stage_entry(main)
