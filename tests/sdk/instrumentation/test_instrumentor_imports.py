"""The shipped instrumentors use only public SDK names: each is written the way a third party
would write one (docs/CONTRIBUTING.md, "Add an instrumentor").

Every module under ``sdk/instrumentation/<lib>/`` is parsed (nothing is imported) and each of
its imports, wherever it sits (module level, functions, ``TYPE_CHECKING`` blocks), is checked.
Of ``groundtrace`` it may name only ``groundtrace.sdk.semconv``, the helpers in
``groundtrace.sdk.instrumentation.__all__`` and its own package (relative imports resolved);
anything else of the SDK, private or not, fails, naming ``file:line`` and the import.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import groundtrace.sdk.instrumentation as api

INSTRUMENTATION = Path(api.__file__).resolve().parent
ROOT = INSTRUMENTATION.parents[1]
PACKAGE = "groundtrace.sdk.instrumentation"
SEMCONV = "groundtrace.sdk.semconv"
LIBRARIES = sorted(p.parent.name for p in INSTRUMENTATION.glob("*/__init__.py"))


def _targets(node: ast.Import | ast.ImportFrom, package: str) -> Iterator[str]:
    """The dotted names an import reaches (``from m import n`` reaches ``m.n``), relative
    imports resolved against ``package``, the package the module sits in."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    module = node.module or ""
    if node.level:
        parts = package.split(".")
        base = parts[: len(parts) - (node.level - 1)]
        module = ".".join([*base, module] if module else base)
    for alias in node.names:
        yield f"{module}.{alias.name}"


def _allowed(target: str, library: str) -> bool:
    if not (target == "groundtrace" or target.startswith("groundtrace.")):
        return True  # the patched library, OpenTelemetry, wrapt, the standard library
    if target == library or target.startswith(library + "."):
        return True  # the instrumentor's own modules
    if target == SEMCONV or target.startswith(SEMCONV + "."):
        return True
    if target == PACKAGE:
        return True  # ``import groundtrace.sdk.instrumentation as gi``: its public names
    head, _, name = target.rpartition(".")
    return head == PACKAGE and name in api.__all__


def violations(source: str, module: str, shown_as: str) -> list[str]:
    """The imports of the module ``module`` (text ``source``) that reach past the public
    helpers, each as ``shown_as:line: ...``."""
    parts = module.split(".")
    library = ".".join(parts[:4])  # groundtrace.sdk.instrumentation.<lib>
    package = module if shown_as.endswith("__init__.py") else ".".join(parts[:-1])
    found: list[str] = []
    for node in ast.walk(ast.parse(source, shown_as)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            bad = [t for t in _targets(node, package) if not _allowed(t, library)]
            if bad:
                found.append(f"{shown_as}:{node.lineno}: {ast.unparse(node)} (reaches {bad})")
    return found


def test_there_are_instrumentors_to_check() -> None:
    assert {"openai", "rank_bm25"} <= set(LIBRARIES)


@pytest.mark.parametrize("library", LIBRARIES)
def test_an_instrumentor_imports_only_the_public_helpers(library: str) -> None:
    found: list[str] = []
    for path in sorted((INSTRUMENTATION / library).rglob("*.py")):
        parts = path.relative_to(INSTRUMENTATION).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        module = ".".join((PACKAGE, *parts))
        found += violations(path.read_text("utf-8"), module, str(path.relative_to(ROOT.parent)))
    assert not found, (
        f"an instrumentor may import from groundtrace only {SEMCONV} and the helpers of "
        f"{PACKAGE} (add a missing helper to its __all__):\n" + "\n".join(found)
    )


@pytest.mark.parametrize(
    ("source", "bad"),
    [
        ("from groundtrace.sdk._record import Recorder", True),
        ("from groundtrace.sdk.instrumentation._base import Layers", True),
        ("import groundtrace.sdk._runtime", True),
        ("from groundtrace.sdk import _runtime", True),
        ("from groundtrace.sdk.instrumentation import _base", True),
        ("from groundtrace.sdk import configure", True),
        ("from groundtrace.analyzer import Result", True),
        ("from ..openai import _span", True),
        ("from .. import Layers", False),  # the helpers package itself, by a relative import
        ("from ... import _runtime", True),
        ("def f():\n    from groundtrace.sdk._settings import Content", True),
        ("if TYPE_CHECKING:\n    from groundtrace.sdk._settings import Content", True),
        ("from groundtrace.sdk import semconv as sc", False),
        ("from groundtrace.sdk.semconv import Action", False),
        ("import groundtrace.sdk.instrumentation as gi", False),
        ("from groundtrace.sdk.instrumentation import Layers, Recorder", False),
        ("from groundtrace.sdk.instrumentation.demo import Thing", False),
        ("from ._wrappers import sync_wrapper", False),
        ("from . import _wrappers", False),
        ("import wrapt", False),
    ],
)
def test_the_check_tells_the_public_helpers_from_the_rest(source: str, bad: bool) -> None:
    found = violations(source, f"{PACKAGE}.demo._probe", "demo/_probe.py")
    assert bool(found) is bad, found
    if bad:
        assert found[0].startswith("demo/_probe.py:")
