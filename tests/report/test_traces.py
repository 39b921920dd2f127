"""Q-value traces (reference system 000, exp 01/02): convergence episode, summary and figure, from hand-made rows."""

from __future__ import annotations

import pytest
from matplotlib.figure import Figure

from boardrl.report.results import ReportError
from boardrl.report.traces import (
    SYSTEM000_S0_TARGETS, convergence_episode, read_trace, series, trace_figure, trace_summary,
)

TARGETS = {"1": -1.0, "9": 1.0}


def rows_of(table: dict[str, list[float]]) -> list[dict]:
    """Rows as tabular_q records them: game 1.., every action after every game."""
    n = len(next(iter(table.values())))
    return [{"game": g + 1, "action": a, "q": table[a][g]} for g in range(n) for a in table]


def test_first_game_after_which_every_action_stays_within_tol():
    rows = rows_of({"1": [0.2, -0.5, -0.96, -0.97, -0.99, -1.0],
                    "9": [0.1, 0.94, 0.96, 0.90, 0.96, 0.99]})  # 9 leaves the band again at game 4
    assert convergence_episode(rows, TARGETS, tol=0.05) == 5
    assert convergence_episode(rows, TARGETS, tol=0.11) == 3  # game 2: 1 is 0.5 away
    assert convergence_episode(rows, {"1": -1.0}, tol=0.05) == 3  # only the targeted actions count


def test_the_band_is_closed_and_a_run_ending_outside_never_converged():
    rows = rows_of({"1": [-0.75, -0.75], "9": [0.75, 0.5]})  # binary fractions: exact distances
    assert convergence_episode(rows, TARGETS, tol=0.25) is None  # outside at the last game
    rows = rows_of({"1": [-0.75, -1.0], "9": [1.0, 0.75]})
    assert convergence_episode(rows, TARGETS, tol=0.25) == 1  # exactly tol away is within


def test_rows_in_any_order_and_games_not_from_one():
    rows = rows_of({"1": [0.0, -1.0, -1.0], "9": [1.0, 1.0, 1.0]})
    shifted = [{**r, "game": r["game"] + 100} for r in reversed(rows)]
    assert convergence_episode(shifted, TARGETS) == 102
    assert series(shifted)["1"] == ([101, 102, 103], [0.0, -1.0, -1.0])


def test_summary_gives_final_values_and_the_episode():
    rows = rows_of({"1": [0.2, -0.97, -0.99], "2": [0.0, 0.1, -0.5], "9": [0.1, 0.98, 1.0]})
    assert trace_summary(rows, TARGETS) == {"final_q": {"1": -0.99, "2": -0.5, "9": 1.0}, "converged_at": 2,
                                           "tol": 0.05, "games": 3}


def test_missing_target_action_or_no_rows_is_one_line():
    with pytest.raises(ReportError, match=r"no rows for target action\(s\) \['9'\]"):
        convergence_episode(rows_of({"1": [-1.0]}), TARGETS)
    with pytest.raises(ReportError, match="no rows"):
        trace_summary([], TARGETS)


def test_seed000_targets_are_s0s_game_values():
    """The referee's value of each move at s0, for X: the targets are exact game values."""
    from boardrl.games import make_game
    from boardrl.solvers.registry import make_referee

    ttt = make_game("tictactoe")
    s0, referee = ttt.replay("3758"), make_referee(ttt)

    def q(a: int) -> float:
        child = ttt.play(s0, a)
        return ttt.returns(child)[0] if ttt.is_over(child) else -referee.value(child)

    assert {ttt.format_move(a): q(a) for a in ttt.legal_actions(s0)} == SYSTEM000_S0_TARGETS


def test_figure_draws_one_line_per_action_and_marks_convergence():
    rows = rows_of({"1": [0.2, -0.97, -0.99], "9": [0.1, 0.98, 1.0]})
    fig = trace_figure(rows, TARGETS, title="exp 01 seed 23")
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    lines = [ln for ln in ax.get_lines() if ln.get_label() in ("a = 1", "a = 9")]
    assert [list(ln.get_xdata()) for ln in lines] == [[1, 2, 3], [1, 2, 3]]
    assert list(lines[1].get_ydata()) == [0.1, 0.98, 1.0]
    vertical = [ln for ln in ax.get_lines() if list(ln.get_xdata()) == [2, 2]]
    assert len(vertical) == 1  # the convergence episode
    assert ax.get_title() == "exp 01 seed 23"
    fig.canvas.draw()  # renders headless (Agg)


def test_read_trace_round_trips_the_pipeline_file(tmp_path):
    from boardrl.experiments.train import write_records

    rows = rows_of({"1": [0.25, -1 / 3], "9": [0.5, 0.1]})
    (path,) = write_records(tmp_path, {"trace": rows})
    assert read_trace(path) == rows
    path.write_text("game\tq\n1\t0.5\n")
    with pytest.raises(ReportError, match="expected columns game, action, q"):
        read_trace(path)
