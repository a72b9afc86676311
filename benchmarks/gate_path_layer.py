"""What the gate's command-path layer costs: seconds to read two runs' outcomes, and to
validate their command paths (``path_snapshot``), on a RAG run and on an agent run.

Usage::

    python benchmarks/gate_path_layer.py --cases 1000 --out /tmp/gate-path-layer

Each run is written once per kind (``rag``: retrieval only, no tool; ``agent``: one tool call
per request, each case requiring it) by a small app traced with the SDK, then timed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

import groundtrace.sdk as gt
from groundtrace.analyzer.cases import read_cases
from groundtrace.analyzer.gate._path_layer import path_snapshot
from groundtrace.analyzer.gate._run import outcomes_from_traces
from groundtrace.sdk.file_exporter import OTLPJsonFileExporter


def _app(out: Path, n: int, agent: bool) -> None:
    gt.configure(service_name="bench", exporter=OTLPJsonFileExporter(out), capture_content=True,
                 redact=False)  # fmt: skip

    @gt.retrieve(retriever="r", k=2)
    def search(question: str) -> list[dict[str, str]]:
        return [{"id": "d1", "title": "T", "content": "x " * 50}, {"id": "d2", "title": "U"}]

    @gt.tool(name="lookup")
    def lookup(key: str) -> str:
        return "v"

    @gt.answer
    def reply(question: str, evidence: list[dict[str, str]]) -> dict[str, Any]:
        return {"answer": "x", "used_chunks": ["d1"]}

    @gt.request(app_name="bench")
    def ask(question: str, case_id: str) -> object:
        if agent:
            lookup("k")
        return reply(question, search(question))

    for i in range(n):
        ask(f"q{i}", case_id=f"c{i}")
    gt.shutdown()


def _measure(root: Path, n: int, agent: bool) -> dict[str, Any]:
    if not (root / "cases.jsonl").exists():
        _app(root / "v1", n, agent)
        _app(root / "v2", n, agent)
        call = {"required_calls": [{"name": "lookup", "arguments": {"key": ["k"]}}]}
        rows = [{"case_id": f"c{i}", "reference_answer": "x", **(call if agent else {})}
                for i in range(n)]  # fmt: skip
        (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    cases = list(read_cases(root / "cases.jsonl"))
    runs = ([str(root / "v1")], [str(root / "v2")])
    outcomes_from_traces(runs[0], cases=cases)  # warm-up: the readers' first imports
    start = time.perf_counter()
    outcomes = tuple(outcomes_from_traces(r, cases=cases)[0] for r in runs)
    read_s = time.perf_counter() - start
    start = time.perf_counter()
    snapshot = asyncio.run(path_snapshot(*runs, cases, (outcomes[0], outcomes[1])))
    paths_s = time.perf_counter() - start
    kept = 0 if snapshot is None else len(snapshot.candidate)
    return {"cases": n, "read_outcomes_s": round(read_s, 2), "path_snapshot_s": round(paths_s, 2),
            "verdicts_kept": kept}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=Path("/tmp/gate-path-layer"))
    args = parser.parse_args()
    for kind in ("rag", "agent"):
        root = args.out / kind
        root.mkdir(parents=True, exist_ok=True)
        print(json.dumps({"kind": kind, **_measure(root, args.cases, kind == "agent")}))


if __name__ == "__main__":
    main()
