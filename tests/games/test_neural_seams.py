"""The batched views networks train on (encode_batch, symmetries_batch, score_margin_batch) equal the scalar ones.

States come from random games on the batched engine itself (auto_reset off, so finished positions stay in the
sample), which is exactly the kind of array a training loop hands to these methods.
"""

import numpy as np
import pytest

from boardrl.games import GAME_IDS, Game, make_game
from boardrl.games.base import random_legal_actions
from boardrl.games.count import unique_rows

N_GAMES = 200
MAX_ROWS = 1500  # enough distinct positions of every phase of the game, yet a fast scalar comparison


def random_rows(game: Game, seed: int = 0) -> np.ndarray:
    """Distinct state rows (openings to finished games) seen in N_GAMES random batched games."""
    rng = np.random.default_rng(seed)
    batch = game.batched(N_GAMES, auto_reset=False)
    seen = [batch.states.copy()]
    while not batch.done().all():
        batch.step(random_legal_actions(batch.legal_mask(), rng))
        seen.append(batch.states.copy())
    rows = unique_rows(np.concatenate(seen))
    if rows.shape[0] > MAX_ROWS:
        rows = rows[np.sort(rng.choice(rows.shape[0], MAX_ROWS, replace=False))]
    return rows


def scalar(game: Game, row: np.ndarray):
    return game.state_type(*(int(v) for v in row))


@pytest.fixture(scope="module", params=GAME_IDS)
def game_and_rows(request) -> tuple[Game, np.ndarray]:
    game = make_game(request.param)
    rows = random_rows(game)
    assert (~game.legal_mask_batch(rows).any(axis=1)).any(), "the sample must include finished games"
    return game, rows


def test_encode_batch_equals_stacked_scalar_encode(game_and_rows):
    game, rows = game_and_rows
    planes = game.encode_batch(rows)
    assert planes.dtype == np.float32 and planes.shape == (rows.shape[0],) + tuple(game.encoding_shape)
    expected = np.stack([game.encode(scalar(game, r)) for r in rows])
    assert expected.dtype == np.float32
    assert np.array_equal(planes, expected)
    assert len({p.tobytes() for p in planes}) > 1  # not a constant encoding


def test_encode_batch_of_no_rows(game_and_rows):
    game, rows = game_and_rows
    out = game.encode_batch(rows[:0])
    assert out.shape == (0,) + tuple(game.encoding_shape) and out.dtype == np.float32


def test_symmetries_batch_equals_scalar_symmetries(game_and_rows):
    game, rows = game_and_rows
    images, maps = game.symmetries_batch(rows)
    s = len(game.symmetries(game.initial_state()))
    assert s > 1  # every game here has a nontrivial symmetry
    assert images.dtype == maps.dtype == np.int64
    assert images.shape == (s,) + rows.shape and maps.shape == (s, game.num_actions)
    assert np.array_equal(images[0], rows) and np.array_equal(maps[0], np.arange(game.num_actions))
    for i, row in enumerate(rows):
        for k, (image, amap) in enumerate(game.symmetries(scalar(game, row))):
            assert tuple(images[k, i]) == tuple(image)
            assert np.array_equal(maps[k], amap)


def test_symmetries_map_legal_moves_and_commute_with_play(game_and_rows):
    """legal(image)[map[a]] == legal(state)[a], and image-then-map[a] == image of (state-then-a)."""
    game, rows = game_and_rows
    images, maps = game.symmetries_batch(rows)
    legal = game.legal_mask_batch(rows)
    live = legal.any(axis=1)
    actions = random_legal_actions(legal[live], np.random.default_rng(1))
    after = stepped(game, rows[live], actions)
    for k in range(len(maps)):
        assert sorted(maps[k]) == list(range(game.num_actions))
        image_legal = game.legal_mask_batch(images[k])
        assert np.array_equal(image_legal[:, maps[k]], legal)
        assert np.array_equal(stepped(game, images[k][live], maps[k][actions]), game.symmetries_batch(after)[0][k])


def stepped(game: Game, rows: np.ndarray, actions: np.ndarray) -> np.ndarray:
    batch = game.batched(rows.shape[0], auto_reset=False)
    batch.states[:] = rows
    batch.step(actions)
    return batch.states


def test_score_margin_batch_matches_scalar(game_and_rows):
    game, rows = game_and_rows
    margins = game.score_margin_batch(rows)
    if not game.game_id.startswith("dots_and_boxes"):
        assert margins is None and game.score_margin(game.initial_state()) is None
        return
    assert margins.dtype == np.int64 and margins.shape == (rows.shape[0],)
    assert np.array_equal(margins, [game.score_margin(scalar(game, r)) for r in rows])
    assert np.array_equal(margins, rows[:, 2] - rows[:, 3])  # player 0 minus player 1, whoever is to move
    assert (margins > 0).any() and (margins < 0).any()


def test_base_symmetries_batch_is_the_identity_only():
    game = make_game("connect4")
    rows = random_rows(game, seed=2)[:10]
    images, maps = Game.symmetries_batch(game, rows)
    assert images.shape == (1,) + rows.shape and np.array_equal(images[0], rows)
    assert np.array_equal(maps, [np.arange(7)])


def test_tictactoe_known_encoding():
    ttt = make_game("tictactoe")
    s = ttt.replay("15")  # X in cell 1 (top left), O in cell 5 (centre); X to move
    e = ttt.encode_batch(np.asarray([s], dtype=np.int64))[0]
    mover, opponent = np.zeros((3, 3), np.float32), np.zeros((3, 3), np.float32)
    mover[0, 0] = opponent[1, 1] = 1
    assert np.array_equal(e[0], mover) and np.array_equal(e[1], opponent)
    e1 = ttt.encode(ttt.play(s, 8))  # X in cell 9 too; O to move: O's stones come first
    assert np.array_equal(e1[0], opponent) and e1[1].sum() == 2 and e1[1, 0, 0] == e1[1, 2, 2] == 1


def test_tictactoe_symmetry_images_are_the_expected_boards():
    ttt = make_game("tictactoe")
    s = ttt.replay("12")  # X top left, O top middle
    images, maps = ttt.symmetries_batch(np.asarray([s], dtype=np.int64))
    boards = {ttt.render(ttt.state_type(*map(int, img[0]))) for img in images}
    assert len(boards) == 8  # no two symmetries agree on this asymmetric position
    assert ttt.render(ttt.state_type(*map(int, images[1, 0]))) == "1 2 X\n4 5 O\n7 8 9"  # quarter turn clockwise
    assert list(maps[1]) == [2, 5, 8, 1, 4, 7, 0, 3, 6]
