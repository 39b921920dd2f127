"""PettingZoo AEC environments: PettingZoo's own api_test and seed_test, and agreement with the boardrl rules.

Why both: api_test proves the environments speak PettingZoo (so third-party agents and libraries work), but
it only plays random moves and checks shapes; the shadow-game loops below prove the environments tell the
*truth* about each game (masks, the agent to act, extra turns, final rewards, observations) by replaying the
same actions on the plain boardrl ``Game``.
"""

from __future__ import annotations

import pickle
import warnings
from typing import Any

import numpy as np
import pytest

pytest.importorskip(
    "pettingzoo",
    reason="needs the optional 'interop' extra (pip install 'boardrl[interop]'; `make test` installs it via dev)",
)

from pettingzoo.test import api_test, seed_test  # noqa: E402

from boardrl.games import GAME_IDS, BoardRLError, Game, IllegalMoveError, make_game  # noqa: E402
from boardrl.games.conniption import Conniption  # noqa: E402
from boardrl.interop.pettingzoo import AGENTS, env, observer_planes, raw_env  # noqa: E402

#: Random games per id for the shadow-game check: many for the small games, fewer for the long ones.
N_GAMES = {"tictactoe": 60, "connect4": 25, "dots_and_boxes_2x2": 60, "dots_and_boxes_3x3": 25, "conniption": 10}


#: The only warnings api_test may give.  It whitelists its own classic envs by name for dict observations
#: (exactly what classic board games use), and an empty board is a legitimately all-zero observation.
ALLOWED_API_WARNINGS = (
    "Observation is not a NumPy array",
    "Observation space for each agent probably should be gymnasium.spaces.box or gymnasium.spaces.discrete",
    "Observation numpy array is all zeros.",
    "Action mask numpy array is all zeros (no legal actions).",
)


def test_game_ids_are_covered():
    assert set(N_GAMES) == set(GAME_IDS)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_pettingzoo_api_test_passes(game_id):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(env(game_id), num_cycles=300)
        api_test(env(game_id, render_mode="ansi"), num_cycles=50)
    assert {str(w.message) for w in caught} <= set(ALLOWED_API_WARNINGS)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_pettingzoo_seed_test_passes(game_id):
    seed_test(lambda: env(game_id), num_cycles=200)


