"""The CUE-R protocol on the shipped HotpotQA questions with the default embedded model.

1. The demo app (BM25 top-5, the model served by llama.cpp) answers the first N questions;
   its traces and case file go to ``OUT/app/``. The app talks to a local OpenAI-compatible
   endpoint that answers through the analyzer's model client and its content-addressed cache
   (``--cache``, default ``OUT/app/llm_cache.sqlite``): an app run interrupted before its case
   file is written is run again from the start with every answered call served from the cache
   (zero repeated calls), and ``--cache`` pointing at ``benchmarks/models.py``'s cache of the
   same model reuses the calls of the model comparison (the app sends the same requests).
2. Each trace's evidence is perturbed by REMOVE, REPLACE and DUPLICATE (the evidence the
   model says it used is the target) and the recorded request replayed against the same model
   through the endpoint (``OUT/interventions/``: every call in the content-addressed cache and
   every unit in the journal, so an interrupted run resumes with zero repeated calls).
3. Prints ONE JSON object: per operator the soft correctness before and after, the mean
   change with its 95% CI, p and n, grounding and the trace divergence D, next to the CUE-R
   paper's reference run (Qwen-3 8B).

Units run in case-id order, so a run stopped part way has its first items complete:
``--limit K`` prints the table of those K items from the journal (no model call).

``--model lexical`` runs the same protocol with the built-in extractive reader (no model, a
few seconds): a check of the pipeline, not a CUE-R figure. Progress goes to stderr.

Usage::

    nice -n 10 python benchmarks/cue_r.py [--items 100] [--out runs/cue_r] [--model NAME]
        [--threads T] [--cache runs/models/qwen2.5-coder-0.5b/llm_cache.sqlite] [--limit K]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import sys
import threading
from collections.abc import Iterator, Sequence
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from groundtrace.analyzer import run_analysis
from groundtrace.analyzer.backends import DEFAULT_MODEL, LexicalServer, LlamaServer
from groundtrace.analyzer.backends._lexical_server import json_handler
from groundtrace.analyzer.demo import DemoConfig, run_demo
from groundtrace.analyzer.errors import ConfigError
from groundtrace.analyzer.interventions import ANALYSIS, AxisEffect, Config, InterventionSummary
from groundtrace.analyzer.llm import CallCache, ChatRequest, ChatResponse, ModelClient
from groundtrace.examples.hotpot_rag.cases import DEFAULT_DATASET

OPERATORS = ("REMOVE", "REPLACE", "DUPLICATE")
#: The CUE-R paper's HotpotQA run with Qwen-3 8B: correctness and D per operator.
PAPER = {
    "model": "Qwen-3 8B",
    "correctness_original": 0.585,
    "correctness": {"REMOVE": 0.285, "REPLACE": 0.270, "DUPLICATE": 0.585},
    "divergence": {"DUPLICATE": 0.074},
}
#: Request fields with a place of their own in :class:`ChatRequest`; the rest go to ``params``.
_FIELDS = frozenset({"model", "messages", "temperature", "seed", "max_tokens", "response_format"})


def chat_request(body: dict[str, Any]) -> ChatRequest:
    """The :class:`ChatRequest` of an OpenAI chat-completion body (what the cache keys on)."""
    return ChatRequest(
        model=str(body["model"]),
        messages=tuple(body["messages"]),
        temperature=float(body.get("temperature", 0.0)),
        seed=int(body.get("seed", 0)),
        max_tokens=body.get("max_tokens"),
        response_format=body.get("response_format"),
        params={k: v for k, v in body.items() if k not in _FIELDS},
    )


class CachedEndpoint:
    """An OpenAI-compatible endpoint on 127.0.0.1 answering through the cached model client.

    ``GET /v1/models`` names ``model``; ``POST /v1/chat/completions`` (non-streaming) is
    answered from ``cache`` or by ``upstream`` (then cached). A failed call is a 502 naming the
    failure, so the app fails as it would against the model itself.
    """

    def __init__(self, upstream: str, model: str, cache: CallCache) -> None:
        self.upstream = upstream
        self.model = model
        self.cache = cache
        self.calls = {"requests": 0, "from_cache": 0}
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), json_handler(self.respond))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:P/v1``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    async def _complete(self, request: ChatRequest) -> ChatResponse:
        client = ModelClient(self.upstream, cache=self.cache, concurrency=1, timeout=900.0)
        try:
            result = await client.complete(request)
        finally:
            await client.aclose()
        if not isinstance(result, ChatResponse):
            raise RuntimeError(f"{result.kind.value}: {result.message}")
        return result

    def respond(self, method: str, path: str, raw: bytes) -> tuple[int, dict[str, Any]]:
        """Status and JSON body for one request."""
        if method == "GET":
            return 200, {"object": "list", "data": [{"id": self.model}]}
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict) or body.get("stream") or "messages" not in body:
            return 400, {"error": {"message": "a non-streaming chat completion is expected"}}
        try:
            response = asyncio.run(self._complete(chat_request(body)))
        except RuntimeError as exc:
            return 502, {"error": {"message": str(exc)}}
        self.calls["requests"] += 1
        self.calls["from_cache"] += response.cached
        return 200, {
            "id": f"chatcmpl-{response.key[:16]}",
            "object": "chat.completion",
            "created": 0,
            "model": response.model or self.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": response.text},
                    "finish_reason": response.finish_reason,
                }
            ],
            "usage": response.usage,
        }

    def __enter__(self) -> CachedEndpoint:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


@contextlib.contextmanager
def served(model: str, threads: int | None) -> Iterator[tuple[str, str]]:
    """(base URL, model name) of the model's server for the duration of the block."""
    if model == "lexical":
        from groundtrace.analyzer.backends import LEXICAL_MODEL

        with LexicalServer() as lexical:
            yield lexical.base_url, LEXICAL_MODEL
        return
    # 4096: a DUPLICATE prompt is the ~1,300-token app prompt plus one more passage
    with LlamaServer(model, n_ctx=4096, n_threads=threads) as server:
        yield server.base_url, server.model


