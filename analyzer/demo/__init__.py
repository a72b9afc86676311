"""The demo job: run the instrumented HotpotQA RAG app, capture its traces, read them back.

Steps: configure the SDK (content capture on, OTLP-JSON file exporter to ``OUT/traces/``),
instrument ``openai``, run the example app (:mod:`groundtrace.examples.hotpot_rag`) on N
questions against the chosen model, shut the SDK down (flush + fsync), write the case file
``OUT/cases.jsonl`` (case_id, question, reference_answer, gold_support_titles, type, level),
then read the traces back with the collectors and score the recorded answers against the
cases (soft EM/F1).

The demo is a user of the library: it imports the public names of the analyzer, the
collectors and the SDK only, and it is the one part of the analyzer that runs the example apps
(:mod:`groundtrace.examples`).

Usage::

    from pathlib import Path

    from groundtrace.analyzer.demo import DemoConfig, run_demo

    result = run_demo(DemoConfig(model="lexical", questions=5, out=Path("runs/demo")))
    print(result.report.accuracy)           # the record `groundtrace demo --json` prints
"""

from __future__ import annotations

from ._audit import estimate_shipped_audit, run_shipped_audit
from ._phases import DemoGate, DemoPaths
from ._run import DemoBackend, DemoConfig, DemoReport, DemoResult, ExportCounts, run_demo
from ._tables import interventions_table, roles_and_joint_lines

__all__ = [
    "DemoBackend",
    "DemoConfig",
    "DemoGate",
    "DemoPaths",
    "DemoReport",
    "DemoResult",
    "ExportCounts",
    "estimate_shipped_audit",
    "interventions_table",
    "roles_and_joint_lines",
    "run_demo",
    "run_shipped_audit",
]
