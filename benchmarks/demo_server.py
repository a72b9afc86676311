"""Benchmark: the demo's model calls on the embedded server, its settings against llama.cpp's.

For the first N shipped HotpotQA questions the demo's request sequence -- the app's ANSWER
request at BM25 top-5, the gate's at top-2, then per question REMOVE, REPLACE and DUPLICATE
of the first chunk -- is sent through the app's own ``chat_request`` to two servers, one after
the other in the same run:

* ``reference``: llama-cpp-python's server defaults as the demo used them before (a thread per
  CPU, ``n_batch`` 512, logits of every prompt position, no prompt cache);
* ``demo``: :class:`LlamaServer` as the demo starts it (threads from the idle CPUs,
  ``n_batch`` 64, ``--logits_all False``, the RAM prompt cache).

Prints ONE JSON object: per setting the mean seconds per call of each kind, the total, the
server's peak resident memory, the load average, and the reference/demo ratios.

Usage::

    python benchmarks/demo_server.py [--questions 3]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import openai

from groundtrace.analyzer.backends import LlamaServer
from groundtrace.analyzer.cases import Case
from groundtrace.analyzer.demo._backend import PROMPT_CACHE_BYTES
from groundtrace.examples.hotpot_rag import app
from groundtrace.examples.hotpot_rag.cases import load_cases

#: llama-cpp-python's own defaults for what ``LlamaServer`` now sets (the last flag wins).
REFERENCE_FLAGS = ("--n_batch", "512", "--n_ubatch", "512", "--logits_all", "True")


class _Reference(LlamaServer):
    def _command(self, model_path: Path, port: int) -> list[str]:
        return [*super()._command(model_path, port), *REFERENCE_FLAGS]


def _peak_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError("no VmHWM")


def _requests(case: Case) -> list[tuple[str, list[dict[str, Any]]]]:
    def evidence(k: int) -> list[dict[str, Any]]:
        return [
            dict(e)
            for e in app.prompt_evidence(app.retrieve_chunks(case.question, case.passages, k))
        ]

    five = evidence(5)
    shown = {e["id"] for e in five}
    other = next(p for p in case.passages if p.id not in shown)
    swapped = {**five[0], "id": other.id, "title": other.title, "content": other.text}
    return [("app", five), ("gate", evidence(2)), ("REMOVE", five[1:]),
            ("REPLACE", [swapped, *five[1:]]), ("DUPLICATE", [*five, five[0]])]  # fmt: skip


def _run(server: LlamaServer, cases: list[Case]) -> dict[str, Any]:
    started = time.perf_counter()
    with server:
        assert server._process is not None
        client = openai.OpenAI(
            base_url=server.base_url, api_key="local", max_retries=0, timeout=900
        )
        plan = [(kind, case, ev) for case in cases for kind, ev in _requests(case)]
        # the demo's order: every app call, every gate call, then each trace's replays
        order = {"app": 0, "gate": 1}
        plan.sort(key=lambda item: order.get(item[0], 2))
        seconds: dict[str, list[float]] = {}
        for kind, case, evidence in plan:
            t = time.perf_counter()
            client.chat.completions.create(
                model=server.model, **app.chat_request(case.question or "", evidence)
            )
            seconds.setdefault(kind, []).append(time.perf_counter() - t)
        peak = _peak_mib(server._process.pid)
    return {
        "seconds_per_call": {k: round(sum(v) / len(v), 2) for k, v in seconds.items()},
        "total_seconds": round(time.perf_counter() - started, 1),
        "peak_rss_mib": peak,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=3)
    args = parser.parse_args()
    cases = load_cases(limit=args.questions)
    reference = _run(_Reference(n_threads=os.cpu_count() or 1), cases)
    demo = _run(LlamaServer(prompt_cache_bytes=PROMPT_CACHE_BYTES), cases)
    ratio = {
        k: round(reference["seconds_per_call"][k] / v, 2)
        for k, v in demo["seconds_per_call"].items()
    }
    ratio["total"] = round(reference["total_seconds"] / demo["total_seconds"], 2)
    out = {"questions": len(cases), "reference": reference, "demo": demo}
    print(json.dumps({**out, "reference_over_demo": ratio}, indent=2))


if __name__ == "__main__":
    main()
