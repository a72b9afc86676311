"""``groundtrace traces send`` into a real Arize Phoenix: stored traces shown with their ids.

The HotpotQA example app (the one of test_phoenix_roundtrip.py) exports its traces to the
embedded receiver; ``traces send`` then sends the receiver's folder to Phoenix under another
project (``--project``). Phoenix must hold every stored span with its trace, span and parent
ids, and ``groundtrace collect phoenix`` must read back the same traces as the folder gives.
Runs inside a private network namespace like test_phoenix_roundtrip.py; this file is also the
scenario (``python -m tests.integration.test_send_phoenix DATA``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from groundtrace.collectors import read_spans, read_traces
from groundtrace.collectors.model import loads
from groundtrace.collectors.phoenix import fetch_phoenix_spans
from groundtrace.collectors.receiver import Receiver
from tests.integration.phoenix_scenario import (
    INGEST_TIMEOUT_S,
    run_in_namespace,
    run_with_phoenix,
    send_traces,
    summary,
    wait_until,
)
from tests.support.data import HOTPOT

pytestmark = [pytest.mark.integration, pytest.mark.phoenix, pytest.mark.timeout(1200)]

SENT_PROJECT = "groundtrace-sent"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from groundtrace.analyzer.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def scenario(url: str, data_file: Path, workdir: Path) -> dict[str, Any]:
    folder = workdir / "received"
    with Receiver("127.0.0.1", 0, folder) as receiver:
        send_traces(receiver.endpoint.removesuffix("/v1/traces"), data_file, InMemorySpanExporter())
    stored = sorted((s.trace_id, s.span_id, s.parent_span_id) for s in read_spans([folder]))
    sent = _cli("traces", "send", str(folder), "--endpoint", url, "--project", SENT_PROJECT)

    def in_phoenix() -> list[tuple[str, str, str | None]]:
        try:
            records = fetch_phoenix_spans(url, SENT_PROJECT, annotations=False)
            return sorted((r.trace_id, r.span_id, r.parent_span_id) for r in records)
        except Exception:  # the project does not exist until the first span is ingested
            return []

    if sent.returncode == 0:
        wait_until(lambda: len(in_phoenix()) >= len(stored), INGEST_TIMEOUT_S, "ingestion")
    pulled_file = workdir / "pulled.jsonl"
    pulled = _cli("collect", "phoenix", "--url", url, "--project", SENT_PROJECT, "--out",
                  str(pulled_file))  # fmt: skip
    pulled_traces = (
        [loads(line) for line in pulled_file.read_text().splitlines()]
        if pulled_file.is_file()
        else []
    )
    return {
        "send_returncode": sent.returncode,
        "send_output": (sent.stdout + sent.stderr)[-2000:],
        "stored": stored,
        "in_phoenix": in_phoenix(),
        "pull_returncode": pulled.returncode,
        "pull_stderr": pulled.stderr[-1000:],
        "stored_traces": sorted(
            (summary(t) for t in read_traces([folder])), key=lambda s: s["trace_id"]
        ),
        "pulled_traces": sorted((summary(t) for t in pulled_traces), key=lambda s: s["trace_id"]),
    }


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    return run_in_namespace("tests.integration.test_send_phoenix", HOTPOT)


def test_phoenix_holds_every_stored_span_with_its_ids(result: dict[str, Any]) -> None:
    assert result["send_returncode"] == 0, result["send_output"]
    assert len(result["stored"]) == 12  # 3 requests x (REQUEST, RETRIEVE, ANSWER, LLM)
    assert [tuple(s) for s in result["in_phoenix"]] == [tuple(s) for s in result["stored"]]


def test_collect_phoenix_reads_back_the_stored_traces(result: dict[str, Any]) -> None:
    assert result["pull_returncode"] == 0, result["pull_stderr"]
    assert len(result["pulled_traces"]) == 3
    assert result["pulled_traces"] == result["stored_traces"]


if __name__ == "__main__":
    print(json.dumps(run_with_phoenix(scenario, Path(sys.argv[1])), default=str))
