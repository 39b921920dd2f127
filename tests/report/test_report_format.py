"""How the report prints intervals and paths, and what its optimal-move-rate figure shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from boardrl.report import build_report
from boardrl.report.evaluation import SeatReading, SpreadReading
from boardrl.report.figures import RatePoint, optimal_rates, zoomed_limits
from boardrl.report.html import breakable
from boardrl.report.links import ci_text, pct, places, rate_with_ci, spread_text, with_ci
from report.results_tree import SLOW, TTT, make_results, write_json

Z2 = 1.959964 ** 2


def wilson(k: int, n: int) -> list[float]:
    """The 95% Wilson interval of k successes in n (what the evaluate stage writes)."""
    p = k / n
    centre = (p + Z2 / (2 * n)) / (1 + Z2 / n)
    half = 1.959964 * ((p * (1 - p) / n + Z2 / (4 * n * n)) ** 0.5) / (1 + Z2 / n)
    return [max(0.0, centre - half), min(1.0, centre + half)]


# ---------------------------------------------------------------------------------------------- intervals
def test_zero_of_ten_thousand_does_not_print_as_zero_zero():
    assert wilson(0, 10000)[1] == pytest.approx(0.000384, abs=1e-6)
    assert with_ci(0.0, wilson(0, 10000)) == "0.000% [0.000, 0.038]"
    seat = SeatReading(win=1.0, draw=0.0, loss=0.0, games=10000, loss_ci=wilson(0, 10000))
    assert rate_with_ci(seat, "loss") == "0.000% [0.000, 0.038]"
    assert ci_text(wilson(0, 10000)) == " [0.000, 0.038]"


def test_all_of_ten_thousand_does_not_print_as_hundred_hundred():
    assert with_ci(1.0, wilson(10000, 10000)) == "100.000% [99.962, 100.000]"
    assert with_ci(0.9999, wilson(9999, 10000)) == "99.9900% [99.9434, 99.9982]"


def test_ordinary_rates_keep_one_decimal():
    assert with_ci(0.988, [0.978, 0.998]) == "98.8% [97.8, 99.8]"
    assert with_ci(1.0, wilson(500, 500)) == "100.0% [99.2, 100.0]"  # 99.24: one decimal tells it from 100
    assert with_ci(0.0, wilson(0, 1000)) == "0.0% [0.0, 0.4]"
    assert with_ci(0.0, [0.0, 0.0]) == "0.0% [0.0, 0.0]"  # an interval that is exactly [0, 0] (seeds that agree)
    assert pct(0.5) == "50.0%" and pct(None) == "n/a" and ci_text(None) == "" and with_ci(0.3, None) == "30.0%"


def test_places_give_two_significant_digits_of_the_gap_to_the_boundary():
    assert places(0.0, 0.000384) == 3
    assert places(0.5, 0.00004) == 4
    assert places(0.0, 1e-15) == 1  # float noise on 0 is 0
    assert places(0.04) == 1  # 4%: one decimal is not 0
    assert pct(0.00001) == "0.0010%"


def test_across_seeds_interval_follows_the_same_rule():
    s = SpreadReading(iqm=0.0002, ci=(0.0, 0.0004), values=[0.0, 0.0002, 0.0004])
    assert spread_text(s) == "0.020% [0.000, 0.040]"


def test_report_prints_a_zero_loss_interval_above_zero(tmp_path):
    results = make_results(tmp_path)
    path = results / "eval" / f"{SLOW}.json"
    data = json.loads(path.read_text())
    for seat in ("as_first", "as_second"):
        data["seeds"]["0"]["opponents"]["random"][seat]["loss_ci"] = wilson(0, 10000)
    write_json(path, data)
    build_report(results, tmp_path / "reports")
    md = (tmp_path / "reports" / "tictactoe.md").read_text()
    assert "[0.000% [0.000, 0.038]]" in md and "[0.0% [0.0, 0.0]]" not in md


# ---------------------------------------------------------------------------------------------- paths
@pytest.mark.parametrize("summary_at", ["project", "elsewhere"])
def test_no_absolute_path_of_this_machine_in_the_report(tmp_path, summary_at):
    project = tmp_path / "project"
    results = make_results(project, sweep=True)
    summary = (project / "data" / "processed" / "summary.json" if summary_at == "project"
               else tmp_path / "elsewhere" / "summary.json")
    summary.parent.mkdir(parents=True)
    summary.write_text(json.dumps({"rows": 67557}))
    out = tmp_path / "reports"
    build_report(results, out, data_summary=summary)
    shown = "data/processed/summary.json" if summary_at == "project" else "summary.json"
    for name in sorted(p.name for p in out.iterdir() if p.suffix in (".md", ".html")):
        page = (out / name).read_text()
        assert str(tmp_path) not in page and str(results.resolve()) not in page and "/tmp/" not in page, name
        if name in ("report.md", "index.html"):
            assert f"Checks of the prepare stage (`{shown}`)" in page or f"(<code>{shown}</code>)" in page


def test_long_names_in_cells_may_wrap_after_underscores_and_slashes():
    assert breakable("dots_and_boxes_2x2") == "dots_<wbr>and_<wbr>boxes_<wbr>2x2"
    assert breakable("tests/a_b.py::test_x") == "tests/<wbr>a_<wbr>b.py::<wbr>test_<wbr>x"
    assert breakable("tabular_q and 1,000,000 games") == "tabular_q and 1,000,000 games"  # short words stay whole
    assert breakable("&quot;dots_and_boxes&quot;") == "&quot;dots_<wbr>and_<wbr>boxes&quot;"


# ---------------------------------------------------------------------------------------------- optimal rates
def _all_perfect(results: Path) -> None:
    """Every evaluated seed chose an optimal move at each of its 2,000 positions (the default profile's result)."""
    for exp_id in (TTT, SLOW):
        path = results / "eval" / f"{exp_id}.json"
        data = json.loads(path.read_text())
        for block in data["seeds"].values():
            block["optimal_move_rate"] = 1.0
            block["optimal_move"].update(rate=1.0, optimal=2000, ci=wilson(2000, 2000))
        across = data["across_seeds"]["optimal_move_rate"]
        across.update(iqm=1.0, ci=[1.0, 1.0], values=[1.0] * len(across["values"]))
        write_json(path, data)


def test_equal_rates_are_said_in_words_with_how_low_the_intervals_reach(tmp_path):
    results = make_results(tmp_path)
    _all_perfect(results)
    build_report(results, tmp_path / "reports")
    md = (tmp_path / "reports" / "tictactoe.md").read_text()
    section = md.split("## Optimal-move rates", 1)[1].split("\n## ", 1)[0]
    assert ("All 4 evaluated seeds of the 2 experiments score 100.0%: every judged move kept the exact game value. "
            "Their 95% Wilson intervals still allow a true rate as low as 99.8%") in section
    assert "an IQM's bootstrap interval over seeds that agree collapses onto their value" in section
    assert "![optimal-move rates of each seed, with intervals](figures/optimal_move_rates_tictactoe.png)" in section


def test_different_rates_get_no_such_words(tmp_path):
    results = make_results(tmp_path)  # TTT's seeds: 100%, 99%, 98%
    build_report(results, tmp_path / "reports")
    assert "evaluated seeds of the" not in (tmp_path / "reports" / "tictactoe.md").read_text()


def test_rates_of_100_percent_are_drawn_on_an_axis_zoomed_to_their_intervals():
    lo_ci = wilson(2000, 2000)
    seeds = [RatePoint(f"seed {k} (2,000 positions)", 1.0, tuple(lo_ci)) for k in range(3)]
    fig = optimal_rates([("a", [*seeds, RatePoint("IQM of 3 seeds", 1.0, (1.0, 1.0), headline=True)]),
                         ("b", seeds)])
    ax = fig.axes[0]
    lo, hi = ax.get_xlim()
    assert 99.7 < lo < 100 * lo_ci[0] < 100.0 < hi < 100.1  # every interval in view, and little else
    assert [t.get_text() for t in ax.get_yticklabels()][:4] == [
        "a: seed 0 (2,000 positions)", "a: seed 1 (2,000 positions)", "a: seed 2 (2,000 positions)",
        "a: IQM of 3 seeds"]
    shown = [t.get_text() for t in ax.texts]
    assert shown.count("100.0% [99.8, 100.0]") == 6 and "100.0% [100.0, 100.0]" in shown
    assert "zoomed" in ax.get_xlabel()


def test_rates_far_from_the_top_get_the_whole_axis():
    points = [RatePoint("seed 0", 0.4, (0.35, 0.45)), RatePoint("seed 1", 0.99, (0.98, 1.0))]
    assert zoomed_limits(points) == (0.0, 101.0)
    assert zoomed_limits([RatePoint("seed 0", 0.5, (0.45, 0.55)), RatePoint("seed 1", 0.7, None)]) == (
        pytest.approx(38.75), pytest.approx(72.0))
    lo, hi = zoomed_limits([RatePoint("seed 0", 0.98, (0.978, 0.982)), RatePoint("seed 1", 1.0, (0.998, 1.0))])
    assert 97.0 < lo < 97.8 and 100.0 < hi < 100.5
