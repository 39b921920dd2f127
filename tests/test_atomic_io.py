"""Atomic writes: readers see the old content or the new, never a torn file; failures leave no debris."""

from __future__ import annotations

import json
import math
import os

import pytest

from boardrl import atomic_io as aio


def _debris(directory) -> list[str]:
    return [p.name for p in directory.iterdir() if ".tmp-" in p.name]


def test_writes_create_parents_and_exact_content(tmp_path):
    target = tmp_path / "a" / "b" / "x.json"
    aio.atomic_write_json(target, {"b": 1, "a": [1.5, None]})
    assert target.read_text() == '{\n  "b": 1,\n  "a": [\n    1.5,\n    null\n  ]\n}\n'
    aio.atomic_write_bytes(tmp_path / "raw.bin", b"\x00\xff")
    assert (tmp_path / "raw.bin").read_bytes() == b"\x00\xff"
    assert _debris(target.parent) == [] and oct(target.stat().st_mode & 0o777) == "0o644"


def test_failed_rename_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "metrics.json"
    aio.atomic_write_json(target, {"v": 1})

    def boom(src, dst):
        raise OSError("disk vanished")

    monkeypatch.setattr(aio.os, "replace", boom)
    with pytest.raises(OSError, match="disk vanished"):
        aio.atomic_write_json(target, {"v": 2})
    assert json.loads(target.read_text()) == {"v": 1}
    assert _debris(tmp_path) == []


def test_nan_is_refused_before_anything_is_written(tmp_path):
    target = tmp_path / "m.json"
    with pytest.raises(ValueError):
        aio.atomic_write_json(target, {"rate": math.nan})
    assert not target.exists() and _debris(tmp_path) == []


def test_tsv_round_trips_floats_and_refuses_tabs(tmp_path):
    path = tmp_path / "c.tsv"
    aio.atomic_write_tsv(path, ["a", "b"], [[1, 0.1 + 0.2], ["x", 1e-12]])
    lines = path.read_text().splitlines()
    assert lines[0] == "a\tb" and float(lines[1].split("\t")[1]) == 0.1 + 0.2 and lines[2] == "x\t1e-12"
    with pytest.raises(ValueError, match="tab"):
        aio.atomic_write_tsv(path, ["a"], [["x\ty"]])
    assert path.read_text().splitlines()[0] == "a\tb"


def test_atomic_directory_swaps_on_success_only(tmp_path):
    target = tmp_path / "model"
    with aio.atomic_directory(target) as d:
        (d / "w.npz").write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with aio.atomic_directory(target) as d:
            (d / "w.npz").write_bytes(b"half")
            raise RuntimeError("killed while saving")
    assert (target / "w.npz").read_bytes() == b"old" and _debris(tmp_path) == []
    with aio.atomic_directory(target) as d:
        (d / "v.npz").write_bytes(b"new")
    assert sorted(os.listdir(target)) == ["v.npz"] and _debris(tmp_path) == []


def test_stale_temporaries_are_swept(tmp_path):
    (tmp_path / ".curve.tsv.tmp-abc").write_text("x")
    (tmp_path / ".model.tmp-old-1").mkdir()
    (tmp_path / "keep.txt").write_text("y")
    assert aio.remove_stale_temporaries(tmp_path) == 2
    assert os.listdir(tmp_path) == ["keep.txt"]
    assert aio.remove_stale_temporaries(tmp_path / "missing") == 0
