"""One cache of compiled numba kernels for every copy of the project, keyed by the source they were built from.

Why: numba keeps a module's kernels in that module's ``__pycache__`` and trusts them while the one file's content
is unchanged.  That leaves two gaps here:

- Every copy of the project starts with none: a profile's worktree, the copy that DVC's queue runs each study
  variation in, a test's copy.  Each stage in each copy compiled the kernels it uses again (4-8 s a stage).
- A kernel that inlined a function of another module stays in use after that module is edited: numba does not
  look past the kernel's own file, so the cached machine code can silently be that of the old source.

``ClosureLocator`` keys a module's kernels by the content of the module and of every boardrl module it imports,
directly or through others, and keeps them in one directory: ``$NUMBA_CACHE_DIR`` (numba's own setting) or else
``$XDG_CACHE_HOME/boardrl/numba`` (``~/.cache/boardrl/numba``).  Copies with the same source share the entries;
an edit anywhere below a kernel makes it compile afresh; a module's versions sit side by side, so going back to
a branch does not compile again.  Entries are never wrong, only unused: deleting the directory costs a compile.

numba looks for the locator in ``NUMBA_CACHE_LOCATOR_CLASSES``, which ``use_closure_cache`` sets when boardrl is
imported; stages, Ray workers and test subprocesses inherit it.  Functions outside boardrl fall through to
numba's usual places.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import sys
import tempfile
from collections.abc import MutableMapping
from pathlib import Path
from types import FunctionType

#: numba's setting (0.68+) that names the locator classes it tries, in order.
LOCATORS_ENV = "NUMBA_CACHE_LOCATOR_CLASSES"
#: numba's own fallbacks, by their names in ``numba.core.caching``.
NUMBA_LOCATORS = ("InTreeCacheLocator", "UserWideCacheLocator")
PACKAGE = "boardrl"
_PACKAGE_DIR = Path(__file__).resolve().parent

_FROM_IMPORT = re.compile(r"^[ \t]*from[ \t]+(boardrl(?:\.\w+)*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M)
_PLAIN_IMPORT = re.compile(r"^[ \t]*import[ \t]+(boardrl[^\n]*)", re.M)


def use_closure_cache(environ: MutableMapping[str, str] = os.environ) -> None:
    """Name ``ClosureLocator`` first in ``NUMBA_CACHE_LOCATOR_CLASSES`` unless the user chose locators already.

    numba reads the variable when it is imported; if it already was, its configuration is reloaded."""
    if environ.get(LOCATORS_ENV):
        return
    environ[LOCATORS_ENV] = ",".join([f"{__name__}.{ClosureLocator.__name__}", *NUMBA_LOCATORS])
    config = sys.modules.get("numba.core.config")
    if config is not None and environ is os.environ:
        config.reload_config()


def cache_root(environ: MutableMapping[str, str] = os.environ) -> Path:
    """``$NUMBA_CACHE_DIR``, else ``$XDG_CACHE_HOME/boardrl/numba`` (``~/.cache/boardrl/numba``)."""
    if environ.get("NUMBA_CACHE_DIR"):
        return Path(environ["NUMBA_CACHE_DIR"])
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / PACKAGE / "numba"


class ClosureLocator:
    """Where numba caches one boardrl function, and the stamp that says its entries are current.

    The interface is that of ``numba.core.caching._CacheLocator`` (duck-typed, so importing boardrl does not
    import numba): ``from_function``, ``ensure_cache_path``, ``get_cache_path``, ``get_source_stamp``,
    ``get_disambiguator``, and the ``_py_file`` attribute that numba's warnings name."""

    def __init__(self, py_file: str, lineno: int, cache_path: Path, key: str) -> None:
        self._py_file = py_file
        self._lineno = lineno
        self._cache_path = cache_path
        self._key = key

    @classmethod
    def from_function(cls, py_func: FunctionType, py_file: str) -> ClosureLocator | None:
        """A locator for a function of this copy's boardrl; ``None`` (numba tries the next locator) otherwise,
        or when the cache directory cannot be written."""
        module = getattr(py_func, "__module__", "") or ""
        if module != PACKAGE and not module.startswith(PACKAGE + "."):
            return None
        if module_file(module, _PACKAGE_DIR) != Path(py_file).resolve():
            return None
        key = closure_key(module, _PACKAGE_DIR)
        self = cls(py_file, py_func.__code__.co_firstlineno, cache_root() / module / key[:24], key)
        try:
            self.ensure_cache_path()
        except OSError:
            return None
        return self

    def ensure_cache_path(self) -> None:
        self._cache_path.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=self._cache_path).close()

    def get_cache_path(self) -> str:
        return str(self._cache_path)

    def get_source_stamp(self) -> str:
        return self._key

    def get_disambiguator(self) -> str:
        return str(self._lineno)


@functools.lru_cache(maxsize=None)
def closure_key(module: str, package_dir: Path) -> str:
    """SHA-256 over the names and sources of ``module`` and every boardrl module it imports, transitively."""
    digest = hashlib.sha256()
    for name in sorted(import_closure(module, package_dir)):
        digest.update(name.encode() + b"\0" + _source(name, package_dir) + b"\0")
    return digest.hexdigest()


def import_closure(module: str, package_dir: Path) -> set[str]:
    """``module`` and the boardrl modules it imports anywhere in its text (inside functions too), transitively."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(_imports(name, package_dir))
    return seen


@functools.lru_cache(maxsize=None)
def module_file(module: str, package_dir: Path) -> Path | None:
    """The source file of ``boardrl[.x.y]`` in ``package_dir`` (the ``boardrl`` directory), if there is one."""
    parts = module.split(".")[1:]
    for candidate in (package_dir.joinpath(*parts).with_suffix(".py") if parts else None,
                      package_dir.joinpath(*parts, "__init__.py")):
        if candidate is not None and candidate.is_file():
            return candidate.resolve()
    return None


@functools.lru_cache(maxsize=None)
def _source(module: str, package_dir: Path) -> bytes:
    path = module_file(module, package_dir)
    return path.read_bytes() if path is not None else b""


@functools.lru_cache(maxsize=None)
def _imports(module: str, package_dir: Path) -> tuple[str, ...]:
    """The boardrl modules named by ``module``'s import statements: ``from boardrl.x import y`` gives ``x``, and
    ``x.y`` where that is a module too."""
    text = _source(module, package_dir).decode("utf-8", errors="replace")
    found = []
    for match in _FROM_IMPORT.finditer(text):
        base, names = match.group(1), re.sub(r"#[^\n]*", "", match.group(2)).strip("() \t\n")
        found.append(base)
        found.extend(f"{base}.{name.split()[0]}" for name in names.split(",") if name.strip())
    for match in _PLAIN_IMPORT.finditer(text):
        found.extend(name.split()[0] for name in match.group(1).split(",") if name.strip().startswith(PACKAGE))
    return tuple(name for name in dict.fromkeys(found) if module_file(name, package_dir) is not None)
