"""The scalar fast path (base module docstring, "Scalar speed"): one kernel call per ``play``, a memo of the last
state played, trusted entry points.  It must give exactly what the validated path gives, never extend trust to a
state the game did not make, and keep user errors one clear line."""

import pickle

import numpy as np
import pytest

from boardrl.games import GAME_IDS, IllegalMoveError, WrongGameError, make_game
from boardrl.games._kernels import INT64, popcount, trusted_entry, trusted_entry_on_first_call
from boardrl.games.base import Game

#: Random games per game id: thousands of moves each, a few seconds in all.
N_GAMES = {"tictactoe": 3000, "connect4": 1500, "dots_and_boxes_2x2": 2000, "dots_and_boxes_3x3": 1500,
           "conniption": 400}


def untrusted(game, state):
    """An equal state that is a different object: ``play`` must take the validated path for it."""
    copy = game.state_type(*state)
    assert copy == state and copy is not state
    return copy


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_fast_and_validated_paths_agree_on_random_games(game_id):
    """Trusted entry point (memo hit), checked kernel (an equal copy) and ``Game.play`` (mask + ``_apply``) agree,
    and the memo's mask equals a freshly computed one and the batched engine's, move by move.

    The validated paths run on a second game object: playing on ``game`` would replace its memo."""
    game, ref = make_game(game_id), make_game(game_id)
    rng = np.random.default_rng(11)
    moves = trusted = 0
    for _ in range(N_GAMES[game_id]):
        state = game.initial_state()
        while True:
            memo_hit = game._memo[0] is state  # every state but the initial one
            mask = game.legal_moves(state)
            assert np.array_equal(mask, ref.legal_moves(untrusted(ref, state)))
            assert np.array_equal(mask, game.legal_mask_batch(np.array([state], dtype=np.int64))[0])
            legal = np.flatnonzero(mask)
            if legal.size == 0:
                assert game.is_over(state) and ref.is_over(state)
                break
            move = int(legal[rng.integers(legal.size)])
            fast = game.play(state, move)
            checked = ref.play(untrusted(ref, state), move)
            generic = Game.play(ref, untrusted(ref, state), move)
            assert fast == checked == generic
            assert type(fast) is type(checked) is type(generic) is game.state_type
            assert game._memo[0] is fast
            state = fast
            moves += 1
            trusted += memo_hit
    assert moves > 10_000 and trusted == moves - N_GAMES[game_id]


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_numpy_moves_are_played_like_ints(game_id):
    game = make_game(game_id)
    rng = np.random.default_rng(3)
    a = b = game.initial_state()
    for _ in range(20):
        legal = np.flatnonzero(game.legal_moves(a))
        if legal.size == 0:
            break
        move = legal[rng.integers(legal.size)]  # a numpy int64
        a, b = game.play(a, move), game.play(b, int(move))
        assert a == b and type(a) is game.state_type


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_masks_are_read_only_on_every_path(game_id):
    game = make_game(game_id)
    s = game.play(game.initial_state(), int(np.flatnonzero(game.legal_moves(game.initial_state()))[0]))
    for state in (game.initial_state(), s, untrusted(game, s)):  # computed, memo, computed again
        mask = game.legal_moves(state)
        before = mask.copy()
        assert mask.dtype == np.bool_ and mask.shape == (game.num_actions,) and not mask.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            mask[:] = ~mask
        assert np.array_equal(game.legal_moves(state), before)


