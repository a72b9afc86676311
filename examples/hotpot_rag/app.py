"""An instrumented BM25 RAG app over HotpotQA: REQUEST -> RETRIEVE -> ANSWER (LLM) -> SELECT.

Per question the corpus is the question's context paragraphs (ids ``<_id>:<index>``):

* RETRIEVE (``@retrieve``): BM25 (``rank_bm25.BM25Okapi``) top-k over the paragraphs, each
  evidence item with id, title, rank, score and content;
* the prompt is fitted to the model's context window when it is known (``context_tokens``):
  the lowest-ranked evidence items are left out until the prompt, the chat template's margin
  and the reply fit (:func:`fit_evidence`), tokens counted by the server's tokenizer
  (llama.cpp's ``/extras/tokenize/count``) or, where the server has none, one token per UTF-8
  byte (never fewer tokens than a byte-level tokenizer makes);
* ANSWER (``@answer(replayable=True)``): the evidence with a positive BM25 score is rendered
  with the SDK's standard rendering into one user message (the Gemma chat template drops
  system messages, so instructions and one worked example go there too) and sent through the
  ``openai`` client (an LLM span when the openai instrumentor is on) with ``temperature=0``
  and a JSON-schema ``response_format``; the reply is parsed with ``parse_answer``;
* SELECT (``@select``): U = the chunks the model says it used (the ids that exist in the
  evidence), or every chunk it was shown when it names none.

:func:`answer` is the importable entry point replay calls with perturbed evidence:
``groundtrace.examples.hotpot_rag.app:answer``.

Usage::

    from groundtrace.examples.hotpot_rag.app import run_case
    from groundtrace.examples.hotpot_rag.cases import load_cases

    result = run_case(load_cases(limit=1)[0], model="lexical", base_url=LEXICAL_BASE_URL)
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from rank_bm25 import BM25Okapi

from groundtrace.analyzer.cases import Case, Passage
from groundtrace.sdk import answer as answer_step
from groundtrace.sdk import request, retrieve, select
from groundtrace.sdk.rendering import build_prompt, parse_answer

__all__ = [
    "APP_NAME",
    "APP_VERSION",
    "DEFAULT_TOP_K",
    "LEXICAL_BASE_URL",
    "TEMPLATE_TOKENS",
    "CaseResult",
    "answer",
    "app_version",
    "chat_request",
    "fit_evidence",
    "prompt_evidence",
    "retrieve_chunks",
    "run_case",
    "select_used",
    "token_counter",
]

APP_NAME: Final = "hotpot-rag"
APP_VERSION: Final = "1.0.0"
DEFAULT_TOP_K: Final = 5
#: Pseudo base URL of the in-process lexical reader (no socket).
LEXICAL_BASE_URL: Final = "inprocess://lexical/v1"
_MAX_TOKENS: Final = 96
_MAX_USED: Final = 3
#: Bounds the answer string so the JSON always closes within ``max_tokens``.
_MAX_ANSWER_CHARS: Final = 80
#: Tokens kept free for what the chat template wraps around the one user message (Gemma's
#: ``<start_of_turn>user ... <end_of_turn><start_of_turn>model``: about 10).
TEMPLATE_TOKENS: Final = 32

_INSTRUCTIONS: Final = (
    "Answer the question using only the evidence chunks. Reply with one JSON object with the "
    'keys "answer" (a short answer: a name, number, date, or yes/no), "confidence" (a number '
    'from 0 to 1) and "used_chunks" (the ids of the chunks you used).\n\n'
    "Example.\n"
    "[ex:0] Jaws (film)\n"
    "Jaws is a 1975 American thriller film directed by Steven Spielberg.\n"
    "[ex:1] Mallard\n"
    "The mallard is a dabbling duck.\n"
    "Question: Who directed Jaws?\n"
    'Answer: {"answer": "Steven Spielberg", "confidence": 0.9, "used_chunks": ["ex:0"]}\n\n'
    "Now the task."
)
_TOKEN_RE: Final = re.compile(r"\w+")


def app_version(top_k: int = DEFAULT_TOP_K) -> str:
    """Version label of the app configuration (what the release gate compares)."""
    return f"{APP_VERSION}+bm25-top{top_k}"


def _tokens(text: str) -> list[str]:
    return _TOKEN_RE.findall(text.lower())


@retrieve(retriever="bm25", mode="full_text")
def retrieve_chunks(question: str, chunks: Sequence[Passage], top_k: int) -> list[dict[str, Any]]:
    """BM25 top-k over the case's paragraphs (title + text), ranked by score."""
    if not chunks:
        return []
    bm25 = BM25Okapi([_tokens(f"{c.title} {c.text}") for c in chunks])
    scores = bm25.get_scores(_tokens(question))
    order = sorted(range(len(chunks)), key=lambda i: (-float(scores[i]), i))[:top_k]
    return [
        {
            "id": chunks[i].id,
            "title": chunks[i].title,
            "rank": rank,
            "score": round(float(scores[i]), 6),
            "content": chunks[i].text,
        }
        for rank, i in enumerate(order, start=1)
    ]


