"""Connect 4 rules: known position counts, every kind of four, a full-board draw, notation, mirror, UCI cells."""

import numpy as np
import pytest

from boardrl.games import IllegalMoveError, NotationError, WrongGameError, make_game
from boardrl.errors import BoardRLError
from boardrl.games.base import random_legal_actions
from boardrl.games.connect4 import (
    Connect4State,
    from_absolute,
    from_columns,
    from_uci_cells,
    has_four,
    mirror_bits,
    mirror_state,
    to_absolute,
    to_uci_cells,
    winning_cells,
)
from boardrl.games.count import count_positions, level_states

c4 = make_game("connect4")

# A 42-move game in which nobody ever makes four (found by random play, checked below move by move).
DRAW = "172443436271214416356274635725112635367557"


def bit(col: int, row: int) -> int:
    return 1 << (7 * col + row)


def windows() -> list[int]:
    """All 69 four-cell windows, built from board geometry (independent of the engine's shift tricks)."""
    out = []
    for c in range(7):
        for r in range(6):
            for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
                cells = [(c + k * dc, r + k * dr) for k in range(4)]
                if all(0 <= x < 7 and 0 <= y < 6 for x, y in cells):
                    out.append(sum(bit(x, y) for x, y in cells))
    return out


WINDOWS = windows()


def naive_four(bits: int) -> bool:
    return any(bits & w == w for w in WINDOWS)


def random_states(n: int, seed: int) -> list[Connect4State]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        s = c4.initial_state()
        for _ in range(int(rng.integers(0, 42))):
            if c4.is_over(s):
                break
            s = c4.play(s, int(rng.choice(c4.legal_actions(s))))
        out.append(s)
    return out


def test_known_position_counts_up_to_8_plies():
    assert count_positions(c4, 8) == [1, 7, 49, 238, 1120, 4263, 16422, 54859, 184275]


def test_state_key_is_unique_on_a_whole_level():
    level = level_states(c4, 6)
    keys = {c4.state_key(Connect4State(*map(int, row))) for row in level}
    assert len(keys) == len(level) == 16422
    assert np.array_equal(np.sort(c4.state_keys_batch(level)), np.sort(np.array(list(keys))))


