"""A study's results table (experiments/study_table.py): the cells, Markdown and the report share, and the figure."""

from __future__ import annotations

from boardrl.experiments.study_spec import Study, StudyFile
from boardrl.experiments.study_table import figure, markdown, measures, table_cells

EXP = "tictactoe_tabular_q"
SPEC = {"description": "tabular Q's step size, small and large", "experiments": [EXP],
        "variations": {"slow": {f"experiments.{EXP}.params.alpha": 0.1},
                       "fast": {f"experiments.{EXP}.params.alpha": 0.5}}}
ROW = {"experiment": EXP, "variation": "slow", "dvc_experiment": "s-slow", "rev": "a" * 40, "seeds": 3,
       "budget": 2000, "train_seconds": [30.0, 10.0, 20.5], "optimal_move_rate": 0.5,
       "exact_vs_perfect": {"flawless_seeds": 0, "measured_seeds": 3, "loss_as_first": 1.0, "loss_as_second": 0.95344},
       "opponents": {"random": {"win": 0.55, "loss": 0.45}, "perfect": {"win": 0.0, "loss": 1.0}}}


def study(**changes) -> Study:
    return Study("s", "studies/s.yaml", StudyFile.model_validate({**SPEC, **changes}))


def test_cells_name_the_dvc_experiment_and_its_commit_apart():
    text = table_cells([ROW])
    assert text.head[:8] == ["experiment", "variation", "DVC experiment", "commit", "seeds", "budget",
                             "training s (median)", "optimal moves"]
    assert text.rows == [[EXP, "slow", "s-slow", "aaaaaaa", "3", "2000", "20", "0.500", "0 of 3; 1.000 / 0.953",
                          "0.550 / 0.450", "0.000 / 1.000"]]
    assert {text.head[i] for i in text.code} == {"experiment", "DVC experiment"}
    assert text.head[text.numeric_from] == "seeds"


def test_markdown_shows_the_names_as_code_and_each_variations_settings():
    md = markdown(study(), [ROW]).splitlines()
    assert ("| `tictactoe_tabular_q` | slow | `s-slow` | aaaaaaa | 3 | 2000 | 20 | 0.500 | 0 of 3; 1.000 / 0.953 | "
            "0.550 / 0.450 | 0.000 / 1.000 |") in md
    assert "| fast | `experiments.tictactoe_tabular_q.params.alpha` = `0.5` |" in md
    assert "(no variation has finished)" in markdown(study(), [])


def test_a_row_without_timings_or_exact_losses_shows_dashes():
    row = {**ROW, "train_seconds": [], "exact_vs_perfect": None, "opponents": {"random": {"win": 0.5, "loss": 0.5}}}
    text = table_cells([row])
    assert "exact vs perfect: flawless seeds; loss first / second" not in text.head
    assert text.rows[0][6] == "-"


def test_the_uci_protocols_wins_show_per_class_and_seed_and_the_figure_draws_the_worst_seed():
    """Reference system 000's target (>= 97% in every class) holds or fails seed by seed: the cell lists every
    seed's rate per class, the figure the worst; a row judged without the protocol (a carried older row) is "-"."""
    wins = {"win": [0.98, 0.991, 0.985], "draw": [0.971, 0.968, 0.967], "loss": [0.958, 0.9612, 0.96]}
    text = table_cells([{**ROW, "uci_seed000_wins": wins}, {**ROW, "variation": "fast"}])
    column = text.head.index("reference system 000's UCI protocol: wins per class, each seed")
    assert column == 9 and text.head[column + 1] == "vs random: win / loss"  # after the exact losses
    assert text.rows[0][column] == "win 0.980 0.991 0.985; draw 0.971 0.968 0.967; loss 0.958 0.961 0.960"
    assert text.rows[1][column] == "-"
    drawn = measures({**ROW, "uci_seed000_wins": wins})
    assert (drawn["UCI win class, worst seed"], drawn["UCI draw class, worst seed"],
            drawn["UCI loss class, worst seed"]) == (0.98, 0.967, 0.958)
    assert not any(h.startswith("reference system 000") for h in table_cells([ROW]).head)


def test_wins_per_seat_follow_each_opponents_rates_where_the_rows_have_them():
    """A study of one seat (Conniption's second) reads it in the table and the figure; a row without the seats
    (carried from before they were recorded) says so with a dash."""
    seats = {"random": {"as_first": 0.6, "as_second": 0.5}, "perfect": {"as_first": 0.0, "as_second": 0.0}}
    text = table_cells([{**ROW, "seat_wins": seats}, {**ROW, "variation": "fast"}])
    assert text.head[-2:] == ["vs random: win / loss (wins as first, as second; each seed's)",
                              "vs perfect: win / loss (wins as first, as second; each seed's)"]
    assert text.rows[0][-2:] == ["0.550 / 0.450 (0.600, 0.500)", "0.000 / 1.000 (0.000, 0.000)"]
    assert text.rows[1][-2:] == ["0.550 / 0.450 (-)", "0.000 / 1.000 (-)"]
    assert measures({**ROW, "seat_wins": seats})["random win as second"] == 0.5
    assert table_cells([ROW]).head[-1] == "vs perfect: win / loss"


def test_each_seeds_wins_per_seat_follow_the_mean_where_there_are_two_seeds_or_more():
    """A per-seat target is met or missed seed by seed: the cell lists each seed's wins as first and as second
    after the interquartile means; one seed's rates would repeat the means, so they are left out."""
    seats = {"random": {"as_first": 0.9, "as_second": 0.95}}
    each = {"random": {"as_first": {"1": 0.97, "2": 0.82}, "as_second": {"1": 1.0, "2": 0.9}}}
    one = {"random": {"as_first": {"0": 0.9}, "as_second": {"0": 0.95}}}
    text = table_cells([{**ROW, "seat_wins": seats, "seat_wins_per_seed": each},
                        {**ROW, "variation": "fast", "seat_wins": seats, "seat_wins_per_seed": one}])
    assert text.rows[0][-2] == "0.550 / 0.450 (0.900, 0.950; seed 1 0.970, 1.000; seed 2 0.820, 0.900)"
    assert text.rows[1][-2] == "0.550 / 0.450 (0.900, 0.950)"


def test_measures_are_the_rates_the_figure_draws():
    assert measures(ROW) == {"random win": 0.55, "random loss": 0.45, "perfect win": 0.0, "perfect loss": 1.0,
                             "optimal moves": 0.5, "exact loss as first": 1.0, "exact loss as second": 0.95344}


def test_the_figure_draws_win_rates_over_training_time_for_the_opponents_named():
    """``versus_time``: a second panel per experiment, one marker per variation at (median training seconds, win
    rate); a variation without timings is left out of it, not drawn at zero."""
    row = {"experiment": EXP, "seeds": 3, "budget": 2000, "optimal_move_rate": 0.5, "exact_vs_perfect": None,
           "opponents": {"random": {"win": 0.75, "loss": 0.1}}}
    table = [{**row, "variation": "slow", "train_seconds": [40.0, 20.0, 30.0]},
             {**row, "variation": "fast", "train_seconds": []}]
    fig = figure(study(versus_time=["random"]), table)
    assert len(fig.axes) == 2  # the bars, then the timed panel beside them
    timed = fig.axes[1]
    assert [tuple(p) for p in timed.collections[0].get_offsets()] == [(30.0, 0.75)]
    assert [t.get_text() for t in timed.texts] == ["slow"]
    assert timed.get_xlabel().startswith("training wall time")
