"""The referee's disk cache: entries read back equal, damaged or foreign entries are ignored, and a restarted
``RefereeService`` answers a solved position from disk without starting a referee process."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

import boardrl.web.cache as cache_mod
from boardrl.solvers.registry import make_referee
from boardrl.web.analysis import MoveValues, move_values
from boardrl.web.cache import DiskCache, default_cache_dir
from boardrl.web.jobs import RefereeService
from boardrl.web.positions import game_for


@pytest.fixture()
def tictactoe():
    game = game_for("tictactoe")
    state = game.replay("52")
    return game, state, move_values(make_referee(game), game, state)


def test_round_trip(tmp_path, tictactoe):
    game, state, mv = tictactoe
    cache = DiskCache(tmp_path)
    assert cache.get(game, state) is None
    cache.put(game, state, mv)
    assert cache.get(game, state) == mv and cache.refused == 0
    path = cache.path(game, state)
    assert path.is_file() and path.parent.parent == tmp_path / "tictactoe"
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]  # no temporary left behind
    other = game.replay("51")
    assert cache.get(game, other) is None and cache.path(game, other) != path


def test_connect4_and_dots_entries_round_trip(tmp_path):
    cache = DiskCache(tmp_path)
    for gid, moves in (("connect4", "4444435233"), ("dots_and_boxes_2x2", "0 1")):
        game = game_for(gid)
        state = game.replay(moves)
        mv = MoveValues("score" if gid == "connect4" else "margin", {0: -4, 4: 2, 6: 0}, plies=len(moves))
        cache.put(game, state, mv)
        assert cache.get(game, state) == mv


def damage(path, edit):
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("how", ["value changed", "truncated", "not json", "another position", "other format",
                                 "resealed with a wrong key", "too large"])
def test_a_damaged_entry_is_ignored(tmp_path, tictactoe, how):
    game, state, mv = tictactoe
    cache = DiskCache(tmp_path)
    cache.put(game, state, mv)
    path = cache.path(game, state)
    if how == "value changed":  # still parses, still has every field: only its checksum tells
        damage(path, lambda d: d["values"][0].__setitem__(1, 1 - d["values"][0][1]))
    elif how == "truncated":
        path.write_bytes(path.read_bytes()[:-20])
    elif how == "not json":
        path.write_bytes(b"\x00" * 50)
    elif how == "another position":  # a whole, valid entry of another position at this one's path
        cache.put(game, game.replay("51"), mv)
        path.write_bytes(cache.path(game, game.replay("51")).read_bytes())
    elif how == "other format":
        damage(path, lambda d: d.__setitem__("format", 99))
    elif how == "resealed with a wrong key":  # a consistent checksum over the wrong game
        def edit(d):
            d["game"] = "connect4"
            del d["sha256"]
            d["sha256"] = cache_mod.hashlib.sha256(cache_mod._canonical(d)).hexdigest()
        damage(path, edit)
    else:
        path.write_bytes(b" " * (cache_mod.MAX_ENTRY_BYTES + 1))
    assert cache.get(game, state) is None
    assert cache.refused == 1


def test_entries_of_other_solver_code_are_not_read(tmp_path, tictactoe, monkeypatch):
    game, state, mv = tictactoe
    cache = DiskCache(tmp_path)
    cache.put(game, state, mv)
    monkeypatch.setattr(cache_mod, "code_fingerprint", lambda g: "0" * 64)
    assert cache.get(game, state) is None  # another key: the old entry is never looked at


def test_a_failed_write_costs_only_the_cache(tmp_path, tictactoe):
    game, state, mv = tictactoe
    blocker = tmp_path / "file"
    blocker.write_text("")
    cache = DiskCache(blocker)  # a directory that cannot be made
    cache.put(game, state, mv)
    assert cache.write_errors == 1 and cache.get(game, state) is None


def test_default_directory_is_under_the_project_and_can_be_turned_off(monkeypatch, tmp_path):
    monkeypatch.delenv(cache_mod.CACHE_ENV, raising=False)
    monkeypatch.setenv("BOARDRL_ROOT", str(tmp_path))
    assert default_cache_dir() == tmp_path / "build" / "referee-cache"
    monkeypatch.setenv(cache_mod.CACHE_ENV, str(tmp_path / "elsewhere"))
    assert default_cache_dir() == tmp_path / "elsewhere"
    monkeypatch.setenv(cache_mod.CACHE_ENV, "off")
    assert default_cache_dir() is None


def solved(service: RefereeService, game_id: str, state, wait: float) -> bool:
    async def ask() -> bool:
        service.submit(game_id, [state])
        return await service.wait(game_id, [state], wait)
    return asyncio.run(ask())


def written(folder, game, state, mv) -> bool:
    """Whether the entry appears within 30 s (it is written after the waiters are woken)."""
    deadline = time.monotonic() + 30
    while DiskCache(folder).get(game, state) != mv and time.monotonic() < deadline:
        time.sleep(0.05)
    return DiskCache(folder).get(game, state) == mv


def test_a_restarted_service_answers_from_disk_and_recomputes_a_damaged_entry(tmp_path, tictactoe):
    game, state, mv = tictactoe
    first = RefereeService(cache=DiskCache(tmp_path))
    try:
        assert solved(first, "tictactoe", state, 120)
        assert first.result("tictactoe", state) == mv
        assert written(tmp_path, game, state, mv)
    finally:
        first.close()
    path = DiskCache(tmp_path).path(game, state)
    assert path.is_file()

    again = RefereeService(cache=DiskCache(tmp_path))
    try:
        assert solved(again, "tictactoe", state, 0)  # at once: no waiting at all
        assert again.result("tictactoe", state) == mv
        assert all(lane._proc is None for lane in again._lanes.values())  # no referee process was needed
    finally:
        again.close()

    damage(path, lambda d: d["values"][0].__setitem__(1, 1 - d["values"][0][1]))
    third = RefereeService(cache=DiskCache(tmp_path))
    try:
        assert not solved(third, "tictactoe", state, 0) and third.cache.refused == 1  # not believed
        assert solved(third, "tictactoe", state, 120) and third.result("tictactoe", state) == mv  # computed
        assert written(tmp_path, game, state, mv)  # the entry written whole again
    finally:
        third.close()
