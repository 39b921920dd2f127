"""The `boardrl` command: JSON shapes other tools rely on, known values, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from boardrl.cli import app

runner = CliRunner()


def run_json(*args: str) -> dict:
    res = runner.invoke(app, [*args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def assert_one_line_error(res, *fragments: str) -> None:
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert "Traceback" not in res.output
    for f in fragments:
        assert f in lines[0], lines[0]


# ---------------------------------------------------------------------------------------------- solve
def test_solve_tictactoe_start_is_a_draw_with_every_move_optimal():
    assert run_json("solve", "tictactoe", "") == {"value": 0, "optimal_moves": [str(c) for c in range(1, 10)]}


def test_solve_tictactoe_forced_win():
    # X 1, 2 against O 4, 5: only cell 3 keeps the win (anything else lets O complete 4-5-6).
    assert run_json("solve", "tictactoe", "1425") == {"value": 1, "optimal_moves": ["3"]}


def test_solve_connect4_immediate_win_scores_by_convention():
    # 26 stones, first player to move: column 4 wins at once (the only move that keeps the win), so the
    # score is (43 - 26) // 2 = 8 in the usual convention.
    data = run_json("solve", "connect4", "53211232236375177626565537")
    assert data == {"value": 1, "optimal_moves": ["4"], "score": 8}


def test_solve_dots_and_boxes_2x2_first_player_wins_by_two():
    data = run_json("solve", "dots_and_boxes_2x2", "")
    assert data["value"] == 1 and data["margin"] == 2 and data["optimal_moves"]


def test_solve_human_readable():
    res = runner.invoke(app, ["solve", "tictactoe", "1425"])
    assert res.exit_code == 0
    assert "win" in res.stdout and "optimal moves: 3" in res.stdout


# ---------------------------------------------------------------------------------------------- count
def test_count_tictactoe_all_plies():
    counts = run_json("count", "tictactoe", "--plies", "9")["counts"]
    assert counts == [1, 9, 72, 252, 756, 1260, 1520, 1140, 390, 78]
    assert sum(counts) == 5478


def test_count_connect4_first_plies():
    assert run_json("count", "connect4", "--plies", "5") == {"counts": [1, 7, 49, 238, 1120, 4263]}


# ---------------------------------------------------------------------------------------------- match
def test_match_json_shape_and_determinism():
    args = ("match", "tictactoe", "random", "random", "--games", "200", "--seed", "4")
    data = run_json(*args)
    assert run_json(*args) == data
    assert set(data) >= {"as_first", "as_second", "combined", "mean_length", "games", "agent_a", "agent_b", "seed"}
    assert data["games"] == 200 and data["seed"] == 4
    assert data["as_first"]["games"] == data["as_second"]["games"] == 100
    for seat in ("as_first", "as_second", "combined"):
        d = data[seat]
        assert d["win"] + d["draw"] + d["loss"] == pytest.approx(1.0)
        lo, hi = d["win_ci"]
        assert 0 <= lo <= d["win"] <= hi <= 1
    assert 5 <= data["mean_length"] <= 9


def test_match_fixed_seats_and_starts_file(tmp_path):
    data = run_json("match", "tictactoe", "random", "random", "--games", "10", "--seats", "b_first")
    assert data["as_first"]["games"] == 0 and data["as_first"]["win"] is None and data["as_second"]["games"] == 10
    starts = tmp_path / "starts.txt"
    starts.write_text("# two openings\n15\n\n59  # centre answered in a corner\n")
    data = run_json("match", "tictactoe", "random", "random", "--games", "8", "--starts", str(starts))
    assert data["games"] == 8 and data["mean_length"] <= 7  # two of the nine cells are already taken


def test_match_perfect_never_loses_tictactoe():
    data = run_json("match", "tictactoe", "perfect", "random", "--games", "200")
    assert data["combined"]["loss"] == 0.0 and data["as_first"]["win"] > 0.9


# ---------------------------------------------------------------------------------------------- play
def test_play_a_whole_game_reasking_on_bad_input():
    moves = "x\n5\n1\n2\n3\n4\n6\n7\n8\n9\n" * 2  # 'x' and taken cells are refused and asked again
    res = runner.invoke(app, ["play", "tictactoe", "random", "--seed", "3"], input=moves)
    assert res.exit_code == 0, res.output
    assert "you are player 0" in res.stdout and "random" in res.stdout
    assert res.stdout.strip().splitlines()[-1] in ("draw", "you win", "random wins")


def test_play_second_and_input_ending_is_one_line():
    res = runner.invoke(app, ["play", "tictactoe", "random", "--second"], input="5\n")
    assert_one_line_error(res, "input ended")


# ---------------------------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "args,fragments",
    [
        (["solve", "chess", ""], ["unknown game 'chess'", "tictactoe"]),
        (["solve", "tictactoe", "1x"], ["bad move 'x'", "1-9"]),
        (["solve", "tictactoe", "11"], ["move 2", "illegal", "legal moves: 2 3 4"]),
        (["solve", "connect4", "8"], ["8"]),
        (["count", "tictactoe", "--plies", "-1"], ["--plies"]),
        (["match", "tictactoe", "random", "nosuchagent", "--games", "2"], ["nosuchagent"]),
        (["match", "tictactoe", "random", "random", "--games", "-3"], ["games", "-3"]),
        (["match", "tictactoe", "random", "random", "--seats", "middle"], ["middle", "alternate"]),
        (["match", "tictactoe", "random", "random", "--starts", "/nonexistent/starts.txt"], ["starts"]),
        (["count", "tictactoe", "--bogus"], ["--bogus"]),
        (["solve"], ["Missing argument"]),
        ([], ["Missing command"]),
    ],
)
def test_bad_input_is_one_line_on_stderr_with_status_2(args, fragments):
    assert_one_line_error(runner.invoke(app, args), *fragments)


def test_installed_entry_point_reports_errors_without_traceback():
    out = subprocess.run([sys.executable, "-m", "boardrl.cli", "solve", "tictactoe", "55", "--json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert out.stderr.startswith("error: ") and len(out.stderr.strip().splitlines()) == 1
    assert out.stdout == ""


def test_solve_warns_about_slow_early_connect4_positions_only_without_a_book(monkeypatch):
    from boardrl import cli

    monkeypatch.setattr(cli, "_connect4_book_covers", lambda plies: False)
    slow = CliRunner().invoke(cli.app, ["solve", "connect4", "4444443", "--json"])
    assert slow.exit_code == 0 and "can take minutes" in slow.stderr
    monkeypatch.setattr(cli, "_connect4_book_covers", lambda plies: True)
    covered = CliRunner().invoke(cli.app, ["solve", "connect4", "4444443", "--json"])
    assert covered.exit_code == 0 and "can take minutes" not in covered.stderr
    assert covered.stdout == slow.stdout
