"""RememberingReferee: the wrapped referee's verdicts, each position searched once."""

from __future__ import annotations

import json

import numpy as np

from boardrl.evaluate.optimal_rate import position_set
from boardrl.games import make_game
from boardrl.solvers.base import RememberingReferee
from boardrl.solvers.registry import make_referee


class CountingReferee:
    """Forwards to a real referee and counts the positions it was asked about."""

    def __init__(self, referee):
        self.game, self.referee, self.asked = referee.game, referee, []

    def solve(self, state):
        self.asked.append(tuple(state))
        return self.referee.solve(state)


def test_same_verdicts_as_the_referee_and_each_position_solved_once():
    game = make_game("tictactoe")
    inner = CountingReferee(make_referee(game))
    remembering = RememberingReferee(inner)
    positions = position_set(game, 60, seed=1)
    first = [remembering.solve(p) for p in positions]
    again = [remembering.solve(p) for p in positions[::-1]]
    fresh = make_referee(game)
    assert first == [fresh.solve(p) for p in positions] and again == first[::-1]
    distinct = {tuple(p) for p in positions}
    assert sorted(inner.asked) == sorted(distinct)  # the second pass asked nothing
    assert remembering.is_optimal(positions[0], first[0].optimal_moves[0])


def test_connect4_positions_keep_their_exact_scores():
    game = make_game("connect4")
    remembering = RememberingReferee(make_referee(game))
    positions = position_set(game, 5, seed=2, plies=(26, 30))
    for p in positions:
        v = remembering.solve(p)
        assert v == remembering.solve(p) and v.score is not None and np.sign(v.score) == v.value


def test_verdicts_kept_in_a_file_are_read_back_and_ignored_when_the_code_differs(tmp_path):
    game = make_game("tictactoe")
    store = tmp_path / "cache" / "tictactoe.json"
    positions = position_set(game, 40, seed=3)
    writer = RememberingReferee(make_referee(game), store)
    expected = [writer.solve(p) for p in positions]
    writer.save()
    reader = RememberingReferee(make_referee(game), store)
    inner = reader.referee = CountingReferee(reader.referee)  # counts what the reader still has to search
    assert [reader.solve(p) for p in positions] == expected and inner.asked == []  # nothing searched again
    reader.save()  # nothing new: the file is not rewritten
    data = json.loads(store.read_text())
    data["code"] = "another version of the solver"
    store.write_text(json.dumps(data))
    stale = RememberingReferee(make_referee(game), store)
    inner = stale.referee = CountingReferee(stale.referee)
    assert [stale.solve(p) for p in positions] == expected and len(inner.asked) == len({tuple(p) for p in positions})
    store.write_text("{not json")
    assert RememberingReferee(make_referee(game), store).verdicts == {}  # unreadable: judged afresh


def test_a_known_file_is_only_read_and_added_verdicts_go_to_the_store(tmp_path):
    game = make_game("tictactoe")
    positions = position_set(game, 40, seed=4)
    judged = RememberingReferee(make_referee(game))
    judged.add(positions[:20], [make_referee(game).solve(p) for p in positions[:20]])
    assert judged.added == 20
    known = tmp_path / "build" / "tictactoe.json"
    judged.write(known)
    before = known.read_bytes()
    store = tmp_path / "cache" / "tictactoe.json"
    referee = RememberingReferee(make_referee(game), store, known)
    inner = referee.referee = CountingReferee(referee.referee)
    verdicts = [referee.solve(p) for p in positions]
    assert verdicts == [make_referee(game).solve(p) for p in positions]
    assert sorted(inner.asked) == sorted({tuple(p) for p in positions[20:]} - {tuple(p) for p in positions[:20]})
    referee.save()
    assert known.read_bytes() == before  # the known file is never written
    assert RememberingReferee(make_referee(game), store).verdicts == referee.verdicts  # the store holds them all
