"""boardrl.cache: one setting moves every rebuildable file (tables, book chunks, referee verdicts)."""

from pathlib import Path

from boardrl.cache import CACHE_ENV, cache_dir
from boardrl.experiments.evaluate import _verdict_dir
from boardrl.solvers.connect4_book_build import default_work_dir
from boardrl.solvers.dots_and_boxes import table_path

CHECKOUT = Path(__file__).resolve().parents[1]


def test_environment_wins_over_project(monkeypatch, tmp_path):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "shared"))
    assert cache_dir() == tmp_path / "shared"
    assert cache_dir(tmp_path / "project") == tmp_path / "shared"


def test_project_cache_folder_without_environment(monkeypatch, tmp_path):
    monkeypatch.delenv(CACHE_ENV, raising=False)
    assert cache_dir(tmp_path) == tmp_path / "cache"
    assert cache_dir() == CHECKOUT / "cache"  # the source checkout these tests run from


def test_every_user_follows_the_setting(monkeypatch, tmp_path):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    assert table_path(3, 3).parent == tmp_path
    assert default_work_dir(Path("book/connect4-8ply.npz")) == tmp_path / "connect4-8ply.work"
    assert _verdict_dir(Path("/elsewhere")) == (tmp_path / "referee").resolve()
    monkeypatch.delenv(CACHE_ENV)
    assert _verdict_dir(tmp_path / "project") == (tmp_path / "project" / "cache" / "referee").resolve()
