"""The report's PNG figures kept by what they were drawn from, so that a figure whose inputs did not change is copied
instead of drawn again.

Why: drawing is most of the report stage's time.  Matplotlib's layout and rasterising take about a quarter of a
second a figure (measured under cProfile: 5.7 of the 7.6 s of a report of 8 experiments).  The stage reruns whenever any result
changes, and most experiments' figures are then the same as in the last run.

Why a hit is the figure a fresh draw would give: the figure functions are pure functions of their arguments, drawn
with the object API (``report/figures.py``, no pyplot state).  They take only what they draw, never a whole
experiment with its file paths, run ids and wall times, so equal numbers from another run or another directory (a
DVC experiment's workspace, a test's copy) find their figures too.  An entry's key is the SHA-256 of:
- the function's name;
- the source of its module and of every boardrl module that module imports (``kernel_cache.closure_key``);
- the versions of matplotlib and Pillow, matplotlib's ``rcParams`` and the fonts it can find;
- the pickled arguments.

Equal keys mean equal inputs to the same code.  Sets are sorted first (``_canonical``), since their order changes
from one process to the next; equal data that still pickle differently only miss.

Entries are ``<key>.png`` with ``<key>.sha256`` beside it, both written atomically.  An entry whose bytes do not
match its sum is never used: the figure is drawn again and the entry replaced.

Where: ``$BOARDRL_FIGURE_CACHE``, else ``$XDG_CACHE_HOME/boardrl/figures`` (``~/.cache/boardrl/figures``).  ``off``
draws every figure, as do arguments that cannot be pickled.  Deleting the directory costs only the drawing.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import pickle
from collections.abc import Callable, MutableMapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

import boardrl
from boardrl.atomic_io import atomic_write_bytes, atomic_write_text
from boardrl.kernel_cache import closure_key
from boardrl.report.figures import save

CACHE_ENV = "BOARDRL_FIGURE_CACHE"
OFF = "off"
_PACKAGE_DIR = Path(boardrl.__file__).resolve().parent


def cache_dir(environ: MutableMapping[str, str] = os.environ) -> Path | None:
    """``$BOARDRL_FIGURE_CACHE``, else ``$XDG_CACHE_HOME/boardrl/figures``; None when the setting is ``off``."""
    chosen = environ.get(CACHE_ENV)
    if chosen == OFF:
        return None
    if chosen:
        return Path(chosen)
    return Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "boardrl" / "figures"


def draw(path: Path, figure: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Write the PNG of ``figure(*args, **kwargs)`` to ``path``: from the cache when it holds that very figure, else
    drawn (``figures.save``) and then kept."""
    where = cache_dir()
    key = _key(figure, args, kwargs) if where is not None else None
    stem = where / key if where is not None and key is not None else None
    if stem is not None and (entry := _read(stem)) is not None:
        atomic_write_bytes(path, entry)
        return
    save(figure(*args, **kwargs), path)
    if stem is not None:
        _keep(stem, Path(path).read_bytes())


def _key(figure: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """The entry's name, or None when the arguments cannot be pickled (the figure is then drawn)."""
    try:
        data = pickle.dumps(_canonical((args, sorted(kwargs.items()))), protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):
        return None
    digest = hashlib.sha256()
    for part in (f"{figure.__module__}.{figure.__qualname__}".encode(),
                 closure_key(figure.__module__, _PACKAGE_DIR).encode(), _drawing_setup().encode(), data):
        digest.update(len(part).to_bytes(8, "little") + part)
    return digest.hexdigest()


def _canonical(obj: Any) -> Any:
    """``obj`` as plain tuples whose pickle does not depend on the process.

    A set's order follows the string hash seed, which differs from one process to the next, and a pydantic model's
    pickle carries a set (measured: every experiment of a report pickled differently in two stage runs, so 16 of
    its 21 figures were drawn again).  So sets become sorted tuples, and dataclasses, pydantic models, dicts (in
    their order, which a figure may follow), lists and tuples are walked.  Anything else (DataFrames, arrays,
    numbers, strings) is pickled as it is."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return (type(obj).__qualname__, tuple((f.name, _canonical(getattr(obj, f.name)))
                                              for f in dataclasses.fields(obj)))
    if isinstance(obj, BaseModel):  # its pickle carries the set of the fields that were given
        extra = obj.__pydantic_extra__ or {}
        return (type(obj).__qualname__, tuple((k, _canonical(v)) for k, v in [*vars(obj).items(), *extra.items()]))
    if isinstance(obj, (set, frozenset)):
        return (type(obj).__name__, tuple(sorted((_canonical(v) for v in obj), key=repr)))
    if isinstance(obj, dict):
        return (type(obj).__name__, tuple((_canonical(k), _canonical(v)) for k, v in obj.items()))
    if isinstance(obj, (list, tuple)):
        return (type(obj).__qualname__, tuple(_canonical(v) for v in obj))
    return obj


def _drawing_setup() -> str:
    """What else a figure's pixels depend on: matplotlib's and Pillow's versions, its settings and its fonts."""
    import matplotlib
    import PIL
    from matplotlib import font_manager

    fonts = sorted(f.fname for f in font_manager.fontManager.ttflist)
    settings = sorted((k, repr(v)) for k, v in matplotlib.rcParams.items())
    return repr((matplotlib.__version__, PIL.__version__, settings, fonts))


def _read(stem: Path) -> bytes | None:
    """The entry's PNG bytes when they match its recorded sum; None when missing, unreadable or damaged."""
    try:
        data = stem.with_suffix(".png").read_bytes()
        recorded = stem.with_suffix(".sha256").read_text().strip()
    except OSError:
        return None
    return data if hashlib.sha256(data).hexdigest() == recorded else None


def _keep(stem: Path, data: bytes) -> None:
    """Store an entry; a cache that cannot be written only means the next report draws again."""
    try:
        atomic_write_bytes(stem.with_suffix(".png"), data)
        atomic_write_text(stem.with_suffix(".sha256"), hashlib.sha256(data).hexdigest() + "\n")
    except OSError:
        pass
