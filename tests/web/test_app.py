"""``boardrl serve`` over HTTP: answers, one-line JSON errors with 4xx, legal agent replies, referee values, binding."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import boardrl.web
from boardrl.cli import app as cli
from boardrl.solvers.registry import make_referee
from boardrl.web.jobs import ABANDON_S
from boardrl.web.positions import game_for, parse_actions


def assert_error(answer, status: int, *fragments: str) -> str:
    """A 4xx whose body is exactly one line of JSON, ``{"error": "..."}``, containing ``fragments``."""
    code, body, raw = answer
    assert code == status, raw
    assert set(body) == {"error"} and "\n" not in raw.strip(), raw
    for f in fragments:
        assert f in body["error"], body["error"]
    return body["error"]


def test_page_and_its_files_are_served(server):
    import urllib.request

    for path, kind in [("/", "text/html"), ("/static/play.js", "javascript"), ("/static/play.css", "text/css")]:
        with urllib.request.urlopen(server.base + path, timeout=30) as r:
            assert r.status == 200 and kind in r.headers["content-type"]
            assert len(r.read()) > 500


def test_games_lists_every_game_with_its_opponents(server):
    code, body, _ = server.get("/api/games")
    assert code == 200
    games = {g["id"]: g for g in body["games"]}
    assert list(games) == ["tictactoe", "connect4", "dots_and_boxes_2x2", "dots_and_boxes_3x3", "conniption"]
    assert "perfect" in games["connect4"]["opponents"] and "human" not in games["connect4"]["opponents"]
    assert games["connect4"]["referee"] and not games["conniption"]["referee"]
    assert all(m.startswith("model:") for g in games.values() for m in g["models"])
    code, body, _ = server.get("/api/games", extra="dots_and_boxes_4x4")
    extra = body["games"][-1]
    assert extra["id"] == "dots_and_boxes_4x4" and not extra["referee"]


def test_position_replays_the_move_string(server):
    code, body, _ = server.get("/api/position", game="connect4", moves="4,4 5")
    assert code == 200 and body["moves"] == "445" and body["to_move"] == 1 and body["plies"] == 3
    code, body, _ = server.get("/api/position", game="connect4", moves="445", play="3")
    assert code == 200 and body["moves"] == "4453" and body["history"][-1] == {
        "ply": 4, "player": 1, "move": "3", "after": "4453"}


@pytest.mark.parametrize("params, fragments", [
    ({"game": "connect4", "moves": "111111", "play": "1"}, ["column 1 is full", "legal columns: 2 3 4 5 6 7"]),
    ({"game": "connect4", "moves": "1111111"}, ["move 7 of '1111111'", "column 1 is full"]),
    ({"game": "connect4", "moves": "44x"}, ["bad move 'x'"]),
    ({"game": "dots_and_boxes_2x2", "moves": "0,0"}, ["move 2 of '0,0'", "illegal"]),
    ({"game": "chess"}, ["unknown game 'chess'", "connect4"]),
    ({}, ["game", "required"]),
    ({"game": "tictactoe", "moves": "5", "play": "55"}, ["expected one move"]),
])
def test_bad_positions_are_400_with_one_line(server, params, fragments):
    assert_error(server.get("/api/position", **params), 400, *fragments)


@pytest.mark.parametrize("params, fragments", [
    ({"game": "connect4", "opponent": "nobody"}, ["unknown agent 'nobody'", "perfect"]),
    ({"game": "connect4", "opponent": "mcts:simulations=lots,depth=3"}, ["mcts"]),
    ({"game": "connect4", "opponent": "moderate"}, ["does not play connect4"]),
    ({"game": "connect4", "opponent": "human"}, ["terminal", "pick an opponent"]),
    ({"game": "connect4", "opponent": "model:no_such_experiment"}, ["no_such_experiment"]),
    ({"game": "connect4", "opponent": ""}, ["name an opponent"]),
    ({"game": "tictactoe", "opponent": "random", "moves": "14253"}, ["game is over"]),
    ({"game": "tictactoe", "opponent": "random", "seed": "-1"}, ["seed"]),
    ({"game": "connect4", "opponent": "random", "moves": "8"}, ["bad move '8'"]),
])
def test_bad_agent_requests_are_400_with_one_line(server, params, fragments):
    assert_error(server.get("/api/agent", **params), 400, *fragments)


def test_unknown_paths_and_bad_waits_are_json_too(server):
    assert_error(server.get("/api/nothing"), 404)
    assert_error(server.get("/api/referee", game="tictactoe", wait="999"), 400, "wait")


@pytest.mark.parametrize("game_id, opponent, moves", [
    ("tictactoe", "perfect", "5"),
    ("connect4", "perfect", "4444435233"),
    ("connect4", "alphabeta", ""),
    ("dots_and_boxes_2x2", "perfect", "0,1"),
    ("dots_and_boxes_3x3", "advanced", ""),
    ("conniption", "tactical", "n4n"),
])
def test_agent_replies_are_legal_and_reproducible(server, game_id, opponent, moves):
    game = game_for(game_id)
    state = game.replay(parse_actions(game, moves))
    code, body, raw = server.get("/api/agent", game=game_id, moves=moves, opponent=opponent, seed=3)
    assert code == 200, raw
    move = game.parse_move(body["move"])
    assert move in game.legal_actions(state)
    assert body["position"]["moves"] == body["position"]["history"][-1]["after"]
    assert server.get("/api/agent", game=game_id, moves=moves, opponent=opponent, seed=3)[1]["move"] == body["move"]


def test_perfect_agent_plays_an_optimal_move(server):
    game = game_for("connect4")
    state = game.replay("444443523316")
    code, body, _ = server.get("/api/agent", game="connect4", moves="444443523316", opponent="perfect")
    assert game.parse_move(body["move"]) in make_referee(game).solve(state).optimal_moves


@pytest.mark.parametrize("game_id, moves", [
    ("tictactoe", "51"),
    ("dots_and_boxes_2x2", "0,1,2,3,6,7"),
    ("connect4", "444443523316"),
])
def test_referee_endpoint_matches_the_solver(server, game_id, moves):
    game = game_for(game_id)
    state = game.replay(parse_actions(game, moves))
    code, body, raw = server.get("/api/referee", game=game_id, moves=moves, wait=30)
    assert code == 200 and body["status"] == "done", raw
    verdict = make_referee(game).solve(state)
    shown = {game.parse_move(m["move"]): m["value"] for m in body["values"]}
    assert set(shown) == set(game.legal_actions(state))
    assert sorted(game.parse_move(m) for m in body["optimal_moves"]) == sorted(verdict.optimal_moves)
    if game_id == "connect4":
        assert body["value"] == verdict.score
        assert shown == {c: s for c, s in enumerate(make_referee(game).move_scores(state)) if s is not None}
    elif game_id == "dots_and_boxes_2x2":
        assert body["value"] == verdict.margin and shown == make_referee(game).move_margins(state)
    else:
        assert body["value"] == verdict.value


def test_referee_says_when_there_is_none(server):
    code, body, _ = server.get("/api/referee", game="conniption", moves="n4n", wait=30)
    assert code == 200 and body["status"] == "unavailable" and "no referee for conniption" in body["reason"]
    code, body, _ = server.get("/api/review", game="dots_and_boxes_4x4", moves="0", wait=30)
    assert code == 200 and body["status"] == "unavailable" and "4x4" in body["reason"]


def test_a_position_left_behind_does_not_hold_up_the_next(server):
    """The empty Connect 4 board can take the referee minutes (without an opening book): once nobody asks about
    it, the referee stops and answers the position now on the board within seconds, not minutes later."""
    code, body, _ = server.get("/api/referee", game="connect4", moves="", wait=0)
    assert code in (200, 202)
    start = time.monotonic()
    code, body, raw = server.get("/api/referee", game="connect4", moves="4453322126537", wait=ABANDON_S + 25)
    assert code == 200 and body["status"] == "done", raw
    assert time.monotonic() - start < ABANDON_S + 25


def test_review_marks_each_move(server):
    code, body, raw = server.get("/api/review", game="tictactoe", moves="5263", wait=30)
    assert code == 200 and body["status"] == "done", raw
    assert [r["mark"] for r in body["review"]][:2] == ["best", "mistake"]
    assert body["review"][1]["text"] == "mistake: draw → loss"


def listening_addresses(port: int) -> list[str]:
    """Local addresses of the sockets listening on ``port`` (IPv4 and IPv6), from /proc/net."""
    out = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        path = Path(table)
        if not path.is_file():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            addr, hex_port = fields[1].rsplit(":", 1)
            if int(hex_port, 16) == port and fields[3] == "0A":  # 0A = LISTEN
                out.append(addr)
    return out


def test_server_binds_loopback_only_by_default(server):
    if not Path("/proc/net/tcp").is_file():
        pytest.skip("no /proc/net/tcp to read listening sockets from")
    assert listening_addresses(server.port) == ["0100007F"]  # 127.0.0.1, little-endian hex


def test_cli_serve_defaults_to_loopback_and_warns_otherwise(monkeypatch):
    calls = []
    monkeypatch.setattr(boardrl.web, "serve", lambda **kw: calls.append(kw))
    runner = CliRunner()
    res = runner.invoke(cli, ["serve"])
    assert res.exit_code == 0, res.output
    limits = {"model_paths": [], "max_wait_s": 30.0, "max_waiters": 100, "agent_timeout_s": 60.0}
    assert calls[-1] == {"host": "127.0.0.1", "port": 8000, **limits} and "warning" not in res.stderr
    res = runner.invoke(cli, ["serve", "--host", "0.0.0.0", "--port", "8123"])
    assert res.exit_code == 0 and calls[-1] == {"host": "0.0.0.0", "port": 8123, **limits}
    assert "warning: binding 0.0.0.0" in res.stderr
    res = runner.invoke(cli, ["serve", "--port", "0"])
    assert res.exit_code == 2 and res.stderr.startswith("error: ")

