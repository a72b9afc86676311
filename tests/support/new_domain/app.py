"""The new user's greenhouse RAG app, instrumented as the quick start shows.

BM25 (rank_bm25) over the handbook's pages retrieves the top 3; the ANSWER step builds the
SDK's standard prompt, asks the app's own OpenAI-compatible model server through the
``openai`` client (an LLM span per call, from the SDK's OpenAI instrumentor) and parses the
reply. ``--version 2`` is the candidate release with a planted regression: its ranking is
sorted the wrong way round, so it retrieves the three worst pages.

Run as a user would, one process per run::

    python -m tests.support.new_domain.app OUT --model-url URL [--version 2]

It writes ``OUT/traces/`` (OTLP-JSON lines) for every question of the handbook's cases.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import openai
from rank_bm25 import BM25Okapi

import groundtrace.sdk as gt
from groundtrace.sdk.instrumentation.openai import OpenAIInstrumentor
from tests.support.new_domain.handbook import CASES, PAGES
from tests.support.new_domain.model_server import MODEL

__all__ = ["main", "respond", "search"]

_IDS = list(PAGES)
_BM25 = BM25Okapi([re.findall(r"[a-z0-9]+", f"{t} {x}".lower()) for t, x in PAGES.values()])
_STATE: dict[str, Any] = {"client": None, "reversed": False}


@gt.retrieve(retriever="bm25", k=3)
def search(query: str) -> list[dict[str, Any]]:
    """The three best pages by BM25 (version 2: the three worst, the planted bug)."""
    scores = _BM25.get_scores(re.findall(r"[a-z0-9]+", query.lower()))
    order = sorted(range(len(_IDS)), key=lambda i: scores[i], reverse=not _STATE["reversed"])
    return [
        {"id": _IDS[i], "title": PAGES[_IDS[i]][0], "content": PAGES[_IDS[i]][1],
         "score": float(scores[i])}
        for i in order[:3]
    ]  # fmt: skip


@gt.answer(replayable=True)
def respond(question: str, evidence: list[dict[str, Any]]) -> gt.ParsedAnswer:
    """Ask the model with the SDK's standard prompt and parse its JSON reply."""
    prompt = gt.build_prompt(question, evidence)
    reply = _STATE["client"].chat.completions.create(
        model=MODEL, messages=prompt.messages, temperature=0, seed=0
    )
    return gt.parse_answer(reply.choices[0].message.content)


def main(argv: Sequence[str]) -> None:
    """Answer every case's question once, writing the traces into ``OUT/traces``."""
    parser = argparse.ArgumentParser(prog="greenhouse-rag")
    parser.add_argument("out", type=Path)
    parser.add_argument("--model-url", required=True)
    parser.add_argument("--version", default="1")
    args = parser.parse_args(argv)
    _STATE["reversed"] = args.version == "2"
    gt.configure(
        service_name="greenhouse-rag",
        exporter="file",
        file_path=args.out / "traces",
        capture_content=True,
    )
    OpenAIInstrumentor().instrument()
    _STATE["client"] = openai.OpenAI(base_url=args.model_url, api_key="local", max_retries=0)

    @gt.request(app_name="greenhouse-rag", app_version=f"2026.{args.version}")
    def handle(question: str, case_id: str | None = None) -> str:
        return respond(question, search(question)).answer

    for case_id, question, *_ in CASES:
        handle(question, case_id=case_id)
    gt.shutdown()


if __name__ == "__main__":
    main(sys.argv[1:])
