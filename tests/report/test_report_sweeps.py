"""The report's "Sweeps" section, from results/sweeps/<id>/ as the sweep stage writes it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from boardrl.report import ReportError, build_report, load_sweeps
from report.results_tree import SWEEP, TTT, make_results, run_id, sweep_summary, write_json, write_sweep

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("swept")
    results = make_results(tmp, sweep=True)
    out = tmp / "reports"
    build_report(results, out)
    return results, out


@pytest.fixture(scope="module")
def md(built) -> str:
    return (built[1] / "report.md").read_text()


def unlinked(line: str) -> str:
    """Markdown with reference links reduced to their text."""
    return re.sub(r"\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\[r\d+\]", r"\1", line)


def sweeps_section(md: str) -> str:
    return md.split("\n## Sweeps\n", 1)[1].split("\n## ", 1)[0]


def test_section_lists_the_sweep_after_the_reference_systems(md):
    from boardrl.report.build import REFERENCE_TITLE

    assert md.index("\n## Experiments\n") < md.index(f"\n## {REFERENCE_TITLE}\n") < md.index("\n## Sweeps\n")
    sec = sweeps_section(md)
    run = run_id("sweep", TTT, 0)
    row = next(ln for ln in sec.splitlines() if ln.startswith(f"| [`{SWEEP}`][r"))
    assert unlinked(row).startswith(f"| `{SWEEP}` | `{TTT}` | 3 | 1 | 20,000 games | seeds 0, 1 | 0.931 (trial 2) |")
    assert "| Training seeds of each trial |" in sec  # not "Seeds per trial: 7", which reads as a count
    ref = row.split("][r", 1)[1].split("]")[0]
    assert f"[r{ref}]: <#sweep-{SWEEP}>" in md  # the sweep's id links to its subsection
    assert "| `default` | [run " + run[:8] + "][r" in row
    assert f"[r{row.rsplit('][r', 1)[1].split(']')[0]}]: <http://127.0.0.1:5000/#/runs/{run}>" in md
    assert "\n### Sweep ttt_sweep\n" in sec
    assert (f"Tunes `{TTT}` (tabular_q on tictactoe): 3 finished trials (1 pruned) in 42.0 s, each trained 20,000 "
            "games per seed (the experiment itself trains 200,000 games per seed) with seeds 0, 1, profile "
            "`default`, study `ttt_sweep-abcdef012345`.") in unlinked(sec)


def test_best_params_sit_beside_the_experiments_values(md):
    sec = sweeps_section(md)
    assert ("| Param | Best (trial 2) | Experiment's value |\n|---|---|---|\n"
            "| `alpha` | `0.4213` | `0.1` |\n"
            "| `exploration.end` | `0.1` | `0.05` |\n"
            "| `exploration.schedule` | `exponential` | `linear` |\n") in sec
    assert "does not state the experiment's params" not in sec


def test_shown_figures_are_copied_under_names_with_the_sweep_id(built, md):
    results, out = built
    sec = sweeps_section(md)
    for name in ("history.png", "importances.png"):
        copied = out / "figures" / f"sweep_{SWEEP}_{name}"
        assert copied.read_bytes() == (results / "sweeps" / SWEEP / "figures" / name).read_bytes()
        assert f"](figures/sweep_{SWEEP}_{name})" in sec
    assert not (out / "figures" / f"sweep_{SWEEP}_parallel_coordinates.png").exists()  # not shown, not copied
    page = (out / "index.html").read_text()
    assert f'<h3 id="sweep-{SWEEP}">Sweep {SWEEP}</h3>' in page
    assert f'<img src="figures/sweep_{SWEEP}_history.png"' in page and '<h2 id="sweeps">Sweeps</h2>' in page


def test_rebuild_with_a_sweep_is_identical(built, tmp_path, monkeypatch):
    monkeypatch.setenv("BOARDRL_FIGURE_CACHE", "off")  # every figure drawn again: the drawing is what is compared
    results, first = built
    build_report(results, tmp_path / "again")
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "again") for p in (tmp_path / "again").rglob("*") if p.is_file())
    for rel in files:
        assert (first / rel).read_bytes() == (tmp_path / "again" / rel).read_bytes(), rel


def test_no_sweeps_no_section(tmp_path):
    results = make_results(tmp_path)
    assert load_sweeps(results) == []
    build_report(results, tmp_path / "reports")
    out = tmp_path / "reports"
    assert "Sweeps" not in (out / "report.md").read_text() and "Sweeps" not in (out / "index.html").read_text()
    assert not list(out.glob("figures/sweep_*"))


def test_without_experiment_params_the_default_column_reads_a_dash(tmp_path):
    results = make_results(tmp_path)
    write_sweep(results, with_params=False, figures=("history.png",))
    build_report(results, tmp_path / "reports")
    sec = sweeps_section((tmp_path / "reports" / "report.md").read_text())
    assert "| `alpha` | `0.4213` | `-` |" in sec and "| `exploration.schedule` | `exponential` | `-` |" in sec
    assert "does not state the experiment's params" in sec
    assert "Optimisation history of the sweep" in sec and "importances" not in sec
    assert [p.name for p in (tmp_path / "reports" / "figures").glob("sweep_*")] == [f"sweep_{SWEEP}_history.png"]


def test_a_sweep_without_figures_or_summary(tmp_path):
    results = make_results(tmp_path)
    write_sweep(results, figures=())
    (results / "sweeps" / "running_sweep").mkdir()  # a sweep still running: no summary.json yet
    build_report(results, tmp_path / "reports")
    sec = sweeps_section((tmp_path / "reports" / "report.md").read_text())
    assert "No optimisation-history figure" in sec
    assert "### Sweep running_sweep\n\nNot finished yet (`results/sweeps/running_sweep/summary.json` is missing)." in sec
    assert sum(ln.startswith("| [`") and "| 3 | 1 |" in ln for ln in sec.splitlines()) == 1  # only finished sweeps


def test_a_sweep_of_an_experiment_without_results_takes_the_unit_from_its_params(tmp_path):
    results = make_results(tmp_path)
    write_sweep(results, "other_sweep", "not_trained_yet")
    build_report(results, tmp_path / "reports")
    sec = sweeps_section((tmp_path / "reports" / "report.md").read_text())
    assert ("Tunes `not_trained_yet`: 3 finished trials (1 pruned) in 42.0 s, each trained 20,000 games per seed "
            "(the experiment itself trains 200,000 games per seed)") in sec


@pytest.mark.parametrize("name, content, message", [
    ("summary.json", "{not json", "summary.json: not readable JSON"),
    ("summary.json", "[]", "summary.json: expected a JSON object, found list"),
    ("summary.json", json.dumps({**sweep_summary(), "finished_trials": "three"}),
     "summary.json: finished_trials must be a non-negative integer, found 'three'"),
    ("summary.json", json.dumps({**sweep_summary(), "sweep": "elsewhere"}),
     "summary.json: sweep 'elsewhere' disagrees with its directory 'ttt_sweep'"),
    ("summary.json", json.dumps({**sweep_summary(), "experiment_params": [1]}),
     "summary.json: experiment_params must be an object"),
    ("best_params.yaml", "experiments: [1, 2", "best_params.yaml: not readable YAML"),
    ("best_params.yaml", "experiments: {other: {params: {alpha: 1}}}",
     f"best_params.yaml: no experiments.{TTT}.params mapping"),
    ("trials.csv", "number,value\n0,0.5\n", "trials.csv: missing column(s) state"),
    ("trials.csv", "number,value,state,params_alpha\n0,0.5,DONE,0.1\n", "trials.csv: line 2: unknown state 'DONE'"),
])
def test_a_malformed_sweep_file_is_one_report_error_line_naming_it(tmp_path, name, content, message):
    results = make_results(tmp_path)
    d = write_sweep(results)
    (d / name).write_text(content)
    with pytest.raises(ReportError) as info:
        build_report(results, tmp_path / "reports")
    assert len(str(info.value).splitlines()) == 1
    assert str(info.value).startswith(f"{d / name}: ") and message in str(info.value)
    assert not (tmp_path / "reports").exists()


def test_pipeline_script_reports_a_malformed_summary_in_one_line(tmp_path):
    results = make_results(tmp_path)
    bad = write_sweep(results) / "summary.json"
    write_json(bad, {"sweep": SWEEP})
    proc = subprocess.run([sys.executable, str(ROOT / "pipeline" / "report.py"), "--results", str(results),
                           "--out", str(tmp_path / "reports")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {bad}: missing key 'experiment'")
