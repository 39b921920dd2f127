"""The opponent pool: one member per game, drawn uniformly; new games found by reset() or by the position going back."""

from __future__ import annotations

import numpy as np
import pytest

from boardrl.agents import AgentSpecError, make_agent
from boardrl.agents.base import Agent
from boardrl.agents.pool import PoolAgent
from boardrl.errors import BoardRLError
from boardrl.evaluate.match import play_match
from boardrl.games import make_game

CONNIPTION = make_game("conniption")


class Recorder(Agent):
    """Plays the first legal move and records which member played."""

    log: list[str] = []

    def act(self, state, rng):
        Recorder.log.append(self.name)
        return self.game.legal_actions(state)[0]


def recording_pool(n: int) -> PoolAgent:
    pool = PoolAgent(CONNIPTION, "random+random")
    pool.members = [Recorder(CONNIPTION, f"m{i}") for i in range(n)]
    return pool


def play_game(pool: PoolAgent, rng: np.random.Generator, reset: bool) -> set[str]:
    """One game of the pool against itself-as-both-players' opponent (first legal move); which members played."""
    if reset:
        pool.reset()
    Recorder.log = []
    state = CONNIPTION.initial_state()
    while not CONNIPTION.is_over(state):
        state = CONNIPTION.play(state, pool.act(state, rng) if state.player == 1 else
                                CONNIPTION.legal_actions(state)[-1])
    return set(Recorder.log)


@pytest.mark.parametrize("reset", [True, False])
def test_one_member_per_game_drawn_uniformly(reset):
    """Without reset the position going back starts a new draw.  3 members, 600 games: each count lies within
    200 +- 45 (about 3.9 standard deviations, sqrt(600 * 1/3 * 2/3) = 11.5), a false alarm below 1e-3."""
    pool, rng = recording_pool(3), np.random.default_rng(0)
    counts = {"m0": 0, "m1": 0, "m2": 0}
    for _ in range(600):
        played = play_game(pool, rng, reset)
        assert len(played) == 1
        counts[played.pop()] += 1
    assert all(abs(c - 200) <= 45 for c in counts.values()), counts


def test_spec_builds_members_and_plays_a_match():
    pool = make_agent(CONNIPTION, "pool:members=sols+cells+hybrid+flip+conniption_random")
    assert [m.name for m in pool.members] == ["sols", "cells", "hybrid", "flip", "conniption_random"]
    result = play_match(CONNIPTION, make_agent(CONNIPTION, "random"), pool, 20, seed=0)
    assert result.games == 20
    again = play_match(CONNIPTION, make_agent(CONNIPTION, "random"), pool, 20, seed=0)
    assert np.array_equal(result.outcomes, again.outcomes)  # reproducible from the match seed


def test_errors_are_one_line():
    with pytest.raises(AgentSpecError, match="pool needs members"):
        make_agent(CONNIPTION, "pool")
    with pytest.raises(AgentSpecError, match="unknown agent 'nobody'"):
        make_agent(CONNIPTION, "pool:members=sols+nobody")
    pool = make_agent(CONNIPTION, "pool:members=random")
    rows = np.zeros((2, 8), dtype=np.int64)
    rows[:, 7] = -1
    with pytest.raises(BoardRLError, match="one game at a time"):
        pool.act_batch(rows, np.random.default_rng(0))
