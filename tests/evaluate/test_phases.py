"""Optimal-move rate by phase: seeded position sets inside each phase's plies, judged by the referee."""

from __future__ import annotations

import pytest

from boardrl.agents import make_agent
from boardrl.evaluate import phases
from boardrl.games import make_game
from boardrl.solvers.registry import make_referee

TTT = make_game("tictactoe")
C4 = make_game("connect4")


@pytest.fixture
def ttt_phases(monkeypatch):
    monkeypatch.setitem(phases.PHASES, "tictactoe", (("opening", 0, 2), ("rest", 3, 8)))


def test_connect4_phase_sets_cover_the_issue_split_and_are_reproducible(monkeypatch):
    monkeypatch.setattr(phases, "book_plies", lambda game_id: 8)
    sets = phases.phase_positions(C4, 40, seed=11)
    assert list(sets) == ["opening", "middle", "end"]
    for (name, lo, hi), positions in zip(phases.PHASES["connect4"], sets.values()):
        assert len(positions) == 10 and len(set(positions)) == 10
        for pos in positions:
            assert lo <= pos.plies == bin(pos.mask).count("1") <= hi, name
            assert not C4.is_over(pos)
    assert phases.phase_positions(C4, 40, seed=11) == sets
    assert phases.phase_positions(C4, 3, seed=11) == {}  # fewer than one position per phase
    assert phases.phase_positions(TTT, 40, seed=11) == {}  # no phases defined


def test_perfect_play_is_optimal_in_every_phase_and_random_play_is_not(ttt_phases):
    referee = make_referee(TTT)
    sets = phases.phase_positions(TTT, 200, seed=3)
    assert [len(v) for v in sets.values()] == [50, 50]
    perfect = phases.rates_by_phase(make_agent(TTT, "perfect"), referee, sets, seed=1)
    assert {k: (v["rate"], v["n"], v["plies"]) for k, v in perfect.items()} == {
        "opening": (1.0, 50, [0, 2]), "rest": (1.0, 50, [3, 8])}
    rand = phases.rates_by_phase(make_agent(TTT, "random"), referee, sets, seed=1)
    assert rand["rest"]["rate"] < 0.9 and rand["rest"]["optimal"] == round(rand["rest"]["rate"] * 50)


def test_without_an_opening_book_the_connect4_opening_is_reported_unjudged(monkeypatch):
    """The empty board takes the search minutes: without a book the opening is skipped and says why."""
    monkeypatch.setattr(phases, "book_plies", lambda game_id: -1)
    assert list(phases.unjudged("connect4")) == ["opening"]
    sets = phases.phase_positions(C4, 8, seed=11)
    assert list(sets) == ["middle", "end"]
    out = phases.rates_by_phase(make_agent(C4, "tactical"), make_referee(C4), sets, seed=1)
    assert out["opening"]["rate"] is None and "opening book" in out["opening"]["unjudged"]
    assert [out[k]["n"] for k in ("middle", "end")] == [2, 2]
    monkeypatch.setattr(phases, "book_plies", lambda game_id: 8)
    assert phases.unjudged("connect4") == {}
