"""Seed 004's QLearn / MinimaxQ: the moving-average update with exact numbers, the schedule, seats, resume."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from boardrl.agents import make_agent
from boardrl.agents.conniption import ConniptionAI
from boardrl.agents.learned import QTable, load_agent
from boardrl.agents.seed004_q import Seed004QAgent, greedy_action
from boardrl.evaluate.match import play_match
from boardrl.games import make_game
from boardrl.games.conniption import FLIP, NONE, Conniption
from boardrl.learn import LearnError, make_learner
from boardrl.learn.core.base import MANIFEST
from boardrl.learn.seed004_q import Seed004QParams, derived_games, epsilon, none_bonus

GAME = Conniption(seed_draw_rule=True)
EMPTY = GAME.initial_state()
CENTRE = 3
# One X in the centre of the bottom row: 7 windows run through that cell, so Sols = 7 x weight 1 and Cells = 7.
CENTRE_EVAL = 14.0
# Fast runs for the resume test: epsilon = exp(-0.05 g) < 0.01 after 93 games.
FAST = {"decay": 0.05, "tolerance": 0.01, "opponent": "random", "checkpoint_every": 30}


def trainer(rule: str = "qlearn", seat: str = "first"):
    """A fresh learner's trainer (nothing played yet) for calling single learner decisions by hand."""
    learner = make_learner("seed004_q")
    p = learner.check_params({"rule": rule, "learner_seat": seat})
    learner.setup(GAME, p, seed=0, opponent=make_agent(GAME, "random"))
    return learner.trainers[0]


def forced(t, state, action: int, old: float) -> float:
    """Make ``action`` the mover's greedy choice with Q = ``old``, play one greedy decision, return the new Q."""
    values = np.zeros(GAME.num_actions)
    values[action] = old if old != 0 else (1e-9 if state.player == 0 else -1e-9)
    t.table.set_row(state, values)
    assert t._learner_move(state, eps=0.0) == action
    return float(t.table.q_values(np.asarray(state))[0, action])


# ---------------------------------------------------------------------------------------------- the update
def test_qlearn_episode_moving_average_with_exact_numbers():
    """X: none, place centre, none; rewards = Flip evaluation after each move, none x1.5 when favourable."""
    t = trainer("qlearn")
    after_none = GAME.play(EMPTY, NONE)
    # empty board: evaluation 0 is not favourable to X, so 0 / 1.5 = 0: Q = 0.55 * 1 + 0.45 * 0
    assert forced(t, EMPTY, NONE, 1.0) == pytest.approx(0.55)
    # place centre: 0.55 * 2 + 0.45 * 14
    assert forced(t, after_none, CENTRE, 2.0) == pytest.approx(0.55 * 2 + 0.45 * CENTRE_EVAL)
    # stage 2 none: 14 favours X, so 14 * 1.5 = 21: from 0 -> 9.45, then again -> 0.55 * 9.45 + 9.45
    stage2 = GAME.play(after_none, CENTRE)
    assert forced(t, stage2, NONE, 0.0) == pytest.approx(9.45)
    assert forced(t, stage2, NONE, 9.45) == pytest.approx(0.55 * 9.45 + 9.45)


def test_qlearn_none_bonus_divides_when_unfavourable_and_flip_gets_none():
    """O to move after X's centre piece: none's 14 favours X, so O's reward is 14 / 1.5; a flip is scored raw."""
    t = trainer("qlearn", seat="second")
    o_turn = GAME.play(GAME.play(GAME.play(EMPTY, NONE), CENTRE), NONE)
    assert o_turn.player == 1 and o_turn.stage == 0
    assert forced(t, o_turn, NONE, 0.0) == pytest.approx(0.45 * CENTRE_EVAL / 1.5)  # 4.2
    # a flip by O: the lone piece stays put; Flip evaluation 14 + 10 * (O's flips = 1) = 24, no bonus
    assert forced(t, o_turn, FLIP, 0.0) == pytest.approx(0.45 * 24)


def test_none_bonus_both_ways_for_both_movers():
    assert none_bonus(10, 0, 1.5) == 15 and none_bonus(-10, 0, 1.5) == pytest.approx(-10 / 1.5)
    assert none_bonus(-10, 1, 2.0) == -20 and none_bonus(10, 1, 2.0) == 5
    assert none_bonus(0, 0, 2.0) == 0 and none_bonus(0, 1, 2.0) == 0


