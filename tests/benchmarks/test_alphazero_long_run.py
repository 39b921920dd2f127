"""benchmarks/alphazero_long_run.py: a run writes one judged point per snapshot and a final model; a finished run
clears its checkpoint, so a second call starts afresh; ``judge`` reads a saved snapshot."""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("alphazero_long_run", ROOT / "benchmarks" / "alphazero_long_run.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_each_snapshot_is_saved_and_judged_and_a_finished_folder_starts_afresh(tmp_path, capsys):
    args = argparse.Namespace(experiment="tictactoe_alphazero", profile="tiny", work=str(tmp_path), every=64,
                              games=4, threads=1, seed=0, opponent=["random"])
    bench.train(args)
    points = [json.loads(line)["units"] for line in (tmp_path / "curve.jsonl").read_text().splitlines()]
    assert points and points == sorted(points) and all(p % 64 == 0 for p in points)
    assert sorted(p.name for p in (tmp_path / "agents").iterdir()) == sorted([*map(str, points), "final"])
    bench.train(args)  # the checkpoint was cleared at the end: a fresh run with the same points, appended
    again = [json.loads(line)["units"] for line in (tmp_path / "curve.jsonl").read_text().splitlines()]
    assert again == points + points
    capsys.readouterr()
    bench.judge(argparse.Namespace(model=str(tmp_path / "agents" / "final"), games=4, project=str(ROOT),
                                   opponent=["random"]))
    out = json.loads(capsys.readouterr().out)
    assert sum(out["random"]["as_first"]) == 100.0 and "search" in out
