"""No import cycles inside ``groundtrace.sdk`` or ``groundtrace.collectors``.

Every module of a package is parsed (nothing is imported) and the imports that run when it
is loaded become edges of a graph between the package's modules: ``import a.b``,
``from a import b`` and relative imports, at module level, in class bodies and in
``if``/``try``/``with`` blocks. Imports under ``if TYPE_CHECKING:`` and imports inside
functions are left out: they do not run when the module is loaded. ``from p import x``
is an edge to the module ``p.x`` when there is one, else to ``p``.
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest


def _package_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.submodule_search_locations, package
    return Path(next(iter(spec.submodule_search_locations)))


def _modules(package: str, root: Path) -> dict[str, Path]:
    """Every module of ``package`` (folder ``root``) by dotted name (a package by its
    ``__init__.py``)."""
    modules: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join((package, *parts))] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _load_time_imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements of ``body`` that run when the module is loaded."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                yield from _load_time_imports(node.body)
            yield from _load_time_imports(node.orelse)
        elif isinstance(node, ast.Try | ast.TryStar):
            for block in (node.body, node.orelse, node.finalbody):
                yield from _load_time_imports(block)
            for handler in node.handlers:
                yield from _load_time_imports(handler.body)
        elif isinstance(node, ast.With | ast.AsyncWith | ast.For | ast.While | ast.ClassDef):
            yield from _load_time_imports(node.body)


def _edges(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of the same package that ``name`` imports when it is loaded."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    here = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in _load_time_imports(tree.body):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        else:
            if node.level:
                base = here.rsplit(".", node.level - 1)[0] if node.level > 1 else here
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            candidates = [
                f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                for alias in node.names
            ]
        for candidate in candidates:
            target = candidate
            while target and target not in modules:  # `import a.b.c` of a name in a.b
                target = target.rpartition(".")[0]
            if target and target != name:
                targets.add(target)
    return targets


def import_graph(package: str, root: Path | None = None) -> dict[str, set[str]]:
    """Module -> the modules of ``package`` (by default the installed one) it imports at
    load time."""
    modules = _modules(package, _package_dir(package) if root is None else root)
    return {name: _edges(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (``[a, b, ..., a]``) through each strongly connected group of modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group: set[str] = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_cycle_in(graph, group) for group in groups]


def _cycle_in(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """A shortest cycle through the first module of ``group`` (breadth-first search)."""
    start = min(group)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for target in sorted(graph[node] & group):
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if target not in came_from:
                    came_from[target] = node
                    following.append(target)
        frontier = following
    raise AssertionError(f"no cycle in {sorted(group)}")


def test_the_graph_follows_the_imports_that_run_at_load_time(tmp_path: Path) -> None:
    files = {
        "__init__.py": "from . import a\n",
        "a.py": "from typing import TYPE_CHECKING\nfrom .sub.b import run\n"
        "if TYPE_CHECKING:\n    from . import c\n",
        "c.py": "def later():\n    from . import a\n",
        "sub/__init__.py": "",
        "sub/b.py": "import pkg.a\nfrom .. import c\ntry:\n    from pkg.sub import d\n"
        "except ImportError:\n    pass\n",
        "sub/d.py": "class K:\n    from ..c import later\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    graph = import_graph("pkg", tmp_path)
    assert graph == {
        "pkg": {"pkg.a"},
        "pkg.a": {"pkg.sub.b"},
        "pkg.c": set(),
        "pkg.sub": set(),
        "pkg.sub.b": {"pkg.a", "pkg.c", "pkg.sub.d"},
        "pkg.sub.d": {"pkg.c"},
    }
    assert cycles(graph) == [["pkg.a", "pkg.sub.b", "pkg.a"]]
    assert cycles({**graph, "pkg.sub.b": {"pkg.c"}}) == []


@pytest.mark.parametrize("package", ["groundtrace.sdk", "groundtrace.collectors"])
def test_no_import_cycles(package: str) -> None:
    graph = import_graph(package)
    assert sum(map(len, graph.values())) > len(graph)  # the package's imports were read
    found = cycles(graph)
    assert not found, "import cycles in {}:\n{}".format(
        package, "\n".join(" -> ".join(cycle) for cycle in found)
    )
