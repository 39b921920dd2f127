"""Dots and Boxes retrograde referee: known results, an independent minimax, caching, budget, errors."""

import json
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from boardrl.games import BoardRLError, make_game
from boardrl.games.dots_and_boxes import DotsAndBoxes
from boardrl.solvers.registry import make_referee
from boardrl.solvers.dots_and_boxes import DotsAndBoxesReferee, build_table, load_or_build_table, table_path


# ---------------------------------------------------------------------------------------------- independent minimax
def boxes_of(rows: int, cols: int) -> list[frozenset[int]]:
    """Each box as the set of its 4 edge numbers, derived from dot coordinates (not from the engine's tables)."""
    index = {}
    for y in range(rows + 1):  # horizontal edge from dot (y, x) to (y, x+1)
        for x in range(cols):
            index[((y, x), (y, x + 1))] = len(index)
    for y in range(rows):  # vertical edge from dot (y, x) to (y+1, x)
        for x in range(cols + 1):
            index[((y, x), (y + 1, x))] = len(index)
    return [
        frozenset({
            index[((r, c), (r, c + 1))], index[((r + 1, c), (r + 1, c + 1))],
            index[((r, c), (r + 1, c))], index[((r, c + 1), (r + 1, c + 1))],
        })
        for r in range(rows)
        for c in range(cols)
    ]


def minimax_solver(rows: int, cols: int):
    """Plain recursive negamax on sets of drawn edges: best future margin for the player to move."""
    boxes = boxes_of(rows, cols)
    n_edges = (rows + 1) * cols + rows * (cols + 1)

    @lru_cache(maxsize=None)
    def best(drawn: frozenset) -> int:
        if len(drawn) == n_edges:
            return 0
        values = []
        for e in range(n_edges):
            if e in drawn:
                continue
            after = drawn | {e}
            k = sum(1 for b in boxes if e in b and b <= after)
            values.append(k + best(after) if k else -best(after))
        return max(values)

    return best, n_edges


def as_set(mask: int) -> frozenset:
    return frozenset(e for e in range(mask.bit_length()) if mask >> e & 1)


@pytest.mark.parametrize("rows,cols", [(1, 1), (1, 2), (2, 1), (1, 3)])
def test_table_equals_minimax_on_every_edge_set_of_small_boards(rows, cols):
    best, n = minimax_solver(rows, cols)
    table = build_table(rows, cols)
    assert table.shape == (1 << n,)
    assert [int(v) for v in table] == [best(as_set(m)) for m in range(1 << n)]


def test_table_equals_minimax_on_every_2x2_edge_set_and_sampled_game_states():
    best, n = minimax_solver(2, 2)
    table = build_table(2, 2)
    assert all(int(table[m]) == best(as_set(m)) for m in range(1 << n))  # all 4,096 edge sets
    g = make_game("dots_and_boxes_2x2")
    ref = DotsAndBoxesReferee(g)
    rng = np.random.default_rng(11)
    for _ in range(300):  # game states (scores included) from random play
        s = g.initial_state()
        for _ in range(int(rng.integers(0, 12))):
            s = g.play(s, int(rng.choice(g.legal_actions(s))))
        v = ref.solve(s)
        lead = (s.score0 - s.score1) * (1 if s.to_move == 0 else -1)
        assert v.margin == lead + best(as_set(s.edges)) and v.value == np.sign(v.margin)
        if g.is_over(s):
            assert v.optimal_moves == ()
            continue
        for a in g.legal_actions(s):  # a move is optimal iff its successor keeps the margin
            t = g.play(s, a)
            succ = ref.solve(t).margin
            after = succ if t.to_move == s.to_move else -succ
            assert (after == v.margin) == (a in v.optimal_moves)
            assert after <= v.margin


def test_2x2_is_a_first_player_win_by_two():
    g = make_game("dots_and_boxes_2x2")
    v = make_referee(g).solve(g.initial_state())
    assert (v.value, v.margin) == (1, 2)  # 3-1
    assert v.to_json(g)["margin"] == 2 and v.to_json(g)["value"] == 1
    final = g.replay("0 1 2 3 4 5 6 7 8 9 10 11")
    end = make_referee(g).solve(final)
    lead = g.score_margin(final) if final.to_move == 0 else -g.score_margin(final)
    assert g.is_over(final) and end.optimal_moves == () and end.margin == lead and end.value == np.sign(lead)


