"""The import graph of ``groundtrace.sdk``, ``collectors``, ``analyzer`` and ``examples``.

Every module is parsed (nothing is imported) and checked against three rules; a failure names
``file:line`` and the import statement.

**No import cycles** inside each package. The imports that run when a module is loaded become
edges of a graph between the package's modules: ``import a.b``, ``from a import b`` and
relative imports, at module level, in class bodies and in ``if``/``try``/``with`` blocks.
Imports under ``if TYPE_CHECKING:`` and imports inside functions are left out: they do not run
when the module is loaded. ``from p import x`` is an edge to the module ``p.x`` when there is
one, else to ``p``.

**Public names only across packages.** A *package* is a folder with an ``__init__.py``; a
module belongs to the package of its folder (a package's ``__init__.py`` to that package). A
dotted name is *private* when one of its parts starts with ``_`` (dunder names such as
``__version__`` are not private), and it is *owned* by the package that holds its first private
part: ``groundtrace.analyzer.gate._run.evaluate`` by ``groundtrace.analyzer.gate``,
``groundtrace.analyzer._results`` by ``groundtrace.analyzer``. A module may import a private
name only when its package is the owner or lies inside it: a subpackage may use the private
modules of the packages it sits in (``groundtrace.analyzer.cli`` uses
``groundtrace.analyzer._results``), never those of a sibling or of its own subpackages
(neither ``groundtrace.analyzer.cli`` nor ``groundtrace.analyzer._wording`` may use
``groundtrace.analyzer.gate._run``: the gate's public names are in ``groundtrace.analyzer.gate``).
The users of the library, the demo package (``groundtrace.analyzer.demo``) and the example apps
(``groundtrace.examples``), may use no private name from outside themselves at all, not even
their enclosing packages' (the demo takes ``Result`` from ``groundtrace.analyzer``, not from
``groundtrace.analyzer._results``). Every import counts here, wherever it is: module level,
functions, class bodies and ``TYPE_CHECKING`` blocks; ``from p import _x`` as much as
``import p._x``. Names of third-party packages are not checked.

**The examples are run by the demo only.** No module of ``sdk``, ``collectors`` or
``analyzer`` outside the demo package imports ``groundtrace.examples`` (the examples import
each other freely).
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Iterator, Mapping, Sequence
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


def _package_of(name: str, path: Path) -> str:
    """The package module ``name`` (file ``path``) belongs to: itself for an ``__init__.py``,
    else the package of its folder."""
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _source(node: ast.ImportFrom, here: str) -> str:
    """The absolute module ``node`` imports from, in package ``here``."""
    if not node.level:
        return node.module or ""
    base = here.rsplit(".", node.level - 1)[0] if node.level > 1 else here
    return f"{base}.{node.module}" if node.module else base


def _edges(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of the same package that ``name`` imports when it is loaded."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    here = _package_of(name, path)
    targets: set[str] = set()
    for node in _load_time_imports(tree.body):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        else:
            source = _source(node, here)
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


def _imported_names(name: str, path: Path) -> Iterator[tuple[int, str, str]]:
    """(line, statement, dotted name) of every name module ``name`` imports, wherever the
    import is (functions and ``TYPE_CHECKING`` blocks included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    here = _package_of(name, path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = _source(node, here)
            names = [f"{source}.{alias.name}" for alias in node.names]
        else:
            continue
        statement = ast.unparse(node)
        for dotted in names:
            yield node.lineno, statement, dotted


def _is_private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _owner(dotted: str) -> str | None:
    """The package that owns ``dotted`` (the one holding its first private part), or ``None``
    when the name is public."""
    parts = dotted.split(".")
    first = next((i for i, part in enumerate(parts) if _is_private(part)), None)
    return None if first is None else ".".join(parts[:first])


def _inside(package: str, root: str) -> bool:
    return package == root or package.startswith(root + ".")


def boundary_violations(
    packages: Mapping[str, Path], *, users: Sequence[str], demo: str, examples: str
) -> list[str]:
    """Every import that breaks the rules of the module docstring, as ``file:line: statement
    (why)``: private names across packages (``users`` use none from outside themselves) and
    ``examples`` imported from outside ``demo``.

    Args:
        packages: top-level package name -> its folder.
        users: packages that may use no private name from outside themselves.
        demo: the one package, besides ``examples`` itself, that may import ``examples``.
        examples: the example apps' package.
    """
    found: list[str] = []
    for package, root in packages.items():
        for name, path in _modules(package, root).items():
            here = _package_of(name, path)
            user = next((u for u in users if _inside(here, u)), None)
            for line, statement, dotted in _imported_names(name, path):
                if not any(_inside(dotted, top) for top in packages):
                    continue  # a third-party package's names follow its own conventions
                where = f"{path}:{line}: {statement}"
                owner = _owner(dotted)
                if owner is not None and not (
                    _inside(here, owner) and (user is None or _inside(owner, user))
                ):
                    found.append(f"{where} (private name {dotted} of {owner}, used in {here})")
                if _inside(dotted, examples) and not (
                    _inside(here, demo) or _inside(here, examples)
                ):
                    found.append(f"{where} ({examples} imported outside {demo})")
    return found


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


PACKAGES = (
    "groundtrace.sdk",
    "groundtrace.collectors",
    "groundtrace.analyzer",
    "groundtrace.examples",
)
DEMO = "groundtrace.analyzer.demo"
EXAMPLES = "groundtrace.examples"


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycles(package: str) -> None:
    graph = import_graph(package)
    assert any(graph.values())  # the package's imports were read
    found = cycles(graph)
    assert not found, "import cycles in {}:\n{}".format(
        package, "\n".join(" -> ".join(cycle) for cycle in found)
    )


def test_the_boundary_rules_count_every_import_and_name_it(tmp_path: Path) -> None:
    files = {
        "lib/__init__.py": "from ._core import run\nfrom .__about__ import __version__\n",
        "lib/_core.py": "from ._util import helper\n",
        "lib/_util.py": "",
        "lib/gate/__init__.py": "from ._run import evaluate\n",
        "lib/gate/_run.py": "from .._util import helper\nfrom lib._core import run\n",
        "lib/cli/__init__.py": "",
        "lib/cli/_gate.py": "from typing import TYPE_CHECKING\nfrom lib._util import helper\n"
        "if TYPE_CHECKING:\n    from lib.gate._run import Report\n"
        "def command():\n    from lib.gate import _run\n    from lib.gate import evaluate\n",
        "lib/_readings.py": "import lib.gate._run as gate_run\n",
        "lib/demo/__init__.py": "from ._app import go\n",
        "lib/demo/_app.py": "from lib import run\nfrom lib._core import run as core_run\n"
        "from ex.rag import app\n",
        "lib/runner.py": "import os._private\ndef later():\n    from ex.rag.app import answer\n",
        "ex/__init__.py": "",
        "ex/rag/__init__.py": "",
        "ex/rag/app.py": "from ex.rag import _data\nfrom ex import rag\n"
        "from lib.gate import evaluate\n",
        "ex/rag/_data.py": "",
        "ex/other.py": "from ex.rag._data import rows\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    found = boundary_violations(
        {"lib": tmp_path / "lib", "ex": tmp_path / "ex"},
        users=("lib.demo", "ex"),
        demo="lib.demo",
        examples="ex",
    )
    lib, ex = tmp_path / "lib", tmp_path / "ex"
    assert found == [
        f"{lib}/_readings.py:1: import lib.gate._run as gate_run"
        " (private name lib.gate._run of lib.gate, used in lib)",
        f"{lib}/cli/_gate.py:4: from lib.gate._run import Report"
        " (private name lib.gate._run.Report of lib.gate, used in lib.cli)",
        f"{lib}/cli/_gate.py:6: from lib.gate import _run"
        " (private name lib.gate._run of lib.gate, used in lib.cli)",
        f"{lib}/demo/_app.py:2: from lib._core import run as core_run"
        " (private name lib._core.run of lib, used in lib.demo)",
        f"{lib}/runner.py:3: from ex.rag.app import answer (ex imported outside lib.demo)",
        f"{ex}/other.py:1: from ex.rag._data import rows"
        " (private name ex.rag._data.rows of ex.rag, used in ex)",
    ]


def test_the_demo_is_a_package_of_its_own() -> None:
    spec = importlib.util.find_spec(DEMO)
    assert spec is not None and spec.submodule_search_locations, f"{DEMO} is not a package"
    assert len(_modules(DEMO, _package_dir(DEMO))) > 1


def test_public_names_only_across_packages_and_the_examples_run_by_the_demo_only() -> None:
    packages = {package: _package_dir(package) for package in PACKAGES}
    found = boundary_violations(packages, users=(DEMO, EXAMPLES), demo=DEMO, examples=EXAMPLES)
    assert not found, "imports across package boundaries:\n" + "\n".join(found)
