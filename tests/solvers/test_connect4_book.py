"""The Connect 4 opening book: enumeration counts, mirror keys, exact scores against a fresh search, resumable
builds, the referee's answers with and without the book, and the checksum.

A book from the empty board needs minutes of search per shallow position, so the built-in-the-test books
cover the positions below a root: after "43443355" (8 stones, about a million nodes for a fresh search) up to
11 stones, and after "4344335526" up to 13 stones.  The packaged book is checked when it is there.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from typer.testing import CliRunner

from boardrl.cli import app
from boardrl.games import make_game
from boardrl.solvers import connect4_book as cb
from boardrl.solvers import connect4_book_build as cbb
from boardrl.solvers.connect4 import NO_BOUND, Connect4Referee, Connect4Solver, position_from_columns

#: OEIS A212693: distinct Connect 4 positions after n plies (finished games counted, not expanded).
A212693 = [1, 7, 49, 238, 1120, 4263, 16422, 54859, 184275]
ROOT8 = [3, 2, 3, 3, 2, 2, 4, 4]  # "43443355"
ROOT10 = ROOT8 + [1, 5]  # "4344335526"


@pytest.fixture(scope="module")
def game():
    return make_game("connect4")


@pytest.fixture(scope="module")
def small_book(tmp_path_factory):
    """Every unfinished position with 8..11 stones below "43443355" (about 5 s)."""
    path = tmp_path_factory.mktemp("book") / "small.npz"
    cbb.build_book(11, path, processes=1, work_dir=path.parent / "work", root=ROOT8, progress=False)
    return cb.load_book(path)


# ---------------------------------------------------------------------------------------------- enumeration, keys
def test_counts_match_the_known_sequence():
    assert cbb.count_positions(8) == A212693
    levels = cbb.enumerate_levels(8, mirror=False)
    # no four before the 7th stone; after 7 plies 728 positions are first-player wins (finished, not listed)
    assert [len(lv) for lv in levels[:7]] == A212693[:7]
    assert all(lv.finished == 0 for lv in levels[:7]) and levels[7].finished == A212693[7] - len(levels[7])


def test_mirror_halves_the_levels():
    full = cbb.enumerate_levels(7, mirror=False)
    half = cbb.enumerate_levels(7, mirror=True)
    for f, h in zip(full, half):
        keys = f.keys
        symmetric = int(np.count_nonzero(cb.mirror_bits(keys) == keys))
        assert len(h) == (len(f) + symmetric) // 2
        assert np.all(h.keys <= cb.mirror_bits(h.keys))  # each listed position is the canonical one
        assert np.unique(h.keys).size == len(h)


def test_canonical_key_and_decode():
    cur, mask, _ = position_from_columns([0, 1, 1])
    mcur, mmask, _ = position_from_columns([6, 5, 5])
    assert cb.mirror_bits(cur) == mcur and cb.mirror_bits(mask) == mmask
    assert cb.canonical_key(cur, mask) == cb.canonical_key(mcur, mmask)
    assert cb.mirror_bits(cb.mirror_bits(cur + mask)) == cur + mask
    for moves in ([], [3], [0, 1, 1, 6, 6, 6], ROOT10):
        c, m, p = position_from_columns(moves)
        assert cb.decode_key(c + m) == (c, m, p)


# ---------------------------------------------------------------------------------------------- exact scores
def test_small_book_agrees_with_fresh_search_on_every_entry(small_book):
    levels = cbb.enumerate_levels(11, ROOT8)
    assert len(small_book) == sum(len(lv) for lv in levels) == 288
    solver = Connect4Solver(book=False)
    for cur, mask, plies, score in small_book.entries():
        solver.clear()
        assert solver.score(cur, mask, plies) == score, (hex(cur), hex(mask))
    # mirror images are answered too
    cur, mask, _ = position_from_columns(ROOT8 + [0])
    assert small_book.score(cb.mirror_bits(cur), cb.mirror_bits(mask)) == small_book.score(cur, mask) is not None
    assert small_book.score(*position_from_columns([3])[:2]) is None  # not below the root


def test_resumed_build_equals_an_uninterrupted_one(tmp_path):
    whole, parts = tmp_path / "whole.npz", tmp_path / "parts.npz"
    cbb.build_book(13, whole, processes=2, work_dir=tmp_path / "w1", root=ROOT10, chunk_size=16, progress=False)
    work = tmp_path / "w2"
    assert cbb.build_book(13, parts, processes=1, work_dir=work, root=ROOT10, chunk_size=16, progress=False,
                         stop_after=3) is None
    chunks = sorted(work.glob("chunk-*.npy"))
    assert len(chunks) == 3 and not parts.exists()
    chunks[0].write_bytes(b"truncated")  # a damaged chunk is solved again
    assert cbb.build_book(13, parts, processes=2, work_dir=work, root=ROOT10, chunk_size=16, progress=False,
                         stop_after=2) is None
    meta = cbb.build_book(13, parts, processes=1, work_dir=work, root=ROOT10, chunk_size=16, progress=False)
    assert whole.read_bytes() == parts.read_bytes()
    assert meta["sha256"] == json.loads(cb.meta_path(whole).read_text())["sha256"]
    assert not work.exists()  # removed once the book is written


# ---------------------------------------------------------------------------------------------- the referee
def test_referee_with_book_answers_as_without(game, small_book):
    """Positions below the root with 8..12 stones: children looked up (ply <= 10) or searched (11, 12)."""
    with_book = Connect4Referee(game, book=small_book)
    without = Connect4Referee(game, book=False)
    rng = np.random.default_rng(1)
    states = [game.replay(ROOT8)]
    while len(states) < 14:
        state = game.replay(ROOT8)
        for _ in range(int(rng.integers(1, 5))):
            if game.is_over(state):
                break
            state = game.play(state, int(rng.choice(game.legal_actions(state))))
        states.append(state)
    # a position with 10 stones that is not below the root: the lookups of its children miss, searches answer
    states.append(game.replay("1177226633"))
    for state in states:
        assert with_book.move_scores(state) == without.move_scores(state)
        assert with_book.solve(state) == without.solve(state)
        assert with_book.value(state) == without.value(state)
    n0 = with_book.nodes
    with_book.solve_score(game.replay(ROOT8))
    assert with_book.nodes == n0  # a lookup, no search


def test_positions_one_past_the_book_get_a_true_lower_bound_from_their_parents(game, small_book):
    """12 stones below the root: the book's 11-stone parents bound the score from below, exactly for a parent's
    best move, and the search started from that bound gives the plain search's score."""
    solver = Connect4Solver(book=small_book)
    plain = Connect4Solver(book=False)
    rng = np.random.default_rng(3)
    tight = loose = 0
    while tight < 3 or loose < 3:
        state = game.replay(ROOT8)
        for _ in range(4):
            if game.is_over(state):
                break
            state = game.play(state, int(rng.choice(game.legal_actions(state))))
        if game.is_over(state) or state.plies != 12:
            continue
        bits = (int(state.current), int(state.mask), 12)
        bound, exact = solver.book_lower_bound(*bits), plain.score(*bits)
        assert NO_BOUND < bound <= exact
        assert solver.score(*bits) == exact
        tight += bound == exact
        loose += bound < exact
    # a parent's best move: the bound is the score
    parent = game.replay(ROOT8 + [0, 1, 2])
    scores = solver.move_values(int(parent.current), int(parent.mask), 11, exact=True)
    best = int(np.argmax([-99 if s is None else s for s in scores]))
    child = game.play(parent, best)
    assert solver.book_lower_bound(int(child.current), int(child.mask), 12) == -max(s for s in scores if s is not None)
    # the last level's verdicts: their moves' checks take the children's bounds where they settle them
    with_book, without = Connect4Referee(game, book=small_book), Connect4Referee(game, book=False)
    checked = 0
    while checked < 12:
        state = game.replay(ROOT8)
        for _ in range(3):
            state = state if game.is_over(state) else game.play(state, int(rng.choice(game.legal_actions(state))))
        if not game.is_over(state):
            assert with_book.solve(state) == without.solve(state)
            checked += 1
    # outside the book's tree, and before its first level, there is no bound to give
    assert solver.book_lower_bound(*position_from_columns([0, 6, 0, 6, 0, 6, 1, 5, 1, 5, 1, 5])) == NO_BOUND
    assert solver.book_lower_bound(*position_from_columns(ROOT8[:7] + [0])) == NO_BOUND