@pytest.fixture(scope="module")
def built_3x3(tmp_path_factory):
    """Build the 3x3 table once, in a fresh process with a fresh cache folder.

    The peak is VmHWM of the new process's own memory map: getrusage's ru_maxrss survives exec on Linux, so a child
    of a big pytest process would report the parent's size (1.4 GiB late in the suite) instead of its own.
    """
    cache = tmp_path_factory.mktemp("cache")
    code = (
        "import json, sys\n"
        "def peak_mib():\n"
        "    line = [ln for ln in open('/proc/self/status') if ln.startswith('VmHWM:')][0]\n"
        "    return int(line.split()[1]) / 1024\n"
        "from boardrl.solvers.dots_and_boxes import load_or_build_table\n"
        "r = load_or_build_table(3, 3, sys.argv[1])\n"
        "print(json.dumps({'source': r.source, 'seconds': r.seconds,"
        " 'peak_mib': peak_mib()}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(cache)], capture_output=True, text=True, check=True)
    return cache, json.loads(out.stdout.strip().splitlines()[-1])


def test_3x3_build_meets_the_budget_and_is_cached(built_3x3):
    cache, info = built_3x3
    assert info["source"] == "built"
    assert info["seconds"] <= 60 and info["peak_mib"] <= 1024  # issue budget on the 2-core machine
    path = table_path(3, 3, cache)
    assert path.stat().st_size == 1 << 24 and not [p for p in cache.iterdir() if p.suffix == ".tmp"]
    again = load_or_build_table(3, 3, cache)
    assert again.source == "disk" and again.path == path and again.table.shape == (1 << 24,)


def test_3x3_is_a_second_player_win_by_three_and_every_first_move_is_optimal(built_3x3):
    cache, _ = built_3x3
    g = make_game("dots_and_boxes_3x3")
    ref = DotsAndBoxesReferee(g, cache_dir=cache)
    v = ref.solve(g.initial_state())
    assert (v.value, v.margin) == (-1, -3)
    assert v.optimal_moves == tuple(range(24))
    assert set(ref.move_margins(g.initial_state()).values()) == {-3}


def test_3x3_table_satisfies_the_recurrence_on_sampled_edge_sets(built_3x3):
    """Bellman check of the kernel's fill, recomputed here in numpy from the box definitions."""
    cache, _ = built_3x3
    table = load_or_build_table(3, 3, cache).table
    boxes = [sum(1 << e for e in b) for b in boxes_of(3, 3)]
    rng = np.random.default_rng(2)
    sets = rng.integers(0, 1 << 24, size=20_000, dtype=np.int64)
    best = np.full(sets.shape, -128, dtype=np.int64)
    for e in range(24):
        bit = np.int64(1 << e)
        free = (sets & bit) == 0
        after = sets | bit
        k = sum(((after & m) == m).astype(np.int64) for m in boxes if m >> e & 1)
        val = np.where(k > 0, k + table[after], -table[after].astype(np.int64))
        best = np.where(free, np.maximum(best, val), best)
    best[sets == (1 << 24) - 1] = 0
    assert np.array_equal(best, table[sets])
    assert np.abs(table).max() <= 9 and table[(1 << 24) - 1] == 0


def test_a_truncated_cache_file_is_rebuilt(tmp_path):
    first = load_or_build_table(2, 2, tmp_path, use_disk=True)
    assert first.source == "built" and first.path.stat().st_size == 4096
    assert load_or_build_table(2, 2, tmp_path, use_disk=True).source == "disk"
    first.path.write_bytes(b"\x00" * 100)
    again = load_or_build_table(2, 2, tmp_path, use_disk=True)
    assert again.source == "built" and np.array_equal(again.table, first.table)
    assert first.path.stat().st_size == 4096


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("BOARDRL_CACHE", str(tmp_path))
    assert table_path(2, 2).parent == tmp_path
    monkeypatch.delenv("BOARDRL_CACHE")
    repo = Path(__file__).resolve().parents[2]  # a source checkout: <repo>/cache
    assert table_path(2, 2) == repo / "cache" / "dots_and_boxes_2x2_retrograde_v1.int8"


def test_boards_beyond_24_edges_and_other_games_are_refused():
    with pytest.raises(BoardRLError, match="40 edges.*at most 24 edges"):
        DotsAndBoxesReferee(make_game("dots_and_boxes_4x4"))
    with pytest.raises(BoardRLError, match="at most 24 edges"):
        make_referee(DotsAndBoxes(2, 5))  # 27 edges
    with pytest.raises(BoardRLError, match="needs a dots_and_boxes game"):
        DotsAndBoxesReferee(make_game("tictactoe"))
    g = make_game("dots_and_boxes_2x2")
    with pytest.raises(BoardRLError, match="DotsAndBoxesState2x2"):
        DotsAndBoxesReferee(g).solve(make_game("dots_and_boxes_1x1").initial_state())

