"""The report stage on a small synthetic results/ tree in the layout the train and evaluate stages write."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import matplotlib.image
import pytest

from boardrl.report import ReportError, build_report
from boardrl.report.comparison import SEED_TABLE_HEADER
from boardrl.report.seeds import LEARNER_KINDS, SEED_NUMBERS
from report.results_tree import (BASELINE, C4, COMMIT, DAB, SLOW, TTT, TTT_WINS, make_results, run_id, ttt_eval, write_json,
                                 write_train)

ROOT = Path(__file__).resolve().parents[2]
N_FILES = 10  # report.md, index.html and 8 figures


@pytest.fixture
def results(tmp_path) -> Path:
    return make_results(tmp_path)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    """One report built from the synthetic tree (with a data summary) for the read-only checks."""
    tmp = tmp_path_factory.mktemp("built")
    results = make_results(tmp)
    summary = tmp / "summary.json"
    summary.write_text(json.dumps({"rows": 67557, "classes": {"win": 44473, "loss": 16635, "draw": 6449}}))
    out = tmp / "reports"
    build_report(results, out, ui="http://127.0.0.1:5000", data_summary=summary)
    return results, out


@pytest.fixture(scope="module")
def md(built) -> str:
    return (built[1] / "report.md").read_text()


def run_link(run: str) -> str:
    return f"<http://127.0.0.1:5000/#/runs/{run}>"


def link_of(md: str, shown: str) -> str:
    """The definition line of the reference link that ``[shown][rK]`` uses (its first occurrence)."""
    m = re.search(re.escape(f"[{shown}][") + r"(r\d+)\]", md)
    assert m, f"{shown!r} is not a link"
    return next(ln for ln in md.splitlines() if ln.startswith(f"[{m.group(1)}]: "))


def links_in(md: str, line: str) -> list[str]:
    """The definition lines of every reference link in ``line``, in order."""
    defs = dict(re.findall(r"^\[(r\d+)\]: (.*)$", md, re.M))
    return [defs[ref] for ref in re.findall(r"\]\[(r\d+)\]", line)]


def section(md: str, exp_id: str) -> str:
    """The Markdown of one experiment's section (up to the next level-2 heading)."""
    return md.split(f"\n## {exp_id}\n", 1)[1].split("\n## ", 1)[0]


def unlinked(line: str) -> str:
    """A Markdown line with reference links reduced to their text."""
    return re.sub(r"\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\[r\d+\]", r"\1", line)


def test_report_files_exist_and_figures_are_png(built, md):
    _, out = built
    names = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert names == {
        "report.md", "index.html", f"figures/curve_{TTT}.png", f"figures/curve_{SLOW}.png",
        f"figures/curve_{DAB}.png", f"figures/wdl_{TTT}.png", f"figures/wdl_{SLOW}.png", f"figures/wdl_{C4}.png",
        f"figures/uci_{C4}.png", "figures/optimal_move_rates.png",
    }
    for p in out.glob("figures/*.png"):
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        img = matplotlib.image.imread(p)
        assert img.ndim == 3 and img.shape[0] > 200 and img.shape[1] > 300
        assert img[..., :3].std() > 0.05  # something was drawn
    for name in names - {"report.md", "index.html"}:
        assert f"]({name})" in md  # every figure is shown in the report


def test_profile_and_title_lines(md):
    assert md.startswith("# boardrl: results\n\nParams profile: `default` (every experiment below).\n")
    assert (f"`{TTT}`: tabular_q on tictactoe, 200,000 games of training per seed, seeds 0, 1, 2, profile "
            "`default`.") in section(md, TTT)
    assert f"`{SLOW}`: tabular_q on tictactoe, 20,000 games of training per seed, seeds 0, profile" in md


