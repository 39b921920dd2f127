"""The agent registry: names per game, spec parsing, one-line errors naming the choices, lazy imports."""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest

from boardrl.agents import AgentSpecError, agent_keys, agent_names, make_agent, parse_spec
from boardrl.agents.alphabeta import AlphaBetaAgent, MaxMinAgent
from boardrl.agents.mcts import MCTSAgent
from boardrl.games import make_game
from boardrl.errors import BoardRLError

EXPECTED = {
    "tictactoe": ["random", "semirandom", "tactical", "alphabeta", "maxmin", "seed000_alphabeta", "mcts", "puct", "perfect",
                  "human", "pool"],
    "connect4": ["random", "semirandom", "tactical", "alphabeta", "maxmin", "mcts", "puct", "perfect", "human", "pool"],
    "dots_and_boxes_2x2": ["random", "semirandom", "alphabeta", "mcts", "puct", "perfect", "human", "pool", "moderate",
                           "advanced"],
    "dots_and_boxes_4x4": ["random", "semirandom", "alphabeta", "mcts", "puct", "human", "pool", "moderate", "advanced"],
    "conniption": ["random", "semirandom", "tactical", "alphabeta", "mcts", "puct", "human", "pool", "conniption_random", "sols",
                   "cells", "hybrid", "flip"],
}


@pytest.mark.parametrize("game_id", sorted(EXPECTED))
def test_agent_names_per_game(game_id):
    assert ("perfect" in agent_names("dots_and_boxes_2x4")) and "perfect" not in agent_names("dots_and_boxes_3x4")
    assert agent_names(game_id) == EXPECTED[game_id]
    assert agent_names(make_game(game_id)) == EXPECTED[game_id]


@pytest.mark.parametrize("game_id", sorted(EXPECTED))
def test_every_listed_agent_builds_and_plays_a_legal_move(game_id):
    game = make_game(game_id)
    rng = np.random.default_rng(0)
    state = game.initial_state()
    for _ in range(3):
        state = game.play(state, int(rng.choice(game.legal_actions(state))))
    cheap = {"mcts": "mcts:simulations=50", "alphabeta": "alphabeta:depth=2", "maxmin": "maxmin:max_depth=2",
             "pool": "pool:members=random"}
    for name in agent_names(game):
        agent = make_agent(game, cheap.get(name, name))
        assert agent.game is game and agent.name == cheap.get(name, name)
        if name in ("human", "perfect"):  # human needs a person; perfect is tested with the referees
            continue
        assert game.legal_moves(state)[agent.act(state, rng)], name


def test_parse_spec_types():
    assert parse_spec("mcts") == ("mcts", {})
    assert parse_spec(" mcts : simulations=1000 , c=0.5,solver=TRUE,rollout=tactical ") == (
        "mcts", {"simulations": 1000, "c": 0.5, "solver": True, "rollout": "tactical"})
    name, kw = parse_spec("x:a=-3,b=1e-3,c=false,d=inf")
    assert kw == {"a": -3, "b": 0.001, "c": False, "d": float("inf")}
    assert type(kw["a"]) is int and type(kw["c"]) is bool


def test_specs_reach_the_constructors():
    a = make_agent("connect4", "mcts:simulations=123,c=0.7,solver=true,rollout=tactical")
    assert isinstance(a, MCTSAgent) and (a.simulations, a.c, a.solver, a.rollout) == (123, 0.7, True, "tactical")
    b = make_agent("tictactoe", "alphabeta:depth=3,evaluation=utility,tiebreak=first")
    assert isinstance(b, AlphaBetaAgent) and (b.depth, b.tiebreak) == (3, "first")
    assert isinstance(make_agent("connect4", "maxmin"), MaxMinAgent)
    assert make_agent("connect4", "maxmin").max_depth == 5 and make_agent("tictactoe", "maxmin").max_depth == 4
    flip = make_agent("conniption", "flip:max_depth=1")
    assert (flip.evaluation, flip.max_depth) == ("flip", 1)
    assert make_agent("conniption", "conniption_random").evaluation == "random"
    assert make_agent("dots_and_boxes_3x3", "advanced:double_weight=false").double_weight is False
    assert type(make_agent("conniption", "tactical")).__name__ == "TacticalConniptionAgent"
    assert type(make_agent("connect4", "tactical")).__name__ == "TacticalAgent"