def _play_episode(e: Any, game, rng: np.random.Generator) -> dict[str, Any]:
    """Play one random game through ``e`` (wrapped) while replaying it on ``game``; check every step.

    Returns the actions, the final rewards each agent saw in ``last()`` and how many extra turns happened.
    """
    state = game.initial_state()
    actions: list[int] = []
    final_reward: dict[str, float] = {}
    extra_turns = 0
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, info = e.last()
        assert truncated is False and info == {}
        if terminated:
            assert game.is_over(state)
            final_reward[agent] = reward
            e.step(None)
            continue
        player = game.to_move(state)
        assert agent == AGENTS[player] == e.agent_selection
        assert reward == 0.0
        legal = game.legal_moves(state)
        assert obs["action_mask"].dtype == np.int8
        assert np.array_equal(obs["action_mask"], legal.astype(np.int8))
        assert np.array_equal(obs["observation"], game.encode(state))
        other = e.observe(AGENTS[1 - player])
        assert not other["action_mask"].any()  # only the agent to act gets legal moves
        action = int(rng.choice(np.flatnonzero(legal)))
        actions.append(action)
        e.step(action)
        state = game.play(state, action)
        assert np.array_equal(np.asarray(e.unwrapped.game_state), np.asarray(state))
        if not game.is_over(state) and game.to_move(state) == player:
            extra_turns += 1
            assert e.agent_selection == agent  # the same agent moves again
    assert game.is_over(state) and e.agents == []
    return {"actions": actions, "final_reward": final_reward, "returns": game.returns(state), "extra": extra_turns}


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_random_games_agree_with_the_rules(game_id):
    game = make_game(game_id)
    e = env(game_id)
    rng = np.random.default_rng(2024)
    extra = 0
    outcomes = set()
    for _ in range(N_GAMES[game_id]):
        e.reset(seed=int(rng.integers(1 << 31)))
        ep = _play_episode(e, game, rng)
        assert ep["final_reward"] == {a: ep["returns"][i] for i, a in enumerate(AGENTS)}
        extra += ep["extra"]
        outcomes.add(ep["returns"])
    assert len(outcomes) >= 2  # wins for both sides or draws: rewards are not all the same by accident
    if game_id.startswith("dots_and_boxes") or game_id == "conniption":
        assert extra > 0  # extra turns (boxes) and stage-moves (conniption) were exercised
    else:
        assert extra == 0


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_reset_with_a_seed_is_reproducible(game_id):
    def trajectory(e: Any, seed: int) -> list[tuple]:
        e.reset(seed=seed)
        rng = np.random.default_rng(seed)
        out = []
        for agent in e.agent_iter():
            obs, reward, terminated, truncated, _ = e.last()
            out.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, terminated))
            e.step(None if terminated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        return out

    e1, e2 = env(game_id), env(game_id)
    first = trajectory(e1, 7)
    assert trajectory(e1, 7) == first  # same env again, after a finished game
    assert trajectory(e2, 7) == first  # a fresh env
    # a reset mid-game starts over from the initial position
    e1.reset(seed=3)
    e1.step(int(np.flatnonzero(e1.last()[0]["action_mask"])[0]))
    e1.reset(seed=7)
    assert e1.unwrapped.game_state == make_game(game_id).initial_state()
    assert e1.agents == list(AGENTS) and e1.agent_selection == "player_0"


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_spaces(game_id):
    game = make_game(game_id)
    e = env(game_id)
    e.reset()
    for a in AGENTS:
        assert e.action_space(a).n == game.num_actions
        box = e.observation_space(a)["observation"]
        assert box.shape == tuple(game.encoding_shape) and box.dtype == np.float32
        assert e.observation_space(a)["action_mask"].shape == (game.num_actions,)
        assert e.observation_space(a).contains(e.observe(a))


# ---------------------------------------------------------------------------------------------- perspective
def _random_states(game, rng: np.random.Generator, n: int) -> list:
    """States met along random games, finished ones included."""
    out = []
    while len(out) < n:
        s = game.initial_state()
        out.append(s)
        while not game.is_over(s):
            s = game.play(s, int(rng.choice(game.legal_actions(s))))
            out.append(s)
    return out


@pytest.mark.parametrize("game_id, mover_field", [("dots_and_boxes_3x3", "to_move"), ("conniption", "player")])
def test_non_mover_observes_the_encoding_of_its_own_side(game_id, mover_field):
    # These games store the player to move, so the other player's view is simply the encoding of the same
    # position with that field exchanged: an independent check of observer_planes.
    game = make_game(game_id)
    e = raw_env(game_id)
    for s in _random_states(game, np.random.default_rng(1), 300):
        e.game_state = s
        mover = game.to_move(s)
        other = s._replace(**{mover_field: 1 - mover})
        assert np.array_equal(e.observe(AGENTS[mover])["observation"], game.encode(s))
        assert np.array_equal(e.observe(AGENTS[1 - mover])["observation"], game.encode(other))


def test_tictactoe_plane_zero_is_always_the_observers_stones():
    e = raw_env("tictactoe")
    e.reset()
    e.step(4)  # X (player_0) takes the centre
    e.step(0)  # O (player_1) takes the top-left corner
    for agent, own, opp in (("player_0", 4, 0), ("player_1", 0, 4)):
        planes = e.observe(agent)["observation"].reshape(2, 9)
        assert planes[0].nonzero()[0].tolist() == [own] and planes[1].nonzero()[0].tolist() == [opp]


def test_connect4_plane_zero_is_always_the_observers_stones():
    e = raw_env("connect4")
    e.reset()
    e.step(3)  # player_0: column 4, bottom row (row index 0 = bottom)
    for agent, own, opp in (("player_0", 1, 0), ("player_1", 0, 1)):
        planes = e.observe(agent)["observation"]
        assert (planes[0, 0, 3], planes[1, 0, 3]) == (own, opp) and planes.sum() == 1


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_observer_planes_is_a_permutation_and_an_involution(game_id):
    game = make_game(game_id)
    perm = np.asarray(observer_planes(game))
    assert sorted(perm.tolist()) == list(range(game.encoding_shape[0]))
    assert np.array_equal(perm[perm], np.arange(len(perm)))  # swapping twice gives the mover's view back


def test_unknown_game_class_is_refused():
    # A new Game subclass (abstract methods stubbed) that observer_planes has no table for.
    stubs: dict[str, Any] = {name: (lambda *args: None) for name in Game.__abstractmethods__}
    other = type("Other", (Game,), {**stubs, "game_id": "other"})()
    with pytest.raises(BoardRLError, match="observer-perspective"):
        raw_env(other)


# ---------------------------------------------------------------------------------------------- illegal actions
def test_raw_env_raises_on_an_illegal_action_and_changes_nothing():
    e = raw_env("tictactoe")
    e.reset()
    e.step(4)
    before = (e.game_state, e.agent_selection, dict(e._cumulative_rewards))
    with pytest.raises(IllegalMoveError, match="illegal"):
        e.step(4)  # the centre is taken
    with pytest.raises(IllegalMoveError):
        e.step(9)  # outside the action space
    assert (e.game_state, e.agent_selection, dict(e._cumulative_rewards)) == before


def test_wrapped_env_ends_the_game_on_an_illegal_action_as_classic_envs_do():
    e = env("connect4")
    e.reset()
    for a in (0, 0, 0, 0, 0, 0):  # column 1 is full now
        e.step(a)
    e.step(0)  # illegal for player_0
    assert all(e.terminations.values())
    assert e._cumulative_rewards == {"player_0": -1.0, "player_1": 0.0}
    rewards = {}
    for agent in e.agent_iter():
        rewards[agent] = e.last()[1]
        e.step(None)
    assert rewards == {"player_0": -1.0, "player_1": 0.0}


def test_wrapped_env_asserts_actions_in_bounds():
    e = env("tictactoe")
    e.reset()
    with pytest.raises(AssertionError):
        e.step(9)


# ---------------------------------------------------------------------------------------------- misc
def test_render_modes(capsys):
    game = make_game("dots_and_boxes_2x2")
    e = env("dots_and_boxes_2x2", render_mode="ansi")
    e.reset()
    assert e.render() == game.render(game.initial_state())
    h = env("dots_and_boxes_2x2", render_mode="human")
    h.reset()
    h.step(0)
    assert game.render(game.play(game.initial_state(), 0)) in capsys.readouterr().out
    n = raw_env("tictactoe")
    with pytest.warns(UserWarning, match="render_mode"):
        assert n.render() is None
    n.close()
    with pytest.raises(BoardRLError, match="render_mode"):
        raw_env("tictactoe", render_mode="rgb_array")


def test_a_game_instance_and_pickling():
    e = env(Conniption(seed_draw_rule=True))
    e.reset()
    assert e.unwrapped.game.seed_draw_rule is True
    assert str(e.unwrapped) == "boardrl_conniption_v0"
    clone = pickle.loads(pickle.dumps(raw_env("connect4")))
    clone.reset()
    assert clone.game.game_id == "connect4"
    with pytest.raises(BoardRLError, match="unknown game"):
        raw_env("chess")
