"""What a match sends to each worker (a spawned process or a Ray task): the game, the agents, the start rows and
the parent's torch thread count, pickled once with numba kernels by name.

Why by name: numba pickles a dispatcher by value (its function's code and globals); the copy a worker rebuilds
is a new dispatcher outside the kernel cache, so every worker compiled the game's and the agents' kernels again
(2.05 s a spawned worker by value, 0.49 s by name; 10 to 40 s a Ray worker).  By name, the worker imports the
module and finds the dispatcher that module defines, with its cached machine code.  A dispatcher that is not
its module's attribute (a kernel made at run time) still goes by value.

Why the threads travel: the count is part of what a network's play computes (learn/core/device.py
``resolved_threads``), so a match must give the same games whatever its worker count is.
"""

from __future__ import annotations

import importlib
import io
import pickle
import sys
from typing import Any


class _KernelsByName(pickle.Pickler):
    """A pickler that writes a module-level numba kernel as the module attribute it is."""

    def reducer_override(self, obj: Any) -> Any:
        py_func = getattr(obj, "py_func", None)
        if py_func is None or not hasattr(obj, "overloads"):  # not a numba dispatcher
            return NotImplemented
        module, name = py_func.__module__, py_func.__qualname__
        if getattr(sys.modules.get(module), name, None) is not obj:  # made at run time, or nested: by value
            return NotImplemented
        return _module_attribute, (module, name)


def _module_attribute(module: str, name: str) -> Any:
    """``module.name``, importing the module: the other half of ``_KernelsByName``."""
    return getattr(importlib.import_module(module), name)


def dumps_kernels_by_reference(obj: Any) -> bytes:
    """``pickle.dumps(obj)``, with every numba kernel that is a module attribute written by its name."""
    buffer = io.BytesIO()
    _KernelsByName(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buffer.getvalue()


def dumps_match_payload(game: Any, agents: tuple[Any, Any], start_rows: Any, threads: int | None) -> bytes:
    """The bytes every worker of one match loads with ``load_match_payload``."""
    return dumps_kernels_by_reference((game, agents, start_rows, threads))


def load_match_payload(payload: bytes) -> tuple[Any, tuple[Any, Any], Any]:
    """In a worker: (game, agents, start rows), after giving torch the parent's thread count.

    The payload is unpickled by hand, not handed over by Ray's object store: arrays that store hands out
    zero-copy are read-only, and the game kernels (numba) are compiled for writable ones.  Unpickling a network
    agent imports torch, so the thread count is set after it."""
    game, agents, start_rows, threads = pickle.loads(payload)
    if threads is not None and "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    return game, agents, start_rows
