"""Conniption rules (seed 004): flips, flip limits, flipper priority, the 42nd-piece rule, notation, views."""

import numpy as np
import pytest

from boardrl.games import BoardRLError, IllegalMoveError, NotationError, WrongGameError, make_game
from boardrl.games.conniption import FLIP, NONE, Conniption, ConniptionState, flip_board, has_four

game = make_game("conniption")
seed_game = Conniption(seed_draw_rule=True)

# Found by a random search over flip-free games: 41 pieces without a four; O's 42nd piece (column 4) completes one.
FOUR_WITH_42ND = ("n6n n3n n6n n6n n1n n6n n2n n2n n3n n1n n6n n6n n3n n4n n4n n5n n2n n4n n3n n5n n5n n2n n2n n7n "
                  "n5n n7n n5n n1n n2n n1n n4n n7n n1n n3n n3n n4n n1n n5n n7n n7n n7n n4")
# Same search: a full board with no four at all.
PLAIN_DRAW = ("n3n n6n n2n n3n n1n n2n n2n n5n n5n n4n n2n n5n n6n n2n n1n n2n n1n n5n n5n n4n n4n n4n n7n n3n "
              "n6n n1n n3n n7n n7n n1n n7n n7n n5n n4n n7n n4n n6n n1n n3n n6n n3n n6")


# ------------------------------------------------------------------------------------------ helpers
def columns(state: ConniptionState) -> list[list[int]]:
    """Independent view of the board: per column, owners bottom to top (0 = X, 1 = O)."""
    cols = []
    for c in range(7):
        col = []
        for r in range(6):
            bit = 1 << (7 * c + r)
            if state.mask & bit:
                col.append(0 if state.p0 & bit else 1)
        cols.append(col)
    return cols


