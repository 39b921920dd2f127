"""Learning-curve rows: TSV contract (written here, read by the report), independent evaluation seeds."""

from __future__ import annotations

from boardrl.tracking import curve


def _match(win: float, games: int) -> dict:
    seat = {"win": win, "draw": 0.0, "loss": 1 - win, "games": games}
    return {"as_first": seat, "as_second": seat, "combined": {**seat, "games": 2 * games}}


def test_rows_and_tsv_round_trip(tmp_path):
    rows = curve.seat_rows(100, "random", _match(0.75, 10)) + curve.seat_rows(1000, "random", _match(1 / 3, 10))
    path = curve.write_tsv(tmp_path / "curve.tsv", rows)
    assert path.read_text().splitlines()[0] == "step\topponent\tseat\twin\tdraw\tloss\tgames"
    from boardrl.report.results import read_curve

    back = read_curve(path)
    assert list(zip(back["step"][:3], back["seat"][:3], back["games"][:3])) == [
        (100, "as_first", 10), (100, "as_second", 10), (100, "combined", 20)]
    assert back["win"][3] == 0.333333  # rates to 6 decimals


def test_sub_seeds_are_stable_and_distinct():
    seeds = {curve.sub_seed(0, 1, step, i) for step in (0, 100, 1000) for i in range(3)}
    assert len(seeds) == 9 and all(0 <= s < 2**63 for s in seeds)
    assert curve.sub_seed(0, 1, 100, 2) == curve.sub_seed(0, 1, 100, 2) != curve.sub_seed(1, 1, 100, 2)


def test_curve_figure_has_a_panel_per_opponent():
    from boardrl.tracking.figures import curve_figure

    rows = []
    for step in (0, 100, 1000):
        rows += curve.seat_rows(step, "random", _match(0.5, 4)) + curve.seat_rows(step, "perfect", _match(0.0, 4))
    fig = curve_figure(rows, "t")
    assert [ax.get_title() for ax in fig.axes] == ["vs random", "vs perfect"]
    assert len(fig.axes[0].lines) == 3  # win, draw, loss
    assert list(fig.axes[0].lines[0].get_xdata()) == [0, 100, 1000]


def test_ladder_figure_stacks_wdl_per_seat():
    from boardrl.tracking.figures import ladder_figure

    seat = {"win": 0.5, "draw": 0.25, "loss": 0.25, "win_ci": [0.4, 0.6]}
    fig = ladder_figure({"random": {s: seat for s in curve.SEATS}, "perfect": {s: seat for s in curve.SEATS}}, "t")
    assert [ax.get_title() for ax in fig.axes] == ["as first", "as second", "combined"]
    widths = sorted(round(p.get_width(), 2) for p in fig.axes[0].patches)
    assert widths == [0.25, 0.25, 0.25, 0.25, 0.5, 0.5]  # two opponents x (win, draw, loss)
