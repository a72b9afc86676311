"""groundtrace SDK: trace what a RAG service or agent did, as OpenTelemetry spans.

Usage::

    import groundtrace.sdk as gt

    gt.configure(service_name="hotpot-rag", exporter="file", capture_content=True)
    # every keyword, its environment variables and default: gt.Settings.options()

    @gt.retrieve(retriever="bm25", k=5)
    def search(query: str) -> list[dict]:
        return [{"id": "d1", "title": "Jaws", "content": "...", "score": 7.2}]

    @gt.answer(replayable=True)
    def respond(question: str, evidence: list[dict]) -> dict:
        prompt = gt.build_prompt(question, evidence)      # records the evidence block
        reply = call_model(prompt.messages)
        return gt.parse_answer(reply)                      # answer, confidence, used_chunks

    @gt.request(app_version="2026.11.1")
    def handle(question: str, case_id: str | None = None) -> str:
        return respond(question, search(question)).answer

    with gt.step(gt.Action.TOOL, name="read_document", arguments={"path": p}) as s:
        s.record_tool_result(text, paths_read=(p,))

    gt.shutdown()                                          # warns if spans were lost
    stats = gt.export_stats()   # every ended span: exported + dropped + failed (+ queued)

Decorators work on sync and async functions, generators and async generators; return values
are recorded by convention (see each decorator). The SDK never changes what the application
sees: telemetry errors are logged at debug level, user exceptions pass through unchanged.
"""

from __future__ import annotations

import typing as _typing

from . import semconv
from ._lazy import lazy_names as _lazy_names
from ._version import __version__
from .semconv import Action, ToolStatus

if _typing.TYPE_CHECKING:
    from ._config import ExportStats, configure, export_stats, shutdown
    from ._context import StepHandle, StepScope, request_context, step
    from ._decorators import answer, infer, request, rerank, retrieve, select, tool, verify
    from ._evidence import register_evidence_mapper, unregister_evidence_mapper
    from ._settings import Content, Settings
    from ._threads import instrument_threads, uninstrument_threads, with_current_context
    from .redaction import Redactor
    from .rendering import (
        ParsedAnswer,
        Prompt,
        build_prompt,
        parse_answer,
        render_evidence,
        replace_evidence_block,
    )

# The rest of the public surface is imported on first use (PEP 562): a process that only
# needs the conventions (the collectors, the analyzer) does not load the OpenTelemetry SDK.
_SURFACE: dict[str, tuple[str, ...]] = {
    "._config": ("ExportStats", "configure", "export_stats", "shutdown"),
    "._context": ("StepHandle", "StepScope", "request_context", "step"),
    "._decorators": (
        "answer",
        "infer",
        "request",
        "rerank",
        "retrieve",
        "select",
        "tool",
        "verify",
    ),
    "._evidence": ("register_evidence_mapper", "unregister_evidence_mapper"),
    "._settings": ("Content", "Settings"),
    "._threads": ("instrument_threads", "uninstrument_threads", "with_current_context"),
    ".redaction": ("Redactor",),
    ".rendering": (
        "ParsedAnswer",
        "Prompt",
        "build_prompt",
        "parse_answer",
        "render_evidence",
        "replace_evidence_block",
    ),
}
__all__ = [
    "Action",
    "Content",
    "ExportStats",
    "ParsedAnswer",
    "Prompt",
    "Redactor",
    "Settings",
    "StepHandle",
    "StepScope",
    "ToolStatus",
    "__version__",
    "answer",
    "build_prompt",
    "configure",
    "export_stats",
    "infer",
    "instrument_threads",
    "parse_answer",
    "register_evidence_mapper",
    "render_evidence",
    "replace_evidence_block",
    "request",
    "request_context",
    "rerank",
    "retrieve",
    "select",
    "semconv",
    "shutdown",
    "step",
    "tool",
    "uninstrument_threads",
    "unregister_evidence_mapper",
    "verify",
    "with_current_context",
]

__getattr__, __dir__ = _lazy_names(__name__, _SURFACE, globals(), __all__)