def bad_moves(game, state):
    """Every kind of bad user move for ``state``: taken, out of range, negative, huge, wrong types."""
    taken = [int(a) for a in np.flatnonzero(~game.legal_moves(state))]
    return taken[:2] + [game.num_actions, -1, 2**70, 2.0, "3", None, True, np.int64(-1), np.int64(game.num_actions)]


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_user_errors_are_one_line_from_trusted_and_other_states(game_id):
    game = make_game(game_id)
    rng = np.random.default_rng(5)
    state = game.initial_state()
    for _ in range(4):  # no game here can end in 4 moves
        legal = np.flatnonzero(game.legal_moves(state))
        state = game.play(state, int(legal[rng.integers(legal.size)]))
    for s in (state, untrusted(game, state)):  # the memo's state, and an equal one
        for move in bad_moves(game, s):
            with pytest.raises(IllegalMoveError) as info:
                game.play(s, move)
            text = str(info.value)
            assert "\n" not in text and text.startswith(game_id) and "legal" in text, text
    another = make_game("connect4" if game_id == "tictactoe" else "tictactoe").initial_state()
    for wrong in ((0, 0), tuple(state), None, another):
        with pytest.raises(WrongGameError) as info:
            game.play(wrong, 0)
        assert "\n" not in str(info.value) and game.state_type.__name__ in str(info.value)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_game_over_is_reported_from_the_fast_path(game_id):
    game = make_game(game_id)
    rng = np.random.default_rng(9)
    state = game.initial_state()
    while (legal := np.flatnonzero(game.legal_moves(state))).size:
        state = game.play(state, int(legal[rng.integers(legal.size)]))
    with pytest.raises(IllegalMoveError, match="the game is over"):
        game.play(state, 0)


def test_trust_is_per_game_and_per_object():
    """A state the game did not make is checked in full, even right after an equal one was played."""
    g2, g3 = make_game("dots_and_boxes_2x2"), make_game("dots_and_boxes_3x3")
    s = g3.play(g3.initial_state(), 0)
    other = make_game("dots_and_boxes_3x3")  # same rules, its own memo
    assert other.play(s, 1) == g3.play(s, 1)
    with pytest.raises(WrongGameError, match="DotsAndBoxesState3x3"):
        g3.play(g2.play(g2.initial_state(), 0), 1)
    bogus = g3.state_type(s.edges, s.to_move, 1, 0)  # a box scored that is not complete
    with pytest.raises(WrongGameError, match="scores 1\\+0 but 0 boxes"):
        g3.play(bogus, 1)
    with pytest.raises(WrongGameError, match="edges must lie in"):
        g3.play(g3.state_type(1 << 30, 0, 0, 0), 1)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_pickled_games_leave_the_memo_behind(game_id):
    game = make_game(game_id)
    s = game.play(game.initial_state(), int(np.flatnonzero(game.legal_moves(game.initial_state()))[0]))
    copy = pickle.loads(pickle.dumps(game))
    assert "_memo" not in vars(copy)
    assert np.array_equal(copy.legal_moves(s), game.legal_moves(s))
    legal = int(np.flatnonzero(game.legal_moves(s))[0])
    assert copy.play(s, legal) == game.play(s, legal)


def test_trusted_entry_is_the_compiled_kernel_and_falls_back_to_plain_functions():
    entry = trusted_entry(popcount, INT64)
    assert entry is not popcount and entry(0b1011) == 3 == popcount(0b1011)

    def plain(x):
        return x + 1

    assert trusted_entry(plain, INT64) is plain


def test_trusted_entry_on_first_call_rebinds_the_global():
    namespace = {}
    namespace["f"] = trusted_entry_on_first_call(namespace, "f", popcount, INT64)
    stand_in = namespace["f"]
    assert stand_in(7) == 3
    assert namespace["f"] is not stand_in and namespace["f"](15) == 4


@pytest.mark.parametrize("rows, cols", [(1, 1), (1, 2), (2, 2), (2, 3), (3, 3), (3, 4), (4, 4), (5, 5)])
def test_dots_and_boxes_masks_from_byte_tables_on_every_board_size(rows, cols):
    """Up to 24 edges the mask is two table lookups, beyond that 12-bit chunks joined: both exactly the edges."""
    from boardrl.games.dots_and_boxes import DotsAndBoxes

    game = DotsAndBoxes(rows, cols)
    rng = np.random.default_rng(rows * 10 + cols)
    for edges in [0, game.full, *(int(e) for e in rng.integers(0, game.full + 1, 300))]:
        mask = game.legal_moves(game.state_type(edges, 0, 0, 0))
        assert mask.shape == (game.num_edges,) and not mask.flags.writeable
        assert np.array_equal(mask, ((~edges >> np.arange(game.num_edges)) & 1).astype(bool))
