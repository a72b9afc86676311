"""The public surface of groundtrace.sdk."""

from __future__ import annotations

import groundtrace.sdk as gt

EXPECTED = {
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
}


def test_all_matches_the_declared_surface() -> None:
    assert set(gt.__all__) == EXPECTED
    assert len(gt.__all__) == len(set(gt.__all__))
    for name in gt.__all__:
        assert getattr(gt, name) is not None


def test_no_other_public_names_leak() -> None:
    for name in gt.__all__:  # the surface is imported on first use: resolve all of it
        getattr(gt, name)
    public = {n for n in vars(gt) if not n.startswith("_")}
    # submodules imported as a side effect of the package import are not API
    modules = {n for n in public if type(getattr(gt, n)).__name__ == "module"}
    assert public - modules - {"annotations"} == EXPECTED - {"semconv", "__version__"}
