"""The report page and `dvc plots show`'s page in a real browser: headless Chromium at 1,400 px, offline.

Skipped, saying why, where no Chromium binary is found (``apt-get install chromium``, or ``BOARDRL_CHROMIUM``);
``make report-check`` runs the same checks on the pipeline's own report.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import matplotlib.image
import pytest

from boardrl.report import build_report
from boardrl.tools.browser import check_plots, check_report, find_chromium, linked_pages
from report.results_tree import TTT, make_results

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    find_chromium() is None,
    reason="no Chromium binary on PATH (apt-get install chromium, or set BOARDRL_CHROMIUM); `make report-check` "
           "runs the same check")


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    """The report of the synthetic tree, with a sweep and the data summary: every section, every table."""
    tmp = tmp_path_factory.mktemp("browser")
    results = make_results(tmp, sweep=True)
    summary = tmp / "summary.json"
    summary.write_text(json.dumps({"rows": 67557, "classes": {"win": 44473, "loss": 16635, "draw": 6449}}))
    build_report(results, tmp / "reports", data_summary=summary)
    return tmp / "reports"


def test_nothing_sticks_out_at_1400_px(report, tmp_path):
    shot = tmp_path / "screenshot-1400.png"
    problems, res = check_report(report / "index.html", width=1400, screenshot=shot)
    assert problems == []
    v = res.value
    assert v["viewport"] == 1400 and v["pageWidth"] == 1400 and v["tables"] >= 10
    assert res.requests and res.network_requests == []  # the page and its figures, all local
    img = matplotlib.image.imread(shot)
    assert img.shape[1] == 1400 and img.shape[0] == v["pageHeight"]  # the whole page, not just the window
    assert img[..., :3].std() > 0.05


def test_every_game_page_fits_and_the_index_links_to_each(report):
    pages = linked_pages(report / "index.html")
    assert sorted(p.name for p in pages) == ["connect4.html", "dots_and_boxes_2x2.html", "tictactoe.html"]
    for page in pages:
        problems, res = check_report(page, width=1400)
        assert problems == [] and res.value["tables"] >= 1, page.name
        assert res.network_requests == [], page.name


def test_the_check_sees_a_table_cut_off(tmp_path):
    """The page as it was: the reference systems' table wider than a 1,400 px window."""
    page = tmp_path / "wide.html"
    cells = "".join(f"<td>{'x' * 60}{i}</td>" for i in range(6))
    page.write_text(f"<!DOCTYPE html><html><body><table><tr>{cells}</tr></table></body></html>")
    problems, res = check_report(page, width=1400)
    assert res.value["pageWidth"] > 1400
    assert any("scrolls sideways" in p for p in problems)
    assert any("outside the window" in p for p in problems)


def _dvc_repo(tmp_path: Path, results: Path) -> Path:
    """A DVC repository with the project's .dvc/config and .dvc/plots (template, vendored scripts) and one
    plot: the synthetic learning curves."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run([sys.executable, "-m", "dvc", "init", "--no-scm", "-q"], cwd=repo, check=True, timeout=120)
    shutil.copyfile(ROOT / ".dvc" / "config", repo / ".dvc" / "config")
    shutil.rmtree(repo / ".dvc" / "plots", ignore_errors=True)
    shutil.copytree(ROOT / ".dvc" / "plots", repo / ".dvc" / "plots")
    shutil.copytree(results / "curves" / TTT, repo / "curves")
    (repo / "dvc.yaml").write_text("plots:\n  - curves:\n      x: step\n      y: win\n      template: learning_curve\n")
    return repo


def _plots_show(repo: Path, *args: str, cwd: Path | None = None) -> None:
    proc = subprocess.run([sys.executable, "-m", "dvc", "plots", "show", *args], cwd=cwd or repo,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr


def test_dvc_plots_draw_offline(tmp_path):
    repo = _dvc_repo(tmp_path, make_results(tmp_path))
    _plots_show(repo)
    page = repo / "dvc_plots" / "index.html"
    html = page.read_text()
    assert "cdn.jsdelivr.net/npm" not in html  # DVC's script tags (a CDN) are left out
    problems, notes, res = check_plots(page, width=1400, screenshot=tmp_path / "plots.png")
    assert problems == [] and notes == []
    v = res.value
    assert len(v["plots"]) == 3 and all(p["ink"] > 1000 for p in v["plots"])  # the three seeds' curves, drawn
    assert (v["vega"], v["vegaLite"], v["vegaEmbed"]) == ("5.33.1", "5.23.0", "6.29.0")
    assert res.network_requests == []
    assert any(u.endswith("/.dvc/plots/vendor/vega-embed.min.js") for u in res.requests)


def test_dvc_plots_draw_from_a_subdirectory_and_with_out(tmp_path):
    repo = _dvc_repo(tmp_path, make_results(tmp_path))
    (repo / "sub").mkdir()
    _plots_show(repo, cwd=repo / "sub")  # DVC writes sub/dvc_plots/index.html
    (repo / "build" / "plots").mkdir(parents=True)  # DVC makes the last folder only
    _plots_show(repo, "-o", "build/plots/deep")
    for page in (repo / "sub" / "dvc_plots" / "index.html", repo / "build" / "plots" / "deep" / "index.html"):
        problems, _, res = check_plots(page, width=1400)
        assert problems == [], page
        assert len(res.value["plots"]) == 3


def test_outside_the_repository_the_page_says_why_it_is_blank(tmp_path):
    repo = _dvc_repo(tmp_path, make_results(tmp_path))
    _plots_show(repo, "-o", str(tmp_path / "elsewhere"))
    problems, _, res = check_plots(tmp_path / "elsewhere" / "index.html", width=1400, timeout=10)
    assert res.value["missing"]
    assert "the page did not find .dvc/plots/vendor/ (vega scripts)" in problems
    assert res.network_requests == []


def test_dvc_default_page_is_blank_offline(tmp_path):
    """What the issue reported: DVC's own page (scripts from a CDN) draws nothing without a network."""
    from dvc_render.html import PAGE_HTML

    repo = _dvc_repo(tmp_path, make_results(tmp_path))
    default = tmp_path / "default.html"
    default.write_text(PAGE_HTML)
    _plots_show(repo, "--html-template", str(default))
    problems, _, res = check_plots(repo / "dvc_plots" / "index.html", width=1400, timeout=5)
    assert any(u.startswith("https://cdn.jsdelivr.net/npm/vega") for u in res.network_requests)
    assert sum("drew nothing" in p for p in problems) == 3
