"""The `boardrl` command: JSON shapes other tools rely on, known values, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
    assert "you play X (first); random plays O (second)" in res.stdout
    assert res.stdout.strip().splitlines()[-1] in ("draw", "you win", "random wins")


def test_play_second_names_your_side_and_ends_cleanly_at_end_of_input():
    res = runner.invoke(app, ["play", "connect4", "random", "--second"], input="4\n")  # then Ctrl-D
    assert res.exit_code == 0 and res.stderr == "", res.output
    assert "you play O (second); random plays X (first)" in res.stdout
    assert "O to move" in res.stdout and "X to move" not in res.stdout
    assert res.stdout.rstrip("\n").splitlines()[-1] == "input ended; the game is left unfinished"
    assert "error" not in res.output


def test_play_quit_and_help():
    res = runner.invoke(app, ["play", "tictactoe", "random"], input="help\nq\n5\n")
    assert res.exit_code == 0 and res.stderr == "", res.output
    assert "moves: one of cells 1-9" in res.stdout and "undo (u)" in res.stdout
    assert res.stdout.splitlines()[-1].endswith("you quit; the game is left unfinished")
    assert "random plays" not in res.stdout.split("\n", 1)[1]  # nothing was played


def boards(game_id: str, stdout: str) -> list[str]:
    """The boards the play command printed, in order (each ends with the prompt line after it)."""
    from boardrl.games import make_game

    rows = make_game(game_id).render(make_game(game_id).initial_state()).count("\n") + 1
    lines = stdout.splitlines()
    return ["\n".join(lines[i - rows:i]) for i, ln in enumerate(lines) if " to move; legal moves" in ln]


def test_play_undo_takes_back_your_move_and_the_reply():
    from boardrl.games import make_game

    game = make_game("tictactoe")
    # As second: random opens, you answer, random replies; undo goes back to random's opening, not further.
    res = runner.invoke(app, ["play", "tictactoe", "random", "--second", "--seed", "1"],
                        input="undo\n1\nundo\nquit\n")
    assert res.exit_code == 0, res.output
    assert "nothing to undo: you have not moved yet" in res.stdout and "took back 2 moves" in res.stdout
    shown = boards("tictactoe", res.stdout)
    opening = res.stdout.split("random plays ", 2)[2][0]  # random's first move (seed 1: not cell 1)
    assert opening != "1"
    after_opening = game.render(game.replay(opening))
    assert shown[0] == shown[1] == after_opening  # asked again after the refused undo
    assert shown[-1] == after_opening and shown[-2] != after_opening  # after the undo: back to the opening


def test_bare_command_prints_the_help_and_version():
    res = runner.invoke(app, [])
    assert res.exit_code == 0, res.output
    assert "Usage" in res.stdout and "solve" in res.stdout and "play" in res.stdout and "error" not in res.output
    res = runner.invoke(app, ["--version"])
    from boardrl import __version__

    assert res.exit_code == 0 and res.stdout == f"boardrl {__version__}\n"
    res = runner.invoke(app, ["book"])
    assert res.exit_code == 0 and "build" in res.stdout and "verify" in res.stdout


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
        (["nosuchcommand"], ["No such command"]),
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


BOARDRL = str(Path(sys.executable).parent / "boardrl")
PARAMS = Path(__file__).resolve().parents[1] / "params.yaml"


@pytest.mark.timeout(300)
def test_train_tries_an_experiment_outside_the_pipeline(tmp_path):
    """`boardrl train` writes under --out (never models/ of the project) and logs its runs to the project's store."""
    out = subprocess.run([BOARDRL, "train", "tictactoe_seed000_exp01", "--params", str(PARAMS), "--out", "try",
                          "--no-progress"], cwd=tmp_path, capture_output=True, text=True, timeout=280)
    assert out.returncode == 0, out.stderr[-2000:]
    models = tmp_path / "try" / "models" / "tictactoe_seed000_exp01"
    assert sorted(p.name for p in models.iterdir()) == ["seed-0", "seed-1", "seed-2"]
    assert (models / "seed-0" / "model" / "agent.json").is_file() and not (tmp_path / "models").exists()
    assert "play it: BOARDRL_ROOT=" in out.stdout
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path.resolve()}/mlflow.db")
    runs = client.search_runs([client.get_experiment_by_name("tictactoe").experiment_id])
    assert {r.data.tags["stage"] for r in runs} == {"train"} and len(runs) == 4  # the stage run and 3 seeds
    assert all(r.info.status == "FINISHED" for r in runs)


def test_train_refuses_an_unknown_experiment_in_one_line(tmp_path):
    res = runner.invoke(app, ["train", "no_such_experiment", "--params", str(PARAMS), "--out", str(tmp_path)])
    assert_one_line_error(res, "no_such_experiment")


def test_match_pins_torch_to_the_models_recorded_thread_count(tmp_path):
    """A network model plays on the threads its experiment's stages use (its agent.json's learner and params), not
    torch's default of every core, and gives the same games with one worker process or two."""
    import torch

    from boardrl.agents.network import NetworkAgent
    from boardrl.games import make_game
    from boardrl.nn import MLPConfig, build_network

    game = make_game("tictactoe")
    torch.manual_seed(0)
    config = MLPConfig(hidden=[8])
    meta = {"learner": "dqn", "seed": 0, "params": {"steps": 100, "threads": 1}}
    NetworkAgent(game, build_network(config, game.encoding_shape, game.num_actions), config,
                 meta=meta).save(tmp_path / "model")
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        args = ("match", "tictactoe", f"model:{tmp_path / 'model'}", "random", "--games", "40", "--seed", "5")
        one = run_json(*args)
        assert torch.get_num_threads() == 1
        torch.set_num_threads(2)
        assert run_json(*args, "--processes", "2") == one
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_train_with_a_profile_takes_its_budgets_and_the_experiments_it_alone_defines(monkeypatch, tmp_path):
    """`--profile full` resolves an experiment only profiles/full.yaml defines, with the full budget; a bad profile
    or --params beside it is one line."""
    import boardrl.experiments.train as train_mod

    from boardrl.tracking.store import TRACKING_ROOT_ENV

    seen = []
    monkeypatch.setattr(train_mod, "run_train", lambda spec, where, progress: seen.append(spec) or [])
    monkeypatch.setenv(TRACKING_ROOT_ENV, str(tmp_path))  # the command sets it when unset: not for later tests
    monkeypatch.chdir(PARAMS.parent)
    res = runner.invoke(app, ["train", "connect4_seed000_uci", "--profile", "full", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert seen[0].learner == "seed000_afterstate" and seen[0].budget == 15000
    assert_one_line_error(runner.invoke(app, ["train", "connect4_seed000_uci", "--out", str(tmp_path)]),
                          "connect4_seed000_uci")
    assert_one_line_error(runner.invoke(app, ["train", "x", "--profile", "nosuch", "--out", str(tmp_path)]),
                          "unknown profile 'nosuch'")
    assert_one_line_error(runner.invoke(app, ["train", "x", "--profile", "full", "--params", "p.yaml"]),
                          "--params or --profile, not both")
