"""The report's figure cache (report/figure_cache.py): a kept figure is the very PNG a fresh draw gives; other
inputs, a damaged entry, another drawing setup or the cache switched off draw again."""

from __future__ import annotations

import threading

import pytest
from matplotlib.figure import Figure

from boardrl.report import figure_cache
from boardrl.report.figure_cache import cache_dir, draw


def bars(heights: list[float], title: str = "", extra: object = None) -> Figure:
    fig = Figure(figsize=(3, 2))
    fig.subplots().bar(range(len(heights)), heights)
    fig.suptitle(title)
    return fig


class Counted:
    """``bars`` that counts its calls (a plain module-level function, as the report's are)."""

    calls = 0

    def __call__(self, *args, **kwargs) -> Figure:
        Counted.calls += 1
        return bars(*args, **kwargs)


counted = Counted()
counted.__module__, counted.__qualname__ = bars.__module__, "bars"


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    where = tmp_path / "cache"
    monkeypatch.setenv("BOARDRL_FIGURE_CACHE", str(where))
    Counted.calls = 0
    return where


def test_a_kept_figure_is_the_png_a_fresh_draw_gives_and_is_not_drawn_again(cache, tmp_path, monkeypatch):
    draw(tmp_path / "a.png", counted, [1.0, 2.0], title="t")
    draw(tmp_path / "b.png", counted, [1.0, 2.0], title="t")
    assert Counted.calls == 1
    monkeypatch.setenv("BOARDRL_FIGURE_CACHE", "off")
    draw(tmp_path / "fresh.png", counted, [1.0, 2.0], title="t")
    assert Counted.calls == 2
    fresh = (tmp_path / "fresh.png").read_bytes()
    assert fresh[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes() == fresh
    assert len(list(cache.glob("*.png"))) == len(list(cache.glob("*.sha256"))) == 1


@pytest.mark.parametrize("other", [((1.0, 3.0), {"title": "t"}), ((1.0, 2.0), {"title": "u"})])
def test_other_arguments_are_another_entry(cache, tmp_path, other):
    args, kwargs = other
    draw(tmp_path / "a.png", counted, [1.0, 2.0], title="t")
    draw(tmp_path / "b.png", counted, list(args), **kwargs)
    assert Counted.calls == 2 and len(list(cache.glob("*.png"))) == 2
    assert (tmp_path / "a.png").read_bytes() != (tmp_path / "b.png").read_bytes()


def test_another_drawing_code_or_setup_is_another_entry(cache, tmp_path, monkeypatch):
    """The key covers the figure module's source closure and matplotlib's settings: either changing draws again."""
    draw(tmp_path / "a.png", counted, [1.0])
    monkeypatch.setattr(figure_cache, "closure_key", lambda module, package_dir: "edited source")
    draw(tmp_path / "b.png", counted, [1.0])
    monkeypatch.undo()
    monkeypatch.setenv("BOARDRL_FIGURE_CACHE", str(cache))
    import matplotlib

    monkeypatch.setitem(matplotlib.rcParams, "font.size", matplotlib.rcParams["font.size"] + 1)
    draw(tmp_path / "c.png", counted, [1.0])
    assert Counted.calls == 3 and len(list(cache.glob("*.png"))) == 3


@pytest.mark.parametrize("damage", ["bytes", "sum", "no sum"])
def test_a_damaged_entry_is_drawn_again_and_replaced_never_used(cache, tmp_path, damage):
    draw(tmp_path / "a.png", counted, [1.0, 2.0])
    good = (tmp_path / "a.png").read_bytes()
    png, = cache.glob("*.png")
    if damage == "bytes":
        png.write_bytes(good[:-10] + b"0" * 10)
    elif damage == "sum":
        png.with_suffix(".sha256").write_text("0" * 64 + "\n")
    else:
        png.with_suffix(".sha256").unlink()
    draw(tmp_path / "b.png", counted, [1.0, 2.0])
    assert Counted.calls == 2 and (tmp_path / "b.png").read_bytes() == good
    draw(tmp_path / "c.png", counted, [1.0, 2.0])  # the replaced entry serves again
    assert Counted.calls == 2 and png.read_bytes() == good


def test_off_or_unpicklable_arguments_draw_every_time_and_keep_nothing(cache, tmp_path, monkeypatch):
    lock = threading.Lock()  # cannot be pickled

    def with_lock(held: object, heights: list[float]) -> Figure:
        Counted.calls += 1
        return bars(heights)

    for name in ("a", "b"):
        draw(tmp_path / f"{name}.png", with_lock, lock, [1.0])
    assert Counted.calls == 2 and not cache.exists()
    monkeypatch.setenv("BOARDRL_FIGURE_CACHE", "off")
    assert cache_dir() is None
    draw(tmp_path / "c.png", counted, [1.0])
    draw(tmp_path / "d.png", counted, [1.0])
    assert Counted.calls == 4 and not cache.exists()


def test_an_unwritable_cache_only_costs_the_drawing(tmp_path, monkeypatch):
    blocker = tmp_path / "a file, not a directory"
    blocker.write_text("")
    monkeypatch.setenv("BOARDRL_FIGURE_CACHE", str(blocker / "cache"))
    Counted.calls = 0
    draw(tmp_path / "a.png", counted, [1.0])
    draw(tmp_path / "b.png", counted, [1.0])
    assert Counted.calls == 2 and (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()


def test_the_default_place_is_under_the_users_cache(monkeypatch, tmp_path):
    monkeypatch.delenv("BOARDRL_FIGURE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "boardrl" / "figures"


HASH_SEED_RUN = """
import sys
from pathlib import Path
from pydantic import BaseModel
from boardrl.report.figure_cache import draw
from test_figure_cache import counted

class Reading(BaseModel):
    win: float
    note: str | None = None

draw(Path(sys.argv[1]), counted, [1.0, 2.0], title=str(sorted({"a", "b", "c"})),
     extra=(frozenset({"x", "y", "z", "w"}), Reading(win=0.5)))
print(type(counted).calls)
"""


def test_an_entry_serves_processes_of_any_string_hash_seed(cache, tmp_path):
    """Sets and pydantic models pickle differently from one process to the next (the hash seed orders sets); the
    key does not, so a second stage run finds the first one's figures."""
    import os
    import subprocess
    import sys

    here = os.path.dirname(__file__)
    calls = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": os.pathsep.join([here, os.environ.get(
            "PYTHONPATH", "")])}
        out = subprocess.run([sys.executable, "-c", HASH_SEED_RUN, str(tmp_path / f"{seed}.png")], env=env,
                             capture_output=True, text=True, check=True)
        calls.append(int(out.stdout))
    assert calls == [1, 0] and len(list(cache.glob("*.png"))) == 1
    assert (tmp_path / "1.png").read_bytes() == (tmp_path / "2.png").read_bytes()


