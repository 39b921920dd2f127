"""Position counting by depth: the batched BFS against known counts and against the plain scalar BFS."""

import numpy as np
import pytest

from boardrl.games import make_game
from boardrl.errors import BoardRLError
from boardrl.games.count import (
    children,
    count_positions,
    count_positions_scalar,
    level_states,
    unique_rows,
)


def test_tictactoe_counts_sum_to_the_5478_reachable_states():
    ttt = make_game("tictactoe")
    counts = count_positions(ttt, 9)
    assert counts == [1, 9, 72, 252, 756, 1260, 1520, 1140, 390, 78]
    assert sum(counts) == 5478
    assert count_positions_scalar(ttt, 9) == counts
    assert count_positions(ttt, 12)[10:] == [0, 0, 0]  # every game is over after nine moves


def test_connect4_fast_and_scalar_paths_agree():
    c4 = make_game("connect4")
    assert count_positions_scalar(c4, 5) == count_positions(c4, 5) == [1, 7, 49, 238, 1120, 4263]


def test_finished_positions_are_counted_but_not_expanded():
    c4 = make_game("connect4")
    level7 = level_states(c4, 7)
    over = np.array([c4.is_over(c4.state_type(*map(int, r))) for r in level7])
    assert over.sum() > 0  # the first wins arrive at ply 7
    assert children(c4, level7[over]).shape == (0, 3)
    assert unique_rows(children(c4, level7)).shape[0] == 184275
    assert unique_rows(children(c4, level7[~over])).shape[0] == 184275


def test_levels_are_distinct_rows():
    c4 = make_game("connect4")
    level = level_states(c4, 4)
    assert level.shape == (1120, 3) and (level[:, 2] == 4).all()
    assert len({tuple(r) for r in level.tolist()}) == 1120
    rows = np.array([[1, 2], [3, 4], [1, 2], [3, 5]], dtype=np.int64)
    assert unique_rows(rows).tolist() == [[1, 2], [3, 4], [3, 5]]


@pytest.mark.parametrize("bad", [-1, 2.5, "8", True])
def test_bad_plies_are_refused(bad):
    with pytest.raises(BoardRLError, match="plies must be a non-negative integer"):
        count_positions(make_game("tictactoe"), bad)