def test_solver_pickles_without_the_book(small_book):
    import pickle

    assert len(pickle.dumps(Connect4Solver())) < 1 << 16  # book=True: the packaged book, loaded per process
    assert pickle.loads(pickle.dumps(Connect4Solver(book=small_book))).book.keys.size == len(small_book)


# ---------------------------------------------------------------------------------------------- files
def test_corrupted_or_unlisted_file_is_a_one_line_error(tmp_path, small_book):
    path = tmp_path / "b.npz"
    cb.save_book(small_book, path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(cb.BookError, match="checksum") as err:
        cb.load_book(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)
    res = CliRunner().invoke(app, ["book", "verify", "--path", str(path)])
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: connect4 book ") and "checksum" in lines[0]
    cb.meta_path(path).unlink()
    with pytest.raises(cb.BookError, match="metadata"):
        cb.load_book(path)


def test_cli_build_and_verify(tmp_path):
    out = tmp_path / "b.npz"
    runner = CliRunner()
    res = runner.invoke(app, ["book", "build", "--plies", "12", "--root", "4344335526", "--processes", "1",
                              "--out", str(out), "--work-dir", str(tmp_path / "w"), "--json"])
    assert res.exit_code == 0, res.output
    meta = json.loads(res.stdout)
    assert meta["count"] == 51 and meta["root"] == "4344335526" and meta["plies"] == 12
    res = runner.invoke(app, ["book", "verify", "--path", str(out), "--sample", "5", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["checked"] == 5
    res = runner.invoke(app, ["book", "build", "--root", "48"])
    assert res.exit_code == 2 and "columns 1-7" in res.stderr


# ---------------------------------------------------------------------------------------------- the packaged book
@pytest.mark.skipif(not cb.default_path().is_file(), reason="the packaged book is not built")
def test_packaged_book_checksum_count_and_sample():
    book = cb.default_book()
    meta = json.loads(cb.meta_path(cb.default_path()).read_text())
    assert book is not None and len(book) == meta["count"]
    assert len(book) == sum(len(lv) for lv in cbb.enumerate_levels(book.plies))
    # 12 entries with D stones (a fresh search takes about 0.2 s each) and 3 with D - 1 against a fresh search
    assert cbb.verify_book(cb.default_path(), sample=12, seed=1, min_plies=book.plies)["checked"] == 12
    solver = Connect4Solver(book=False)
    referee = Connect4Solver()
    assert referee.score(0, 0, 0) == 1  # the empty board: first player wins with its last stone
    scores = referee.move_values(0, 0, 0, exact=True)
    assert [s > 0 for s in scores] == [False, False, False, True, False, False, False]
    for key in np.random.default_rng(2).choice(book.keys[cbb._plies_of_keys(book.keys) == book.plies - 1], 3):
        cur, mask, plies = cb.decode_key(int(key))
        assert referee.score(cur, mask, plies) == solver.score(cur, mask, plies)