@functools.cache
def _client(base_url: str, api_key: str) -> Any:
    import openai

    if base_url == LEXICAL_BASE_URL:
        from groundtrace.analyzer.backends import lexical_client

        return lexical_client()
    # generous: one answer takes minutes on a loaded 2-core machine
    return openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=900.0)


def _response_format(ids: Sequence[str]) -> dict[str, Any]:
    used: dict[str, Any] = {"type": "array", "items": {"type": "string"}, "maxItems": _MAX_USED}
    if ids:
        used["items"]["enum"] = list(ids)
    schema = {
        "type": "object",
        "properties": {
            "answer": {"type": "string", "maxLength": _MAX_ANSWER_CHARS},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "used_chunks": used,
        },
        "required": ["answer", "confidence", "used_chunks"],
    }
    return {"type": "json_object", "schema": schema}


def prompt_evidence(evidence: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The retrieved items the model is shown: those with a positive BM25 score (or all)."""
    return [e for e in evidence if float(e["score"]) > 0] or list(evidence)


def _prompt_text(question: str, evidence: Sequence[Mapping[str, Any]], *, record: bool) -> str:
    prompt = build_prompt(question, list(evidence), instructions=_INSTRUCTIONS, record=record)
    return f"{prompt.system}\n\n{prompt.user}"


def chat_request(
    question: str, evidence: Sequence[Mapping[str, Any]], *, max_tokens: int = _MAX_TOKENS
) -> dict[str, Any]:
    """The chat-completion parameters of the ANSWER step (all but ``model``).

    One user message holding instructions, evidence and question (the Gemma chat template
    drops system messages), ``temperature=0`` and a JSON-schema ``response_format``.
    """
    return {
        "messages": [{"role": "user", "content": _prompt_text(question, evidence, record=True)}],
        "temperature": 0,
        "max_tokens": max_tokens,
        "response_format": _response_format([str(e.get("id")) for e in evidence]),
    }


def token_counter(base_url: str, model: str) -> Callable[[str], int]:
    """How many tokens ``model`` at ``base_url`` makes of a text.

    The server's own tokenizer when it has one (llama.cpp's OpenAI-compatible server:
    ``POST /extras/tokenize/count`` answers); otherwise one token per UTF-8 byte, an upper
    bound for the byte-level tokenizers of current models (a token never covers less than a
    byte).

    Raises:
        httpx.HTTPError: the server cannot be reached (the answer call would fail too).
    """
    import httpx

    root = base_url.rstrip("/").removesuffix("/v1")
    url = f"{root}/extras/tokenize/count"
    probe = httpx.post(url, json={"input": "", "model": model}, timeout=60.0)
    if not probe.is_success:

        def by_bytes(text: str) -> int:
            return len(text.encode("utf-8"))

        return by_bytes

    def by_server(text: str) -> int:
        reply = httpx.post(url, json={"input": text, "model": model}, timeout=60.0)
        reply.raise_for_status()
        return int(reply.json()["count"])

    return by_server


def fit_evidence(
    question: str,
    evidence: Sequence[Mapping[str, Any]],
    *,
    context_tokens: int,
    count_tokens: Callable[[str], int],
    max_tokens: int = _MAX_TOKENS,
) -> list[Mapping[str, Any]]:
    """The leading items of ``evidence`` whose prompt fits a ``context_tokens`` window.

    The lowest-ranked items are left out, one at a time, until the prompt's tokens plus
    :data:`TEMPLATE_TOKENS` plus the reply's ``max_tokens`` fit; the items kept are whole
    (their ids stay those the model may cite). With no item left the prompt is sent as it
    is: the call fails and that case counts as failed.
    """
    items = list(evidence)
    budget = context_tokens - TEMPLATE_TOKENS - max_tokens
    while items and count_tokens(_prompt_text(question, items, record=False)) > budget:
        items.pop()
    return items


@answer_step(replayable=True, query_param="question", evidence_param="evidence")
def answer(
    question: str,
    evidence: Sequence[Mapping[str, Any]],
    *,
    model: str,
    base_url: str,
    api_key: str = "local",
    max_tokens: int = _MAX_TOKENS,
) -> dict[str, Any]:
    """Answer ``question`` from ``evidence`` with an OpenAI-compatible model.

    Args:
        question: the question.
        evidence: evidence items (mappings with ``id``, ``title``, ``content``), in prompt order.
        model: model name sent to the endpoint.
        base_url: the endpoint (``LEXICAL_BASE_URL`` for the in-process lexical reader).
        api_key: key sent to the endpoint (local servers ignore it).
        max_tokens: bound on the reply length.

    Returns:
        ``{"answer", "confidence", "used_chunks"}``; ``used_chunks`` keeps only ids present in
        ``evidence``. An unparsable reply gives answer ``""`` and confidence ``0.0`` with the
        parse error under ``"error"`` (the ANSWER span shows what the model said).
    """
    items = list(evidence)
    reply = _client(base_url, api_key).chat.completions.create(
        model=model, **chat_request(question, items, max_tokens=max_tokens)
    )
    text = reply.choices[0].message.content or ""
    parsed = parse_answer(text)
    known = {str(e.get("id")) for e in items}
    used = [i for i in dict.fromkeys(parsed.used_chunks or []) if i in known]
    result: dict[str, Any] = {
        "answer": parsed.answer or "",
        "confidence": float(parsed.confidence) if parsed.confidence is not None else 0.0,
        "used_chunks": used,
    }
    if parsed.error:
        result["error"] = parsed.error
    return result


@select(name="used_chunks")
def select_used(
    evidence: Sequence[Mapping[str, Any]], used_ids: Sequence[str]
) -> list[dict[str, Any]]:
    """U: the evidence the model says it used, or all evidence it saw when it names none."""
    wanted = set(used_ids)
    chosen = [dict(e) for e in evidence if e.get("id") in wanted]
    return chosen or [dict(e) for e in evidence]


@dataclass(frozen=True, slots=True)
class CaseResult:
    """What the app answered for one case."""

    case_id: str
    answer: str
    confidence: float
    used_chunks: tuple[str, ...]
    retrieved: tuple[str, ...]


def _run(
    question: str,
    case_id: str,
    case: Case,
    top_k: int,
    model: str,
    base_url: str,
    context_tokens: int | None,
) -> CaseResult:
    evidence = retrieve_chunks(question, case.passages, top_k)
    context = prompt_evidence(evidence)
    if context_tokens is not None:
        count = _counter(base_url, model)
        context = fit_evidence(question, context, context_tokens=context_tokens, count_tokens=count)
    result = answer(question, context, model=model, base_url=base_url)
    used = select_used(context, result["used_chunks"])
    return CaseResult(
        case_id=case_id,
        answer=str(result["answer"]),
        confidence=float(result["confidence"]),
        used_chunks=tuple(str(u["id"]) for u in used),
        retrieved=tuple(str(e["id"]) for e in evidence),
    )


@functools.cache
def _counter(base_url: str, model: str) -> Callable[[str], int]:
    return token_counter(base_url, model)


@functools.cache
def _request_step(version: str) -> Callable[..., CaseResult]:
    step: Callable[..., CaseResult] = request(
        name="hotpot_rag", query_param="question", app_name=APP_NAME, app_version=version
    )(_run)
    return step


def run_case(
    case: Case,
    *,
    model: str,
    base_url: str,
    top_k: int = DEFAULT_TOP_K,
    context_tokens: int | None = None,
) -> CaseResult:
    """Run the app on one case: one trace rooted in a REQUEST span.

    Args:
        case: the HotpotQA case.
        model: model name for the ANSWER step.
        base_url: OpenAI-compatible endpoint (or :data:`LEXICAL_BASE_URL`).
        top_k: BM25 depth; also part of the app version label.
        context_tokens: the model's context window in tokens, when known: the prompt's
            evidence is fitted to it (:func:`fit_evidence`); ``None``: sent as it is.
    """
    return _request_step(app_version(top_k))(
        question=case.question or "",
        case_id=case.case_id,
        case=case,
        top_k=top_k,
        model=model,
        base_url=base_url,
        context_tokens=context_tokens,
    )
