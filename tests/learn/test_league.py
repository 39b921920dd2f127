"""League games (learn/core/league.py): the schedule, the members' moves, and the one-line errors."""

from __future__ import annotations

import numpy as np
import pytest

from boardrl.games import make_game
from boardrl.learn.core.base import LearnError
from boardrl.learn.core.league import League, LeagueFields

TTT = make_game("tictactoe")


def test_league_games_are_spread_evenly_with_alternating_seats_whatever_the_batches():
    """Share 0.4 over 10 games: games 2, 4, 7, 9 (floor((g + 1) * 0.4) steps up), the learner first, second,
    first, second (the opponent's player 1, 0, 1, 0); computed in two batches or one, the seats are the same (a
    resumed run plays the same games)."""
    league = League(TTT, ["random"], 0.4, "test")
    whole, _ = league.seats(0, 10, np.random.default_rng(0))
    tail, _ = league.seats(3, 7, np.random.default_rng(0))
    assert whole.tolist() == [-1, -1, 1, -1, 0, -1, -1, 1, -1, 0] and tail.tolist() == whole[3:].tolist()


def test_members_are_drawn_uniformly_for_league_games_only():
    """Share 1 over 3,000 games, three members: each plays a third (99.9% bound: 3.3 sd of a binomial share is
    under 0.03); share 0: every game is self-play with member 0 and no draw from the generator."""
    league = League(TTT, ["random", "tactical", "perfect"], 1.0, "test")
    seat, which = league.seats(0, 3000, np.random.default_rng(1))
    assert (seat >= 0).all() and np.abs(np.bincount(which, minlength=3) / 3000 - 1 / 3).max() < 0.03
    rng = np.random.default_rng(2)
    seat, which = League(TTT, ["random"], 0.0, "test").seats(0, 50, rng)
    assert (seat == -1).all() and (which == 0).all()
    assert rng.bit_generator.state == np.random.default_rng(2).bit_generator.state


def test_each_row_is_played_by_its_own_member():
    """200 copies of a position X wins at once (action 2), rows given alternately to ``perfect`` and ``random``:
    every perfect row takes the win, and the random rows spread over the five legal moves (all 100 alike has
    probability 5 * 5^-100)."""
    win_now = np.asarray(TTT.replay("1425"), dtype=np.int64)  # X on cells 1 and 2, O on 4 and 5: X wins at 3
    league = League(TTT, ["perfect", "random"], 1.0, "test")
    which = np.arange(200) % 2
    moves = league.moves(np.repeat(win_now[None], 200, axis=0), which, np.random.default_rng(0))
    assert (moves[which == 0] == 2).all()
    assert len(set(moves[which == 1].tolist())) > 1 and set(moves[which == 1].tolist()) <= {2, 5, 6, 7, 8}


@pytest.mark.parametrize("specs,share,match", [
    (["nobody"], 0.5, "dqn opponents: .*nobody"),
    (["pool:members=random+tactical"], 0.5, "is a pool; list its members"),
])
def test_bad_members_fail_with_one_line(specs, share, match):
    with pytest.raises(LearnError, match=match) as err:
        League(TTT, specs, share, "dqn")
    assert "\n" not in str(err.value)


def test_a_share_needs_opponents():
    with pytest.raises(ValueError, match="opponent_share > 0 needs opponents"):
        LeagueFields(opponent_share=0.5)