def test_two_experiments_of_one_game_and_learner_coexist(md):
    rows = [ln for ln in md.splitlines() if ln.startswith(f"| `{TTT}") or ln.startswith(f"| `{SLOW}")]
    assert f"| `{TTT}` | tictactoe | tabular_q | 200,000 games | 0, 1, 2 | 0, 1, 2 | `default` |" in rows
    assert f"| `{SLOW}` | tictactoe | tabular_q | 20,000 games | 0 | 0 | `default` |" in rows
    assert f"\n## {TTT}\n" in md and f"\n## {SLOW}\n" in md
    assert "| 90.0% [89.0, 91.0] |" in unlinked(section(md, SLOW))  # SLOW's own numbers in its own section
    assert "90.0%" not in section(md, TTT)


def test_three_seeds_show_the_iqm_interval_and_each_seed(md):
    sec = section(md, TTT)
    assert "| Opponent | Measure | IQM [95% interval] | Seed 0 | Seed 1 | Seed 2 |" in sec
    win = next(ln for ln in sec.splitlines() if ln.startswith("| random | win |"))
    assert unlinked(win) == "| random | win | 98.6% [97.0, 99.0] | 98.8% | 97.0% | 99.0% |"
    targets = [d.split(" ")[0] for d in links_in(md, win)]  # each seed's value links to its evaluate run
    assert targets == [run_link(run_id("eval", TTT, k)) for k in TTT_WINS]
    assert unlinked(next(ln for ln in sec.splitlines() if "optimal-move rate" in ln)).startswith(
        "| - | optimal-move rate | 99.0% [98.0, 100.0] | 100.0% | 99.0% | 98.0% |")
    assert "interquartile mean, percentile bootstrap over seeds, 95% interval" in sec
    assert "one line per seed" in sec


def test_one_seed_has_no_interval_across_seeds(md):
    win = next(ln for ln in section(md, SLOW).splitlines() if ln.startswith("| random | win |"))
    assert unlinked(win) == "| random | win | 90.0% (one seed) | 90.0% |"


def test_a_statistic_missing_across_seeds_reads_n_a(results, tmp_path):
    path = results / "eval" / f"{TTT}.json"
    data = json.loads(path.read_text())
    data["across_seeds"]["opponents"]["perfect"]["win"] = None  # what evaluate writes when a seed lacks the number
    path.write_text(json.dumps(data))
    build_report(results, tmp_path / "reports")
    sec = section((tmp_path / "reports" / "report.md").read_text(), TTT)
    assert "| perfect | win | n/a | n/a | n/a | n/a |" in sec


def test_markdown_holds_the_numbers_with_their_provenance(md):
    # seed 0's win rate vs random with its Wilson interval, linked to seed 0's evaluate run, the commit in the title
    assert link_of(md, "98.8% [97.8, 99.8]").endswith(
        f"{run_link(run_id('eval', TTT, 0))} \"MLflow run {run_id('eval', TTT, 0)}, git commit {COMMIT}\"")
    assert run_link(run_id("eval", TTT, 1)) in link_of(md, "97.0% [96.0, 98.0]")
    assert run_link(run_id("train", DAB, 0)) in link_of(md, "50,000 games")  # training budget: the train run
    assert "| 12.5 s |" in md and f"commit `{COMMIT[:10]}`" in md
    sec = section(md, TTT)
    assert "seed 1: [99.0% [98.8, 99.2]]" in sec and "on 2,000 positions" in sec
    assert "61.2% [60.2, 62.2]" in md  # UCI seed-000 protocol, win positions
    assert "Not evaluated yet" in section(md, DAB)  # dots and boxes has a curve only
    assert "No learning curve yet" in section(md, C4)
    assert "Where we deliberately differ from the seeds" in md and "42nd piece" in md


def test_provenance_has_a_row_per_seed(md):
    rows = [unlinked(ln) for ln in md.splitlines() if ln.startswith(f"| `{TTT}` | ")]
    seeds = [r.split(" | ")[1] for r in rows if "200,000 games | 12.5 s" in r]
    assert seeds == ["0", "1", "2"]


def test_optimal_rates_say_their_basis(md):
    table = md.split("## Optimal-move rates", 1)[1]
    assert f"| `{TTT}` | tictactoe | tabular_q | 99.0% [98.0, 100.0] | IQM of 3 seeds, bootstrap interval |" in table
    assert "seed 0, 2,000 positions, Wilson interval" in table


