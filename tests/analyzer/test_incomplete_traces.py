"""Lost evidence is never a verdict: a damaged line in a multi-trace run.

The document agent's 16 conversations are written as an exporter with batches of 5 spans
writes them (a conversation's spans spread over two or three lines), then one line is damaged.
The conversations with spans on that line become *not evaluable, incomplete trace* in paths,
the gate and the judge (those wholly on it have no trace at all); every other case's verdict
is exactly what it was without the damage.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer.cases import read_cases
from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.judge._cases import cases_from_traces
from groundtrace.analyzer.paths import load_tools_config
from groundtrace.collectors import ReadReport, read_traces
from groundtrace.examples.agent_docs.app import EXAMPLE_DIR, run
from tests.analyzer.paths.checking import validate

CASES = EXAMPLE_DIR / "cases.jsonl"
TOOLS = EXAMPLE_DIR / "tools.toml"
DAMAGED_LINE = 3  # 1-based
app = build_app()


def _rebatched(source: Path, target: Path, per_line: int) -> list[set[str]]:
    """``source``'s spans rewritten ``per_line`` to a line; the trace ids of each line."""
    envelopes: list[tuple[Any, Any, dict[str, Any]]] = []
    for line in source.read_text().splitlines():
        for rs in json.loads(line)["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                envelopes += [(rs.get("resource"), ss.get("scope"), span) for span in ss["spans"]]
    envelopes.sort(key=lambda e: int(e[2]["endTimeUnixNano"]))  # export order: as spans end
    lines, held = [], []
    for i in range(0, len(envelopes), per_line):
        chunk = envelopes[i : i + per_line]
        export = {
            "resourceSpans": [
                {"resource": r, "scopeSpans": [{"scope": s, "spans": [span]}]}
                for r, s, span in chunk
            ]
        }
        lines.append(json.dumps(export, separators=(",", ":")))
        held.append({span["traceId"] for *_, span in chunk})
    target.write_text("\n".join(lines) + "\n")
    return held


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("incomplete")
    run(root / "agent")
    (source,) = sorted((root / "agent" / "traces").iterdir())
    intact = root / "intact.jsonl"
    held = _rebatched(source, intact, per_line=5)
    lines = intact.read_bytes().splitlines(keepends=True)
    bad = bytearray(lines[DAMAGED_LINE - 1])
    bad[len(bad) // 3] = 0xFF  # a bad byte...
    bad[bad.index(b'"name":') + 6] = ord(";")  # ...and a broken structure: not JSON
    lines[DAMAGED_LINE - 1] = bytes(bad)
    damaged = root / "damaged.jsonl"
    damaged.write_bytes(b"".join(lines))
    return {"root": root, "intact": intact, "damaged": damaged, "held": held}


def _traces(path: Path) -> tuple[list[Any], ReadReport]:
    report = ReadReport()
    return list(read_traces([path], report=report)), report


def _lost(runs: dict[str, Any]) -> tuple[set[str], set[str]]:
    """Case ids whose trace lost some spans, and those whose trace was wholly lost."""
    on_line = runs["held"][DAMAGED_LINE - 1]
    elsewhere = set().union(*(h for i, h in enumerate(runs["held"]) if i != DAMAGED_LINE - 1))
    intact, _ = _traces(runs["intact"])
    case_of = {t.trace_id: t.request.case_id for t in intact}
    partly = {case_of[t] for t in on_line & elsewhere}
    wholly = {case_of[t] for t in on_line - elsewhere}
    return partly, wholly


def test_the_damaged_line_names_exactly_the_traces_it_held(runs: dict[str, Any]) -> None:
    partly, wholly = _lost(runs)
    assert partly, "the damaged line must hold part of some conversation"
    traces, report = _traces(runs["damaged"])
    assert [e.line for e in report.errors][:1] == [DAMAGED_LINE]
    incomplete = {t.request.case_id for t in traces if t.incomplete is not None}
    assert incomplete == partly
    assert not wholly & {t.request.case_id for t in traces}


def test_paths_calls_them_not_evaluable_and_no_other_verdict_changes(
    runs: dict[str, Any], tmp_path: Path
) -> None:
    partly, wholly = _lost(runs)
    cases, tools = list(read_cases(CASES)), load_tools_config(TOOLS)
    intact = validate(_traces(runs["intact"])[0], cases, tools)
    damaged = validate(_traces(runs["damaged"])[0], cases, tools)
    assert set(damaged.incomplete_traces) == partly
    assert all("incomplete" in why for why in damaged.incomplete_traces.values())
    assert set(damaged.missing_traces) == wholly
    after = {v.case_id: v for v in damaged.verdicts}
    assert not partly & set(after)  # never scored on what remains
    for verdict in intact.verdicts:
        if verdict.case_id not in partly | wholly:
            assert after[verdict.case_id] == verdict
    # on screen: each incomplete case named
    result = CliRunner().invoke(
        app,
        ["paths", str(runs["damaged"]), "--cases", str(CASES), "--tools-config", str(TOOLS),
         "--out", str(tmp_path / "paths")],
    )  # fmt: skip
    for case_id in partly:
        assert f"case {case_id}: not evaluable, incomplete trace" in result.output


def test_the_judge_and_the_gate_leave_them_out(runs: dict[str, Any], tmp_path: Path) -> None:
    partly, wholly = _lost(runs)
    judged, skipped = cases_from_traces(_traces(runs["damaged"])[0])
    assert partly == {s.case_id for s in skipped if "incomplete trace" in " ".join(s.missing)}
    assert not partly & {c.case_id for c in judged}

    def gate(candidate: Path, out: Path) -> dict[str, Any]:
        CliRunner().invoke(
            app,
            ["gate", "run", "--baseline", str(runs["intact"]), "--candidate", str(candidate),
             "--cases", str(CASES), "--tools-config", str(TOOLS), "--out", str(out)],
        )  # fmt: skip
        report = json.loads((out / "report.json").read_text())
        return {c["case_id"]: c for c in report["cases"]}

    before = gate(runs["intact"], tmp_path / "intact")
    after = gate(runs["damaged"], tmp_path / "damaged")
    for case_id in partly:
        assert after[case_id]["decision"] == "not_evaluable"
        assert "incomplete trace" in " ".join(after[case_id]["reasons"])
    for case_id in wholly:
        assert after[case_id]["decision"] == "not_evaluable"
    for case_id, decided in before.items():
        if case_id not in partly | wholly:
            assert after[case_id]["decision"] == decided["decision"], case_id
            assert after[case_id]["reasons"] == decided["reasons"], case_id
