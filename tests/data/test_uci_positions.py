"""The UCI Connect-4 set regenerated from the rules equals the published file modulo left-right mirror."""

import hashlib
import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from helpers import UCI_Z as VENDORED_UCI_Z

from boardrl.games import make_game
from boardrl.games.connect4 import Connect4State, mirror_state
from boardrl.data.uci_positions import (
    UciFormatError,
    canonical_key,
    canonical_keys,
    canonical_state,
    compare_with_uci,
    format_uci_line,
    load_uci,
    parse_uci_line,
    parse_uci_text,
    read_uci_text,
    regenerate_uci_positions,
)

# The vendored copy of the published file (tests/paths.py); BOARDRL_UCI_Z points elsewhere.
UCI_Z = Path(os.environ.get("BOARDRL_UCI_Z", VENDORED_UCI_Z))
DATA_SHA256 = "063152e6eadbb424c7ef4645df76e493a43812edd9c992400983da4fa54f8cba"  # shared/data/uci/README.md
c4 = make_game("connect4")


@pytest.fixture(scope="module")
def uci_text() -> str:
    if not UCI_Z.is_file():
        pytest.fail(f"the UCI copy is missing: {UCI_Z}")
    text = read_uci_text(UCI_Z)  # the .Z path: decoded with unlzw3 to the exact published bytes
    assert hashlib.sha256(text.encode("ascii")).hexdigest() == DATA_SHA256
    return text


@pytest.fixture(scope="module")
def regen():
    return regenerate_uci_positions()


def test_regeneration_gives_the_published_counts(regen):
    assert regen.n_candidates == 134_934
    assert regen.n_symmetric == 180
    assert regen.n_classes == 67_557 == (134_934 + 180) // 2
    assert (regen.candidates[:, 2] == 8).all()
    assert np.array_equal(canonical_keys(regen.states), regen.keys)
    assert np.array_equal(regen.states[:, 0] + regen.states[:, 1], regen.keys)  # representatives are canonical


def test_regenerated_positions_are_quiet(regen):
    rng = np.random.default_rng(0)
    for i in rng.choice(regen.n_candidates, 300, replace=False):
        s = Connect4State(*map(int, regen.candidates[i]))
        assert not c4.is_over(s) and c4.winning_moves(s) == []
        # the opponent has no immediate win either: give them the move by swapping the stones' owner
        swapped = Connect4State(s.current ^ s.mask, s.mask, s.plies)
        assert c4.winning_moves(swapped) == []


def test_uci_file_equals_regeneration_modulo_mirror(uci_text, regen):
    states, labels = parse_uci_text(uci_text)
    assert states.shape == (67_557, 3) and (states[:, 2] == 8).all()
    assert Counter(labels.tolist()) == {"win": 44_473, "loss": 16_635, "draw": 6_449}
    records = [(Connect4State(*map(int, r)), str(lab)) for r, lab in zip(states, labels)]
    cmp = compare_with_uci(records, regen)
    assert cmp.equal and cmp.n_rows == cmp.n_classes == 67_557
    assert cmp.missing == cmp.extra == cmp.mirror_duplicates == 0
    # and the comparison can fail: drop one row and mirror another into a duplicate
    broken = records[1:] + [(mirror_state(records[5][0]), records[5][1])]
    bad = compare_with_uci(broken, regen)
    assert not bad.equal and bad.missing == 1 and bad.mirror_duplicates == 1 and bad.extra == 0


def test_load_uci_reads_a_data_file(uci_text, tmp_path):
    plain = tmp_path / "connect-4.data"
    plain.write_text(uci_text)
    records = load_uci(plain)
    assert len(records) == 67_557
    first_line = uci_text.splitlines()[0]
    assert records[0] == parse_uci_line(first_line)
    assert records[0][1] == first_line.rsplit(",", 1)[1]


def test_uci_line_round_trip(uci_text):
    lines = uci_text.splitlines()
    for line in lines[:: 997]:
        state, label = parse_uci_line(line)
        assert format_uci_line(state, label) == line
        assert c4.to_move(state) == 0 and state.plies == 8
    state, label = parse_uci_line(lines[0])
    assert label in ("win", "loss", "draw")


def test_bad_uci_lines_are_named():
    good = ",".join(["x", "o"] * 4 + ["b"] * 34) + ",win"
    assert parse_uci_line(good)[0].plies == 8
    with pytest.raises(UciFormatError, match="label 'maybe' is not one of win, loss, draw"):
        parse_uci_line(good.replace("win", "maybe"))
    with pytest.raises(UciFormatError, match="42 cells and a label"):
        parse_uci_line("x,o,win")
    with pytest.raises(UciFormatError, match="UCI row 2: .*UCI cell a1 is 'q'"):
        parse_uci_text(good + "\n" + "q" + good[1:] + "\n")
    with pytest.raises(UciFormatError, match="UCI row 1: .*above an empty cell"):
        parse_uci_text("b,x" + good[3:])


def test_canonical_key_is_mirror_invariant():
    for moves in ("1234", "4453", "4444", "7125"):
        s = c4.replay(moves)
        m = mirror_state(s)
        assert canonical_key(s) == canonical_key(m) == min(c4.state_key(s), c4.state_key(m))
        assert canonical_state(s) == canonical_state(m)
        assert c4.state_key(canonical_state(s)) == canonical_key(s)
    sym = c4.replay("4444")
    assert canonical_state(sym) == sym == mirror_state(sym)
