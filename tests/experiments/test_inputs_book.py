"""The Connect 4 opening book file is a data input of every stage whose code holds the Connect 4 solver."""

from __future__ import annotations

from pathlib import Path

from boardrl.experiments import inputs
from boardrl.solvers import connect4_book

BOOK_KEY = "src/boardrl/solvers/book/connect4-8ply.npz"


def test_the_book_is_fingerprinted_where_the_solver_is_used(monkeypatch, tmp_path):
    assert inputs.book_inputs({"boardrl/games/tictactoe.py": "x"}) == {}
    monkeypatch.setattr(connect4_book, "BOOK_DIR", tmp_path / "src" / "boardrl" / "solvers" / "book")
    monkeypatch.setattr(inputs, "PACKAGE_DIR", tmp_path / "src" / "boardrl")
    code = {"boardrl/solvers/connect4.py": "x"}
    assert inputs.book_inputs(code) == {BOOK_KEY: "missing"}
    book = connect4_book.default_path()
    book.parent.mkdir(parents=True)
    book.write_bytes(b"a book")
    assert inputs.book_inputs(code) == {BOOK_KEY: inputs.sha256(book)}
    assert Path(BOOK_KEY).name == connect4_book.default_path().name


def test_a_tournament_fingerprints_its_games_referee():
    """A `perfect` player plays through the referee, which `make_referee` imports per game (not followed)."""
    from boardrl.config import load_params

    params = load_params(Path(__file__).resolve().parents[2] / "params.yaml")
    got = inputs.tournament_inputs(params, "tictactoe_random_baseline")
    assert "boardrl/solvers/tictactoe.py" in got["code"]
