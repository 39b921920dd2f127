"""The 2x2 -> 3x3 transfer sends each 3x3 edge to the right 2x2 edge of the right sub-board, and averages."""

from __future__ import annotations

import numpy as np
import pytest

from boardrl.agents.dots_table import DotsTableAgent, InitialValues
from boardrl.errors import BoardRLError
from boardrl.games import make_game
from boardrl.games.dots_and_boxes import Geometry
from boardrl.agents.dots_transfer import Transfer, local_edges, restrict, sub_board_maps

G2, G3 = Geometry(2, 2), Geometry(3, 3)
MAPS = sub_board_maps(G3, G2)
LOCAL = local_edges(MAPS, G3.num_edges)


def test_sub_boards_are_the_four_2x2_patches_in_seed_numbering():
    """By hand from SEEDS.md's numbering (3x3: rows 0-2, 3-5, 6-8, 9-11; verticals 12-15, 16-19, 20-23;
    2x2: rows 0-1, 2-3, 4-5; verticals 6-8, 9-11)."""
    assert MAPS.shape == (4, 12)
    assert MAPS[0].tolist() == [0, 1, 3, 4, 6, 7, 12, 13, 14, 16, 17, 18]  # boxes (0,0) (0,1) (1,0) (1,1)
    assert MAPS[1].tolist() == [1, 2, 4, 5, 7, 8, 13, 14, 15, 17, 18, 19]  # offset (0,1)
    assert MAPS[2].tolist() == [3, 4, 6, 7, 9, 10, 16, 17, 18, 20, 21, 22]  # offset (1,0)
    assert MAPS[3].tolist() == [4, 5, 7, 8, 10, 11, 17, 18, 19, 21, 22, 23]  # offset (1,1)


def test_each_3x3_edge_has_its_local_number_in_the_sub_boards_holding_it():
    assert LOCAL[4].tolist() == [3, 2, 1, 0]  # edge 4 (centre-top): in all four sub-boards
    assert LOCAL[17].tolist() == [10, 9, 7, 6]  # edge 17 (centre-left vertical): in all four
    assert LOCAL[0].tolist() == [0, -1, -1, -1]  # top-left corner edge: only sub-board (0,0)
    assert LOCAL[23].tolist() == [-1, -1, -1, 11]  # bottom-right vertical: only (1,1)
    assert LOCAL[1].tolist() == [1, 0, -1, -1]  # top-middle: both top sub-boards
    counts = (LOCAL >= 0).sum(axis=1)
    assert counts.min() == 1 and counts.max() == 4 and counts.sum() == 4 * 12


def test_restriction_reads_the_sub_board_edges():
    edges = (1 << 4) | (1 << 17) | (1 << 23)
    assert restrict(edges, MAPS[3]) == (1 << 0) | (1 << 6) | (1 << 11)
    assert restrict(edges, MAPS[0]) == (1 << 3) | (1 << 10)
    assert restrict(0, MAPS[2]) == 0
    full = (1 << 24) - 1
    assert all(restrict(full, MAPS[k]) == 4095 for k in range(4))


def test_initial_value_is_the_mean_over_the_sub_boards_holding_the_edge():
    source = np.arange(4096 * 12, dtype=np.float32).reshape(4096, 12) / 1000.0  # value = (edge set, action)
    t = Transfer(G3, G2, source)
    edges = (1 << 4) | (1 << 17)
    row = t.row(edges)
    sub = [restrict(edges, MAPS[k]) for k in range(4)]  # (0,0): {3,10}  (0,1): {2,9}  (1,0): {1,7}  (1,1): {0,6}
    assert sub == [(1 << 3) | (1 << 10), (1 << 2) | (1 << 9), (1 << 1) | (1 << 7), (1 << 0) | (1 << 6)]
    want_5 = np.mean([source[sub[1], 3], source[sub[3], 1]])  # edge 5: local 3 in (0,1), local 1 in (1,1)
    want_0 = source[sub[0], 0]
    want_4 = np.mean([source[sub[k], LOCAL[4, k]] for k in range(4)])
    assert row[5] == pytest.approx(want_5, rel=1e-6)
    assert row[0] == pytest.approx(want_0, rel=1e-6)
    assert row[4] == pytest.approx(want_4, rel=1e-6)


def test_an_untrained_3x3_agent_plays_the_transferred_values():
    g3 = make_game("dots_and_boxes_3x3")
    source = np.random.default_rng(0).normal(size=(4096, 12)).astype(np.float32)
    init = InitialValues(G3, source, "dots_and_boxes_2x2")
    agent = DotsTableAgent(g3, np.zeros(0, np.int64), np.zeros(0, np.float32), init, symmetry=False)
    t = Transfer(G3, G2, source)
    # (edge set, boxes complete): empty, a few edges, everything but edge 0 (8 boxes done, box (0,0) open)
    for edges, done in ((0, 0), (0b1011 << 9, 0), ((1 << 24) - 2, 8)):
        state = g3.state_type(edges, 0, done, 0)
        assert np.array_equal(agent.q_values(state), t.row(edges))

def test_bad_sources_are_refused():
    with pytest.raises(BoardRLError, match="does not fit"):
        sub_board_maps(G2, G3)
    with pytest.raises(BoardRLError, match="not a full 2x2 table"):
        Transfer(G3, G2, np.zeros((10, 12)))


def test_transfer_source_trains_the_small_table_in_the_run_and_resumes(tmp_path):
    """transfer_source (the pipeline's way) gives the same first values as transferring a saved source model."""
    from boardrl.learn import make_learner

    g3 = make_game("dots_and_boxes_3x3")
    src = {"games": 3000, "reward": "margin", "gamma": 1.0, "alpha": 1.0}
    p = {"games": 600, "reward": "margin", "gamma": 1.0, "alpha": 1.0, "checkpoint_every": 300,
         "transfer_source": {"game": "dots_and_boxes_2x2", "params": {k: v for k, v in src.items() if k != "reward"}}}
    learner = make_learner("dots_table")
    a = learner.train(g3, p, seed=4, checkpoint_dir=tmp_path / "a", eval_points=[])
    b = make_learner("dots_table").train(g3, p, seed=4, checkpoint_dir=tmp_path / "b", eval_points=[])
    assert np.array_equal(a.keys, b.keys) and np.array_equal(a.vals, b.vals)  # deterministic from the seed
    assert a.init.source.shape == (1 << 12, 12) and a.init.source_game == "dots_and_boxes_2x2"
    states = np.zeros((64, 4), dtype=np.int64)
    states[:, 0] = np.arange(64) * 12345 % (1 << 24)
    assert np.isfinite(a.q_values_batch(states)).all()


def test_transfer_source_refuses_a_board_that_is_not_smaller():
    from boardrl.learn import make_learner
    from boardrl.learn.core.base import LearnError

    g2 = make_game("dots_and_boxes_2x2")
    with pytest.raises(LearnError, match="not a smaller Dots and Boxes board"):
        make_learner("dots_table").train(g2, {"games": 10, "transfer_source": {"game": "dots_and_boxes_2x2"}},
                                         seed=0, checkpoint_dir=None, eval_points=[])
