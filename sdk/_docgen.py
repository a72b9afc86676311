"""Generate the attribute reference page (docs/attributes.md) from ``semconv.py``.

Run ``python -m groundtrace.sdk._docgen > docs/attributes.md``; a test fails when the committed
page is out of date. Every key constant is documented by the ``#:`` comment lines right above
it, written as ``type -- meaning. example``; section titles come from the plain ``# Title``
comments of ``semconv.py``.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from . import _env as env
from . import semconv as sc

__all__ = ["KeyDoc", "key_docs", "render", "semconv_source"]

#: What a key value looks like: lowercase dotted segments.
KEY_VALUE: Final = re.compile(r"^[a-z_][a-z0-9_]*(?:\.[a-z0-9_]+)*$")
_RULE: Final = re.compile(r"^#\s*-{5,}\s*$")


@dataclass(frozen=True, slots=True)
class KeyDoc:
    """One key constant of ``semconv.py`` and its documentation."""

    constant: str
    key: str
    type: str
    description: str
    section: str
    line: int


def semconv_source() -> tuple[Path, str]:
    """Path and text of ``semconv.py``."""
    path = Path(sc.__file__)
    return path, path.read_text("utf-8")


def key_docs(source: str | None = None) -> list[KeyDoc]:
    """Every module-level ``NAME: Final = "<key>"`` of semconv with its ``#:`` comment.

    A key without a comment gets an empty type and description (the contract test fails then).
    """
    text = semconv_source()[1] if source is None else source
    lines = text.splitlines()
    tree = ast.parse(text)
    section = "General"
    section_at: dict[int, str] = {}
    in_title = False  # the previous line was part of a section title
    for number, raw in enumerate(lines, start=1):
        stripped = raw.strip()
        is_title = (
            raw.startswith("#") and not raw.startswith("#:") and not _RULE.match(stripped)
        ) and bool(stripped.lstrip("#").strip())
        if is_title:
            # a title may run over several comment lines: they are one title
            text = stripped.lstrip("#").strip()
            section = f"{section} {text}" if in_title else text
        in_title = is_title
        section_at[number] = section
    docs: list[KeyDoc] = []
    for node in tree.body:
        if not (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
            and KEY_VALUE.match(node.value.value)
        ):
            continue
        comment: list[str] = []
        index = node.lineno - 2
        while index >= 0 and lines[index].strip().startswith("#:"):
            comment.insert(0, lines[index].strip()[2:].strip())
            index -= 1
        joined = " ".join(comment)
        kind, sep, rest = joined.partition(" -- ")
        docs.append(
            KeyDoc(
                constant=node.target.id,
                key=node.value.value,
                type=kind.strip() if sep else "",
                description=(rest if sep else joined).strip(),
                section=section_at.get(node.lineno, "General"),
                line=node.lineno,
            )
        )
    return docs


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _heading(title: str) -> str:
    """A section title as a Markdown heading: Markdown code spans, no closing full stop."""
    return title.replace("``", "`").removesuffix(".")


def _keys(*keys: str) -> str:
    return ", ".join(f"`{k}`" for k in keys)


def _genai_sets() -> list[str]:
    """The section on the two GenAI attribute sets and how one is chosen."""
    latest, previous = sc.GENAI_SEMCONV_VERSION, sc.GENAI_PREVIOUS_SEMCONV_VERSION
    content = "; opt-in (with content capture): "
    tool = _keys(
        sc.GENAI_OPERATION_NAME,
        sc.GENAI_TOOL_NAME,
        sc.GENAI_TOOL_TYPE,
        sc.GENAI_TOOL_DESCRIPTION,
        sc.GENAI_TOOL_CALL_ID,
    )
    rows = [
        (
            "LLM (openai instrumentor)",
            _keys(sc.GENAI_OPERATION_NAME, sc.GENAI_PROVIDER_NAME, sc.GENAI_REQUEST_STREAM)
            + ", request / response / usage keys (with "
            + _keys(
                sc.GENAI_USAGE_CACHE_READ_INPUT_TOKENS,
                sc.GENAI_USAGE_REASONING_OUTPUT_TOKENS,
                sc.GENAI_RESPONSE_TIME_TO_FIRST_CHUNK,
            )
            + "), "
            + _keys(
                sc.OPENAI_API_TYPE,
                sc.OPENAI_REQUEST_SERVICE_TIER,
                sc.OPENAI_RESPONSE_SERVICE_TIER,
                sc.OPENAI_RESPONSE_SYSTEM_FINGERPRINT,
            )
            + content
            + _keys(
                sc.GENAI_INPUT_MESSAGES,
                sc.GENAI_OUTPUT_MESSAGES,
                sc.GENAI_SYSTEM_INSTRUCTIONS,
                sc.GENAI_TOOL_DEFINITIONS,
            ),
            _keys(sc.GENAI_OPERATION_NAME, sc.GENAI_SYSTEM)
            + ", request / response / usage keys; no content keys (v1.36.0 put content in"
            " events; it is in the OpenInference and groundtrace keys)",
        ),
        (
            "RETRIEVE (`@retrieve`, rank_bm25; span kind `CLIENT`)",
            _keys(sc.GENAI_OPERATION_NAME, sc.GENAI_DATA_SOURCE_ID, sc.GENAI_REQUEST_TOP_K)
            + " (a float)"
            + content
            + _keys(sc.GENAI_RETRIEVAL_DOCUMENTS, sc.GENAI_RETRIEVAL_QUERY_TEXT),
            "none (v1.36.0 has no retrieval span)",
        ),
        (
            "TOOL (`@tool`)",
            tool + content + _keys(sc.GENAI_TOOL_CALL_ARGUMENTS, sc.GENAI_TOOL_CALL_RESULT),
            tool,
        ),
        ("REQUEST (`@request`)", _keys(sc.GENAI_CONVERSATION_ID), _keys(sc.GENAI_CONVERSATION_ID)),
        (
            "instrumentation scope schema URL",
            f"`{sc.GENAI_SCHEMA_URL}`",
            f"`{sc.GENAI_PREVIOUS_SCHEMA_URL}`",
        ),
    ]
    out = [
        "",
        "## OpenTelemetry GenAI attribute sets",
        "",
        "groundtrace's and OpenInference's keys are always written. Of the OpenTelemetry GenAI"
        f" keys, the SDK writes the current set (**{latest}**), the previous one"
        f" (**{previous}**, what the official GenAI instrumentations emit by default) or both,"
        " as `OTEL_SEMCONV_STABILITY_OPT_IN` (comma-separated tokens, read when `configure()`"
        " runs, or at import when it never does) says:",
        "",
        f"* `{env.GENAI_OPT_IN_LATEST}` -- the current set;",
        f"* `{env.GENAI_OPT_IN_BOTH}` -- both sets on every span (the scope carries the current"
        " schema URL);",
        f"* `{env.GENAI_OPT_IN_PREVIOUS}` (groundtrace's token) -- the previous set alone;",
        "* no GenAI token (the default) -- the current set: it is what groundtrace has always"
        " written (it never wrote the v1.36.0 layout), and OpenTelemetry's transition plan asks"
        " instrumentations to keep their default.",
        "",
        "Content keys are written only when the matching content field is captured, and are"
        " masked by the same redaction as every other text. The schema URL is pinned on the"
        " instrumentation scope of every span; the resource carries no GenAI attribute, so it"
        " gets none (the OpenTelemetry SDK refuses to merge resources whose schema URLs"
        " differ: it keeps one side and drops the other side's attributes).",
        "",
        "| span | current set | previous set |",
        "|---|---|---|",
    ]
    out += [f"| {span} | {now} | {before} |" for span, now, before in rows]
    return out


def render(docs: list[KeyDoc] | None = None) -> str:
    """The markdown reference page."""
    entries = key_docs() if docs is None else docs
    out = [
        "# Attribute reference",
        "",
        "<!-- generated by `python -m groundtrace.sdk._docgen > docs/attributes.md`;"
        " do not edit by hand -->",
        "",
        f"groundtrace schema version **{sc.SCHEMA_VERSION}** (`{sc.SCHEMA_URL}`); OpenTelemetry"
        f" GenAI conventions followed: **{sc.GENAI_SEMCONV_VERSION}**; OpenInference:"
        f" **{sc.OPENINFERENCE_SEMCONV_VERSION}**.",
        "",
        "Every key is a constant of `groundtrace.sdk.semconv`; import the constant, never spell"
        " the key. Indexed keys are built with `semconv.indexed(prefix, i, suffix)`, e.g."
        " `retrieval.documents.0.document.id`. Types: `str`, `int`, `float`, `bool`, `str[]`"
        " (string array); `str (JSON)` is a JSON document in a string attribute; `prefix` is the"
        " start of a family of indexed keys.",
        "",
        "Action vocabulary (`"
        + sc.GT_ACTION
        + "`): "
        + ", ".join(f"`{a.value}`" for a in sc.Action)
        + ".",
        "",
    ]
    out += _genai_sets()
    current = None
    for doc in entries:
        if doc.section != current:
            current = doc.section
            out += [
                "",
                f"## {_heading(current)}",
                "",
                "| key | constant | type | meaning, example |",
            ]
            out.append("|---|---|---|---|")
        out.append(
            f"| `{doc.key}` | `{doc.constant}` | {_cell(doc.type) or '-'} |"
            f" {_cell(doc.description) or '-'} |"
        )
    return "\n".join(out) + "\n"


def main() -> None:
    """Write the page to stdout."""
    sys.stdout.write(render())


if __name__ == "__main__":
    main()