def _seed_rows(md: str) -> list[list[str]]:
    table = md.split("## The seeds' published numbers beside ours", 1)[1].split("\n## ", 1)[0]
    return [[c.strip() for c in unlinked(ln).strip("|").split(" | ")] for ln in table.splitlines()
            if ln.startswith("| 0")]


def test_seed_table_has_a_row_per_published_number_and_reproduction(md):
    rows = _seed_rows(md)
    assert len(rows) == sum(max(1, len(n.reproduction)) for n in SEED_NUMBERS)
    assert all(len(r) == len(SEED_TABLE_HEADER) for r in rows)


def test_seed_table_sets_our_best_of_the_same_kind_beside_a_seed_row(md):
    rows = _seed_rows(md)
    exp03 = next(r for r in rows if "GreedyQ always X vs Random" in r[3])
    assert exp03[4] == "random, as first"
    assert exp03[6] == "`tictactoe_seed000_exp03`" and exp03[7] == "not run yet"  # its reproduction is missing
    assert exp03[8] == f"`{TTT}` (200,000 games x 3 seeds)"
    # the best's figure pools its 3 seeds (as first vs random: 98.76, 97, 99 % of 10,000 games each)
    assert exp03[9].startswith("98.25 / 1.75 / 0.00; win 98.3% [") and "(3 seeds x 10,000 games)" in exp03[9]
    assert exp03[9].endswith(" → no number published to compare")
    qt = next(r for r in rows if r[2].startswith("QT, trained vs Random") and r[4] == "random, combined")
    assert qt[6] == "`tictactoe_seed002_qt_vs_random`" and qt[7] == "not run yet"
    assert qt[9].endswith(" → beaten")  # 95.20% lies below our pooled interval


def test_seed_table_never_sets_another_kind_beside_a_seed_row(md):
    rows = _seed_rows(md)
    assert all(f"`{C4}`" not in " ".join(r) for r in rows)  # a tabular Connect 4 agent: no seed row of its kind
    neural = [r for r in rows if "DQ," in r[2] or "conv net" in r[2] or "TD(lambda)" in r[2]]
    tabular_ids = {f"`{i}`" for i in (TTT, SLOW, DAB, C4)}
    assert neural and not any(cell.split(" (")[0] in tabular_ids for r in neural for cell in (r[6], r[8]))
    # the synthetic tree has no neural experiment: each neural row names its own or none, and says so
    assert all(r[7] == "not run yet" for r in neural)
    kinds = {n.agent: n.kind for n in SEED_NUMBERS}
    for r in rows:
        for cell in (r[6], r[8]):
            m = re.match(r"`([a-z0-9_]+)`", cell)
            if m and m.group(1) in (TTT, SLOW, DAB, C4):
                assert LEARNER_KINDS["tabular_q"] == kinds[r[2].rsplit(" (", 1)[0]]


def test_seed_table_compares_a_baseline_only_with_our_baseline(md):
    rows = [r for r in _seed_rows(md) if r[2] == "Random player (baseline)"]
    assert [r[4] for r in rows] == ["random, as first", "random, as second"]
    first, second = rows
    assert first[6] == f"`tournament@{BASELINE}` (no training)" and first[8] == "-"
    assert first[7].startswith("0.652 [") and first[7].endswith(" → reproduced (within the interval)")
    assert second[7].startswith("0.348 [") and second[7].endswith(" → reproduced (within the interval)")


def test_check_kind_refuses_an_experiment_of_another_kind():
    from boardrl.errors import BoardRLError
    from boardrl.report.comparison import check_kind
    from boardrl.report.results import Experiment

    row = next(n for n in SEED_NUMBERS if n.kind == "neural" and n.game == "tictactoe")
    tabular = Experiment(id="x", game="tictactoe", learner="tabular_q", profile=None, unit="games", budget=1,
                         seeds={})
    with pytest.raises(BoardRLError, match="cannot stand beside seed 00.'s"):
        check_kind(row, tabular)


