"""Reference system 002's DQ against a second learning DQ: two independent players, the seats, one update per game
end and seat for each, the saved model is player one's (in a fresh process too), the seed's defaults, one-line errors.

Resume identity (kill, resume, curve points, checkpoint periods) is the registry-wide test's
(tests/learn/test_training_invariance.py), which covers this learner through its ``small_run``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from boardrl.agents import make_agent
from boardrl.agents.network import NetworkAgent
from boardrl.games import make_game
from boardrl.learn import LearnError, learner_params_model, learner_unit, load_agent, make_learner
from boardrl.learn.dqn import DQNLearner
from boardrl.learn.seed002_dq_pair import player_seats, second_seed

TTT = make_game("tictactoe")
TINY_NET = {"body": "mlp", "hidden": [16], "head": "dueling"}
ROOT = Path(__file__).resolve().parents[2]


def tiny(**over) -> dict:
    """A run of a second or two: a small net that learns from the first stored transition."""
    return {"games": 12, "batch_size": 1, "buffer_size": 500, "target_every": 5, "device": "cpu",
            "network": TINY_NET, **over}


def watched_learner(events: list[tuple]) -> object:
    """A learner whose players log ("move", player, mover), ("end", player) and ("step", player) as they happen."""
    learner = make_learner("seed002_dq_pair")

    def setup(game, params, seed, opponent):
        type(learner).setup(learner, game, params, seed, opponent)
        for k, player in enumerate(learner.players):
            moves, ends, steps = player._learner_moves, player._finish_games, player._gradient_step

            def move(rows, states, mover, sums, counts, k=k, moves=moves):
                events.append(("move", k, int(mover[0])))
                return moves(rows, states, mover, sums, counts)

            def end(finished, returns, k=k, ends=ends):
                events.append(("end", k))
                return ends(finished, returns)

            def step(k=k, steps=steps):
                events.append(("step", k))
                return steps()

            player._learner_moves, player._finish_games, player._gradient_step = move, end, step

    learner.setup = setup  # type: ignore[method-assign]
    return learner


def by_game(events: list[tuple]) -> list[list[tuple]]:
    """The events split into games: each game's moves, then its two ends with the steps they brought."""
    games, current, ended = [], [], False
    for e in events:
        if e[0] == "move" and ended:
            games.append(current)
            current, ended = [], False
        ended = ended or e[0] == "end"
        current.append(e)
    return games + [current]


# ---------------------------------------------------------------------------------------------- seats and updates
def test_seats_alternate_with_the_opponent_first_in_even_games(tmp_path):
    assert [player_seats(g) for g in range(4)] == [(1, 0), (0, 1), (1, 0), (0, 1)]
    events: list[tuple] = []
    learner = watched_learner(events)
    learner.train(TTT, tiny(games=10), seed=1, checkpoint_dir=tmp_path / "ck", eval_points=[])
    games = by_game(events)
    assert len(games) == 10
    for index, game in enumerate(games):
        moves = [e for e in game if e[0] == "move"]
        assert moves[0][1] == (1 if index % 2 == 0 else 0)  # player two opens the even games
        assert [k for _, k, _ in moves] == [moves[0][1], 1 - moves[0][1]] * (len(moves) // 2) + \
            [moves[0][1]] * (len(moves) % 2)  # the players take turns
        seats = player_seats(index)
        assert all(mover == seats[k] for _, k, mover in moves)  # each moves only in its own seat


def test_each_player_takes_exactly_one_update_per_game_end_for_its_own_seat(tmp_path):
    events: list[tuple] = []
    learner = watched_learner(events)
    learner.train(TTT, tiny(games=10), seed=2, checkpoint_dir=tmp_path / "ck", eval_points=[])
    for game in by_game(events):
        first_end = next(i for i, e in enumerate(game) if e[0] == "end")
        assert not any(e[0] == "step" for e in game[:first_end])  # nothing is learned during a game
        assert game[first_end:] == [("end", 0), ("step", 0), ("end", 1), ("step", 1)]
    one, two = (p.counters for p in learner.players)
    assert one["grad_steps"] == two["grad_steps"] == one["games_done"] == two["games_done"] == 10
    # self-play with one object gives two updates a game (the seed's "self-play"); here each player has its own one
    assert one["env_steps"] + two["env_steps"] == sum(1 for e in events if e[0] == "move")


def test_with_update_on_env_steps_each_player_learns_from_its_own_moves(tmp_path):
    learner = make_learner("seed002_dq_pair")
    learner.train(TTT, tiny(games=6, update_on="env_steps"), seed=3, checkpoint_dir=tmp_path / "ck",
                  eval_points=[])
    for player in learner.players:
        c = player.counters
        # one step per own move once a transition is stored: every move but the first (nothing stored yet)
        assert c["grad_steps"] == c["env_steps"] - 1


# ---------------------------------------------------------------------------------------------- independence
def test_the_two_players_are_independent(tmp_path):
    learner = make_learner("seed002_dq_pair")
    params = learner.check_params(tiny(games=20))
    learner.train(TTT, params, seed=4, checkpoint_dir=tmp_path / "ck", eval_points=[])
    one, two = learner.players
    assert one is not two and one.online is not two.online and one.buffer is not two.buffer
    assert one.opt is not two.opt and one.target is not two.target and one.rng is not two.rng
    w1, w2 = one.online.state_dict(), two.online.state_dict()
    assert not all(torch.equal(w1[k], w2[k]) for k in w1)
    # each replay holds its own player's decisions only: one transition per move, one terminal per game
    for p in (one, two):
        assert len(p.buffer) == p.counters["env_steps"] and int(p.buffer.arrays["done"][:len(p.buffer)].sum()) == 20
        live = ~p.buffer.arrays["done"][:len(p.buffer)]
        assert p.buffer.arrays["same_mover"][:len(p.buffer)][live].all()  # s' is the player's own next turn
    assert one.counters["grad_steps"] == two.counters["grad_steps"] == 20
    assert one.epsilon() == two.epsilon() < 1.0  # each decays in its own updates (equal counts here)
    # player one starts as a dqn run with the run's seed; player two from its own seed
    fresh = DQNLearner()
    fresh.setup(TTT, params.player_params(), 4, None)
    again = make_learner("seed002_dq_pair")
    again.setup(TTT, params, 4, None)
    init1, init2 = again.players[0].online.state_dict(), again.players[1].online.state_dict()
    assert all(torch.equal(fresh.online.state_dict()[k], init1[k]) for k in init1)
    assert not all(torch.equal(init1[k], init2[k]) for k in init1)
    assert second_seed(4) != 4 and second_seed(4) == second_seed(4)


# ---------------------------------------------------------------------------------------------- the saved model
def test_the_saved_model_is_player_ones_and_a_fresh_process_loads_it(tmp_path):
    learner = make_learner("seed002_dq_pair")
    agent = learner.train(TTT, tiny(), seed=5, checkpoint_dir=tmp_path / "ck", eval_points=[])
    assert isinstance(agent, NetworkAgent) and agent.kind == "network" and agent.name == "seed002_dq_pair"
    saved = agent.network.state_dict()
    for k, w in learner.players[0].online.state_dict().items():
        assert torch.equal(saved[k], w)
    assert not all(torch.equal(saved[k], w) for k, w in learner.players[1].online.state_dict().items())
    assert agent.stats["one_grad_steps"] == agent.stats["two_grad_steps"] == 12
    agent.save(tmp_path / "m")
    rows = np.stack([np.asarray(TTT.initial_state(), dtype=np.int64),
                     np.asarray(TTT.play(TTT.initial_state(), 4), dtype=np.int64)])
    here = agent.action_scores_batch(rows)
    assert np.array_equal(load_agent(TTT, "seed002_dq_pair", tmp_path / "m").action_scores_batch(rows), here)
    script = ("import sys, json, numpy as np; from boardrl.agents.learned import load_agent; "
              "from boardrl.games import make_game; g = make_game('tictactoe'); "
              "a = load_agent(g, 'seed002_dq_pair', sys.argv[1]); rows = np.array(json.loads(sys.argv[2])); "
              "print(json.dumps([type(a).__name__, a.meta['games'], a.action_scores_batch(rows).tolist()]))")
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "m"), json.dumps(rows.tolist())],
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    name, games, scores = json.loads(out.stdout)
    assert name == "NetworkAgent" and games == 12 and np.array_equal(np.asarray(scores, dtype=np.float32), here)


