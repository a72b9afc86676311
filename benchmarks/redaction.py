"""Cost of redaction on huge captured values, measured side by side; prints one JSON object.

A decorated call (``@gt.infer``, all content captured) carries a huge value, and runs once
with the default redaction and once with redaction off, in the same process, round after
round. Each case's ratio is the median over rounds of (redaction on / redaction off) of the
two batches run beside each other in that round (a paired comparison: the machine's load
drifts, two adjacent batches share most of it; odd rounds run the pair in reverse order).
Target for each case: <= 2.0 (masking costs at most a bounded amount per attribute, whatever
the size of the value):

* ``string_50mb``: a 50 MB string as the argument and the return value;
* ``float_list_100k``: a list of 100,000 floats as the argument and the return value;
* ``float_dict_100k``: a dict holding 100,000 floats (``{"scores": [...], "label": ...}``)
  returned by a call with a short argument;
* ``text_4kb``: a 4 KB text on which every masker's cheap pre-check fires (colons, ``=``,
  ``key``/``token``/``password`` words, URLs, ``@``, digit runs) with a few real secrets in
  it, as the argument and the return value: the cost of a full scan of ordinary content;
* ``metadata_5_docs``: a retrieval returning 5 documents, each with 300 characters of
  content and a metadata mapping of 8 entries (keys and values masked).

Each case also reports ``added_ms``: the median over rounds of (on - off) per call, what
redaction adds in absolute terms. A string longer than the attribute limit is cut before it is
serialised, so the 50 MB call costs well under a millisecond with redaction off; with it on,
the scanned ~37,000 characters of each of its two attributes (argument and result) cost about
a millisecond, whatever the size of the string: bounded, but many times the tiny baseline.

Usage, from the repository root: ``python -m benchmarks.redaction [--quick]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import groundtrace.sdk as gt

from .sdk_overhead import NoOpExporter

TARGET = 2.0


@gt.infer
def _echo(value: object) -> object:
    return value


def _cases(seed: int) -> dict[str, Callable[[], object]]:
    rng = random.Random(seed)
    text = "All quiet on the western front. " * (50_000_000 // 32)
    floats = [rng.random() for _ in range(100_000)]
    scores = {"scores": [rng.random() for _ in range(100_000)], "label": "run 7"}

    @gt.infer
    def score(query: str) -> dict[str, Any]:
        return scores

    line = (
        "Step {i}: set timeout = 30s and retries: 3 (see https://docs.example.com/config#{i}); "
        "the api key rotation token: pending, mail ops{i}@example.com or call 415-555-{i:04d}; "
        "order 12345{i:02d} shipped, ratio 3:2, password policy: 12 characters.\n"
    )
    mixed = "".join(line.format(i=i) for i in range(18))[:4000]
    mixed += " password=hunter22 redis://:Rd5pw0rdX@cache:6379/0"
    documents = [
        {
            "id": f"d{i}",
            "score": 1.0 / (i + 1),
            "content": ("Refunds are issued within 14 days of the request. " * 6)[:300],
            "metadata": {
                "source": f"handbook/chapter-{i}.md",
                "author": "ops team",
                "page": i,
                "updated": "2024-05-01",
                "tags": ["refunds", "policy"],
                "owner": f"owner{i}@example.com",
                "reviewed": True,
                f"ticket TCK-{i}": "open",
            },
        }
        for i in range(5)
    ]

    @gt.retrieve(retriever="bench")
    def search(query: str) -> list[dict[str, Any]]:
        return documents

    return {
        "string_50mb": lambda: _echo(text),
        "float_list_100k": lambda: _echo(floats),
        "float_dict_100k": lambda: score("scores?"),
        "text_4kb": lambda: _echo(mixed),
        "metadata_5_docs": lambda: search("refund window?"),
    }


def _batch_ms(fn: Callable[[], object], calls: int) -> float:
    """Mean ms per call over one batch (garbage collection off while it runs)."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        return (time.perf_counter_ns() - start) / calls / 1e6
    finally:
        gc.enable()


def _configure(provider: TracerProvider, redact: bool) -> None:
    gt.configure(exporter="none", tracer_provider=provider, capture_content=True, redact=redact)


def bench(calls: int, rounds: int, seed: int) -> dict[str, Any]:
    """Paired rounds of redaction on / off for every case."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(NoOpExporter()))
    cases = _cases(seed)
    out: dict[str, Any] = {}
    for name, fn in cases.items():
        on: list[float] = []
        off: list[float] = []
        for redact in (True, False):  # warm-up
            _configure(provider, redact)
            fn()
        for index in range(rounds):
            for redact in (True, False) if index % 2 == 0 else (False, True):
                _configure(provider, redact)
                (on if redact else off).append(_batch_ms(fn, calls))
        ratio = statistics.median(a / b for a, b in zip(on, off, strict=True))
        added = statistics.median(a - b for a, b in zip(on, off, strict=True))
        out[name] = {
            "ratio": round(ratio, 3),
            "added_ms": round(added, 3),
            "redaction_on_ms": round(statistics.median(on), 3),
            "redaction_off_ms": round(statistics.median(off), 3),
            "met": ratio <= TARGET,
        }
    gt.shutdown()
    provider.shutdown()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (smoke run)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    calls, rounds = (2, 3) if args.quick else (5, 11)
    cases = bench(calls, rounds, args.seed)
    report = {
        "ratios": {name: case["ratio"] for name, case in cases.items()},
        "added_ms": {name: case["added_ms"] for name, case in cases.items()},
        "target": TARGET,
        "met": {name: case["met"] for name, case in cases.items()},
        "cases": cases,
        "method": {
            "calls_per_batch": calls,
            "rounds": rounds,
            "seed": args.seed,
            "statistic": "median over rounds of the ratio redaction-on / redaction-off of "
            "two batches run side by side (order reversed every other round)",
        },
        "python": sys.version.split()[0],
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
