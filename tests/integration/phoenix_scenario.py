"""Phoenix round trip, run inside a private network namespace by tests/integration/test_phoenix.py.

Phoenix's gRPC receiver binds every interface whatever it is told, so this script is meant to
run under ``unshare -n`` (only a loopback exists there). It

1. starts Arize Phoenix (``python -m phoenix.server.main serve``) on free loopback ports with
   telemetry off and a temporary working directory, and waits (bounded) until it is healthy;
2. runs a small RAG app instrumented with the groundtrace SDK decorators and the SDK's
   ``openai`` instrumentor (against the local OpenAI-compatible test server) over HotpotQA
   questions, exporting with the stock OTel OTLP/HTTP exporter to Phoenix and, side by
   side, to an in-memory exporter;
3. waits (bounded) until Phoenix has ingested every span, reads them back through Phoenix's
   REST API (span kinds, ``retrieval.documents``, scores), pulls them with
   :mod:`groundtrace.collectors.phoenix` into τ and through ``groundtrace collect phoenix``;
4. stops Phoenix and prints ONE JSON line with what it found (the test asserts on it).

Usage (as the test runs it)::

    unshare -n sh -c 'ip link set lo up && python -m tests.integration.phoenix_scenario DATA'
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import openai
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

import groundtrace.sdk as gt
from groundtrace.collectors import SpanEvent, SpanRecord, SpanStatus
from groundtrace.collectors.model import Trace, loads
from groundtrace.collectors.normalize import build_traces
from groundtrace.collectors.phoenix import pull_phoenix_traces
from groundtrace.sdk import semconv as sc
from groundtrace.sdk.instrumentation.openai import OpenAIInstrumentor
from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest

#: Python of the environment that has Arize Phoenix installed. Phoenix pins OpenTelemetry versions
#: that conflict with other instrumentations the test suite uses, so it gets its own venv.
PHOENIX_PYTHON = os.environ.get("GROUNDTRACE_PHOENIX_PYTHON", sys.executable)

PROJECT = "groundtrace-it"
N_CASES = 3
READY_TIMEOUT_S = 600.0
INGEST_TIMEOUT_S = 180.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:  # bounded by the deadline
        if predicate():
            return
        time.sleep(0.5)
    raise TimeoutError(f"{what} not reached within {timeout} s")


def healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def phoenix_spans(url: str) -> list[dict[str, Any]]:
    spans: list[dict[str, Any]] = []
    cursor = None
    for _ in range(100):  # bounded paging
        params: dict[str, Any] = {"limit": 1000}
        if cursor:
            params["cursor"] = cursor
        response = httpx.get(f"{url}/v1/projects/{PROJECT}/spans", params=params, timeout=30)
        if response.status_code == 404:
            return []
        response.raise_for_status()
        body = response.json()
        spans.extend(body["data"])
        cursor = body.get("next_cursor")
        if not cursor:
            break
    return spans


# -- the instrumented app -----------------------------------------------------------------------


def llm_handler(request: ServerRequest) -> Reply:
    text = json.dumps({"answer": "yes", "confidence": 0.8, "used_chunks": ["p0"]})
    return Reply(content=text, prompt_tokens=42, completion_tokens=7)


def run_app(cases: list[dict[str, Any]], base_url: str) -> None:
    client = openai.OpenAI(base_url=base_url, api_key="local", max_retries=0)

    @gt.retrieve(retriever="bm25", k=4)
    def search(question: str, case: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {"id": f"p{i}", "title": title, "content": " ".join(sentences), "score": 9.5 - i}
            for i, (title, sentences) in enumerate(case["context"][:4])
        ]

    @gt.answer
    def respond(question: str, evidence: list[dict[str, Any]]) -> dict[str, Any]:
        prompt = gt.build_prompt(question, evidence)
        completion = client.chat.completions.create(
            model="local-model", messages=prompt.messages, temperature=0.0
        )
        parsed = json.loads(completion.choices[0].message.content or "{}")
        return {
            "answer": parsed["answer"],
            "confidence": parsed["confidence"],
            "cited_ids": parsed["used_chunks"],
        }

    @gt.request(app_name="phoenix-it", app_version="0.0.1")
    def handle(question: str, case: dict[str, Any], case_id: str) -> str:
        return str(respond(question, search(question, case))["answer"])

    for case in cases:
        handle(case["question"], case, case_id=case["_id"])


def _value(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def record_of(span: ReadableSpan) -> SpanRecord:
    context = span.context
    assert context is not None
    return SpanRecord(
        trace_id=f"{context.trace_id:032x}",
        span_id=f"{context.span_id:016x}",
        parent_span_id=f"{span.parent.span_id:016x}" if span.parent else None,
        name=span.name,
        start_time_unix_nano=span.start_time or 0,
        end_time_unix_nano=span.end_time or 0,
        attributes={k: _value(v) for k, v in (span.attributes or {}).items()},
        status=SpanStatus(span.status.status_code.name, span.status.description or ""),
        events=[
            SpanEvent(e.name, e.timestamp, {k: _value(v) for k, v in (e.attributes or {}).items()})
            for e in span.events
        ],
        kind=span.kind.name,
        resource={k: _value(v) for k, v in span.resource.attributes.items()},
    )


def summary(trace: Trace) -> dict[str, Any]:
    """The parts of τ the analysis relies on, in a comparable form."""
    return {
        "trace_id": trace.trace_id,
        "query": trace.request.query,
        "case_id": trace.request.case_id,
        "app_version": trace.request.app_version,
        "evidence": [(e.id, e.title, e.score, e.content) for e in trace.evidence],
        "answer": trace.answer,
        "confidence": trace.confidence,
        "cited_ids": list(trace.cited_ids),
        "llm_calls": [
            (c.model, c.output_text, c.usage.input_tokens if c.usage else None)
            for c in trace.llm_calls
        ],
        "findings": sorted(f.kind for f in trace.findings),
    }


# -- the scenario -------------------------------------------------------------------------------


def send_traces(url: str | None, data_file: Path, also: SpanExporter) -> list[dict[str, Any]]:
    """Run the app on the first cases of ``data_file``, exporting to ``also`` and to the
    OTLP/HTTP endpoint at ``url`` (Phoenix, a receiver) unless ``url`` is ``None``."""
    with data_file.open(encoding="utf-8") as lines:
        cases = [json.loads(next(lines)) for _ in range(N_CASES)]
    resource = Resource.create({sc.SERVICE_NAME: "phoenix-it", sc.OI_PROJECT_NAME: PROJECT})
    provider = TracerProvider(resource=resource)
    exporters = [also] if url is None else [also, OTLPSpanExporter(endpoint=f"{url}/v1/traces")]
    instrumentor = OpenAIInstrumentor()
    with OpenAICompatServer(handler=llm_handler) as llm:
        gt.configure(
            tracer_provider=provider,
            exporter=exporters,
            capture_content=True,
            redact=False,
        )
        instrumentor.instrument(tracer_provider=provider)
        try:
            run_app(cases, llm.base_url)
        finally:
            instrumentor.uninstrument()
            gt.shutdown()
            provider.shutdown()
    return cases


def scenario(url: str, data_file: Path, workdir: Path) -> dict[str, Any]:
    memory = InMemorySpanExporter()
    send_traces(url, data_file, memory)
    exported = list(memory.get_finished_spans())
    wait_until(lambda: len(phoenix_spans(url)) >= len(exported), INGEST_TIMEOUT_S, "ingestion")
    stored = phoenix_spans(url)

    # (1) what Phoenix shows natively
    kinds: dict[str, list[str]] = {}
    for span in stored:
        action = span["attributes"].get(sc.GT_ACTION, "?")
        kinds.setdefault(action, []).append(span["span_kind"])
    retriever = [s for s in stored if s["span_kind"] == "RETRIEVER"]
    documents = []
    for span in retriever:
        attrs = span["attributes"]
        docs = []
        for i in range(100):
            prefix = f"{sc.OI_RETRIEVAL_DOCUMENTS}.{i}."
            if prefix + sc.OI_DOCUMENT_ID not in attrs:
                break
            docs.append(
                {
                    "id": attrs[prefix + sc.OI_DOCUMENT_ID],
                    "score": attrs.get(prefix + sc.OI_DOCUMENT_SCORE),
                    "has_content": bool(attrs.get(prefix + sc.OI_DOCUMENT_CONTENT)),
                }
            )
        documents.append(docs)
    llm_spans = [s for s in stored if s["span_kind"] == "LLM"]
    llm_attrs = {
        "model": [s["attributes"].get(sc.OI_LLM_MODEL_NAME) for s in llm_spans],
        "prompt_tokens": [s["attributes"].get(sc.OI_LLM_TOKEN_COUNT_PROMPT) for s in llm_spans],
    }

    # (2) our pull: Phoenix -> SpanRecords -> τ, against τ of the very same in-memory spans
    pulled_traces = {t.trace_id: t for t in pull_phoenix_traces(url, PROJECT, page_size=5)}
    expected_traces = {t.trace_id: t for t in build_traces(record_of(s) for s in exported)}
    pulled = {k: summary(t) for k, t in pulled_traces.items()}
    expected = {k: summary(t) for k, t in expected_traces.items()}
    # Which parts of the full τ differ at all (information: timestamps lose nanoseconds in
    # Phoenix, the resource is not served back).
    full_diff_fields = sorted(
        {
            key
            for k, t in expected_traces.items()
            if k in pulled_traces
            for key, value in t.to_dict().items()
            if pulled_traces[k].to_dict().get(key) != value
        }
    )
    differences = {
        trace_id: {
            key: [pulled[trace_id][key], expected[trace_id][key]]
            for key in expected[trace_id]
            if pulled.get(trace_id, {}).get(key) != expected[trace_id][key]
        }
        for trace_id in expected
    }
    out_file = workdir / "pulled.jsonl"
    cli = subprocess.run(
        [
            sys.executable,
            "-c",
            "from groundtrace.analyzer.cli import main; main()",
            "collect",
            "phoenix",
            "--url",
            url,
            "--project",
            PROJECT,
            "--out",
            str(out_file),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    cli_traces = (
        [summary(loads(line)) for line in out_file.read_text(encoding="utf-8").splitlines()]
        if cli.returncode == 0
        else []
    )
    # pull from Phoenix, then analyse: the τ file is the analyses' input as it is
    analysed = [
        subprocess.run(
            [sys.executable, "-c", "from groundtrace.analyzer.cli import main; main()", *args],
            capture_output=True, text=True, timeout=300, check=False,
        )
        for args in (
            ["traces", "summary", str(out_file), "--json"],
            ["judge", "run", str(out_file), "--out", str(workdir / "judged")],
        )
    ]  # fmt: skip
    judged = workdir / "judged" / "judgments.jsonl"
    missing = subprocess.run(
        [
            sys.executable,
            "-c",
            "from groundtrace.analyzer.cli import main; main()",
            "collect",
            "phoenix",
            "--url",
            url,
            "--project",
            "no-such-project",
            "--out",
            str(workdir / "none.jsonl"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return {
        "spans_exported": len(exported),
        "spans_in_phoenix": len(stored),
        "kinds_by_action": {k: sorted(set(v)) for k, v in kinds.items()},
        "retriever_documents": documents,
        "expected_documents": [[[e[0], e[2]] for e in t["evidence"]] for t in expected.values()],
        "llm": llm_attrs,
        "pulled": list(pulled.values()),
        "differences": {k: v for k, v in differences.items() if v},
        "full_diff_fields": full_diff_fields,
        "cli_returncode": cli.returncode,
        "cli_stderr": cli.stderr[-2000:],
        "cli_traces": cli_traces,
        "cli_matches_pull": cli_traces == list(pulled.values()),
        "analysed_returncodes": [p.returncode for p in analysed],
        "analysed_stderr": [p.stderr[-800:] for p in analysed],
        "pulled_summary": json.loads(analysed[0].stdout) if analysed[0].returncode == 0 else {},
        "pulled_judged": [json.loads(line) for line in (judged.open() if judged.is_file() else [])],
        "missing_project_returncode": missing.returncode,
        "missing_project_stderr": missing.stderr[-500:],
    }


def run_in_namespace(module: str, data_file: Path) -> dict[str, Any]:
    """Run ``python -m module DATA`` under ``unshare -n``; its JSON line (the tests' fixture)."""
    import pytest

    phoenix_python = os.environ.get("GROUNDTRACE_PHOENIX_PYTHON", sys.executable)
    probe = subprocess.run(
        [phoenix_python, "-c", "import phoenix"], capture_output=True, check=False
    )
    if probe.returncode != 0:
        pytest.fail(
            f"arize-phoenix is not importable by {phoenix_python} (make test builds .venv-phoenix; "
            "set GROUNDTRACE_PHOENIX_PYTHON)"
        )
    from tests.support.namespace import run_in_private_network

    out = run_in_private_network([sys.executable, "-m", module, str(data_file)], timeout=1100)
    assert out["ok"], json.dumps(out, indent=1)[:6000]
    return out


def run_with_phoenix(
    run: Callable[[str, Path, Path], dict[str, Any]], data_file: Path
) -> dict[str, Any]:
    """Start Phoenix on free loopback ports, run ``run(url, data_file, workdir)``, stop it."""
    workdir = Path(tempfile.mkdtemp(prefix="gt-phoenix-"))
    http_port, grpc_port = free_port(), free_port()
    env = {
        **os.environ,
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(http_port),
        "PHOENIX_GRPC_PORT": str(grpc_port),
        "PHOENIX_TELEMETRY_ENABLED": "false",
        "PHOENIX_WORKING_DIR": str(workdir / "phoenix"),
    }
    url = f"http://127.0.0.1:{http_port}"
    log_path = workdir / "phoenix.log"
    result: dict[str, Any]
    with log_path.open("wb") as log:
        phoenix = subprocess.Popen(
            [PHOENIX_PYTHON, "-m", "phoenix.server.main", "serve"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        started = time.monotonic()
        try:
            wait_until(lambda: healthy(url) or phoenix.poll() is not None, READY_TIMEOUT_S, "ready")
            if phoenix.poll() is not None:
                raise RuntimeError(f"Phoenix exited with {phoenix.returncode}")
            version = httpx.get(f"{url}/arize_phoenix_version", timeout=10).text
            result = {"phoenix_version": version, "startup_s": round(time.monotonic() - started, 1)}
            result.update(run(url, data_file, workdir))
            result["ok"] = True
        except Exception as exc:  # reported in the JSON line; the test shows it
            result = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        finally:
            phoenix.terminate()
            try:
                phoenix.wait(timeout=60)
            except subprocess.TimeoutExpired:
                phoenix.kill()
                phoenix.wait(timeout=60)
    if not result.get("ok"):
        result["phoenix_log_tail"] = log_path.read_text(errors="replace")[-3000:]
    shutil.rmtree(workdir, ignore_errors=True)
    return result


def main() -> int:
    print(json.dumps(run_with_phoenix(scenario, Path(sys.argv[1])), default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
