"""How many CPU cores this process may use: one answer for the match runner's pool and torch's threads."""

from __future__ import annotations

import os


def available_cores() -> int:
    """Cores this process may run on (the affinity mask where the OS has one, else ``os.cpu_count``)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)