def _other_runs(tree: object) -> object:
    """``tree`` as another run of the same numbers would write it: other MLflow run ids, commit and wall times."""
    if isinstance(tree, dict):
        return {k: (v[::-1] if k in ("mlflow_run_id", "mlflow_parent_run_id", "git_commit") and isinstance(v, str)
                    else v * 3 if k in ("seconds", "training_seconds") and isinstance(v, (int, float))
                    else _other_runs(v)) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_other_runs(v) for v in tree]
    return tree


def test_the_same_numbers_elsewhere_from_other_runs_draw_no_figure_again(cache, tmp_path, monkeypatch):
    """The figure functions take only what they draw (report/figures.py), so the key holds no file path, run id
    or wall time: a report of equal numbers in another directory, from other runs, copies every figure."""
    import json

    from boardrl.report import build_report
    from report.results_tree import make_results

    first = make_results(tmp_path / "a")
    build_report(first, tmp_path / "a" / "reports")
    second = make_results(tmp_path / "b")
    changed = 0
    for path in second.rglob("*.json"):
        data = json.loads(path.read_text())
        if (other := _other_runs(data)) != data:
            path.write_text(json.dumps(other))
            changed += 1
    assert changed >= 4  # the summaries, evaluations and tournament now name other runs

    drawn: list[str] = []
    save = figure_cache.save
    monkeypatch.setattr(figure_cache, "save", lambda fig, path: (drawn.append(path.name), save(fig, path)))
    build_report(second, tmp_path / "b" / "reports")
    assert drawn == []
    figures = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a" / "reports").rglob("*.png"))
    assert len(figures) == 8
    for rel in figures:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel
