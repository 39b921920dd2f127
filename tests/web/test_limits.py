"""Bounded work in ``boardrl serve``: oversized searches are 400s, models load only from the project, slow waits
never hold up a cheap request, and a runaway opponent is stopped."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

from boardrl.paths import ExperimentPaths
from boardrl.games import make_game
from boardrl.learn import make_learner
from helpers import REPO_ROOT
from web.test_app import assert_error

TTT = make_game("tictactoe")


@pytest.fixture(scope="module")
def outside_model(tmp_path_factory):
    """A tic-tac-toe model saved outside the project (a few seconds of Q-learning)."""
    folder = tmp_path_factory.mktemp("models")
    paths = ExperimentPaths(folder, "ttt_q")
    agent = make_learner("tabular_q").train(TTT, {"games": 2_000}, seed=0, checkpoint_dir=paths.checkpoint(0),
                                            eval_points=[])
    agent.save(paths.model(0))
    return folder, paths.model(0)


@pytest.mark.parametrize("opponent, fragment", [
    ("mcts:simulations=2000000000", "simulations is at most 100,000"),
    ("mcts:simulations=100000000", "simulations is at most 100,000"),
    ("puct:simulations=1000000", "simulations is at most 10,000"),
    ("alphabeta:depth=1000", "depth is at most 64"),
    ("model:tictactoe_alphazero,simulations=2000000000", "simulations is at most 10,000"),
])
def test_oversized_searches_are_400_not_500(server, opponent, fragment):
    answer = server.get("/api/agent", game="tictactoe", opponent=opponent)
    assert_error(answer, 400, fragment)
    assert server.get("/api/agent", game="tictactoe", opponent="random")[0] == 200  # the agents process is fine


def test_models_outside_the_project_are_refused(server, outside_model):
    folder, model = outside_model
    for target in (model, "/etc", f"{REPO_ROOT}/../{model.name}", "../outside"):
        assert_error(server.get("/api/agent", game="tictactoe", opponent=f"model:{target}"), 403,
                     "--allow-model-path")


def test_allow_model_path_serves_models_there(start_server, outside_model):
    folder, model = outside_model
    with start_server("--allow-model-path", str(folder)) as srv:
        code, body, raw = srv.get("/api/agent", game="tictactoe", moves="5", opponent=f"model:{model}")
        assert code == 200, raw
        assert TTT.parse_move(body["move"]) in TTT.legal_actions(TTT.replay("5"))
        elsewhere = srv.get("/api/agent", game="tictactoe", opponent=f"model:{folder.parent}/x")
        assert_error(elsewhere, 403, "--allow-model-path")


def early_connect4_positions(n: int) -> list[str]:
    """``n`` distinct unfinished 9-ply Connect 4 move strings (just past the opening book: each takes the referee
    0.1-1.5 s, so a lane cannot answer them all within a few seconds)."""
    game, rng, out = make_game("connect4"), np.random.default_rng(7), []
    while len(out) < n:
        state, moves = game.initial_state(), ""
        for _ in range(9):
            move = int(rng.choice(game.legal_actions(state)))
            state, moves = game.play(state, move), moves + str(move + 1)
            if game.is_over(state):
                break
        if not game.is_over(state) and moves not in out and len(moves) == 9:
            out.append(moves)
    return out


def test_many_slow_waits_do_not_hold_up_a_cheap_request(start_server):
    """60 requests waiting for the referee (the issue's load) hold no request threads: a cheap request is
    answered at once while they wait; past ``--max-waiters`` a request is a quick 503 with ``Retry-After``."""
    max_wait, waiters = 5.0, 40
    with start_server("--max-wait", str(max_wait), "--max-waiters", str(waiters)) as srv:
        def slow(moves: str) -> tuple[int, float, Any]:
            start = time.monotonic()
            code, _, raw, headers = srv.get_with_headers("/api/referee", game="connect4", moves=moves, wait=max_wait)
            return code, time.monotonic() - start, headers

        with ThreadPoolExecutor(60) as pool:
            futures = [pool.submit(slow, m) for m in early_connect4_positions(60)]
            time.sleep(1.0)  # all 60 have arrived and wait
            start = time.monotonic()
            code, body, raw = srv.get("/api/position", game="tictactoe", moves="51")
            cheap_s = time.monotonic() - start
            results = [f.result() for f in futures]
        assert code == 200 and body["moves"] == "51", raw
        assert cheap_s < max_wait / 2, f"a cheap request took {cheap_s:.1f} s under 60 waiting requests"
        codes = [c for c, _, _ in results]
        assert set(codes) <= {200, 202, 503}, codes
        assert codes.count(202) >= 10, codes  # many waited the whole time: the cheap one came while they waited
        refused = [(s, h) for c, s, h in results if c == 503]
        assert refused and all(s < max_wait / 2 and h.get("Retry-After") == "1" for s, h in refused), \
            [s for s, _ in refused]
        assert_error(srv.get("/api/referee", game="tictactoe", wait=max_wait + 1), 400, "wait: at most 5")


def test_a_runaway_opponent_is_stopped_and_the_next_one_plays(start_server):
    timeout = 5.0
    with start_server("--agent-timeout", str(timeout)) as srv:
        assert srv.get("/api/agent", game="connect4", opponent="random")[0] == 200  # the agents process is up
        start = time.monotonic()
        answer = srv.get_with_headers("/api/agent", game="connect4", opponent="alphabeta:depth=40")
        assert_error(answer[:3], 503, "within 5 s")
        assert time.monotonic() - start < timeout + 10 and answer[3].get("Retry-After") == "1"
        code, body, raw = srv.get("/api/agent", game="connect4", moves="4", opponent="random")
        assert code == 200, raw


def test_cli_serve_passes_the_limits_and_checks_the_model_paths(monkeypatch, tmp_path):
    import boardrl.web
    from typer.testing import CliRunner

    from boardrl.cli import app as cli

    calls = []
    monkeypatch.setattr(boardrl.web, "serve", lambda **kw: calls.append(kw))
    res = CliRunner().invoke(cli, ["serve", "--allow-model-path", str(tmp_path), "--max-wait", "3",
                                   "--max-waiters", "7", "--agent-timeout", "9"])
    assert res.exit_code == 0, res.output
    assert calls[-1] == {"host": "127.0.0.1", "port": 8000, "model_paths": [tmp_path], "max_wait_s": 3.0,
                         "max_waiters": 7, "agent_timeout_s": 9.0}
    res = CliRunner().invoke(cli, ["serve", "--allow-model-path", str(tmp_path / "nothing")])
    assert res.exit_code == 2 and res.stderr.startswith("error: --allow-model-path") and len(calls) == 1