def test_keys():
    assert agent_keys("tictactoe", "mcts") == ["simulations", "c", "solver", "rollout", "kernel"]
    assert agent_keys("connect4", "alphabeta") == ["depth", "evaluation", "tiebreak"]
    assert agent_keys("conniption", "sols") == ["max_depth"]
    assert agent_keys("tictactoe", "human") == [] and agent_keys("tictactoe", "perfect") == []


@pytest.mark.parametrize(
    "game_id, spec, message",
    [
        ("tictactoe", "nope", "unknown agent 'nope'; agents for tictactoe: random, semirandom, tactical, alphabeta"),
        ("conniption", "maxmin", "agent 'maxmin' does not play conniption (it plays tictactoe, connect4); agents for"),
        ("dots_and_boxes_4x4", "perfect", "agent 'perfect' does not play dots_and_boxes_4x4 (it plays tictactoe, "
                                          "connect4, dots_and_boxes up to 24 edges (3x3, 2x4, 1x7))"),
        ("tictactoe", "moderate", "agent 'moderate' does not play tictactoe (it plays dots_and_boxes_RxC)"),
        ("tictactoe", "mcts:sims=5", "agent 'mcts' has no key 'sims'; keys: simulations, c, solver, rollout, kernel"),
        ("tictactoe", "random:seed=1", "agent 'random' has no key 'seed'; keys: none"),
        ("tictactoe", "mcts:simulations", "'simulations' is not key=value"),
        ("tictactoe", "mcts:c=1,c=2", "key 'c' given twice"),
        ("tictactoe", "mcts:simulations=-5", "simulations must be an integer >= 1, got -5"),
        ("tictactoe", "alphabeta:evaluation=sols", "unknown evaluation 'sols' for tictactoe; choices: utility, line"),
        ("tictactoe", "", "an agent spec must be a non-empty string"),
    ],
)
def test_errors_are_one_line_and_name_the_choices(game_id, spec, message):
    with pytest.raises(AgentSpecError) as info:
        make_agent(game_id, spec)
    assert message in str(info.value)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, BoardRLError)


def test_unknown_game():
    with pytest.raises(BoardRLError, match="unknown game 'chess'"):
        make_agent("chess", "random")
    with pytest.raises(BoardRLError, match="expected a Game or a game id"):
        agent_names(42)


def test_imports_are_lazy():
    """Building a tic-tac-toe agent loads no other game's agent module (a broken one could not stop it)."""
    code = (
        "import sys; from boardrl.agents import make_agent; "
        "make_agent('tictactoe', 'random'); "
        "print(sorted(m for m in sys.modules if m.startswith('boardrl.agents.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = eval(out)
    assert "boardrl.agents.conniption" not in loaded and "boardrl.agents.dots_and_boxes" not in loaded
    assert "boardrl.agents.mcts" not in loaded and "boardrl.agents.alphabeta" not in loaded


@pytest.mark.parametrize("game_id", sorted(EXPECTED))
def test_agents_pickle_for_worker_processes(game_id):
    """The match runner pickles agents into worker processes: each copy plays exactly like the original."""
    game = make_game(game_id)
    rng = np.random.default_rng(4)
    state = game.initial_state()
    for _ in range(5):
        state = game.play(state, int(rng.choice(game.legal_actions(state))))
    cheap = {"mcts": "mcts:simulations=60", "alphabeta": "alphabeta:depth=2", "maxmin": "maxmin:max_depth=2",
             "pool": "pool:members=random"}
    for name in agent_names(game):
        if name in ("human", "perfect"):
            continue
        agent = make_agent(game, cheap.get(name, name))
        copy = pickle.loads(pickle.dumps(agent))
        assert copy.name == agent.name
        assert copy.act(state, np.random.default_rng(1)) == agent.act(state, np.random.default_rng(1)), name


def test_perfect_agent_pickles_without_its_referee_tables():
    agent = make_agent("connect4", "perfect")
    state = agent.game.replay("6542311126574576")  # solved in well under a second
    move = agent.act(state, np.random.default_rng(0))
    assert agent._referee is not None
    copy = pickle.loads(pickle.dumps(agent))
    assert copy._referee is None and len(pickle.dumps(agent)) < 10_000
    assert copy.act(state, np.random.default_rng(0)) == move
