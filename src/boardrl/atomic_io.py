"""Atomic file and directory writes: a stage killed midway leaves the previous outputs (or none), never half.

Why: DVC hashes whatever lies at an output path.  A file written in place and cut off by a kill (Ctrl-C, OOM,
a lost machine) would look like a complete result to the next reader.  Every write here goes to a temporary
sibling in the same directory (same file system, so ``os.replace`` is an atomic rename), is flushed and
fsync'ed, and only then renamed over the target.  Temporary names start with a dot and contain ``.tmp-``;
``.dvcignore`` and ``.gitignore`` skip them.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, Iterator, Sequence

import numpy as np


def _tmp_prefix(target: Path) -> str:
    return f".{target.name}.tmp-"


def fsync_dir(directory: Path) -> None:
    """Make a rename durable (best effort: some file systems refuse to open directories)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def atomic_writer(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """A binary file handle whose contents replace ``path`` atomically when the block ends without error.

    For writers that need a real file (``np.savez``, ``ndarray.tofile``); parents are created.  On an error the
    temporary file is removed and ``path`` keeps its previous contents.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=_tmp_prefix(target), dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        if exc.filename is None and exc.errno is not None:  # a failed write (full disk) names no file: name it
            raise OSError(exc.errno, exc.strerror or str(exc), str(target)) from None
        raise
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(target.parent)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (parents created); returns the path."""
    with atomic_writer(path) as fh:
        fh.write(data)
    return Path(path)


def atomic_save_npz(path: str | os.PathLike, **arrays: np.ndarray) -> Path:
    """``np.savez`` of ``arrays`` to ``path`` atomically (tables, checkpoints)."""
    with atomic_writer(path) as fh:
        np.savez(fh, **arrays)
    return Path(path)


def atomic_torch_save(path: str | os.PathLike, obj: Any) -> Path:
    """``torch.save`` of ``obj`` to ``path`` atomically, serialised in memory first.

    Why in memory: torch's zip writer turns a write that fails midway (a full disk) into a ``RuntimeError``
    ("unexpected pos ...") instead of the ``OSError`` every caller reports as one line naming the path; writing
    the finished bytes ourselves keeps the ``OSError``.  Weights and optimizer states are small beside memory.
    """
    import io

    import torch

    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return atomic_write_bytes(path, buffer.getvalue())


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write UTF-8 text atomically, with Unix newlines whatever the platform (byte-identical reruns)."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | os.PathLike, obj: Any) -> Path:
    """Write ``obj`` as indented JSON with a trailing newline, atomically.

    Keys keep their insertion order (the writer decides a readable order); NaN and infinities are refused
    because they are not JSON and other tools (DVC, browsers) reject them.
    """
    return atomic_write_text(path, json.dumps(obj, indent=2, allow_nan=False) + "\n")


def atomic_write_tsv(path: str | os.PathLike, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> Path:
    """Write a tab-separated table atomically; floats are written with ``repr`` precision (round trips)."""

    def cell(v: Any) -> str:
        text = repr(v) if isinstance(v, float) else str(v)
        if "\t" in text or "\n" in text:
            raise ValueError(f"TSV cell {text!r} contains a tab or a newline")
        return text

    lines = ["\t".join(header)] + ["\t".join(cell(v) for v in row) for row in rows]
    return atomic_write_text(path, "\n".join(lines) + "\n")


@contextmanager
def atomic_directory(path: str | os.PathLike) -> Iterator[Path]:
    """Build a directory in a temporary sibling, then swap it in place of ``path`` on success.

    Usage: ``with atomic_directory("models/x/model") as tmp: agent.save(tmp)``.  On an exception the
    temporary directory is removed and ``path`` is untouched.  The swap is two renames (old aside, new in);
    a kill between them leaves no directory at ``path`` but the old one beside it, never a half-written one.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=_tmp_prefix(target), dir=target.parent))
    try:
        yield tmp
        os.chmod(tmp, 0o755)
        replace_directory(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def replace_directory(source: Path, target: Path) -> None:
    """Move directory ``source`` to ``target``, replacing whatever is there (file or directory)."""
    old: Path | None = None
    if target.exists() or target.is_symlink():
        old = Path(tempfile.mkdtemp(prefix=_tmp_prefix(target) + "old-", dir=target.parent))
        old.rmdir()
        os.replace(target, old)
    os.replace(source, target)
    fsync_dir(target.parent)
    if old is not None:
        if old.is_dir() and not old.is_symlink():
            shutil.rmtree(old, ignore_errors=True)
        else:
            old.unlink(missing_ok=True)


def remove_stale_temporaries(directory: str | os.PathLike) -> int:
    """Delete temporaries left in ``directory`` by killed writers; returns how many were removed."""
    d = Path(directory)
    if not d.is_dir():
        return 0
    n = 0
    for p in d.iterdir():
        if p.name.startswith(".") and ".tmp-" in p.name:
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
            n += 1
    return n
