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

Calls of one model after the other are timed under whatever load each run meets, so the
``seconds_per_call`` of two models compares runs, not models. ``--side-by-side K`` answers
the ranking: it serves every model at once and asks the first K questions of each in turn,
question by question (the order of the models rotating per question), with no cache, so
every model meets the same load; it reports each model's mean seconds per call and the
geometric mean of its per-question time ratio to the first model named.

Usage::

    nice -n 5 python benchmarks/models.py [--questions 100] [--models a,b] [--threads T]
        [--out runs/models]
    nice -n 5 python benchmarks/models.py --side-by-side 10 [--models a,b] [--threads T]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from groundtrace.analyzer.backends import MODELS, LlamaServer
from groundtrace.analyzer.llm import CallCache, ChatRequest, ChatResponse, ModelClient
from groundtrace.analyzer.metrics import score_answer
from groundtrace.analyzer.stats._bootstrap import bootstrap_mean_ci
from groundtrace.examples.hotpot_rag import app
from groundtrace.examples.hotpot_rag.cases import load_cases
from groundtrace.sdk.rendering import parse_answer

#: Percentile bootstrap of the accuracy over questions (the analyzer's SPEC 4.2.2 settings).
BOOTSTRAP_RESAMPLES = 5000
BOOTSTRAP_SEED = 42


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


def _timings(path: Path) -> dict[str, dict[str, Any]]:
    """Per call key: its wall seconds, llama.cpp threads and the 1-minute load average after it.

    Files of earlier runs hold the seconds alone (threads and load were not recorded).
    """
    raw: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {}
    return {k: v if isinstance(v, dict) else {"seconds": v} for k, v in raw.items()}


async def _run_model(
    client: ModelClient, pairs: list[tuple[ChatRequest, str]], seconds_file: Path, threads: int
) -> dict[str, Any]:
    """Ask every request in turn; score each answer, count protocol errors, time the calls."""
    timings = _timings(seconds_file)
    scores: list[float] = []
    keys: list[str] = []
    protocol_errors = cached = 0
    for done, (request, reference) in enumerate(pairs, start=1):
        started = time.perf_counter()
        result = await client.complete(request)
        keys.append(result.key)
        if isinstance(result, ChatResponse) and not result.cached:
            timings[result.key] = {
                "seconds": time.perf_counter() - started,
                "threads": threads,
                "load1": os.getloadavg()[0],
            }
            seconds_file.write_text(json.dumps(timings))
        cached += isinstance(result, ChatResponse) and result.cached
        print(f"{done}/{len(pairs)} from cache: {cached}", file=sys.stderr, flush=True)
        parsed = parse_answer(result.text) if isinstance(result, ChatResponse) else None
        if parsed is None or parsed.error or not parsed.answer:
            protocol_errors += 1
            scores.append(0.0)
            continue
        scores.append(float(score_answer(parsed.answer, reference).correct))
    timed = [timings[k] for k in keys if k in timings]
    return {"scores": scores, "protocol_errors": protocol_errors, "timed": timed, "cached": cached}


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


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
            counts = asyncio.run(
                _run_model(client, pairs, folder / "seconds.json", threads or os.cpu_count() or 1)
            )
    finally:
        cache.close()
    scores, timed = counts["scores"], counts["timed"]
    n = len(pairs)
    means, lows, highs = bootstrap_mean_ci(
        np.asarray(scores, dtype=float)[:, None], BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, 0.95
    )
    accuracy = float(means[0])
    seconds_per_call = _mean([t["seconds"] for t in timed])
    loads = [t["load1"] for t in timed if "load1" in t]
    return {
        "model": name,
        "title": spec.title,
        "licence": spec.licence,
        "n": n,
        "correct": int(sum(scores)),
        "accuracy": round(accuracy, 4),
        "accuracy_ci95": [round(float(lows[0]), 4), round(float(highs[0]), 4)],
        "protocol_errors": counts["protocol_errors"],
        "protocol_error_rate": round(counts["protocol_errors"] / n, 4),
        "seconds_per_call": round(seconds_per_call, 3) if seconds_per_call else None,
        "timed_calls": len(timed),
        "threads": sorted({t["threads"] for t in timed if "threads" in t}),
        "load1_mean": round(sum(loads) / len(loads), 2) if loads else None,
        "load1_range": [round(min(loads), 2), round(max(loads), 2)] if loads else None,
        "calls_with_load": len(loads),
        "from_cache": counts["cached"],
        "accuracy_per_second": (
            round(accuracy / seconds_per_call, 5) if seconds_per_call else None
        ),
        "wall_seconds": round(time.perf_counter() - started, 1),
    }