# ---------------------------------------------------------------------------------------------- params
def test_defaults_are_the_systems_dqplayer_and_the_full_profile_uses_them():
    params = learner_params_model("seed002_dq_pair")()
    assert learner_unit("seed002_dq_pair") == "games" and params.games == 200_000
    full = yaml.safe_load((ROOT / "profiles" / "full.yaml").read_text(encoding="utf-8"))["experiments"]
    # the seed-002 settings of the neighbours' anchor are the defaults, apart from their budget and opponent
    anchor = {k: v for k, v in full["tictactoe_seed002_dqn_vs_random"]["params"].items()
              if k not in ("steps", "opponent", "checkpoint_every", "threads")}
    defaults = params.model_dump(mode="json")
    assert {k: defaults[k] for k in anchor} == anchor
    exp = full["tictactoe_seed002_dqn_vs_second_dq"]
    assert exp["learner"] == "seed002_dq_pair" and exp["game"] == "tictactoe"
    ours = learner_params_model("seed002_dq_pair")(**exp["params"])
    assert ours.games == 200_000 and ours.model_dump(exclude={"threads"}) == params.model_dump(exclude={"threads"})


@pytest.mark.parametrize("params, match", [
    ({"steps": 5000}, "budget is `games`"),
    ({"opponent": "random"}, "second learning DQ"),
    ({"opponents": ["random"], "opponent_share": 0.5}, "league games"),
    ({"parallel_envs": 4}, "parallel_envs must be 1"),
    ({"starts": "uci"}, "initial position"),
    ({"lr_end": 1e-4}, "lr_end"),
    ({"games": 0}, "games"),
    ({"network": "nope"}, "network"),
    ({"learner_seat": "first"}, "learner_seat"),
])
def test_bad_params_are_one_line_errors(tmp_path, params, match):
    with pytest.raises(LearnError, match=match) as err:
        make_learner("seed002_dq_pair").train(TTT, {"games": 2, **params}, seed=0, checkpoint_dir=tmp_path / "ck",
                                              eval_points=[])
    assert "\n" not in str(err.value) and str(err.value).startswith("seed002_dq_pair")


def test_bad_game_settings_and_an_opponent_are_one_line_errors(tmp_path):
    kw = {"seed": 0, "checkpoint_dir": tmp_path / "ck", "eval_points": []}
    net = {"body": "mlp", "hidden": [8], "head": "policy_value"}
    with pytest.raises(LearnError, match="seed002_dq_pair: dqn needs a q or dueling head") as err:
        make_learner("seed002_dq_pair").train(TTT, {"games": 2, "network": net}, **kw)
    assert "\n" not in str(err.value)
    with pytest.raises(LearnError, match="takes no opponent"):
        make_learner("seed002_dq_pair").train(TTT, tiny(games=1), opponent=make_agent(TTT, "random"), **kw)
