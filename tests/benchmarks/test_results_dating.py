"""benchmarks/run.py dates each figure: a ``--only`` run must not re-date the figures it did not measure."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

RUN = Path(__file__).resolve().parents[2] / "benchmarks" / "run.py"


def load_run():
    spec = importlib.util.spec_from_file_location("benchmarks_run", RUN)
    module = importlib.util.module_from_spec(spec)
    sys.modules["benchmarks_run"] = module
    spec.loader.exec_module(module)
    return module


def test_only_the_figures_run_get_the_new_date(monkeypatch):
    run = load_run()
    monkeypatch.setattr(run, "_git_commit", lambda: "new")
    old = {"_meta": {"date": "2026-01-01", "commit": "old", "repeats": 3}, "a.x": 1.0, "b.y": 2.0, "c.z": 3.0}
    measured = run._measured(old, ["b.y", "c.gone"], repeats=5)
    assert measured["a.x"] == {"date": "2026-01-01", "commit": "old", "repeats": 3}
    assert measured["b.y"]["commit"] == "new" and measured["b.y"]["repeats"] == 5
    assert "c.gone" not in measured  # a figure that failed has no date


def test_dates_survive_a_second_partial_run(monkeypatch):
    run = load_run()
    monkeypatch.setattr(run, "_git_commit", lambda: "second")
    results = {"_measured": {"a.x": {"date": "d1", "commit": "first", "repeats": 5}}, "a.x": 1.0, "b.y": 2.0,
               "_meta": {"cpus": 2}}
    measured = run._measured(results, ["b.y"], repeats=5)
    assert measured["a.x"]["commit"] == "first" and measured["b.y"]["commit"] == "second"
