"""The trace contract: attribute keys are spelled once, in sdk/semconv.py, and documented.

* no string constant outside semconv.py (docstrings excepted) looks like a dotted attribute key
  of the conventions we write or read;
* every UPPER_CASE constant of semconv is exported in ``__all__``;
* every key constant carries its ``#: type -- meaning. example`` comment;
* docs/attributes.md is the up-to-date output of ``python -m groundtrace.sdk._docgen``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from groundtrace.sdk import _docgen
from groundtrace.sdk import semconv as sc

REPO = Path(__file__).resolve().parents[1]
SCANNED = ("sdk", "collectors", "analyzer", "examples", "benchmarks")
SEMCONV = REPO / "sdk" / "semconv.py"

PREFIXES = (
    "groundtrace",
    "gen_ai",
    "llm",
    "retrieval",
    "reranker",
    "tool",
    "tool_call",
    "input",
    "output",
    "openinference",
    "message",
    "document",
    "session",
    "user",
    "traceloop",
    "error",
    "server",
    "service",
)
#: A whole string that is a dotted key (or the start/middle of one, as in f-string pieces).
KEY_LIKE = re.compile(r"^\.?(?:" + "|".join(PREFIXES) + r")\.[a-z0-9_]+(?:\.[a-z0-9_{}]*)*$")
#: Dotted strings with these prefixes are Python module paths, not attribute keys.
#: The entry-point group of analysis plugins is a name of the same kind.
MODULE_PATHS = (
    "groundtrace.sdk",
    "groundtrace.collectors",
    "groundtrace.analyzer",
    "groundtrace.analyses",
    "groundtrace.examples",
)
#: A last segment like these makes it a file name (``output.json``), not a key.
FILE_SUFFIXES = {
    "json",
    "jsonl",
    "txt",
    "md",
    "csv",
    "yaml",
    "yml",
    "html",
    "py",
    "toml",
    "gz",
    "lock",
}


def _python_files() -> Iterator[Path]:
    for folder in SCANNED:
        root = REPO / folder
        if root.is_dir():
            yield from sorted(p for p in root.rglob("*.py") if ".venv" not in p.parts)


def _docstring_nodes(tree: ast.AST) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def looks_like_key(text: str) -> bool:
    """Whether ``text`` reads as a dotted attribute key of our conventions."""
    if not KEY_LIKE.match(text):
        return False
    if text.startswith(MODULE_PATHS):
        return False
    return text.rsplit(".", 1)[-1] not in FILE_SUFFIXES


def offenders(path: Path) -> list[str]:
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    docstrings = _docstring_nodes(tree)
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and looks_like_key(node.value)
        ):
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.value!r}")
    return found


def test_the_detector_catches_keys_and_spares_non_keys() -> None:
    for key in ("gen_ai.request.model", "groundtrace.action", "llm.model_name", "input.value"):
        assert looks_like_key(key)
    assert looks_like_key("retrieval.documents.")  # an f-string piece
    for text in ("groundtrace.sdk", "output.json", "hello world", "gen_ai", "a.b.c", "1.0.0"):
        assert not looks_like_key(text)


def test_no_dotted_attribute_literals_outside_semconv() -> None:
    problems = [
        line
        for path in _python_files()
        if path.resolve() != SEMCONV.resolve()
        for line in offenders(path)
    ]
    assert not problems, (
        "dotted attribute keys outside sdk/semconv.py (import the constants):\n"
        + ("\n".join(problems))
    )


def test_semconv_itself_is_seen_by_the_detector() -> None:
    assert len(offenders(SEMCONV)) > 50  # guards against a detector that finds nothing


def test_every_upper_case_constant_is_exported() -> None:
    tree = ast.parse(SEMCONV.read_text("utf-8"))
    names = set()
    for node in tree.body:
        targets = []
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            targets = [node.target.id]
        elif isinstance(node, ast.Assign):
            targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
        names.update(t for t in targets if t.isupper())
    missing = sorted(names - set(sc.__all__))
    assert not missing, f"semconv constants missing from __all__: {missing}"
    unresolved = [n for n in sc.__all__ if not hasattr(sc, n)]
    assert not unresolved


def test_every_key_constant_is_documented() -> None:
    docs = _docgen.key_docs()
    assert len(docs) > 100
    undocumented = [f"sdk/semconv.py:{d.line}: {d.constant}" for d in docs if not d.description]
    assert not undocumented, "key constants without a '#:' comment:\n" + "\n".join(undocumented)
    untyped = [f"sdk/semconv.py:{d.line}: {d.constant}" for d in docs if not d.type]
    assert len(untyped) <= len(docs) // 4, untyped


def test_every_key_constant_is_on_the_reference_page() -> None:
    page = (REPO / "docs" / "attributes.md").read_text("utf-8")
    for doc in _docgen.key_docs():
        assert f"| `{doc.key}` | `{doc.constant}` |" in page


def test_reference_page_is_up_to_date() -> None:
    page = (REPO / "docs" / "attributes.md").read_text("utf-8")
    assert page == _docgen.render(), (
        "docs/attributes.md is stale: run `python -m groundtrace.sdk._docgen > docs/attributes.md`"
    )
