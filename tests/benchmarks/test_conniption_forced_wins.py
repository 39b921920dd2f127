"""benchmarks/conniption_forced_wins.py: the expectimax's model of ``flip`` is the real agent (its predicted
winning probabilities hold in played games), and the first player's winning opening turns are the ones a
fresh search confirms."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from boardrl.agents import make_agent
from boardrl.evaluate.match import play_match
from boardrl.evaluate.stats import wilson_interval
from boardrl.solvers.conniption import forcing_moves

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("conniption_forced_wins",
                                              ROOT / "benchmarks" / "conniption_forced_wins.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)
GAME = bench.GAME
START = tuple(int(x) for x in GAME.initial_state())


def test_flip_policy_is_the_agents_own_choice():
    flip = make_agent(GAME, "flip")
    ex = bench.FlipExpectimax(3)
    rng = np.random.default_rng(0)
    state = GAME.replay("n4n n3n")
    for _ in range(3):
        policy = dict(ex.flip_policy(tuple(int(x) for x in state)))
        assert abs(sum(policy.values()) - 1.0) < 1e-12
        assert flip.act(state, rng) in policy
        state = GAME.play(state, max(policy, key=policy.get))


def test_expectimax_values_hold_in_played_games_against_the_real_flip():
    assert bench.FlipExpectimax(3).value(START, 0) == 0.0
    assert bench.FlipExpectimax(4).value(START, 0) == 0.5
    assert bench.FlipExpectimax(5).value(START, 0) == 1.0
    flip = make_agent(GAME, "flip")
    sure = play_match(GAME, flip, bench.FlipExploiter(GAME, 5), 12, seats="a_first", seed=1)
    assert sure.as_first.to_dict()["loss"] == 1.0  # the exploiter (second) wins every game
    half = play_match(GAME, flip, bench.FlipExploiter(GAME, 4), 60, seats="a_first", seed=2)
    losses = round(half.as_first.to_dict()["loss"] * 60)
    low, high = wilson_interval(losses, 60, confidence=0.999)
    assert low <= 0.5 <= high


def test_opening_turns_that_keep_the_win_start_with_moves_that_keep_it():
    keep, total = bench.opening_turns(5)
    assert total == 28 and len(keep) == 17
    first_moves = {GAME.parse_move(line[0]) for line in keep}
    assert sorted(first_moves) == forcing_moves(GAME, GAME.initial_state(), 5)
