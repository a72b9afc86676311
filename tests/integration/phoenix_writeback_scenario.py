"""Write-back into Phoenix's own views against a real Phoenix, run under ``unshare -n`` by the test.

1. starts Phoenix (as :mod:`tests.integration.phoenix_scenario` does) and runs the HotpotQA
   example app (the in-process lexical reader) on two questions, exporting its spans to Phoenix
   over OTLP/HTTP and to an OTLP-JSON file (as an app exporting to its backend and to a file for
   CI would), and waits until Phoenix has every span;
2. runs ``gate run``, ``judge run`` and ``interventions`` on that file with
   ``--write-back phoenix``; reads back through Phoenix's REST API the trace annotations and
   through its GraphQL API (the one serving them) the document annotations; runs all three
   again and reads again (a rerun must add nothing); writes a second role on another document
   of one annotated retrieval span (``annotate_phoenix``) and reads again;
3. pulls the project with ``groundtrace collect phoenix`` and counts the evaluations it read;
4. points ``--write-back otlp`` at Phoenix (exit code 4, the error names ``--write-back
   phoenix``) and a write-back at a trace Phoenix does not have (exit code 4, reason quoted);
5. with ``GROUNDTRACE_PHOENIX_SCREENSHOTS=DIR`` set, takes headless-Chromium screenshots of the
   Phoenix UI (:mod:`tests.integration.phoenix_screenshots`) into DIR;
6. prints ONE JSON line with what it found.

Usage::

    unshare -n sh -c \
        'ip link set lo up && python -m tests.integration.phoenix_writeback_scenario DATA'
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import groundtrace.sdk as gt
from groundtrace.analyzer.interventions._verdicts import role_score
from groundtrace.analyzer.writeback import Verdict, annotate_phoenix
from groundtrace.collectors import ReadReport, read_traces
from groundtrace.collectors.model import loads
from groundtrace.sdk import semconv as sc
from groundtrace.sdk.file_exporter import OTLPJsonFileExporter
from tests.integration.phoenix_scenario import (
    INGEST_TIMEOUT_S,
    PROJECT,
    phoenix_spans,
    run_with_phoenix,
    wait_until,
)

CLI = [sys.executable, "-c", "from groundtrace.analyzer.cli import main; main()"]
#: Questions the app answers (interventions replay each one several times).
N_QUESTIONS = 2
DOCUMENTS_QUERY = "{ name label score explanation metadata documentPosition annotatorKind }"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GROUNDTRACE_", "OTEL_"))}
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, timeout=600, check=False, env=env
    )


def run_app(url: str, data_file: Path, spans: Path, cases_file: Path) -> int:
    """The HotpotQA app on the first questions: spans to Phoenix and to ``spans``; span count."""
    from groundtrace.examples.hotpot_rag import app
    from groundtrace.examples.hotpot_rag.cases import case_record, load_cases

    cases = load_cases(data_file, limit=N_QUESTIONS)
    cases_file.write_text(
        "".join(json.dumps(case_record(c)) + "\n" for c in cases), encoding="utf-8"
    )
    memory = InMemorySpanExporter()
    resource = Resource.create({sc.SERVICE_NAME: app.APP_NAME, sc.OI_PROJECT_NAME: PROJECT})
    provider = TracerProvider(resource=resource)
    gt.configure(
        tracer_provider=provider,
        exporter=[memory, OTLPJsonFileExporter(spans), OTLPSpanExporter(f"{url}/v1/traces")],
        capture_content=True,
        redact=False,
    )
    try:
        for case in cases:
            app.run_case(case, model="lexical", base_url=app.LEXICAL_BASE_URL)
    finally:
        gt.shutdown()
        provider.shutdown()
    return len(memory.get_finished_spans())


def trace_annotations(url: str, trace_ids: list[str]) -> list[dict[str, Any]]:
    response = httpx.get(
        f"{url}/v1/projects/{PROJECT}/trace_annotations",
        params={"trace_ids": trace_ids, "limit": 1000},
        timeout=30,
    )
    response.raise_for_status()
    rows: list[dict[str, Any]] = response.json()["data"]
    return rows


def document_annotations(url: str, span_ids: list[str]) -> list[dict[str, Any]]:
    """Every document annotation of the given retrieval spans (Phoenix's GraphQL API)."""
    spans = {s["context"]["span_id"]: s for s in phoenix_spans(url)}
    fields = " ".join(
        f's{i}: node(id: "{spans[sid]["id"]}") {{ ... on Span {{ documentEvaluations '
        f"{DOCUMENTS_QUERY} }} }}"
        for i, sid in enumerate(span_ids)
    )
    response = httpx.post(f"{url}/graphql", json={"query": f"{{ {fields} }}"}, timeout=30)
    response.raise_for_status()
    body = response.json()
    assert not body.get("errors"), body
    return [
        {**row, "span_id": sid}
        for i, sid in enumerate(span_ids)
        for row in body["data"][f"s{i}"]["documentEvaluations"]
    ]


def trace_view(rows: list[dict[str, Any]]) -> list[list[Any]]:
    """What a rerun must leave unchanged: id, trace, name, identifier, label, score, kind."""
    return sorted(
        [
            r["id"], r["trace_id"], r["name"], r["identifier"], r["result"]["label"],
            r["result"]["score"], r["annotator_kind"], r["metadata"].get("evaluation"),
        ]
        for r in rows
    )  # fmt: skip


def document_view(rows: list[dict[str, Any]]) -> list[list[Any]]:
    return sorted(
        [r["span_id"], r["documentPosition"], r["name"], r["label"], r["metadata"], r["score"],
         r["explanation"]]
        for r in rows
    )  # fmt: skip


def second_role(
    documents: dict[str, dict[str, list[str]]], written: list[list[Any]]
) -> list[Verdict]:
    """A role on another document of a retrieval span the interventions annotated: one span
    then holds two roles, with opposite scores, told apart only by their documents."""
    for span, position, _name, _label, metadata, score, _explanation in written:
        trace = metadata["trace_id"]
        others = [i for i in range(len(documents[trace][span])) if i != position]
        if not others:
            continue
        label = "constructive" if score == 0.0 else "distracting"
        return [
            Verdict(
                trace, span, sc.GT_EVALUATION_EVIDENCE_ROLE, case_id=metadata.get("case_id"),
                label=label, score=role_score(label),
                evidence_id=documents[trace][span][others[0]], document_position=others[0],
            )
        ]  # fmt: skip
    raise AssertionError("no annotated retrieval span with a second document")


def phoenix_documents(url: str, span_ids: list[str]) -> dict[str, list[Any]]:
    """Span -> the ids of its ``retrieval.documents`` as Phoenix stores them, in order."""
    documents: dict[str, list[Any]] = {}
    for span in phoenix_spans(url):
        if span["context"]["span_id"] not in span_ids:
            continue
        attributes = span["attributes"]
        prefix, key = f"{sc.OI_RETRIEVAL_DOCUMENTS}.", f".{sc.OI_DOCUMENT_ID}"
        ids = {
            int(k[len(prefix) : -len(key)]): v
            for k, v in attributes.items()
            if k.startswith(prefix) and k.endswith(key)
        }
        documents[span["context"]["span_id"]] = [ids.get(i) for i in range(len(ids))]
    return documents


def scenario(url: str, data_file: Path, workdir: Path) -> dict[str, Any]:
    spans, cases_file = workdir / "spans.jsonl", workdir / "cases.jsonl"
    exported = run_app(url, data_file, spans, cases_file)
    wait_until(lambda: len(phoenix_spans(url)) >= exported, INGEST_TIMEOUT_S, "ingestion")
    traces = list(read_traces([str(spans)], report=ReadReport()))
    trace_ids = sorted(t.trace_id for t in traces)
    retrieval = sorted({e.step_span_id for t in traces for e in t.evidence})
    documents = {
        t.trace_id: {e.step_span_id: [x.id for x in t.evidence if x.step_span_id == e.step_span_id]
                     for e in t.evidence}
        for t in traces
    }  # fmt: skip

    def analyses(tag: str) -> list[subprocess.CompletedProcess[str]]:
        back = ["--write-back", "phoenix", "--phoenix-url", url]
        return [
            cli("gate", "run", "--baseline", str(spans), "--candidate", str(spans), "--cases",
                str(cases_file), "--out", str(workdir / f"gate-{tag}"), *back),
            cli("judge", "run", str(spans), "--out", str(workdir / f"judge-{tag}"), *back),
            cli("interventions", str(spans), "--cases", str(cases_file), "--pool-dataset",
                str(data_file), "--out", str(workdir / f"iv-{tag}"), "--concurrency", "1",
                *back),
        ]  # fmt: skip

    first = analyses("1")
    traces_1, documents_1 = trace_annotations(url, trace_ids), document_annotations(url, retrieval)
    second = analyses("2")
    traces_2, documents_2 = trace_annotations(url, trace_ids), document_annotations(url, retrieval)
    extra = second_role(documents, document_view(documents_1))
    annotate_phoenix(extra, url)  # a second role on one retrieval span, then read back
    documents_3 = document_annotations(url, retrieval)
    pulled_file = workdir / "pulled.jsonl"
    pulled = cli("collect", "phoenix", "--url", url, "--project", PROJECT, "--out",
                 str(pulled_file))  # fmt: skip
    pulled_traces = (
        [loads(line) for line in pulled_file.read_text(encoding="utf-8").splitlines()]
        if pulled.returncode == 0
        else []
    )
    root_output = next(
        s["attributes"] for s in phoenix_spans(url) if s["parent_id"] is None
    )  # what Phoenix shows as the request's output
    otlp = cli(
        "gate", "run", "--baseline", str(spans), "--candidate", str(spans), "--cases",
        str(cases_file), "--out", str(workdir / "gate-otlp"), "--write-back", "otlp",
        "--otlp-endpoint", url,
    )  # fmt: skip
    bogus = workdir / "bogus.jsonl"
    bogus.write_text(
        spans.read_text(encoding="utf-8").replace(trace_ids[0], "0" * 31 + "1"),
        encoding="utf-8",
    )
    missing = cli(
        "gate", "run", "--baseline", str(bogus), "--candidate", str(bogus), "--cases",
        str(cases_file), "--out", str(workdir / "gate-bogus"), "--write-back", "phoenix",
        "--phoenix-url", url,
    )  # fmt: skip
    shots: list[str] = []
    shots_dir = os.environ.get("GROUNDTRACE_PHOENIX_SCREENSHOTS")
    if shots_dir:
        from tests.integration.phoenix_screenshots import take

        annotated = min(documents_1, key=lambda r: r["documentPosition"])  # shown first
        shots = take(
            url, Path(shots_dir), trace_id=annotated["metadata"]["trace_id"],
            retrieval_span=annotated["span_id"],
        )  # fmt: skip

    def jsonl(path: Path) -> list[dict[str, Any]]:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    return {
        "returncodes": [p.returncode for p in first + second],
        "stderr": [p.stderr[-800:] for p in first + second],
        "trace_ids": trace_ids,
        "retrieval_spans": retrieval,
        "documents": documents,
        "gate_decisions": {
            c["case_id"]: c["decision"]
            for c in json.loads((workdir / "gate-1" / "report.json").read_text())["cases"]
        },
        "judge_scores": {
            j["case_id"]: j["scores"] for j in jsonl(workdir / "judge-1" / "judgments.jsonl")
        },
        "case_traces": {t.request.case_id: t.trace_id for t in traces},
        "iv_rows": jsonl(workdir / "iv-1" / "results.jsonl"),
        "traces_first": trace_view(traces_1),
        "traces_second": trace_view(traces_2),
        "documents_first": document_view(documents_1),
        "documents_second": document_view(documents_2),
        "documents_with_extra": document_view(documents_3),
        "extra_roles": [
            [v.trace_id, v.span_id, v.document_position, v.evidence_id, v.label, v.score]
            for v in extra
        ],
        "phoenix_documents": phoenix_documents(url, retrieval),
        "pulled_returncode": pulled.returncode,
        "pulled_stderr": pulled.stderr[-800:],
        "pulled_evaluations": [
            [
                t.trace_id,
                e.span_id,
                e.name,
                e.score_value,
                e.score_label,
                e.evidence_id,
                e.document_position,
            ]
            for t in pulled_traces
            for e in t.evaluations
        ],
        "pulled_roots": {
            t.trace_id: next(s.span_id for s in t.steps if s.parent_span_id is None)
            for t in pulled_traces
        },
        "root_output": [
            root_output.get(sc.OI_OUTPUT_MIME_TYPE),
            root_output.get(sc.OI_OUTPUT_VALUE),
        ],
        "otlp_returncode": otlp.returncode,
        "otlp_stderr": otlp.stderr[-800:],
        "missing_returncode": missing.returncode,
        "missing_stderr": missing.stderr[-800:],
        "missing_report_written": (workdir / "gate-bogus" / "report.json").is_file(),
        "screenshots": shots,
    }


if __name__ == "__main__":
    print(json.dumps(run_with_phoenix(scenario, Path(sys.argv[1])), default=str))
    sys.exit(0)
