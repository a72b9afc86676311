"""Write-back round trip against a real Phoenix, run under ``unshare -n`` by the test.

1. starts Phoenix (as :mod:`tests.integration.phoenix_scenario` does) and runs the small
   instrumented RAG app, which exports its spans both to Phoenix over OTLP/HTTP and to OTLP-JSON
   files (as an app exporting to its backend and to a file for CI would);
2. waits until Phoenix has every span;
3. runs ``groundtrace gate run`` and ``groundtrace judge run`` on that file with
   ``--write-back phoenix``, reads the span annotations back through Phoenix's REST API on the
   original root spans, then runs both again and reads them again (a rerun must not add any);
4. points a write-back at a span Phoenix does not have (exit code 4, reason quoted);
5. prints ONE JSON line with what it found.

Usage::

    unshare -n sh -c \
        'ip link set lo up && python -m tests.integration.phoenix_writeback_scenario DATA'
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from groundtrace.collectors import ReadReport, read_traces
from groundtrace.sdk.file_exporter import OTLPJsonFileExporter
from tests.integration.phoenix_scenario import (
    INGEST_TIMEOUT_S,
    N_CASES,
    PROJECT,
    phoenix_spans,
    run_with_phoenix,
    send_traces,
    wait_until,
)

CLI = [sys.executable, "-c", "from groundtrace.analyzer.cli import main; main()"]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=300, check=False)


def annotations(url: str, span_ids: list[str]) -> list[dict[str, Any]]:
    response = httpx.get(
        f"{url}/v1/projects/{PROJECT}/span_annotations",
        params={"span_ids": span_ids, "limit": 1000},
        timeout=30,
    )
    response.raise_for_status()
    rows: list[dict[str, Any]] = response.json()["data"]
    return rows


def view(rows: list[dict[str, Any]]) -> list[list[Any]]:
    """What a rerun must leave unchanged: id, span, name, identifier, label, score."""
    return sorted(
        [
            r["id"], r["span_id"], r["name"], r["identifier"], r["result"]["label"],
            r["result"]["score"], r["annotator_kind"],
        ]
        for r in rows
    )  # fmt: skip


def scenario(url: str, data_file: Path, workdir: Path) -> dict[str, Any]:
    spans = workdir / "spans.jsonl"
    cases = send_traces(url, data_file, OTLPJsonFileExporter(spans))
    wait_until(lambda: len(phoenix_spans(url)) >= 4 * N_CASES, INGEST_TIMEOUT_S, "ingestion")
    traces_file = spans
    traces = list(read_traces([str(spans)], report=ReadReport()))
    roots = {
        t.request.case_id: next(s.span_id for s in t.steps if s.parent_span_id is None)
        for t in traces
    }
    case_file = workdir / "cases.jsonl"
    case_file.write_text(
        "".join(
            json.dumps({"case_id": c["_id"], "question": c["question"],
                        "reference_answer": c["answer"]}) + "\n"
            for c in cases
        ),
        encoding="utf-8",
    )  # fmt: skip

    def analyses(tag: str) -> list[subprocess.CompletedProcess[str]]:
        gate = cli(
            "gate", "run", "--baseline", str(traces_file), "--candidate", str(traces_file),
            "--cases", str(case_file), "--out", str(workdir / f"gate-{tag}"),
            "--write-back", "phoenix", "--phoenix-url", url,
        )  # fmt: skip
        judge = cli(
            "judge", "run", str(traces_file), "--out", str(workdir / f"judge-{tag}"),
            "--write-back", "phoenix", "--phoenix-url", url,
        )  # fmt: skip
        return [gate, judge]

    first = analyses("1")
    after_first = annotations(url, sorted(roots.values()))
    second = analyses("2")
    after_second = annotations(url, sorted(roots.values()))
    gate_report = json.loads((workdir / "gate-1" / "report.json").read_text(encoding="utf-8"))
    judgments = [
        json.loads(line)
        for line in (workdir / "judge-1" / "judgments.jsonl").read_text().splitlines()
    ]
    bogus = workdir / "bogus.jsonl"
    bogus.write_text(
        spans.read_text(encoding="utf-8").replace(roots[cases[0]["_id"]], "0" * 15 + "1"),
        encoding="utf-8",
    )
    missing = cli(
        "gate", "run", "--baseline", str(bogus), "--candidate", str(bogus), "--cases",
        str(case_file), "--out", str(workdir / "gate-bogus"), "--write-back", "phoenix",
        "--phoenix-url", url,
    )  # fmt: skip
    return {
        "roots": roots,
        "returncodes": [p.returncode for p in first + second],
        "stderr": [p.stderr[-800:] for p in first + second],
        "gate_decisions": {c["case_id"]: c["decision"] for c in gate_report["cases"]},
        "judge_scores": {j["case_id"]: j["scores"] for j in judgments},
        "first": view(after_first),
        "second": view(after_second),
        "sample": after_first[:2],
        "missing_returncode": missing.returncode,
        "missing_stderr": missing.stderr[-800:],
        "missing_report_written": (workdir / "gate-bogus" / "report.json").is_file(),
    }


if __name__ == "__main__":
    print(json.dumps(run_with_phoenix(scenario, Path(sys.argv[1])), default=str))
    sys.exit(0)