def _say(phase: str, done: int, total: int | None) -> None:
    print(f"{phase} {done}/{total}", file=sys.stderr, flush=True)


def run_app(
    app_dir: Path, items: int, upstream: str, model: str, cache_path: Path
) -> dict[str, int]:
    """The app on the first ``items`` questions into ``app_dir`` (skipped once complete)."""
    cases = app_dir / "cases.jsonl"
    if cases.is_file():
        done = sum(1 for line in cases.open(encoding="utf-8") if line.strip())
        if done != items:
            raise ConfigError(
                f"holds an app run on {done} questions, not {items}; choose another --out",
                path=str(cases),
            )
        return {"requests": 0, "from_cache": 0}
    # an interrupted run: its answered calls are in the cache, its partial traces are redone
    shutil.rmtree(app_dir / "traces", ignore_errors=True)
    cache = CallCache(cache_path)
    try:
        with CachedEndpoint(upstream, model, cache) as endpoint:
            config = DemoConfig(model=endpoint.base_url, questions=items, out=app_dir)
            run_demo(config, progress=_say)
    finally:
        cache.close()
    return endpoint.calls


def _axis(effect: AxisEffect) -> dict[str, Any]:
    return {
        "original": effect.original_mean,
        "intervened": effect.intervened_mean,
        "delta": effect.mean_delta,
        "ci95": [effect.ci_low, effect.ci_high],
        "p": effect.p_value,
        "n": effect.n,
    }


def table(summary: InterventionSummary) -> dict[str, dict[str, Any]]:
    """Per operator: correctness, grounding and D (original, intervened, Δ, CI, p, n)."""
    return {
        op: {
            axis: _axis(summary.operators[op].axes[axis])
            for axis in ("correctness", "grounding", "divergence")
        }
        | {
            "answer_changed_rate": summary.operators[op].answer_changed_rate.mean,
            "failed": summary.operators[op].n_failed,
        }
        for op in OPERATORS
        if op in summary.operators
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the protocol, print the JSON object and return it."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--model", default=DEFAULT_MODEL, help="registry name or lexical")
    parser.add_argument("--out", type=Path, default=Path("runs/cue_r"))
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads")
    parser.add_argument(
        "--cache", type=Path, default=None, help="app calls' cache (default OUT/app/...)"
    )
    parser.add_argument(
        "--limit",
        type=int,
        default=None,
        help="replay the first N traces only (by case id): the table of a run stopped part way",
    )
    args = parser.parse_args(argv)
    app_dir = args.out / "app"
    with served(args.model, args.threads) as (base_url, model):
        app_calls = run_app(
            app_dir, args.items, base_url, model, args.cache or app_dir / "llm_cache.sqlite"
        )
        config = Config(
            out=str(args.out / "interventions"),
            traces=(str(app_dir / "traces"),),
            cases=str(app_dir / "cases.jsonl"),
            pool_dataset=str(DEFAULT_DATASET),
            endpoint=base_url,
            model=model,
            operators=OPERATORS,
            limit=args.limit,
            concurrency=1,
            timeout=900.0,
        )
        done = run_analysis(
            ANALYSIS, config, out=config.out, concurrency=config.concurrency, progress=_say
        )
    assert done.result is not None  # not an estimate
    summary = done.result.summary
    report = {
        "model": args.model,
        "items": summary.items,
        "operators": table(summary),
        "failed_units": summary.failed_units,
        "app_calls": app_calls,
        "replay_calls": {
            "made": summary.calls.model_calls_made,
            "from_cache": summary.calls.served_from_cache,
            "from_journal": summary.calls.from_journal,
        },
        "paper": PAPER,
    }
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