def test_has_four_matches_board_geometry():
    assert len(WINDOWS) == 69
    for w in WINDOWS:
        assert has_four(w)
        for b in range(49):  # any three of a window do not make four
            if w >> b & 1:
                assert not has_four(w ^ (1 << b))
    # four consecutive bits across a column boundary are not a line (the sentinel row prevents wrapping)
    assert not has_four(bit(0, 3) | bit(0, 4) | bit(0, 5) | bit(1, 0))
    assert not has_four(bit(0, 5) | bit(1, 0) | bit(1, 1) | bit(1, 2))
    rng = np.random.default_rng(5)
    for _ in range(3000):
        cells = rng.random(42) < rng.uniform(0.1, 0.5)
        bits = sum(bit(i // 6, i % 6) for i in np.flatnonzero(cells))
        assert has_four(bits) == naive_four(bits)


def test_winning_cells_are_exactly_the_empty_cells_that_complete_a_four():
    checked = 0
    for s in random_states(300, seed=11):
        for bits in to_absolute(s):
            if naive_four(bits):  # only positions without a four are asked about
                continue
            empty = [bit(c, r) for c in range(7) for r in range(6) if not s.mask & bit(c, r)]
            expect = sum(b for b in empty if naive_four(bits | b))
            assert winning_cells(bits, s.mask) == expect
            checked += expect != 0
    assert checked > 50  # the sample really contains threats


@pytest.mark.parametrize(
    "moves, winner",
    [
        ("1122334", 0),  # horizontal, bottom row
        ("1212121", 0),  # vertical in column 1
        ("12233434474", 0),  # diagonal rising to the right: a1 b2 c3 d4
        ("76655454414", 0),  # its mirror: diagonal falling to the right
        ("71122334", 1),  # O gets the horizontal when X wastes a move
    ],
)
def test_fours_end_the_game(moves, winner):
    acts = c4.parse_moves(moves)
    s = c4.replay(acts[:-1])
    assert not c4.is_over(s)
    assert acts[-1] in c4.winning_moves(s)
    s = c4.play(s, acts[-1])
    assert c4.is_over(s) and c4.winner(s) == winner
    assert c4.returns(s) == ((1.0, -1.0) if winner == 0 else (-1.0, 1.0))
    assert not c4.legal_moves(s).any() and c4.legal_actions(s) == [] and c4.winning_moves(s) == []
    with pytest.raises(IllegalMoveError, match="move column 1 is illegal: the game is over"):
        c4.play(s, 0)


def test_diagonal_fours_are_the_diagonals():
    rising = c4.replay("12233434474")
    falling = c4.replay("76655454414")
    p0_r, _ = to_absolute(rising)
    p0_f, _ = to_absolute(falling)
    d_up = bit(0, 0) | bit(1, 1) | bit(2, 2) | bit(3, 3)
    d_down = bit(6, 0) | bit(5, 1) | bit(4, 2) | bit(3, 3)
    assert p0_r & d_up == d_up and p0_f & d_down == d_down


def test_full_board_without_four_is_a_draw():
    s = c4.initial_state()
    for a in c4.parse_moves(DRAW):
        assert not c4.is_over(s)
        s = c4.play(s, a)
    assert s.plies == 42 and s.mask == (1 << 49) - 1 - sum(bit(c, 6) for c in range(7))
    p0, p1 = to_absolute(s)
    assert not naive_four(p0) and not naive_four(p1)
    assert c4.is_over(s) and c4.returns(s) == (0.0, 0.0) and c4.winner(s) is None
    assert not c4.legal_moves(s).any()


def test_notation_round_trip_and_errors():
    assert c4.parse_moves("4453") == [3, 3, 4, 2] == c4.parse_moves("4 4,5 3")
    assert c4.format_moves([3, 3, 4, 2]) == "4453"
    assert c4.parse_move("7") == 6 and c4.format_move(0) == "1"
    for bad in ("8", "x", "0", "44a"):
        with pytest.raises(NotationError, match="columns 1-7"):
            c4.parse_moves(bad)
    with pytest.raises(NotationError, match="columns 1-7"):
        c4.parse_move("12")
    with pytest.raises(NotationError, match="text"):
        c4.parse_moves(44)


def test_illegal_moves_name_the_column_and_the_legal_columns():
    s = c4.replay("444444")
    assert list(c4.legal_moves(s)) == [True, True, True, False, True, True, True]
    with pytest.raises(IllegalMoveError, match=r"column 4 is full; legal columns: 1 2 3 5 6 7"):
        c4.play(s, 3)
    with pytest.raises(IllegalMoveError, match=r"move 7 of '4444444'.*column 4 is full"):
        c4.replay("4444444")
    with pytest.raises(IllegalMoveError, match="not a column"):
        c4.play(s, 7)
    with pytest.raises(IllegalMoveError, match="not a column"):
        c4.play(s, "4")
    with pytest.raises(IllegalMoveError, match="True is not a column"):
        c4.play(s, True)
    with pytest.raises(WrongGameError, match="Connect4State"):
        c4.play((0, 0, 0), 3)
    assert c4.play(s, np.int64(2)) == c4.play(s, 2)


def test_mirror_symmetry():
    s = c4.replay("4453")
    images = c4.symmetries(s)
    assert len(images) == 2 and images[0][0] == s
    img, amap = images[1]
    assert list(amap) == [6, 5, 4, 3, 2, 1, 0]
    assert img == c4.replay("4435") == mirror_state(s)
    for s in random_states(200, seed=3):
        m = mirror_state(s)
        assert mirror_state(m) == s and c4.is_over(m) == c4.is_over(s) and c4.returns(m) == c4.returns(s)
        assert mirror_bits(s.current + s.mask) == c4.state_key(m)
        assert list(c4.legal_moves(m)) == list(c4.legal_moves(s))[::-1]
        for a in c4.legal_actions(s):
            assert c4.play(m, 6 - a) == mirror_state(c4.play(s, a))


def test_render_and_encode():
    s = c4.replay("4453")
    assert c4.render(s) == "\n".join(
        [". . . . . . ."] * 4 + [". . . O . . .", ". . O X X . .", "1 2 3 4 5 6 7"]
    )
    e = c4.encode(s)  # X (player 0) to move: plane 0 = X, plane 1 = O; row 0 = bottom
    assert e.shape == (2, 6, 7) and e.dtype == np.float32
    assert e[0, 0, 3] == e[0, 0, 4] == 1 and e[0].sum() == 2
    assert e[1, 1, 3] == e[1, 0, 2] == 1 and e[1].sum() == 2
    e1 = c4.encode(c4.play(s, 0))  # now O to move: O's stones first
    assert e1[0].sum() == 2 and e1[1].sum() == 3 and e1[1, 0, 0] == 1
    rows = np.array([tuple(x) for x in random_states(50, seed=9)], dtype=np.int64)
    batch = c4.encode_batch(rows)
    assert all(np.array_equal(batch[i], c4.encode(Connect4State(*map(int, rows[i])))) for i in range(50))


def test_absolute_columns_and_uci_cells_round_trip():
    s = c4.replay("4453")
    assert from_columns(["", "", "O", "XO", "X", "", ""]) == s
    p0, p1 = to_absolute(s)
    assert p0 == bit(3, 0) | bit(4, 0) and p1 == bit(3, 1) | bit(2, 0)
    cells = to_uci_cells(s).split(",")
    assert len(cells) == 42 and cells[18] == "x" and cells[19] == "o" and cells[12] == "o" and cells[24] == "x"
    for st in random_states(300, seed=4):
        assert from_absolute(*to_absolute(st)) == st
        assert from_uci_cells(to_uci_cells(st)) == st
    with pytest.raises(BoardRLError, match="column 1 has a stone above an empty cell"):
        from_absolute(bit(0, 1), 0)
    with pytest.raises(BoardRLError, match="player 0 has 0 stones and player 1 has 1"):
        from_absolute(0, bit(0, 0))
    with pytest.raises(NotationError, match="UCI cell a2 is 'q'"):
        from_uci_cells(["x", "q"] + ["b"] * 40)
    with pytest.raises(NotationError, match="42 cells"):
        from_uci_cells("x,o")
    with pytest.raises(BoardRLError, match="not X or O"):
        from_columns(["Z", "", "", "", "", "", ""])


def test_batched_game_matches_rules_and_names_full_columns():
    rng = np.random.default_rng(2)
    b = c4.batched(256, auto_reset=True)
    ends = 0
    for _ in range(100):
        before = b.states.copy()
        acts = random_legal_actions(b.legal_mask(), rng)
        finished, rets = b.step(acts)
        ends += int(finished.sum())
        for i in range(0, 256, 17):
            expect = c4.play(Connect4State(*map(int, before[i])), int(acts[i]))
            if finished[i]:
                assert Connect4State(*map(int, b.final_states[i])) == expect
                assert tuple(rets[i]) == c4.returns(expect) and b.state(i) == c4.initial_state()
            else:
                assert b.state(i) == expect
    assert ends > 256
    full = c4.batched(3, auto_reset=False)
    full.set_state(1, c4.replay("444444"))
    before = full.states.copy()
    with pytest.raises(IllegalMoveError, match=r"illegal action 3 in batch row 1; legal actions there: 0 1 2 4 5 6"):
        full.step(np.array([3, 3, 3]))
    assert np.array_equal(full.states, before)
    assert list(c4.to_move_batch(np.array([tuple(c4.replay("4"))], dtype=np.int64))) == [1]


def test_legal_moves_cannot_be_corrupted_by_the_caller():
    """The mask is read-only (shared between calls for speed): writing to it raises and changes nothing."""
    s = c4.initial_state()
    m = c4.legal_moves(s)
    with pytest.raises(ValueError, match="read-only"):
        m[:] = False
    assert c4.legal_moves(s).all()
    assert c4.legal_moves(c4.play(s, 3)).all()
