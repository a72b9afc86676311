"""The demo job: run the instrumented HotpotQA RAG app, capture its traces, run every analysis.

Steps: configure the SDK (content capture on, OTLP-JSON file exporter to ``OUT/traces/``),
instrument ``openai``, run the example app (:mod:`groundtrace.examples.hotpot_rag`) on N
questions against the chosen model, shut the SDK down (flush + fsync), write the case file
``OUT/cases.jsonl`` (case_id, question, reference_answer, gold_support_titles, type, level);
optionally run the app again at another BM25 depth (a release candidate) and the document
agent (:mod:`groundtrace.examples.agent_docs`). Then every analysis with a demo hook runs the
one way: its hook's config on what the demo captured
(:class:`~groundtrace.analyzer.DemoInputs`), through
:func:`~groundtrace.analyzer.run_analysis`, its reports in ``OUT/<name>/``. Last, the traces
are read back with the collectors and the recorded answers scored against the cases (soft
EM/F1).

The demo is a user of the library: it imports the public names of the analyzer, the
collectors and the SDK only, and it is the one part of the analyzer that runs the example apps
(:mod:`groundtrace.examples`).

Usage::

    from pathlib import Path

    from groundtrace.analyzer.demo import DemoConfig, run_demo

    result = run_demo(DemoConfig(model="lexical", questions=5, out=Path("runs/demo"), judge=True))
    print(result.report.accuracy)           # the record `groundtrace demo --json` prints
    print(result.report.analyses["judge"].reading)
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

from ._audit import licence_config
from ._audit import run_shipped_audit as run_shipped_audit  # deprecated (0.2.0), not listed
from ._run import DemoConfig, DemoReport, DemoResult, run_demo

__all__ = ["DemoConfig", "DemoReport", "DemoResult", "licence_config", "run_demo"]

#: Internals no longer public (0.2.0): importable from here for one release, with a warning.
_INTERNAL = {
    "DEMO_FORMAT_VERSION": "_run",
    "DemoAnalysis": "_hooks",
    "DemoBackend": "_run",
    "ExportCounts": "_run",
}

#: Records of demo reports of format 1.5 and earlier, served with a warning until 0.3.0.
_REMOVED = frozenset({"DemoGate", "DemoPaths"})


def __getattr__(name: str) -> Any:
    """The internals of :data:`_INTERNAL`, and ``DemoGate`` and ``DemoPaths`` (each
    analysis's run is an entry of ``DemoReport.analyses``): deprecated, with a warning (the
    demo is a user of the library: it writes its own, without the analyzer's private helper).
    """
    home = _INTERNAL.get(name)
    if home is not None:
        warnings.warn(
            f"{__name__}.{name} is deprecated since groundtrace 0.2.0 and is removed in 0.3.0: "
            f"use {__name__}.{home}.{name}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(f"{__name__}.{home}"), name)
    if name not in _REMOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"{__name__}.{name} is deprecated since groundtrace 0.2.0 and is removed in 0.3.0: "
        f"use {__name__}.DemoReport.analyses",
        DeprecationWarning,
        stacklevel=2,
    )
    from . import _legacy

    return getattr(_legacy, name)
