"""The tax desk's RAG app, instrumented with the SDK as docs/quickstart.md shows.

Run as a user would, one process per run (the model server is the user's; in the tests the
quick start's ``LexicalServer``)::

    python -m tests.support.tax_desk.rag_app OUT --model-url URL [--no-content] [--k 3]

It writes ``OUT/`` (OTLP-JSON lines) with one trace per question of :data:`.rules.QUESTIONS`.
``respond`` is the replayable ANSWER step (``@gt.answer(replayable=True)``): replay calls it
again with an edited evidence list; its ``base_url`` is recorded and can be replaced
(``--replay-kwarg base_url=URL``).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import openai

import groundtrace.sdk as gt
from groundtrace.analyzer.backends import LEXICAL_MODEL
from groundtrace.sdk.instrumentation.openai import OpenAIInstrumentor
from tests.support.tax_desk.rules import QUESTIONS, search

__all__ = ["handle", "main", "respond", "retrieve"]


@gt.retrieve(retriever="keyword", k=3)
def retrieve(query: str, k: int = 3) -> list[dict[str, object]]:
    return search(query, k)


@gt.answer(replayable=True)
def respond(question: str, evidence: list[dict[str, object]], base_url: str) -> gt.ParsedAnswer:
    client = openai.OpenAI(base_url=base_url, api_key="unused-locally")
    prompt = gt.build_prompt(question, evidence)  # the standard evidence block, recorded
    reply = client.chat.completions.create(
        model=LEXICAL_MODEL, messages=prompt.messages, temperature=0
    )
    return gt.parse_answer(reply.choices[0].message.content)


@gt.request(app_name="tax-desk", app_version="2026.12.1")
def handle(question: str, base_url: str, k: int, case_id: str | None = None) -> str:
    return respond(question, retrieve(question, k), base_url).answer


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--model-url", required=True)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--no-content", action="store_true", help="capture_content=False")
    args = parser.parse_args(argv)
    gt.configure(service_name="tax-desk", exporter="file", file_path=args.out,
                 capture_content=not args.no_content)  # fmt: skip
    OpenAIInstrumentor().instrument()
    for case_id, (question, _, _) in QUESTIONS.items():
        print(case_id, handle(question, args.model_url, args.k, case_id=case_id))
    gt.shutdown()


if __name__ == "__main__":
    main()
