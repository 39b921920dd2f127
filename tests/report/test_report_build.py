"""The report stage on a small synthetic results/ tree in the formats the train and evaluate stages write."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import matplotlib.image
import pytest

from boardrl.report import ReportError, build_report, load_results
from boardrl.report.seeds import SEED_NUMBERS

ROOT = Path(__file__).resolve().parents[2]
RUN_T, RUN_E, RUN_C = "a1" * 16, "b2" * 16, "c3" * 16
COMMIT = "0123456789abcdef0123456789abcdef01234567"
SEATS = ("as_first", "as_second", "combined")


def prov(game, agent, run, seconds=12.5):
    return {"game": game, "agent": agent, "games_trained": 200000, "seconds": seconds, "seed": 23,
            "mlflow_run_id": run, "git_commit": COMMIT, "params_hash": "feedbeef" * 8, "dvc_exp_name": "exp-x"}


def seat(win, draw, loss, games):
    return {"win": win, "draw": draw, "loss": loss, "games": games, "win_ci": [win - 0.01, min(1.0, win + 0.01)],
            "draw_ci": [max(0.0, draw - 0.01), draw + 0.01], "loss_ci": [max(0.0, loss - 0.01), loss + 0.01]}


def curve_rows(opponents):
    rows = ["step\topponent\tseat\twin\tdraw\tloss\tgames"]
    for step, w in ((0, 0.3), (100, 0.5), (1000, 0.8), (10000, 0.95), (200000, 0.9876)):
        for opp in opponents:
            for s in SEATS:
                rows.append(f"{step}\t{opp}\t{s}\t{w}\t{round(1 - w, 6)}\t0.0\t1000")
    return "\n".join(rows) + "\n"


def make_results(tmp_path: Path) -> Path:
    r = tmp_path / "results"
    t = r / "train" / "tictactoe-tabular_q"
    t.mkdir(parents=True)
    (t / "curve.tsv").write_text(curve_rows(["random", "perfect"]))
    (t / "summary.json").write_text(json.dumps(prov("tictactoe", "tabular_q", RUN_T)))
    d = r / "train" / "dots_and_boxes_2x2-tabular_q"
    d.mkdir(parents=True)
    (d / "curve.tsv").write_text(curve_rows(["random"]))
    (r / "eval").mkdir()
    ttt = {
        "opponents": {"random": {**{s: seat(0.9876, 0.0124, 0.0, 10000) for s in SEATS}, "mean_length": 6.1},
                      "perfect": {s: seat(0.0, 1.0, 0.0, 1000) for s in SEATS}},
        "optimal_move_rate": 1.0, "optimal_move": {"rate": 1.0, "n": 2000, "optimal": 2000, "ci": [0.998, 1.0]},
        "uci": None, "provenance": prov("tictactoe", "tabular_q", RUN_E),
    }
    (r / "eval" / "tictactoe-tabular_q.json").write_text(json.dumps(ttt))
    labels = ("win", "draw", "loss")
    c4 = {
        "opponents": {"random": {s: seat(0.75, 0.05, 0.2, 1000) for s in SEATS}},
        "optimal_move_rate": None, "optimal_move": None,
        "uci": {"seed000": {lab: seat(w, 0.05, 0.95 - w, 1000) for lab, w in zip(labels, (0.612, 0.4, 0.2))},
                "full": {lab: {**{s: seat(0.5, 0.1, 0.4, 300) for s in SEATS}, "positions": 300} for lab in labels}},
        "provenance": prov("connect4", "tabular_q", RUN_C),
    }
    (r / "eval" / "connect4-tabular_q.json").write_text(json.dumps(c4))
    return r


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


def test_report_files_exist_and_figures_are_png(built):
    _, out = built
    names = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert names == {
        "report.md", "index.html", "figures/curve_tictactoe-tabular_q.png",
        "figures/curve_dots_and_boxes_2x2-tabular_q.png", "figures/wdl_tictactoe-tabular_q.png",
        "figures/wdl_connect4-tabular_q.png", "figures/uci_connect4-tabular_q.png", "figures/optimal_move_rates.png",
    }
    for p in out.glob("figures/*.png"):
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        img = matplotlib.image.imread(p)
        assert img.ndim == 3 and img.shape[0] > 200 and img.shape[1] > 300
        assert img[..., :3].std() > 0.05  # something was drawn
    md = (out / "report.md").read_text()
    for name in names - {"report.md", "index.html"}:
        assert f"]({name})" in md  # every figure is shown in the report


def link_of(md: str, shown: str) -> str:
    """The definition line of the reference link that ``[shown][rK]`` uses."""
    m = re.search(re.escape(f"[{shown}][") + r"(r\d+)\]", md)
    assert m, f"{shown!r} is not a link"
    return next(ln for ln in md.splitlines() if ln.startswith(f"[{m.group(1)}]: "))


def test_markdown_holds_the_numbers_with_their_provenance(built):
    _, out = built
    md = (out / "report.md").read_text()
    # the win rate vs random with its interval, linked to the evaluate run, the commit in the title
    assert link_of(md, "98.8% [97.8, 99.8]").endswith(
        f"<http://127.0.0.1:5000/#/runs/{RUN_E}> \"MLflow run {RUN_E}, git commit {COMMIT}\"")
    assert f"<http://127.0.0.1:5000/#/runs/{RUN_T}>" in link_of(md, "200,000")  # training games: train run
    assert "| 12.5 s |" in md and f"commit `{COMMIT[:10]}`" in md
    assert RUN_E in link_of(md, "100.0% [99.8, 100.0]") and "on 2,000 positions" in md
    assert "61.2% [60.2, 62.2]" in md  # UCI seed-000 protocol, win positions
    assert "Not evaluated yet" in md  # dots and boxes has a curve only
    assert "Where we deliberately differ from the seeds" in md and "42nd piece" in md


def test_seed_table_puts_ours_beside_each_published_number(built):
    _, out = built
    md = (out / "report.md").read_text()
    lines = [ln for ln in md.splitlines() if ln.startswith("| 0")]
    assert len(lines) >= len(SEED_NUMBERS)
    exp04_win = next(ln for ln in lines if "exp 04 (win positions)" in ln)
    assert "94% (56% before training)" in exp04_win and "61.2% [60.2, 62.2]" in exp04_win
    exp03 = next(ln for ln in lines if "GreedyQ always X vs Random" in ln)
    assert "98.76 / 1.24 / 0.00" in exp03  # ours vs random as first, W / D / L
    s003_random_first = next(ln for ln in lines if "Random player (baseline)" in ln and "as first" in ln)
    assert "| 0.65 |" in s003_random_first and "0.994" in s003_random_first  # score = W + D/2
    dab = [ln for ln in lines if "dots_and_boxes_2x2" in ln]
    assert dab and all("not run yet" in ln for ln in dab)  # trained but not evaluated: nothing to compare
    assert all("not run yet" in ln for ln in lines if "| conniption |" in ln)


def test_html_page_matches_the_markdown(built):
    _, out = built
    page = (out / "index.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "98.8% [97.8, 99.8]" in page and f'href="http://127.0.0.1:5000/#/runs/{RUN_E}"' in page
    assert '<img src="figures/curve_tictactoe-tabular_q.png"' in page
    assert page.count("<table>") == sum(ln.startswith("|---") for ln in (out / "report.md").read_text().splitlines())


def test_rebuilding_gives_identical_files(built, tmp_path):
    results, first = built
    build_report(results, tmp_path / "again", data_summary=results.parent / "summary.json")
    files = [p for p in first.rglob("*") if p.is_file()]
    assert len(files) == 8
    for p in files:
        assert p.read_bytes() == (tmp_path / "again" / p.relative_to(first)).read_bytes(), p.name


def test_data_summary_is_reported_when_present(built):
    md = (built[1] / "report.md").read_text()
    assert "| classes.win | `44473` |" in md and "| rows | `67557` |" in md


def test_missing_results_dir_is_a_one_line_error_with_exit_2(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "pipeline" / "report.py"), "--results", str(tmp_path / "nope"),
                           "--out", str(tmp_path / "reports")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: results directory {tmp_path / 'nope'} not found; run the pipeline first (`dvc repro`)"]
    assert not (tmp_path / "reports").exists()


def test_pipeline_script_writes_the_report(results, tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "pipeline" / "report.py"), "--results", str(results),
                           "--out", str(tmp_path / "reports")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "reports" / "report.md").is_file() and "report: 8 files" in proc.stderr


def test_empty_and_malformed_results_name_the_problem(results, tmp_path):
    empty = tmp_path / "empty"
    (empty / "train").mkdir(parents=True)
    with pytest.raises(ReportError, match="no results under"):
        load_results(empty)
    curve = results / "train" / "tictactoe-tabular_q" / "curve.tsv"
    curve.write_text("step\topponent\twin\n0\trandom\t0.5\n")
    with pytest.raises(ReportError, match=r"curve.tsv: missing column\(s\) seat, draw, loss, games"):
        load_results(results)
    curve.write_text(curve_rows(["random"]).replace("as_first", "first"))
    with pytest.raises(ReportError, match="unknown seat"):
        load_results(results)


def test_a_failed_build_leaves_the_previous_report(results, tmp_path):
    out = tmp_path / "reports"
    build_report(results, out)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    bad = json.loads((results / "eval" / "tictactoe-tabular_q.json").read_text())
    del bad["opponents"]["random"]["as_second"]
    (results / "eval" / "tictactoe-tabular_q.json").write_text(json.dumps(bad))
    with pytest.raises(ReportError, match="opponents.random.as_second needs win, draw, loss and games"):
        build_report(results, out)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left behind
