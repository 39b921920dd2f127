"""The Connect 4 referee: scores against an independent plain minimax, known values, and the UCI labels."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import UCI_Z
import unlzw3
from numba import njit

from boardrl.games import make_game
from boardrl.games.base import IllegalMoveError, WrongGameError
from boardrl.games.connect4 import Connect4State, from_uci_cells
from boardrl.solvers.registry import make_referee
from boardrl.solvers.connect4 import (
    Connect4Referee,
    Connect4Solver,
    InvalidPositionError,
    position_from_columns,
)

UCI_FILE = UCI_Z  # the vendored copy of the published file
UCI_SAMPLE = 40  # 8-ply positions take 0.2-0.4 s each for the value alone (measured): 8-16 s


@pytest.fixture(scope="module")
def game():
    return make_game("connect4")


@pytest.fixture(scope="module")
def referee(game):
    return Connect4Referee(game)  # default table: grows to 64 MiB for the deep (8-ply, opening) searches


# ---------------------------------------------------------------------------------------------- plain minimax
# An independent oracle: a 6x7 grid of 0/1/2, explicit four-in-a-row scan around the last stone, full-width
# minimax without pruning or tables.  Scores follow the documented convention: 22 - (stones of the winner).
@njit(cache=False)  # a test module is not importable by name from numba's cache loader
def _four_through(grid, r, c, who) -> bool:
    for dr, dc in ((1, 0), (0, 1), (1, 1), (1, -1)):
        n = 1
        for sign in (1, -1):
            rr, cc = r + sign * dr, c + sign * dc
            while 0 <= rr < 6 and 0 <= cc < 7 and grid[rr, cc] == who:
                n += 1
                rr += sign * dr
                cc += sign * dc
        if n >= 4:
            return True
    return False


@njit(cache=False)  # a test module is not importable by name from numba's cache loader
def _minimax(grid, heights, plies) -> int:
    who = 1 + plies % 2
    best = -100
    for c in range(7):
        r = heights[c]
        if r == 6:
            continue
        grid[r, c] = who
        heights[c] += 1
        if _four_through(grid, r, c, who):
            v = 22 - (plies // 2 + 1)
        elif plies + 1 == 42:
            v = 0
        else:
            v = -_minimax(grid, heights, plies + 1)
        heights[c] -= 1
        grid[r, c] = 0
        if v > best:
            best = v
    return best


def _grid(moves: list[int]) -> tuple[np.ndarray, np.ndarray]:
    grid = np.zeros((6, 7), dtype=np.int64)
    heights = np.zeros(7, dtype=np.int64)
    for i, c in enumerate(moves):
        grid[heights[c], c] = 1 + i % 2
        heights[c] += 1
    return grid, heights


def _random_game_prefix(game, rng, plies: int) -> tuple[Connect4State, list[int]] | None:
    state, moves = game.initial_state(), []
    for _ in range(plies):
        if game.is_over(state):
            return None
        m = int(rng.choice(game.legal_actions(state)))
        state = game.play(state, m)
        moves.append(m)
    return (None if game.is_over(state) else (state, moves))


def test_scores_equal_plain_minimax_on_100_late_positions(game, referee):
    rng = np.random.default_rng(2024)
    checked = 0
    while checked < 100:
        found = _random_game_prefix(game, rng, int(rng.integers(32, 37)))
        if found is None:
            continue
        state, moves = found
        grid, heights = _grid(moves)
        assert referee.solve_score(state) == _minimax(grid, heights, len(moves)), game.format_moves(moves)
        checked += 1


def test_move_scores_and_optimal_moves_agree_with_plain_minimax(game, referee):
    rng = np.random.default_rng(99)
    checked = 0
    while checked < 30:
        found = _random_game_prefix(game, rng, 33)
        if found is None:
            continue
        state, moves = found
        expected = []
        for c in range(7):
            if not game.legal_moves(state)[c]:
                expected.append(None)
                continue
            child = game.play(state, c)
            if game.is_over(child):
                expected.append(0 if game.winner(child) is None else 22 - (len(moves) // 2 + 1))
            else:
                grid, heights = _grid(moves + [c])
                expected.append(-_minimax(grid, heights, len(moves) + 1))
        assert referee.move_scores(state) == expected
        verdict = referee.solve(state)
        best = max(v for v in expected if v is not None)
        assert verdict.score == best
        assert verdict.value == int(np.sign(best))
        keep = tuple(c for c, v in enumerate(expected) if v is not None and np.sign(v) == np.sign(best))
        assert verdict.optimal_moves == keep
        checked += 1


def test_value_keeping_moves_equal_the_exact_move_scores_sign_in_the_middle_game(game, referee):
    """``solve`` finds the value-keeping moves by one null window per move (none when lost); the exact score of
    every move (a full bisection each) must agree, in won, drawn and lost positions of 10-24 stones."""
    rng = np.random.default_rng(5)
    seen = set()
    checked = 0
    while checked < 45 or len(seen) < 3:
        found = _random_game_prefix(game, rng, int(rng.integers(10, 25)))
        if found is None:
            continue
        state = found[0]
        verdict = referee.solve(state)
        scores = referee.move_scores(state)
        keep = tuple(c for c, v in enumerate(scores) if v is not None and np.sign(v) == verdict.value)
        assert verdict.optimal_moves == keep, game.format_moves(found[1])
        assert referee.solver.value_keeping_moves(state.current, state.mask, state.plies, verdict.value) == keep
        seen.add(verdict.value)
        checked += 1


def test_value_keeping_moves_of_a_finished_game_are_none(game, referee):
    done = game.replay("1212121")  # the first player's vertical four
    assert referee.solver.value_keeping_moves(done.current, done.mask, done.plies, -1) == ()


# ---------------------------------------------------------------------------------------------- known values
def test_score_convention_on_immediate_and_finished_games(game, referee):
    # "445566": player 0 holds columns 4-6 of the bottom row and wins now with its 4th stone: 22 - 4 = 18
    s = game.replay("445566")
    assert referee.solve_score(s) == 22 - 4
    v = referee.solve(s)
    assert v.value == 1 and v.score == 18
    assert set(v.optimal_moves) >= {2, 6}  # both ends complete the four; other moves may keep the win too
    # a finished game: player 0 just completed a four with its 4th stone; the mover (player 1) has lost
    done = game.replay("4455667")
    assert game.is_over(done)
    v = referee.solve(done)
    assert (v.value, v.score, v.optimal_moves) == (-1, -(22 - 4), ())
    assert referee.move_scores(done) == [None] * 7


def test_fastest_win_not_required_for_optimality(game, referee):
    # after "445566" every move but 3 and 7 delays the win, yet several of them still win: all are optimal
    s = game.replay("445566")
    scores = referee.move_scores(s)
    verdict = referee.solve(s)
    assert verdict.optimal_moves == tuple(c for c, v in enumerate(scores) if v is not None and v > 0)
    assert len(verdict.optimal_moves) > 2


def test_lost_position_has_every_legal_move_optimal(game, referee):
    # "44553": X holds columns 3-5 of the bottom row with 2 and 6 both playable; O cannot block both ends
    s = game.replay("44553")
    verdict = referee.solve(s)
    assert (verdict.value, verdict.score) == (-1, -(22 - 4))
    assert verdict.optimal_moves == tuple(range(7))
    scores = referee.move_scores(s)
    assert max(scores) == -18 and all(v < 0 for v in scores)


def test_double_threat_wins_with_the_fourth_stone(game, referee):
    """After "4455" X plays 3 or 6 for an open three on the bottom row: O blocks one end, X's 4th stone wins.

    So the score is 22 - 4 = 18, and only those two moves reach it: X's other stones share no line with both
    d1 and e1, so no other third stone makes two threats at once.  Slower wins are optimal moves too.
    """
    s = game.replay("4455")
    assert referee.solve_score(s) == 18
    scores = referee.move_scores(s)
    assert [c for c, v in enumerate(scores) if v == 18] == [2, 5]
    verdict = referee.solve(s)
    assert {2, 5} <= set(verdict.optimal_moves)
    assert verdict.optimal_moves == tuple(c for c, v in enumerate(scores) if v > 0)


def test_side_column_opening_loses(game, referee):
    """Known: a first stone in column 1 (or its mirror image, 7) loses for the first player.

    One value search, about 15 s here.  The rest of the opening (empty board +1; first moves: 4 wins, 3 and 5
    draw, the others lose) takes many minutes per move: ``benchmarks/connect4_positions.py --opening``.
    """
    child = game.replay("1")
    assert referee.value(child) == 1  # the second player, to move, wins


# ---------------------------------------------------------------------------------------------- UCI labels
def _uci_rows() -> list[str]:
    return unlzw3.unlzw(open(UCI_FILE, "rb").read()).decode().splitlines()


def test_uci_labels_match_value_sign_on_sample(game):
    referee = Connect4Referee(game)  # its own table: 8-ply positions share subtrees with each other only
    rows = _uci_rows()
    assert len(rows) == 67_557
    rng = np.random.default_rng(5)
    label_value = {"win": 1, "draw": 0, "loss": -1}
    for i in rng.choice(len(rows), size=UCI_SAMPLE, replace=False):
        *cells, label = rows[i].split(",")
        state = from_uci_cells(cells)
        assert state.plies == 8
        assert referee.value(state) == label_value[label], rows[i]


# ---------------------------------------------------------------------------------------------- API and errors
def test_make_referee_gives_connect4_referee(game):
    assert isinstance(make_referee(game), Connect4Referee)


def test_bad_states_are_one_line_errors(game, referee):
    with pytest.raises(WrongGameError):
        referee.solve((0, 0, 0))
    with pytest.raises(InvalidPositionError, match="gap"):
        referee.solve(Connect4State(0, 0b10, 1))  # a stone floating above an empty cell
    with pytest.raises(InvalidPositionError, match="plies"):
        referee.solve(Connect4State(0, 0b1, 2))
    with pytest.raises(InvalidPositionError, match="stones"):
        referee.solve(Connect4State(0b1, 0b1, 1))  # after one ply the mover has 0 stones


def test_table_persists_and_clears(game):
    ref = Connect4Referee(game, tt_log2=20, book=False)  # the search itself, not the opening book
    state = game.replay("43443355")  # about a million nodes from an empty table
    n0 = ref.nodes
    first = ref.solve_score(state)
    cold = ref.nodes - n0
    second = ref.solve_score(state)
    warm = ref.nodes - n0 - cold
    assert first == second and warm < cold
    ref.clear()
    assert ref.solver.tt_fill == 0.0
    assert ref.solve_score(state) == first


def test_position_from_columns_matches_game(game):
    moves = [3, 3, 2, 4, 1, 0, 6, 6, 6]
    s = game.replay(moves)
    assert position_from_columns(moves) == (s.current, s.mask, s.plies)
    with pytest.raises(IllegalMoveError, match="column 1 is full"):
        position_from_columns([0] * 7)


def test_table_growth_and_clear_when_full_keep_exact_scores(game):
    """A table that starts tiny and grows (rehashing) must give the same scores as a roomy one; a full
    table is cleared before the next query, so that query costs exactly as many nodes as from cold."""
    roomy = Connect4Solver(tt_log2=22)
    growing = Connect4Solver(tt_log2=16, start_log2=10)
    rng = np.random.default_rng(3)
    for _ in range(15):
        found = _random_game_prefix(game, rng, 14)
        if found is None:
            continue
        st = found[0]
        assert growing.score(st.current, st.mask, st.plies) == roomy.score(st.current, st.mask, st.plies)
    assert growing.tt_fill > 0 and growing.tt_slots == 1 << 16  # grew 10 -> 12 -> 14 -> 16
    tiny = Connect4Solver(tt_log2=12, start_log2=12, max_fill=0.05, book=False)  # 8 stones: in a book
    st = game.replay("43443355")
    tiny.score(st.current, st.mask, st.plies)
    cold = tiny.nodes
    assert tiny.tt_fill > 0.05
    tiny.score(st.current, st.mask, st.plies)  # cleared first: the same search again
    assert tiny.nodes == 2 * cold


def test_referee_pickles_without_its_table(game):
    """Match runners ship agents to worker processes: the (large) table must not travel with the referee."""
    import pickle

    ref = Connect4Referee(game)
    state = game.replay("43443355")
    verdict = ref.solve(state)
    blob = pickle.dumps(ref)
    assert len(blob) < 1 << 16
    assert pickle.loads(blob).solve(state) == verdict