async def _time_calls(
    clients: dict[str, ModelClient], requests: dict[str, list[ChatRequest]]
) -> dict[str, list[float]]:
    """Wall seconds of each model's call per question, the models taken in rotating order."""
    names = list(clients)
    seconds: dict[str, list[float]] = {name: [] for name in names}
    for q in range(len(requests[names[0]])):
        for name in names[q % len(names) :] + names[: q % len(names)]:
            started = time.perf_counter()
            result = await clients[name].complete(requests[name][q])
            if not isinstance(result, ChatResponse):
                raise SystemExit(f"{name}: question {q + 1}: the call failed: {result}")
            seconds[name].append(time.perf_counter() - started)
        print(f"{q + 1}/{len(requests[names[0]])} questions timed", file=sys.stderr, flush=True)
    return seconds


def side_by_side(
    names: list[str], questions: int, top_k: int, threads: int | None
) -> dict[str, Any]:
    """Serve every model at once and time the same questions on each under the same load."""
    requests = {
        name: [r for r, _ in _requests(MODELS[name].alias, questions, top_k)] for name in names
    }
    with contextlib.ExitStack() as stack:
        clients = {}
        for name in names:
            server = stack.enter_context(LlamaServer(MODELS[name], n_ctx=4096, n_threads=threads))
            clients[name] = ModelClient(server.base_url, cache=None, concurrency=1, timeout=600.0)
        load_before = os.getloadavg()[0]
        seconds = asyncio.run(_time_calls(clients, requests))
        load_after = os.getloadavg()[0]
    reference = seconds[names[0]]
    rows = []
    for name in names:
        ratios = [s / r for s, r in zip(seconds[name], reference, strict=True)]
        rows.append({
            "model": name,
            "calls": len(seconds[name]),
            "seconds_per_call": round(sum(seconds[name]) / len(seconds[name]), 3),
            "ratio_to_reference": round(statistics.geometric_mean(ratios), 3),
            "ratio_range": [round(min(ratios), 3), round(max(ratios), 3)],
        })  # fmt: skip
    return {"side_by_side": questions, "reference": names[0], "top_k": top_k,
            "threads": threads, "load1": [round(load_before, 2), round(load_after, 2)],
            "models": rows}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated names")
    parser.add_argument("--top-k", type=int, default=app.DEFAULT_TOP_K)
    parser.add_argument("--out", type=Path, default=Path("runs/models"))
    parser.add_argument(
        "--threads", type=int, default=None, help="llama.cpp threads (default: every CPU)"
    )
    parser.add_argument(
        "--side-by-side", type=int, default=0, metavar="K",
        help="time the first K questions on every model at once, uncached (see above)",
    )  # fmt: skip
    args = parser.parse_args()
    names = args.models.split(",")
    unknown = [name for name in names if name not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    if args.side_by_side:
        print(
            json.dumps(side_by_side(names, args.side_by_side, args.top_k, args.threads), indent=2)
        )
        return
    rows = [measure(name, args.questions, args.top_k, args.out, args.threads) for name in names]
    best = max(rows, key=lambda r: r["accuracy_per_second"] or 0.0)
    summary = {"questions": args.questions, "top_k": args.top_k, "threads": args.threads,
               "models": rows, "best_accuracy_per_second": best["model"]}  # fmt: skip
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
