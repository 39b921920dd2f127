"""HumanAgent: prompts with the board and the side to move, re-asks on bad input with the game's own error, plays
forced moves itself, reads help / quit / undo, and ends cleanly at EOF."""

from __future__ import annotations

import io

import numpy as np
import pytest

from boardrl.agents.human import HumanAgent, InputEnded, Quit, Undo, side_name
from boardrl.games import make_game
from boardrl.errors import BoardRLError

RNG = np.random.default_rng(0)


def test_reads_a_move_in_the_game_notation_and_shows_the_board():
    game = make_game("tictactoe")
    out = io.StringIO()
    agent = HumanAgent(game, input=io.StringIO("5\n"), output=out)
    assert agent.act(game.initial_state(), RNG) == 4
    text = out.getvalue()
    assert game.render(game.initial_state()) in text
    assert "X to move; legal moves: 1 2 3 4 5 6 7 8 9" in text
    assert "your move> " in text


def test_reasks_on_malformed_and_illegal_input_with_the_error():
    game = make_game("connect4")
    state = game.replay("111111")  # column 1 is full
    out = io.StringIO()
    agent = HumanAgent(game, input=io.StringIO("x\n\n9\n1\n  3 \n"), output=out)
    assert agent.act(state, RNG) == 2
    text = out.getvalue()
    assert text.count("your move> ") == 5
    assert "connect4: bad move 'x'; moves are columns 1-7" in text
    assert "connect4: bad move '9'" in text
    assert "column 1 is full; legal columns: 2 3 4 5 6 7" in text
    assert "legal moves: 2 3 4 5 6 7" in text


def test_dots_and_boxes_edge_numbers():
    game = make_game("dots_and_boxes_2x2")
    state = game.replay("0 6")
    out = io.StringIO()
    agent = HumanAgent(game, input=io.StringIO("6\n11\n"), output=out)
    assert agent.act(state, RNG) == 11
    assert "illegal" in out.getvalue()


def test_end_of_input_is_a_clean_error():
    game = make_game("tictactoe")
    agent = HumanAgent(game, input=io.StringIO("0\n"), output=io.StringIO())
    with pytest.raises(InputEnded, match="human: input ended before a move was given"):
        agent.act(game.initial_state(), RNG)
    assert issubclass(InputEnded, BoardRLError)  # a match started from a script ends with one line


def test_finished_game_and_wrong_state():
    game = make_game("tictactoe")
    agent = HumanAgent(game, input=io.StringIO("5\n"), output=io.StringIO())
    with pytest.raises(BoardRLError, match="the game is over"):
        agent.act(game.replay("14253"), RNG)
    with pytest.raises(BoardRLError, match="expected a TicTacToeState"):
        agent.act(make_game("connect4").initial_state(), RNG)


def test_defaults_to_the_current_stdin_and_stdout(monkeypatch, capsys):
    game = make_game("tictactoe")
    monkeypatch.setattr("sys.stdin", io.StringIO("9\n"))
    assert HumanAgent(game).act(game.initial_state(), RNG) == 8
    assert "your move> " in capsys.readouterr().out


def test_prompt_names_the_side_to_move_as_the_board_draws_it():
    game = make_game("connect4")
    out = io.StringIO()
    HumanAgent(game, input=io.StringIO("4\n"), output=out).act(game.replay("4"), RNG)
    assert "O to move; legal moves" in out.getvalue()
    assert [side_name(make_game(g), 1) for g in ("tictactoe", "conniption", "dots_and_boxes_2x2")] == ["O", "O", "P1"]


def test_a_forced_move_is_played_without_asking():
    game = make_game("tictactoe")
    state = game.replay("12345687")  # eight cells taken, no line yet: only cell 9 is left
    assert list(game.legal_actions(state)) == [8] and not game.is_over(state)
    out = io.StringIO()
    assert HumanAgent(game, input=io.StringIO(""), output=out).act(state, RNG) == 8  # nothing read
    assert out.getvalue() == "X: the only legal move is 9; played for you\n"


def test_help_then_a_move():
    game = make_game("connect4")
    out = io.StringIO()
    assert HumanAgent(game, input=io.StringIO("?\nhelp\n7\n"), output=out).act(game.initial_state(), RNG) == 6
    text = out.getvalue()
    assert text.count("moves: one of columns 1-7") == 2 and "quit (q)" in text
    assert "undo" not in text  # not offered where nobody can take moves back


@pytest.mark.parametrize("line", ["quit", "Q", " exit "])
def test_quit(line):
    game = make_game("tictactoe")
    with pytest.raises(Quit):
        HumanAgent(game, input=io.StringIO(line + "\n5\n"), output=io.StringIO()).act(game.initial_state(), RNG)


def test_undo_only_where_the_caller_owns_the_history():
    game = make_game("tictactoe")
    with pytest.raises(Undo):
        HumanAgent(game, input=io.StringIO("u\n"), output=io.StringIO(), undo=True).act(game.initial_state(), RNG)
    out = io.StringIO()
    agent = HumanAgent(game, input=io.StringIO("undo\n5\n"), output=out)
    assert agent.act(game.initial_state(), RNG) == 4
    assert "undo is only available in `boardrl play`" in out.getvalue()
