"""Dots and Boxes rules: seed 001 numbering, extra turns, scores, notation, errors, tensors, symmetries."""

import pickle
import re

import numpy as np
import pytest

from boardrl.games import BoardRLError, IllegalMoveError, NotationError, WrongGameError, make_game
from boardrl.games.base import random_legal_actions
from boardrl.games.dots_and_boxes import DotsAndBoxes

g3 = make_game("dots_and_boxes_3x3")
g2 = make_game("dots_and_boxes_2x2")


def test_seed_001_numbering_of_the_3x3_board():
    # SEEDS.md: top row 0 1 2; vertical 12-15; row 3 4 5; vertical 16-19; row 6 7 8; vertical 20-23; bottom 9 10 11.
    rows = [[int(n) for n in re.findall(r"\d+", line)] for line in g3.render(g3.initial_state()).splitlines()[:7]]
    assert rows == [[0, 1, 2], [12, 13, 14, 15], [3, 4, 5], [16, 17, 18, 19], [6, 7, 8], [20, 21, 22, 23], [9, 10, 11]]
    assert (g2.num_actions, g3.num_actions, make_game("dots_and_boxes_4x4").num_actions) == (12, 24, 40)
    assert g3.game_id == "dots_and_boxes_3x3"


def test_rectangular_numbering_generalises_the_formula():
    g = DotsAndBoxes(2, 3)  # (R+1)*C = 9 horizontal edges, then R*(C+1) = 8 vertical ones
    assert g.num_actions == 17 and g.game_id == "dots_and_boxes_2x3"
    # box (1, 2): N = 1*3+2, S = 2*3+2, E = 9 + 1*4 + 3, W = 9 + 1*4 + 2
    assert g.geo.box_edges[1 * 3 + 2].tolist() == [5, 8, 16, 15]
    # every edge borders one box (outer) or two (inner), and every box has 4 walls
    per_edge = (g.geo.edge_boxes >= 0).sum(axis=1)
    assert per_edge.sum() == 4 * g.num_boxes and set(per_edge.tolist()) == {1, 2}


def test_box_walls_tensor_sets_a_shared_edge_in_both_boxes():
    w = g3.box_walls(g3.replay("13"))  # vertical edge between boxes (0,0) and (0,1)
    assert w.shape == (3, 3, 4) and w.sum() == 2
    assert w[0, 0, 2] == 1 and w[0, 1, 3] == 1  # E wall of (0,0), W wall of (0,1); order N, S, E, W
    w = g3.box_walls(g3.replay("0 9"))  # top-left N wall, bottom-left S wall
    assert w[0, 0, 0] == 1 and w[2, 0, 1] == 1 and w.sum() == 2


def test_extra_turn_after_a_box_and_the_end_of_the_game():
    g = DotsAndBoxes(1, 2)  # edges: top 0 1, bottom 2 3, verticals 4 5 6
    s = g.replay("0 2 4 1 3")  # no box yet: P0 P1 P0 P1 P0, so P1 moves
    assert (s.to_move, s.score0, s.score1) == (1, 0, 0)
    s = g.play(s, 5)  # closes box 0 (0 2 4 5): P1 scores and moves again
    assert (s.to_move, s.score0, s.score1) == (1, 0, 1) and not g.is_over(s)
    s = g.play(s, 6)  # closes box 1: last edge, game over
    assert g.is_over(s) and g.returns(s) == (-1.0, 1.0) and g.winner(s) == 1 and g.score_margin(s) == -2
    assert not g.legal_moves(s).any()
    with pytest.raises(IllegalMoveError, match="game is over"):
        g.play(s, 0)


def test_one_edge_can_complete_two_boxes():
    g = DotsAndBoxes(1, 2)
    s = g.replay("0 1 2 3 4 6")  # six edges, no box: P0 to move; edge 5 closes both boxes
    assert s.to_move == 0 and g.boxes_completed(s, 5) == 2
    s = g.play(s, 5)
    assert (s.score0, s.score1) == (2, 0) and g.returns(s) == (1.0, -1.0) and g.score_margin(s) == 2


def test_scores_and_turns_match_an_independent_count_over_random_games():
    rng = np.random.default_rng(3)
    draws = 0
    for _ in range(300):
        s = g2.initial_state()
        while not g2.is_over(s):
            before = int((g2.box_walls(s).sum(axis=2) == 4).sum())
            a = int(rng.choice(g2.legal_actions(s)))
            t = g2.play(s, a)
            after = int((g2.box_walls(t).sum(axis=2) == 4).sum())
            gained = [t.score0 - s.score0, t.score1 - s.score1]
            assert gained[s.to_move] == after - before and gained[1 - s.to_move] == 0
            assert t.to_move == (s.to_move if after > before else 1 - s.to_move)
            s = t
        assert s.score0 + s.score1 == 4
        if s.score0 == s.score1:
            draws += 1
            assert g2.returns(s) == (0.0, 0.0) and g2.winner(s) is None
    assert draws > 0  # 2-2 draws happen on the 4-box board


