import numpy as np
import pytest
from helpers import reachable_states

from boardrl.games import IllegalMoveError, NotationError, WrongGameError, make_game
from boardrl.games.tictactoe import TicTacToeState

ttt = make_game("tictactoe")


def test_5478_reachable_states():
    assert len(reachable_states(ttt)) == 5478


def test_win_draw_and_empty_moves_after_win():
    s = ttt.replay("14253")  # X: 1 2 3
    assert ttt.is_over(s) and ttt.returns(s) == (1.0, -1.0) and ttt.winner(s) == 0
    assert not ttt.legal_moves(s).any()
    d = ttt.replay("123546879")  # X O X / O O X / X X O: full board, no line
    assert ttt.is_over(d) and ttt.returns(d) == (0.0, 0.0)


def test_notation_round_trip_and_errors():
    s = ttt.replay("5 1, 9")
    assert ttt.format_moves([4, 0, 8]) == "519"
    assert s == TicTacToeState(x=(1 << 4) | (1 << 8), o=1)
    with pytest.raises(NotationError, match="cells 1-9"):
        ttt.parse_moves("50")
    with pytest.raises(IllegalMoveError, match="legal moves: 2 3 4 6 7 8"):
        ttt.replay("5195")
    with pytest.raises(WrongGameError, match="TicTacToeState"):
        ttt.play((0, 0, 0), 1)


def test_symmetries_preserve_value_relations():
    s = ttt.replay("12")
    images = ttt.symmetries(s)
    assert len(images) == 8 and images[0][0] == s
    for img, amap in images:
        # playing a then mapping equals mapping then playing amap[a]
        for a in ttt.legal_actions(s):
            played = ttt.play(s, a)
            assert any(ttt.play(img, int(amap[a])) == im for im, _ in ttt.symmetries(played))


def test_encode_is_from_side_to_move():
    s = ttt.replay("5")
    e = ttt.encode(s)
    assert e.shape == (2, 3, 3) and e[1, 1, 1] == 1 and e[0].sum() == 0
