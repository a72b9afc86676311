"""The code of docs/CONTRIBUTING.md's "Add an instrumentor" runs as written.

The section's one Python block (the whole ``tinysearch`` instrumentor) is executed as a module
against a stand-in ``tinysearch`` library defined here, and its spans are checked through the
real OpenTelemetry SDK; its TOML block is the entry-point table ``pyproject.toml`` uses.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from groundtrace.sdk import semconv as sc
from tests.sdk.conftest import Traces

REPO = Path(__file__).resolve().parents[3]
DOC = REPO / "docs" / "CONTRIBUTING.md"
HEADING = "## Add an instrumentor"


def section() -> str:
    """The text of the section, up to the next heading of its level."""
    text = DOC.read_text("utf-8")
    start = text.index(HEADING)
    after = text.find("\n## ", start + len(HEADING))
    return text[start : after if after >= 0 else len(text)]


def code_blocks(language: str) -> list[str]:
    """The fenced ``language`` blocks of the section, dedented."""
    found = re.findall(rf"^( *)```{language}\n(.*?)^\1```$", section(), flags=re.S | re.M)
    return [re.sub(rf"(?m)^{indent}", "", body) for indent, body in found]


class Index:
    """The stand-in library: ``search`` returns the documents holding a word of the query."""

    def __init__(self, docs: dict[str, str]) -> None:
        self.docs = docs

    def search(self, query: str, k: int = 2) -> list[dict[str, Any]]:
        words = set(query.split())
        hits = [(i, t) for i, t in self.docs.items() if words & set(t.split())]
        return [{"id": i, "content": t, "score": 1.0 / r} for r, (i, t) in enumerate(hits, 1)][:k]


ORIGINAL = vars(Index)["search"]
DOCS = {"d-owl": "owls hunt at night", "d-fox": "foxes hunt mice", "d-oak": "oaks grow slowly"}


@pytest.fixture
def recipe(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    """The section's instrumentor module, loaded next to a stand-in ``tinysearch``."""
    library = types.ModuleType("tinysearch")
    library.Index = Index  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tinysearch", library)
    [code] = code_blocks("python")
    module = types.ModuleType("tinysearch_instrumentation")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(code, f"{DOC}#{HEADING}", "exec"), module.__dict__)
    yield module
    inst = module.TinySearchInstrumentor()  # OpenTelemetry's instrumentors are singletons
    if inst.is_instrumented_by_opentelemetry:
        inst.uninstrument()


def test_the_recipes_instrumentor_traces_and_uninstruments(
    recipe: types.ModuleType, traces: Traces
) -> None:
    inst = recipe.TinySearchInstrumentor()
    inst.instrument(skip_dep_check=True)  # the stand-in is no installed distribution
    found = Index(DOCS).search("who hunt")
    assert [d["id"] for d in found] == ["d-owl", "d-fox"]
    span = traces.one(sc.Action.RETRIEVE.value)
    assert span.name == "retrieval tinysearch"
    attrs: dict[str, Any] = dict(span.attributes or {})
    assert attrs[sc.GT_RETRIEVAL_QUERY] == "who hunt"
    assert [e["id"] for e in json.loads(attrs[sc.GT_EVIDENCE])] == ["d-owl", "d-fox"]
    with pytest.raises(AttributeError):  # the library's own error, unchanged
        Index(DOCS).search(None)  # type: ignore[arg-type]
    assert traces.spans()[-1].status.is_ok is False
    inst.uninstrument()
    assert vars(Index)["search"] is ORIGINAL


def test_the_recipes_dependency_check_is_real(recipe: types.ModuleType, traces: Traces) -> None:
    inst = recipe.TinySearchInstrumentor()
    inst.instrument()  # "tinysearch >= 1.0" is not installed: OpenTelemetry declines
    assert vars(Index)["search"] is ORIGINAL
    Index(DOCS).search("owls")
    assert traces.spans() == []


def test_the_recipes_entry_point_is_the_table_the_project_uses(recipe: types.ModuleType) -> None:
    [block] = code_blocks("toml")
    points = tomllib.loads(block)["project"]["entry-points"]["opentelemetry_instrumentor"]
    assert points == {
        "groundtrace_tinysearch": (
            "groundtrace.sdk.instrumentation.tinysearch:TinySearchInstrumentor"
        )
    }
    assert hasattr(recipe, "TinySearchInstrumentor")
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    shipped = project["project"]["entry-points"]["opentelemetry_instrumentor"]
    assert "groundtrace_openai" in shipped and "groundtrace_rank_bm25" in shipped