def test_every_learner_has_a_kind():
    from boardrl.learn import learner_names

    assert set(learner_names()) <= set(LEARNER_KINDS)


def test_tournament_section_sets_the_seed_beside_ours(md):
    part = md.split("## Round robins of fixed players", 1)[1]
    assert f"### {BASELINE} (tictactoe)" in part and "| `random` | 5914-2878 (1208 draws) |" in part


def test_html_page_matches_the_markdown(built, md):
    _, out = built
    page = (out / "index.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "98.8% [97.8, 99.8]" in page and f'href="http://127.0.0.1:5000/#/runs/{run_id("eval", TTT, 0)}"' in page
    assert f'<img src="figures/curve_{TTT}.png"' in page and f'<h2 id="{SLOW}">' in page
    assert page.count("<table>") == sum(ln.startswith("|---") for ln in md.splitlines())


def test_rebuilding_gives_identical_files(built, tmp_path):
    results, first = built
    build_report(results, tmp_path / "again", data_summary=results.parent / "summary.json")
    files = [p for p in first.rglob("*") if p.is_file()]
    assert len(files) == N_FILES
    for p in files:
        assert p.read_bytes() == (tmp_path / "again" / p.relative_to(first)).read_bytes(), p.name


def test_data_summary_is_reported_when_present(md):
    assert "| classes.win | `44473` |" in md and "| rows | `67557` |" in md


def test_disagreeing_profiles_are_listed(tmp_path):
    r = tmp_path / "results"
    write_train(r, "tiny_one", "tictactoe", 0, ["random"], profile="tiny")
    write_json(r / "eval" / "full_one.json", ttt_eval("full_one", {0: 0.9}, profile="full"))
    build_report(r, tmp_path / "reports")
    md = (tmp_path / "reports" / "report.md").read_text()
    assert "Params profiles differ between experiments:\n\n- `full`: `full_one`\n- `tiny`: `tiny_one`\n" in md


def test_missing_results_dir_is_a_one_line_error_with_exit_2(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "pipeline" / "report.py"), "--results", str(tmp_path / "nope"),
                           "--out", str(tmp_path / "reports")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: results directory {tmp_path / 'nope'} not found; run the pipeline first (`dvc repro`)"]
    assert not (tmp_path / "reports").exists()


def test_pipeline_script_writes_the_report(results, tmp_path):
    """The report, and the headline table's data and README block (here in tmp_path: never the project's own)."""
    readme = tmp_path / "README.md"
    readme.write_text("<!-- headline:start -->\n<!-- headline:end -->\n")
    proc = subprocess.run([sys.executable, str(ROOT / "pipeline" / "report.py"), "--results", str(results),
                           "--out", str(tmp_path / "reports"), "--data-summary", str(tmp_path / "none.json"),
                           "--headline", str(tmp_path / "headline.json"), "--readme", str(readme)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "reports" / "report.md").is_file() and f"report: {N_FILES} files" in proc.stderr
    assert (tmp_path / "headline.json").is_file() and "| tictactoe | `perfect` |" in readme.read_text()


def test_pipeline_script_reports_a_malformed_file_in_one_line(results, tmp_path):
    bad = results / "eval" / f"{TTT}.json"
    bad.write_text("[]")
    proc = subprocess.run([sys.executable, str(ROOT / "pipeline" / "report.py"), "--results", str(results),
                           "--out", str(tmp_path / "reports")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"error: {bad}: expected a JSON object, found list"]


def test_a_failed_build_leaves_the_previous_report(results, tmp_path):
    out = tmp_path / "reports"
    build_report(results, out)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    bad = json.loads((results / "eval" / f"{TTT}.json").read_text())
    del bad["seeds"]["0"]["opponents"]["random"]["as_second"]
    (results / "eval" / f"{TTT}.json").write_text(json.dumps(bad))
    with pytest.raises(ReportError, match="seeds.0.opponents.random.as_second needs win, draw, loss and games"):
        build_report(results, out)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left behind
