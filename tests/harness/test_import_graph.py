"""The module import graph of ``harness/`` has no cycles.

Every ``import`` and ``from ... import`` statement of every module counts, wherever it
is: at module level, inside a function (a lazy import is still a circle between the two
modules) or under ``if TYPE_CHECKING``. Relative imports are resolved against the
importing module's package. An edge ``a -> b`` means module ``a`` imports module ``b``
(``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to
``pkg``); a package's ``__init__`` importing its sub-modules is an edge too, so a
sub-module that imports a name from its own package's ``__init__`` is a circle.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import harness

ROOT = Path(harness.__file__).resolve().parent


def _modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the harness package."""
    mods = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


def _resolve(name: str, mods: dict[str, Path]) -> str | None:
    """The longest harness module that ``name`` is, or lies in."""
    parts = name.split(".")
    while parts:
        cand = ".".join(parts)
        if cand in mods:
            return cand
        parts.pop()
    return None


def _imports(mod: str, path: Path, mods: dict[str, Path]) -> set[str]:
    """The harness modules that module ``mod`` (at ``path``) imports anywhere."""
    is_pkg = path.name == "__init__.py"
    package = mod if is_pkg else mod.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                if node.level > 1:
                    base = base[: len(base) - (node.level - 1)]
                base_name = ".".join(base + ([node.module] if node.module else []))
            else:
                base_name = node.module or ""
            # 'from pkg import name' resolves to the module pkg.name, else to pkg
            names = [f"{base_name}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            target = _resolve(name, mods)
            if target is None:
                continue
            # importing a.b.c runs the __init__ of a and of a.b first, unless the importer
            # lies inside them (then they are already being imported)
            parts = target.split(".")
            for i in range(1, len(parts) + 1):
                step = ".".join(parts[:i])
                if step != mod and not mod.startswith(step + ".") and step in mods:
                    out.add(step)
    return out


@functools.cache
def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    return {mod: _imports(mod, path, mods) for mod, path in mods.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of modules (first == last), or None."""
    WHITE, GREY, BLACK = 0, 1, 2
    colour = dict.fromkeys(graph, WHITE)
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        colour[node] = GREY
        stack.append(node)
        for nxt in sorted(graph[node]):
            if colour[nxt] == GREY:
                return stack[stack.index(nxt):] + [nxt]
            if colour[nxt] == WHITE:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        colour[node] = BLACK
        return None

    for node in sorted(graph):
        if colour[node] == WHITE:
            found = visit(node)
            if found:
                return found
    return None


def all_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on: set[str] = set()
    stack: list[str] = []
    comps: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return comps


def test_graph_sees_relative_and_function_level_imports(tmp_path):
    graph = import_graph()
    # harness/engine/sweep.py imports harness.engine.store (relative, module level)
    assert "harness.engine.store" in graph["harness.engine.sweep"]
    assert len(graph) > 50
    # a module of a made-up package: a lazy import, a parent-relative one, a name from a package
    source = tmp_path / "mod.py"
    source.write_text("from ..b import c\n"
                      "def f():\n"
                      "    from . import d\n"
                      "    import p.e.g\n")
    mods = dict.fromkeys(["p", "p.a", "p.a.mod", "p.a.d", "p.b", "p.e", "p.e.g"], source)
    assert _imports("p.a.mod", source, mods) == {"p.b", "p.a.d", "p.e", "p.e.g"}


def test_finder_reports_a_planted_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    cycle = find_cycle(graph)
    assert cycle is not None and cycle[0] == cycle[-1] and set(cycle) == {"a", "b", "c"}
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_harness_import_graph_is_acyclic():
    graph = import_graph()
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle) + "\nall: " + repr(
        all_cycles(graph)
    )


def test_nothing_in_harness_imports_the_command_line():
    """harness.cli is the top: what other modules share with it lives in modules below it
    (harness.outputs: tables, figures, claims of a sweep)."""
    graph = import_graph()
    assert [m for m, targets in graph.items() if "harness.cli" in targets] == []
