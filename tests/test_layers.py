"""The house rules of ``src/boardrl``: every import points down a layer (or stays in its package), and no modules
import each other in a circle.

Why a test: a module that reaches up (``agents`` importing ``learn``, ``config`` importing ``sweeps``) ties the
lower layer to everything above it, and a circle makes import order matter.  Imports inside functions count
too: they are still dependencies, only deferred.  The layers are written down once, here, bottom first.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "src" / "boardrl"

#: Bottom first.  A module may import its own package, the foundation and any package in a lower layer.
LAYERS: list[set[str]] = [
    {"", "errors", "atomic_io", "integrity", "cache", "cores", "cpu_pins", "kernel_cache", "paths",  # foundation
     "ray_runtime"},
    {"games"},
    {"solvers"},      # exact referees of the games
    {"data"},         # the UCI data set and its positions
    {"nn"},           # network building blocks (torch)
    {"agents"},       # every player, learned ones included
    {"evaluate"},     # matches, statistics, optimal-move rates
    {"learn"},        # training algorithms and their search spaces
    {"config"},       # params.yaml's schema
    {"tracking"},     # MLflow
    {"experiments"},  # the stages' work
    {"sweeps"},       # Optuna over experiments
    {"report"},
    {"interop", "tools"},
    {"web"},
    {"cli"},
]
RANK = {pkg: i for i, layer in enumerate(LAYERS) for pkg in layer}


def modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE_DIR.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


#: Calls whose string argument is a module they import: ``importlib.import_module("boardrl.x")``, ``__import__``
#: and the lazy model loaders' ``_lazy("boardrl.x", "Class")`` (agents/learned.py).
IMPORTING_CALLS = {"import_module", "__import__", "_lazy"}


def imports(path: Path, known: dict[str, Path], strings: bool = True) -> set[str]:
    """The ``boardrl`` modules ``path`` imports anywhere in its body (``from x import y``: x, and x.y if a module).

    With ``strings``, a string literal naming a ``boardrl.`` module passed to one of ``IMPORTING_CALLS`` counts
    too: it imports the module as surely as an import statement, only later.
    """
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in known}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("boardrl"):
            found |= {node.module} & known.keys()
            found |= {f"{node.module}.{a.name}" for a in node.names} & known.keys()
        elif strings and isinstance(node, ast.Call) and _callee(node.func) in IMPORTING_CALLS:
            found |= {m for m in map(_module_literal, node.args) if m in known}
    return found


def _callee(func: ast.expr) -> str | None:
    """The called name: ``f`` of ``f(...)`` and of ``x.f(...)``."""
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _module_literal(node: ast.expr) -> str | None:
    """The module a call argument names when it is a string literal ``"boardrl...."``, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("boardrl."):
        return node.value
    return None


def package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def graph(strings: bool = True) -> dict[str, set[str]]:
    known = modules()
    return {m: imports(p, known, strings) - {m} for m, p in known.items()}


def test_every_package_has_a_layer():
    assert {package(m) for m in modules()} - RANK.keys() == set()


def test_no_import_points_up_a_layer():
    up = sorted(f"{m} -> {t}" for m, targets in graph().items() for t in targets
                if package(m) != package(t) and RANK[package(t)] > RANK[package(m)])
    assert up == []


def test_no_import_crosses_to_a_sibling_package_of_the_same_layer():
    sideways = sorted(f"{m} -> {t}" for m, targets in graph().items() for t in targets
                      if package(m) != package(t) and RANK[package(t)] == RANK[package(m)] != 0)
    assert sideways == []


def test_no_modules_import_each_other_in_a_circle():
    """Statement imports only: a module named in a string is imported by name precisely to break a circle (the
    model loaders of agents/learned.py name agent modules that import learned.py's save helpers)."""
    g = graph(strings=False)
    circles = [c for c in strongly_connected(g) if len(c) > 1]
    assert circles == []


def strongly_connected(g: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative: the strongly connected components of ``g``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for start in sorted(g):
        if start in index:
            continue
        work = [(start, iter(sorted(g[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    out.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(g[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return out


def test_module_names_in_strings_count_as_imports(tmp_path):
    """``_lazy("boardrl.learn.x", "Cls")`` or ``import_module("boardrl.learn.x")`` is an import of that module, so
    a loader table in agents/ cannot name a learner module without failing the upward check."""
    known = modules()
    src = tmp_path / "m.py"
    src.write_text('import importlib\n'
                   'LOADERS = {"k": _lazy("boardrl.learn.qt", "QTAgent")}\n'
                   'def f():\n    return importlib.import_module("boardrl.learn.td0")\n'
                   'NOT_AN_IMPORT = "boardrl.learn.dqn"\n'
                   'log = logging.getLogger("boardrl.learn.alphazero")\n', encoding="utf-8")
    assert imports(src, known) == {"boardrl.learn.qt", "boardrl.learn.td0"}
    assert imports(src, known, strings=False) == set()
    assert {"boardrl.agents.qt", "boardrl.agents.afterstate"} <= graph()["boardrl.agents.learned"]


def test_the_check_finds_a_circle_and_an_upward_import():
    """The checks can fail: a made-up graph with a circle and an upward edge."""
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert [c for c in strongly_connected(g) if len(c) > 1] == [["a", "b", "c"]]
    assert RANK["cli"] > RANK["games"]