def test_minimaxq_reward_is_the_depth3_search_value_with_none_x2_or_halved():
    """The reward of a move is the seed AI's depth-3 minimax value of it (Flip evaluation), none x2 / 2."""
    ai = ConniptionAI(GAME, "flip")
    rng = np.random.default_rng(0)
    t = trainer("minimaxq")
    x_stage2 = GAME.play(GAME.play(EMPTY, NONE), CENTRE)
    values = ai.action_values(x_stage2, rng)
    for action in (NONE, FLIP):
        expected = values[action] if action == FLIP else none_bonus(values[action], 0, 2.0)
        assert t.reward(x_stage2, action) == pytest.approx(expected)
    assert t.reward(x_stage2, NONE) == (values[NONE] * 2 if values[NONE] > 0 else values[NONE] / 2)
    t2 = trainer("minimaxq", seat="second")
    o_stage1 = GAME.play(GAME.play(x_stage2, NONE), NONE)
    o_values = ai.action_values(o_stage1, rng)
    assert forced(t2, o_stage1, 0, 0.0) == pytest.approx(0.45 * o_values[0])


# ---------------------------------------------------------------------------------------------- schedule, seats
def test_epsilon_schedule_and_derived_budgets():
    assert epsilon(0.004, 0) == 1.0
    assert epsilon(0.004, 1726) >= 0.001 > epsilon(0.004, 1727)
    assert epsilon(0.005, 1381) >= 0.001 > epsilon(0.005, 1382)
    assert derived_games(0.004, 0.001) == 1727 and derived_games(0.005, 0.001) == 1382
    assert derived_games(1.0, 0.5) == 20  # the seed's minimum of 20 training games
    assert Seed004QParams().games == 1727 and Seed004QParams(rule="minimaxq").games == 1382
    assert Seed004QParams(rule="minimaxq").decay == 0.005 and Seed004QParams(games=1727).games == 1727


def test_player_one_takes_the_max_player_two_the_min_ties_by_rule():
    values = np.array([3.0, -2.0, 5.0, -2.0, 0, 0, 0, 5.0, 5.0])
    rng = np.random.default_rng(0)
    assert greedy_action(values, [0, 1, 3], 0, "uniform", rng) == 0
    assert greedy_action(values, [0, 1, 2], 1, "uniform", rng) == 1
    assert greedy_action(values, [7, 8], 0, "priority", rng) == NONE
    picks = {greedy_action(values, [1, 3], 1, "uniform", rng) for _ in range(50)}
    assert picks == {1, 3}  # uniform among tied: both appear in 50 draws (each misses with prob 2 * 2^-50)


def test_agent_min_for_second_seat_and_unseen_states_are_all_zero():
    table = QTable(8, 9, 0, 0.0)
    o_turn = GAME.play(GAME.play(EMPTY, NONE), CENTRE)
    o_turn = GAME.play(o_turn, NONE)
    o_place = GAME.play(o_turn, NONE)
    table.set_row(o_place, [4.0, -1.0, 2.0, 9.0, 0, 0, 0, 0, 0])
    agent = Seed004QAgent(GAME, (table,), "priority")
    assert agent.act(o_place, np.random.default_rng(0)) == 1  # O minimises
    assert np.array_equal(agent.q_values(EMPTY), np.zeros(9))
    assert agent.act(o_turn, np.random.default_rng(0)) == NONE  # unseen: all 0, priority prefers none


# ---------------------------------------------------------------------------------------------- training runs
def train(params, ckpt: Path, on_eval=None, points=(), seed=3):
    return make_learner("seed004_q").train(GAME, params, seed=seed, checkpoint_dir=ckpt, eval_points=list(points),
                                           on_eval=on_eval)


def sorted_table(agent, seat: int = 0):
    keys, vals = agent.tables[seat].compact()
    order = np.lexsort(keys.T[::-1])
    return keys[order], vals[order]


class Kill(Exception):
    pass


