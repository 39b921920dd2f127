"""A full disk, simulated: every file the atomic writers open fails with ENOSPC after a few bytes.

Why at ``os.fdopen`` in ``boardrl.atomic_io``: that is where every model and checkpoint byte goes to disk, so a
writer that serialises straight into the file (torch's zip writer did) meets the failure midway, as it would
on a real full disk, while reads and everything else keep working.
"""

from __future__ import annotations

import errno
import os
from typing import Any


class _FullFile:
    """A binary file handle that accepts ``budget`` bytes, then raises ``OSError(ENOSPC)``."""

    def __init__(self, fh: Any, budget: int) -> None:
        self._fh, self._left = fh, budget

    def write(self, data: Any) -> int:
        size = memoryview(data).nbytes
        if size > self._left:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self._left -= size
        return self._fh.write(data)

    def __enter__(self) -> "_FullFile":
        return self

    def __exit__(self, *exc: Any) -> None:
        self._fh.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fh, name)


class _OsWithFullDisk:
    """``os`` as ``boardrl.atomic_io`` sees it: the same module but for ``fdopen`` (nothing else is touched)."""

    def __init__(self, budget: int) -> None:
        self._budget = budget

    def fdopen(self, fd: int, *args: Any, **kwargs: Any) -> _FullFile:
        return _FullFile(os.fdopen(fd, *args, **kwargs), self._budget)

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)


def full_disk(monkeypatch: Any, budget: int = 64) -> None:
    """From now on (until ``monkeypatch`` undoes it) each file written atomically holds at most ``budget`` bytes."""
    import boardrl.atomic_io

    monkeypatch.setattr(boardrl.atomic_io, "os", _OsWithFullDisk(budget))