def test_notation_round_trip_and_errors():
    assert g3.parse_moves("0 12, 3") == [0, 12, 3]
    assert g3.format_moves([0, 12, 3]) == "0 12 3"
    assert g3.replay("") == g3.initial_state()
    with pytest.raises(NotationError, match="edge numbers 0-23"):
        g3.parse_moves("0 24")
    with pytest.raises(NotationError, match=r"bad move 'x'"):
        g3.parse_moves("x")
    with pytest.raises(IllegalMoveError, match="move 3 of '0 1 0'.*legal moves: 2 3 4"):
        g3.replay("0 1 0")


def test_states_of_other_games_and_malformed_states_are_refused():
    with pytest.raises(WrongGameError, match="DotsAndBoxesState3x3"):
        g3.play(g2.initial_state(), 0)  # a 2x2 state given to the 3x3 game
    with pytest.raises(WrongGameError, match="DotsAndBoxesState2x2"):
        g2.play(make_game("tictactoe").initial_state(), 0)
    with pytest.raises(WrongGameError, match="scores 1\\+0 but 0 boxes"):
        g2.play(g2.state_type(0, 0, 1, 0), 0)
    with pytest.raises(WrongGameError, match="edges must lie in 0..4095"):
        g2.play(g2.state_type(1 << 12, 0, 0, 0), 0)


def test_bad_board_sizes_are_refused():
    with pytest.raises(BoardRLError, match="positive integers"):
        DotsAndBoxes(0, 3)
    with pytest.raises(BoardRLError, match="at most 62"):
        DotsAndBoxes(6, 6)
    with pytest.raises(BoardRLError, match="known games"):
        make_game("dots_and_boxes_3x")


def test_states_are_hashable_and_survive_pickling():
    s = g3.replay("0 12 3 13")
    t = pickle.loads(pickle.dumps(s))
    assert t == s and type(t) is type(s) is g3.state_type and hash(t) == hash(s)
    assert g3.state_key(s) != g3.state_key(g3.replay("0 12 3"))


def test_encode_planes_from_the_view_of_the_mover():
    s = g3.replay("0 12 3 13")  # P1 closed box (0,0) and moves again: scores P0 0, P1 1
    e = g3.encode(s)
    assert e.shape == g3.encoding_shape == (5, 7, 7)
    assert e[0, 0, 1] == 1 and e[0, 1, 0] == 1 and e[0, 2, 1] == 1 and e[0, 1, 2] == 1 and e[0].sum() == 4
    assert e[1].sum() == 20 and e[1, 0, 3] == 1  # undrawn edge 1
    assert e[2, 1, 1] == 1.0 and e[2, 1, 3] == 0.25  # box (0,0) full; box (0,1) has its W wall (edge 13)
    assert np.all(e[3] == 1 / 9) and np.all(e[4] == 0)  # mover (P1) has 1 box of 9
    s2 = g3.play(s, 1)  # no box: P0 to move now
    e2 = g3.encode(s2)
    assert np.all(e2[3] == 0) and np.all(e2[4] == 1 / 9)
    batch = np.array([s, s2], dtype=np.int64)
    assert np.array_equal(g3.encode_batch(batch)[1], e2)
    assert np.array_equal(g3.box_walls_batch(batch)[0], g3.box_walls(s))


@pytest.mark.parametrize("rows,cols,count", [(3, 3, 8), (2, 2, 8), (2, 3, 4), (1, 2, 4)])
def test_symmetries_commute_with_play(rows, cols, count):
    g = DotsAndBoxes(rows, cols)
    rng = np.random.default_rng(rows * 10 + cols)
    s = g.initial_state()
    for _ in range(g.num_edges // 2):
        s = g.play(s, int(rng.choice(g.legal_actions(s))))
    images = g.symmetries(s)
    assert len(images) == count and images[0][0] == s
    assert len({img.edges for img, _ in images}) > 1
    for img, amap in images:
        assert sorted(amap.tolist()) == list(range(g.num_edges))
        walls = g.box_walls(img).sum(axis=2)
        assert sorted(walls.ravel()) == sorted(g.box_walls(s).sum(axis=2).ravel())  # boxes map to boxes
        for a in g.legal_actions(s):
            played = g.play(s, a)
            mapped = g.play(img, int(amap[a]))
            # the image of (s then a) under this map equals (image of s) then amap[a]
            assert mapped.edges == sum(1 << int(amap[e]) for e in range(g.num_edges) if played.edges >> e & 1)
            assert mapped[1:] == played[1:]


def test_batched_final_states_and_margins():
    rng = np.random.default_rng(5)
    b = g3.batched(256, auto_reset=False)
    while b.legal_mask().any():
        b.step(random_legal_actions(b.legal_mask(), rng))
    assert np.all(b.states[:, 0] == (1 << 24) - 1) and np.all(b.states[:, 2] + b.states[:, 3] == 9)
    margins = g3.score_margin_batch(b.states)
    assert np.array_equal(margins, [g3.score_margin(b.state(i)) for i in range(256)])
    assert set(np.abs(margins) % 2) == {1}  # 9 boxes: never a draw
    with pytest.raises(IllegalMoveError, match="row 0.*undrawn edges"):
        fresh = g3.batched(2, auto_reset=False)
        fresh.step(np.array([0, 0]))
        fresh.step(np.array([0, 1]))
