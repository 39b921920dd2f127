"""Move strings of the web app (the URL's ``moves``): canonical form, round trip, replay, errors; board views."""

from __future__ import annotations

import numpy as np
import pytest

from boardrl.errors import BoardRLError
from boardrl.games import GAME_IDS
from boardrl.games.base import IllegalMoveError, NotationError
from boardrl.web.positions import (
    MAX_MOVES_TEXT, board_json, game_for, moves_text, parse_actions, parse_one, position_json, replay,
)


def random_game(game, rng: np.random.Generator, max_moves: int = 200) -> list[int]:
    state, actions = game.initial_state(), []
    while not game.is_over(state) and len(actions) < max_moves:
        a = int(rng.choice(game.legal_actions(state)))
        actions.append(a)
        state = game.play(state, a)
    return actions


@pytest.mark.parametrize("game_id", [*GAME_IDS, "dots_and_boxes_2x3"])
def test_move_strings_round_trip_through_replay(game_id):
    game = game_for(game_id)
    rng = np.random.default_rng(7)
    for _ in range(20):
        actions = random_game(game, rng)
        for k in (0, 1, len(actions) // 2, len(actions)):
            text = moves_text(game, actions[:k])
            assert " " not in text  # fits a URL unescaped
            pos = replay(game, text)
            assert list(pos.actions) == actions[:k]
            assert pos.state == game.replay(actions[:k])
            assert pos.text == text
            assert len(pos.states) == k + 1 and pos.states[0] == game.initial_state()


@pytest.mark.parametrize("game_id, actions, text", [
    ("tictactoe", [4, 0, 8], "519"),
    ("connect4", [3, 3, 4, 2], "4453"),
    ("dots_and_boxes_2x2", [0, 5, 11, 3], "0,5,11,3"),
    ("conniption", [8, 3, 8, 7, 2, 8], "n4n,f3n"),
])
def test_canonical_form_is_the_games_notation_with_commas(game_id, actions, text):
    game = game_for(game_id)
    assert moves_text(game, actions) == text
    assert parse_actions(game, text) == actions


def test_spaces_and_commas_are_both_read():
    game = game_for("dots_and_boxes_2x2")
    assert replay(game, "0 1,2").text == "0,1,2"
    assert replay(game_for("connect4"), "4,4 5").text == "445"
    assert replay(game_for("conniption"), "n4n f3n").text == "n4n,f3n"


def test_malformed_strings_are_one_line_notation_errors():
    with pytest.raises(NotationError, match=r"bad move '8' in '48'"):
        replay(game_for("connect4"), "48")
    with pytest.raises(NotationError, match="edge numbers 0-11"):
        replay(game_for("dots_and_boxes_2x2"), "0,99")
    with pytest.raises(NotationError, match="stage-moves are f"):
        replay(game_for("conniption"), "x")
    with pytest.raises(NotationError, match=f"at most {MAX_MOVES_TEXT}"):
        replay(game_for("connect4"), "4" * (MAX_MOVES_TEXT + 1))


def test_illegal_moves_name_the_move_number_and_the_choices():
    with pytest.raises(IllegalMoveError) as info:
        replay(game_for("connect4"), "1111111")
    msg = str(info.value)
    assert "move 7 of '1111111'" in msg and "column 1 is full" in msg and "legal columns: 2 3 4 5 6 7" in msg
    with pytest.raises(IllegalMoveError, match="move 2 of '55'"):
        replay(game_for("tictactoe"), "55")
    with pytest.raises(IllegalMoveError, match="the game is over"):
        replay(game_for("tictactoe"), "1425376")  # 1 4 2 5 3: X wins; then 7
    with pytest.raises(IllegalMoveError, match="column 1 is full"):
        replay(game_for("connect4"), "111111").play(parse_one(game_for("connect4"), "1"))


def test_unknown_game_lists_the_games():
    with pytest.raises(BoardRLError, match="unknown game 'chess'.*connect4"):
        game_for("chess")
    with pytest.raises(BoardRLError, match="name a game"):
        game_for("")


def test_parse_one_takes_exactly_one_move():
    assert parse_one(game_for("dots_and_boxes_3x3"), "17") == 17
    with pytest.raises(NotationError, match="expected one move"):
        parse_one(game_for("connect4"), "45")


def test_connect4_board_rows_top_down_with_the_last_stone():
    pos = replay(game_for("connect4"), "4453")
    b = board_json(pos)
    assert b["kind"] == "columns" and b["moves"] == list("1234567")
    assert b["cells"][5][3] == 0 and b["cells"][4][3] == 1 and b["cells"][5][4] == 0 and b["cells"][5][2] == 1
    assert sum(v is not None for row in b["cells"] for v in row) == 4
    assert b["last"] == [5, 2]


def test_tictactoe_board_and_result():
    pos = replay(game_for("tictactoe"), "14253")  # X: 1 2 3 wins
    js = position_json(pos)
    assert js["board"]["cells"][:3] == [0, 0, 0] and js["board"]["cells"][3:5] == [1, 1]
    assert js["over"] and js["winner"] == 0 and js["result"] == "first player wins" and js["to_move"] is None
    assert js["legal"] == []
    assert [h["after"] for h in js["history"]] == ["1", "14", "142", "1425", "14253"]


def test_dots_board_knows_who_drew_each_edge_and_took_each_box():
    game = game_for("dots_and_boxes_1x1")
    pos = replay(game, "0,1,2,3")  # P0 0, P1 1, P0 2, P1 3 completes the box and scores it
    b = board_json(pos)
    assert [e["by"] for e in b["edges"]] == [0, 1, 0, 1]
    assert b["boxes"] == [{"row": 0, "col": 0, "owner": 1}]
    assert b["score"] == [0, 1]
    ends = {e["move"]: (e["from"], e["to"]) for e in b["edges"]}
    assert ends["0"] == ([0, 0], [0, 1]) and ends["1"] == ([1, 0], [1, 1])  # top, bottom
    assert ends["2"] == ([0, 0], [1, 0]) and ends["3"] == ([0, 1], [1, 1])  # left, right
    assert position_json(pos)["result"] == "second player wins 0-1"


def test_dots_extra_turns_show_in_the_history():
    pos = replay(game_for("dots_and_boxes_1x2"), "0,3,1,4,5,6,2")
    movers = [h["player"] for h in position_json(pos)["history"]]
    # Boxes: left = edges 0 2 4 5, right = 1 3 5 6.  No box until P1's 6 closes the right one: P1 scores and
    # moves again (edge 2 closes the left one).
    assert movers == [0, 1, 0, 1, 0, 1, 1]


def test_conniption_board_has_stage_flips_and_buttons():
    pos = replay(game_for("conniption"), "n4n,f")
    b = board_json(pos)
    assert b["stage"] == 1 and b["flips_left"] == [4, 3] and b["upside_down"] and b["flip_forbidden"]
    assert [x["move"] for x in b["buttons"]] == ["f", "n"]
    js = position_json(pos)
    assert "f" not in js["legal"] and "4" in js["legal"]
