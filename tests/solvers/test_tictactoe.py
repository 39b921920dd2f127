"""The tic-tac-toe referee against an independent plain minimax, known counts and known opening replies."""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

import pytest

from boardrl.games import make_game
from boardrl.errors import BoardRLError
from boardrl.games.base import WrongGameError
from boardrl.games.tictactoe import TicTacToeState
from boardrl.solvers.base import Verdict
from boardrl.solvers.registry import make_referee
from boardrl.solvers.tictactoe import TicTacToeReferee, solved_states

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


@pytest.fixture(scope="module")
def game():
    return make_game("tictactoe")


@pytest.fixture(scope="module")
def referee(game):
    return TicTacToeReferee(game)


# ---------------------------------------------------------------------------------------------- the oracle
# A board is a 9-character string of "X", "O", "."; values from the view of the player to move.
def _winner(board: str) -> str | None:
    for a, b, c in LINES:
        if board[a] != "." and board[a] == board[b] == board[c]:
            return board[a]
    return None


@lru_cache(maxsize=None)
def _oracle(board: str) -> int:
    mover = "X" if board.count("X") == board.count("O") else "O"
    if _winner(board) is not None:
        return -1  # the previous player made the line
    if "." not in board:
        return 0
    return max(-_oracle(board[:i] + mover + board[i + 1:]) for i in range(9) if board[i] == ".")


def _board(state: TicTacToeState) -> str:
    return "".join("X" if state.x >> i & 1 else "O" if state.o >> i & 1 else "." for i in range(9))


# ---------------------------------------------------------------------------------------------- tests
def test_all_5478_states_solved_and_equal_to_plain_minimax(game, referee):
    table = solved_states()
    assert len(table) == referee.num_states == 5478
    for state, value in table.items():
        assert value == _oracle(_board(state))
        verdict = referee.solve(state)
        assert verdict.value == value
        board = _board(state)
        if game.is_over(state):
            assert verdict.optimal_moves == ()
            continue
        mover = "X" if board.count("X") == board.count("O") else "O"
        keep = tuple(i for i in range(9) if board[i] == "." and -_oracle(board[:i] + mover + board[i + 1:]) == value)
        assert verdict.optimal_moves == keep


def test_known_terminal_counts(game):
    """958 finished positions: X wins 626, O wins 316, draws 16 (the figures of the UCI tic-tac-toe endgame set)."""
    results = Counter(game.winner(s) for s in solved_states() if game.is_over(s))
    assert results == Counter({0: 626, 1: 316, None: 16})


def test_counts_of_states_per_value(game):
    """Every reachable state by value for the mover, split into finished and live positions.

    The live counts are checked against the independent oracle, then pinned so a change of either shows.
    """
    counts = Counter((game.is_over(s), v) for s, v in solved_states().items())
    assert counts[(True, 1)] == 0  # a finished game is never won by the player to move
    assert counts[(True, -1)] == 626 + 316 and counts[(True, 0)] == 16
    live = {v: counts[(False, v)] for v in (-1, 0, 1)}
    oracle = Counter(_oracle(_board(s)) for s in solved_states() if not game.is_over(s))
    assert live == {v: oracle[v] for v in (-1, 0, 1)}
    assert live == {1: 2836, 0: 1052, -1: 632}  # 4,520 live positions (recorded from the two methods above)


def test_empty_board_is_a_draw_with_every_move_optimal(game, referee):
    verdict = referee.solve(game.initial_state())
    assert verdict.value == 0
    assert verdict.optimal_moves == tuple(range(9))


def test_known_replies_to_the_first_move(game, referee):
    # X in a corner: only the centre holds the draw for O
    assert referee.solve(game.replay("1")).optimal_moves == (4,)
    # X in the centre: O must take a corner; an edge loses
    verdict = referee.solve(game.replay("5"))
    assert verdict.value == 0 and verdict.optimal_moves == (0, 2, 6, 8)
    # X on an edge: centre, the two adjacent corners or the opposite edge draw; the rest lose
    assert referee.solve(game.replay("2")).optimal_moves == (0, 2, 4, 7)


def test_won_position_keeps_every_winning_move(game, referee):
    # X: 1, 5; O: 2, 3 -> X to move wins; 9 wins at once, 4 and 7 make a double threat that also wins
    s = game.replay("1253")
    verdict = referee.solve(s)
    assert verdict.value == 1
    assert 8 in verdict.optimal_moves
    assert all(referee.value(game.play(s, m)) == -1 for m in verdict.optimal_moves)
    assert all(referee.value(game.play(s, m)) != -1 for m in game.legal_actions(s) if m not in verdict.optimal_moves)


def test_finished_game_has_no_optimal_moves(game, referee):
    s = game.replay("14253")  # X completes the top row
    verdict = referee.solve(s)
    assert (verdict.value, verdict.optimal_moves) == (-1, ())
    full = game.replay("123546879")  # a full board without a line
    assert game.is_over(full) and game.winner(full) is None
    assert referee.solve(full) == Verdict(value=0, optimal_moves=())


def test_errors_and_factory(game, referee):
    assert isinstance(make_referee(game), TicTacToeReferee)
    with pytest.raises(WrongGameError):
        referee.solve((0, 0))
    with pytest.raises(BoardRLError, match="cannot arise"):
        referee.solve(TicTacToeState(0b111, 0))  # three X and no O