def random_states(n: int, seed: int) -> list[ConniptionState]:
    """States met along random games (all stages, flips used, some finished)."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        s = game.initial_state()
        while not game.is_over(s):
            legal = game.legal_actions(s)
            s = game.play(s, legal[rng.integers(len(legal))])
            out.append(s)
    return out[:n]


# ------------------------------------------------------------------------------------------ flips
def test_flip_turns_the_board_over_and_columns_fall():
    before = game.replay("n1n n1n n2n n3")  # col 1: X below O; col 2: X; col 3: O (just placed by O)
    assert columns(before)[:3] == [[0, 1], [0], [1]]
    after = game.play(before, FLIP)
    assert columns(after)[:3] == [[1, 0], [0], [1]]  # column 1 reversed, single pieces stay at the bottom
    assert after.mask == before.mask and after.flips1 == 1 and after.flips0 == 0
    assert after.player == 0 and after.stage == 0 and after.last_flip == 1
    assert game.render(after) == "\n".join([
        "1 2 3 4 5 6 7",
        ". . . . . . .",
        ". . . . . . .",
        ". . . . . . .",
        ". . . . . . .",
        "X . . . . . .",
        "O X O . . . .",
        "X to move, stage 0: flip or none (no flip: the last stage-move was a flip); flips left X 4, O 3",
    ])


def test_flip_matches_column_reversal_on_random_positions_and_is_an_involution():
    checked = 0
    for s in random_states(1500, seed=11):
        if game.is_over(s) or s.stage == 1 or not game.legal_moves(s)[FLIP]:
            continue
        flipped = game.play(s, FLIP)
        assert columns(flipped) == [col[::-1] for col in columns(s)]
        checked += 1
    assert checked > 200
    for s in random_states(300, seed=12):  # the kernel itself: reversing twice gives the board back
        assert flip_board(flip_board(s.p0, s.mask), s.mask) == s.p0


def test_at_most_four_flips_per_player():
    s = game.replay("f1n f1n f1n f1n f2n f2n f2n f2n")  # each player flips before every placement (4 each)
    assert (s.flips0, s.flips1) == (4, 4) and not game.is_over(s)
    assert game.legal_actions(s) == [NONE]  # X has no flips left
    s2 = game.replay("n", start=s)
    assert game.legal_actions(s2) == list(range(7))
    with pytest.raises(IllegalMoveError, match="legal moves: n$"):
        game.replay("5f", start=s2)


def test_no_flip_directly_after_a_flip_even_across_turns():
    s = game.replay("n4f")  # X flips after placing
    assert game.legal_actions(s) == [NONE]  # so O cannot flip before placing
    with pytest.raises(IllegalMoveError, match="move 4 of 'n4f f'.*legal moves: n"):
        game.replay("n4f f")
    s = game.replay("n4f n3")  # ... but O may flip after its own placement
    assert FLIP in game.legal_actions(s)
    s = game.replay("f4")  # within one turn, the placement separates two flips
    assert FLIP in game.legal_actions(s) and game.replay("f4f").flips0 == 2


# ------------------------------------------------------------------------------------------ end of game
# Columns before the last stage-move: 1 [O, X], 2 [X, O, X], 3 [O, X], 4 [X, O, X], 7 [O]; a flip makes
# row 1 X X X X and row 2 O O O O at once.
BOTH_FOURS = "n2n n1n n4n n3n n1n n2n n3n n4n n2n n7n n4"


def test_flip_that_makes_fours_for_both_wins_for_the_flipper():
    s = game.replay(BOTH_FOURS)
    assert not game.is_over(s) and not has_four(s.p0) and not has_four(s.mask ^ s.p0)
    x_flips = game.play(s, FLIP)
    assert has_four(x_flips.p0) and has_four(x_flips.mask ^ x_flips.p0)
    assert game.returns(x_flips) == (1.0, -1.0)
    o_flips = game.replay("nf", start=s)  # X passes, O flips at its stage 0
    assert game.returns(o_flips) == (-1.0, 1.0)


def test_flip_that_makes_only_the_opponents_four_loses():
    # before: 1 [O, X], 2 [X, O, X], 3 [O, O], 4 [X, O, X], 7 [X]; after the flip only O has a four (row 2).
    s = game.replay("n2n n1n n4n n3n n1n n2n n7n n4n n2n n3n n4")
    assert not game.is_over(s)
    after = game.play(s, FLIP)
    assert not has_four(after.p0) and game.returns(after) == (-1.0, 1.0) and game.winner(after) == 1


def test_none_checks_nothing_and_a_placement_win_ends_the_game_mid_turn():
    s = game.replay("n1n n2n n1n n2n n1n n2n n1")  # X's fourth piece in column 1
    assert game.is_over(s) and game.winner(s) == 0 and s.stage == 2
    assert not game.legal_moves(s).any()
    with pytest.raises(IllegalMoveError, match="the game is over"):
        game.play(s, NONE)


def test_four_made_by_the_42nd_piece_wins_but_the_seed_rule_calls_it_a_draw():
    real = game.replay(FOUR_WITH_42ND)
    assert game.pieces(real) == 42 and game.returns(real) == (-1.0, 1.0)
    seed = seed_game.replay(FOUR_WITH_42ND)
    assert seed.p0 == real.p0 and seed.mask == real.mask
    assert seed_game.is_over(seed) and seed_game.returns(seed) == (0.0, 0.0)


def test_full_board_without_four_is_a_draw_at_once_in_both_modes():
    for g in (game, seed_game):
        s = g.replay(PLAIN_DRAW)
        assert g.pieces(s) == 42 and g.is_over(s) and g.returns(s) == (0.0, 0.0)
        assert not g.legal_moves(s).any()  # no post-place flip
        assert "game over: draw" in g.render(s)


def test_seed_rule_changes_nothing_before_the_board_is_full():
    rng = np.random.default_rng(3)
    for _ in range(200):
        s, t = game.initial_state(), seed_game.initial_state()
        while not game.is_over(s):
            legal = game.legal_actions(s)
            a = legal[rng.integers(len(legal))]
            s, t = game.play(s, a), seed_game.play(t, a)
            if game.pieces(s) < 42:
                assert s == t


# ------------------------------------------------------------------------------------------ notation, errors
def test_notation_round_trip_and_errors():
    moves = game.parse_moves("n4n f3n, 5")
    assert moves == [NONE, 3, NONE, FLIP, 2, NONE, 4]
    assert game.format_moves(moves) == "n4n f3n 5"
    assert [game.parse_move(game.format_move(a)) for a in range(9)] == list(range(9))
    for bad in ("x", "8", "0", "ff", ""):
        with pytest.raises(NotationError, match="f \\(flip\\), n \\(none\\), 1-7"):
            game.parse_move(bad)
    with pytest.raises(NotationError, match="'x'"):
        game.replay("n4x")
    with pytest.raises(IllegalMoveError, match="move 4 is illegal here; legal moves: f n"):
        game.replay("4")
    with pytest.raises(IllegalMoveError, match="legal moves: 1 2 3 5 6 7$"):
        game.replay("n4n n4n n4n n4n n4n n4n n4")  # column 4 is full
    with pytest.raises(WrongGameError, match="ConniptionState"):
        game.play((0, 0, 0, 0, 0, 0, 0, -1), NONE)
    with pytest.raises(WrongGameError):
        game.play(make_game("tictactoe").initial_state(), 0)
    with pytest.raises(BoardRLError, match="seed_draw_rule must be True or False"):
        Conniption(seed_draw_rule="yes")


def test_batched_step_refuses_illegal_action_with_legal_list():
    b = game.batched(3, auto_reset=False)
    with pytest.raises(IllegalMoveError, match="row 1; legal actions there: 7 8"):
        b.step(np.array([NONE, 3, NONE]))
    assert (b.states == np.asarray(game.initial_state())).all()


# ------------------------------------------------------------------------------------------ views
def test_encode_planes_follow_the_player_to_move():
    s = game.replay("f4n n3")  # X placed col 4 after a flip; O placed col 3 and is at stage 2
    planes = game.encode(s)
    assert planes.shape == game.encoding_shape == (8, 6, 7) and planes.dtype == np.float32
    assert planes[0, 5, 2] == 1 and planes[1, 5, 3] == 1 and planes[:2].sum() == 2  # own = O (to move)
    assert planes[4].all() and not planes[2].any() and not planes[3].any()  # stage 2
    assert (planes[5] == 1.0).all() and (planes[6] == 0.75).all()  # O has 4 flips left, X 3
    assert not planes[7].any()
    nxt = game.play(s, FLIP)
    p2 = game.encode(nxt)  # X to move now: own = X, last stage-move was a flip
    assert p2[0, 5, 3] == 1 and p2[1, 5, 2] == 1 and p2[7].all() and (p2[5] == 0.75).all()
    batch = game.encode_batch(np.array([s, nxt], dtype=np.int64))
    assert np.array_equal(batch[0], planes) and np.array_equal(batch[1], p2)


def test_mirror_symmetry_commutes_with_every_stage_move():
    for s in random_states(600, seed=5):
        images = game.symmetries(s)
        assert len(images) == 2 and images[0][0] == s
        mirrored, amap = images[1]
        assert game.symmetries(mirrored)[1][0] == s  # an involution
        assert np.array_equal(game.legal_moves(mirrored), game.legal_moves(s)[amap.argsort()])
        for a in game.legal_actions(s):
            assert game.play(mirrored, int(amap[a])) == game.symmetries(game.play(s, a))[1][0]


def test_state_key_is_unique_and_is_down_tracks_flip_parity():
    states = set(random_states(5000, seed=9))
    keys = {game.state_key(s) for s in states}
    assert len(keys) == len(states) and max(keys) < 2**62
    assert not game.is_down(game.initial_state())
    assert game.is_down(game.replay("f")) and not game.is_down(game.replay("f1f"))
