"""Which embedded model should the demo use: soft correctness, protocol errors, seconds per call.

For each model of the registry (``groundtrace.analyzer.backends.MODELS``) this starts the
llama.cpp server, asks the demo app's ANSWER prompt (``hotpot_rag.app.chat_request``: BM25
top-k evidence, one user message, JSON-schema reply) for the first N shipped HotpotQA
questions, one call at a time, and scores each reply as the demo does:

* ``accuracy``: soft correctness (EM or token F1 >= 0.8) of the parsed answer, over all N
  questions (a protocol error counts as wrong);
* ``protocol_error_rate``: replies that are not the JSON object the app asks for (or calls
  that failed), over N;
* ``seconds_per_call``: mean wall time of the calls made (measured once per call and kept
  next to the cache, so a resumed run reports the same number);
* ``accuracy_per_second``: ``accuracy / seconds_per_call``, what the default is chosen by.

Calls go through the analyzer's model client and its content-addressed cache
(``OUT/<model>/llm_cache.sqlite``): an interrupted run resumes where it stopped. Models run
one after the other; run it with ``nice -n 5`` on a shared machine. Prints ONE JSON object.

Usage::

    nice -n 5 python benchmarks/models.py [--questions 100] [--models a,b] [--threads T]
        [--out runs/models]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

from groundtrace.analyzer.backends import MODELS, LlamaServer
from groundtrace.analyzer.llm import CallCache, ChatRequest, ChatResponse, ModelClient
from groundtrace.analyzer.metrics import score_answer
from groundtrace.examples.hotpot_rag import app
from groundtrace.examples.hotpot_rag.cases import load_cases
from groundtrace.sdk.rendering import parse_answer


def _requests(alias: str, questions: int, top_k: int) -> list[tuple[ChatRequest, str]]:
    """One (request, reference answer) per question, exactly as the app builds it."""
    pairs = []
    for case in load_cases(limit=questions):
        question = case.question or ""
        evidence = app.prompt_evidence(app.retrieve_chunks(question, case.passages, top_k))
        params = app.chat_request(question, evidence)
        request = ChatRequest(
            model=alias,
            messages=tuple(params["messages"]),
            temperature=float(params["temperature"]),
            max_tokens=int(params["max_tokens"]),
            response_format=params["response_format"],
        )
        pairs.append((request, case.reference_answer or ""))
    return pairs


async def _run_model(
    client: ModelClient, pairs: list[tuple[ChatRequest, str]], seconds_file: Path
) -> dict[str, Any]:
    """Ask every request in turn; count correct answers, protocol errors, call seconds."""
    seconds: dict[str, float] = (
        json.loads(seconds_file.read_text()) if seconds_file.is_file() else {}
    )
    correct = protocol_errors = 0
    per_call: list[float] = []
    for request, reference in pairs:
        started = time.perf_counter()
        result = await client.complete(request)
        if isinstance(result, ChatResponse) and not result.cached:
            seconds[result.key] = time.perf_counter() - started
            seconds_file.write_text(json.dumps(seconds))
        if result.key in seconds:
            per_call.append(seconds[result.key])
        parsed = parse_answer(result.text) if isinstance(result, ChatResponse) else None
        if parsed is None or parsed.error or not parsed.answer:
            protocol_errors += 1
            continue
        correct += score_answer(parsed.answer, reference).correct
    return {"correct": correct, "protocol_errors": protocol_errors, "per_call": per_call}


def measure(
    name: str, questions: int, top_k: int, out: Path, threads: int | None = None
) -> dict[str, Any]:
    """Serve model ``name`` and measure it on the first ``questions`` questions."""
    spec = MODELS[name]
    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    pairs = _requests(spec.alias, questions, top_k)
    cache = CallCache(folder / "llm_cache.sqlite")
    started = time.perf_counter()
    try:
        with LlamaServer(spec, n_ctx=4096, n_threads=threads) as server:
            client = ModelClient(server.base_url, cache=cache, concurrency=1, timeout=600.0)
            counts = asyncio.run(_run_model(client, pairs, folder / "seconds.json"))
    finally:
        cache.close()
    per_call = counts["per_call"]
    n = len(pairs)
    accuracy = counts["correct"] / n
    seconds_per_call = sum(per_call) / len(per_call) if per_call else None
    return {
        "model": name,
        "title": spec.title,
        "licence": spec.licence,
        "n": n,
        "correct": counts["correct"],
        "accuracy": round(accuracy, 4),
        "protocol_errors": counts["protocol_errors"],
        "protocol_error_rate": round(counts["protocol_errors"] / n, 4),
        "seconds_per_call": round(seconds_per_call, 3) if seconds_per_call else None,
        "timed_calls": len(per_call),
        "accuracy_per_second": (
            round(accuracy / seconds_per_call, 5) if seconds_per_call else None
        ),
        "wall_seconds": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated names")
    parser.add_argument("--top-k", type=int, default=app.DEFAULT_TOP_K)
    parser.add_argument("--out", type=Path, default=Path("runs/models"))
    parser.add_argument(
        "--threads", type=int, default=None, help="llama.cpp threads (default: every CPU)"
    )
    args = parser.parse_args()
    rows = [
        measure(name, args.questions, args.top_k, args.out, args.threads)
        for name in args.models.split(",")
    ]
    best = max(rows, key=lambda r: r["accuracy_per_second"] or 0.0)
    summary = {"questions": args.questions, "top_k": args.top_k, "threads": args.threads,
               "models": rows, "best_accuracy_per_second": best["model"]}  # fmt: skip
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