def test_resume_equals_uninterrupted_run(tmp_path):
    ref = train(FAST, tmp_path / "ref", points=[0, 40, 93])
    assert ref.stats["games"] == 93

    def die(n, agent):
        if n == 40:
            raise Kill

    with pytest.raises(Kill):
        train(FAST, tmp_path / "ck", on_eval=die, points=[0, 40, 93])
    assert json.loads((tmp_path / "ck" / MANIFEST).read_text())["done"] == 30
    resumed = train(FAST, tmp_path / "ck", points=[0, 40, 93])
    for a, b in zip(sorted_table(ref), sorted_table(resumed)):
        assert np.array_equal(a, b)
    assert resumed.meta == ref.meta


def test_save_and_load_round_trip(tmp_path):
    agent = train(FAST, tmp_path / "ck")
    agent.save(tmp_path / "model")
    back = load_agent(GAME, "seed004_q", tmp_path / "model")
    assert isinstance(back, Seed004QAgent) and back.tie_break == agent.tie_break
    for a, b in zip(sorted_table(agent), sorted_table(back)):
        assert np.array_equal(a, b)


def test_both_seats_hold_exactly_the_one_seat_runs_tables(tmp_path):
    """``learner_seat: both`` trains each seat's table exactly as its one-seat run does, and plays it from that seat."""
    both = train({**FAST, "learner_seat": "both"}, tmp_path / "both", seed=5)
    for seat, name in enumerate(("first", "second")):
        alone = train({**FAST, "learner_seat": name}, tmp_path / name, seed=5)
        for a, b in zip(sorted_table(both, seat), sorted_table(alone)):
            assert np.array_equal(a, b)
        assert both.table_for(seat) is both.tables[seat]
    assert both.meta["games"] == 93
    assert both.stats["states"] == len(both.tables[0]) + len(both.tables[1])
    both.save(tmp_path / "model")
    back = load_agent(GAME, "seed004_q", tmp_path / "model")
    assert len(back.tables) == 2
    for seat in (0, 1):
        for a, b in zip(sorted_table(both, seat), sorted_table(back, seat)):
            assert np.array_equal(a, b)


def test_both_seats_resume_equals_uninterrupted_run(tmp_path):
    params = {**FAST, "learner_seat": "both"}
    ref = train(params, tmp_path / "ref", points=[0, 40, 93])

    def die(n, agent):
        if n == 40:
            raise Kill

    with pytest.raises(Kill):
        train(params, tmp_path / "ck", on_eval=die, points=[0, 40, 93])
    resumed = train(params, tmp_path / "ck", points=[0, 40, 93])
    for seat in (0, 1):
        for a, b in zip(sorted_table(ref, seat), sorted_table(resumed, seat)):
            assert np.array_equal(a, b)
    assert resumed.meta == ref.meta


def test_minimaxq_first_beats_flip_as_in_the_seed(tmp_path):
    """SEEDS.md's headline: MinimaxQ as P1 beats Flip as P2 100-0 (here seed 0: at least 90 of 100)."""
    agent = train({"rule": "minimaxq", "opponent": "flip"}, tmp_path / "ck", seed=0)
    assert agent.stats["games"] == 1382
    result = play_match(GAME, agent, make_agent(GAME, "flip"), 100, seats="a_first", seed=0)
    assert result.as_first.wins >= 90


# ---------------------------------------------------------------------------------------------- errors
@pytest.mark.parametrize("params, words", [
    ({"rule": "sarsa"}, "rule"),
    ({"games": 1000}, "games 1000 disagrees"),
    ({"alpha": 0}, "alpha"),
    ({"learner_seat": "alternate"}, "learner_seat"),
    ({"evaluation": "mobility"}, "evaluation"),
    ({"epsilon": 0.1}, "epsilon"),
])
def test_bad_params_are_one_line_errors(tmp_path, params, words):
    with pytest.raises(LearnError, match=words) as err:
        train(params, tmp_path / "ck")
    assert "\n" not in str(err.value)


def test_other_games_and_unknown_opponents_are_refused(tmp_path):
    with pytest.raises(LearnError, match="conniption only"):
        make_learner("seed004_q").train(make_game("tictactoe"), {"opponent": "random"}, seed=0,
                                        checkpoint_dir=tmp_path / "ck", eval_points=[])
    with pytest.raises(Exception, match="unknown agent"):
        train({"opponent": "nobody"}, tmp_path / "ck2")
