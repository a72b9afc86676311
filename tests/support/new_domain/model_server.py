"""The new user's own model: a tiny deterministic extractive reader behind an
OpenAI-compatible HTTP server (127.0.0.1, a free port).

It reads the prompt the SDK's :func:`groundtrace.sdk.build_prompt` builds (the
``groundtrace.chunks/1`` evidence block, then ``Question: ...``), picks the chunk sharing the
most words with the question (the first on a tie) and answers with that chunk's first
sentence, citing it, in the JSON reply :func:`groundtrace.sdk.parse_answer` reads. With no
evidence it says so with a low confidence. The same prompt always gets the same reply.

Usage::

    with reader_server() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="local")
"""

from __future__ import annotations

import json
import re
from typing import Final

from tests.support.new_domain.handbook import first_sentence
from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest, last_user_text

__all__ = ["MODEL", "reader_reply", "reader_server"]

#: The model name the app asks for.
MODEL: Final = "greenhouse-reader-1"
_BLOCK: Final = re.compile(r"<<<EVIDENCE>>>\n(.*?)\n<<<END EVIDENCE>>>", re.DOTALL)
_HEADER: Final = re.compile(r"\[([^\]]+)\][^\n]*\n?")
_WORD: Final = re.compile(r"[a-z0-9]+")
_STOP: Final = frozenset(
    "a an and are be by do does for how is of the to what when where which who should many".split()
)


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower())) - _STOP


def reader_reply(prompt: str) -> dict[str, object]:
    """The reader's answer to one prompt: ``{"answer", "confidence", "used_chunks"}``."""
    block = _BLOCK.search(prompt)
    question = prompt.rpartition("Question:")[2].strip()
    chunks: list[tuple[str, str]] = []
    for part in (block.group(1) if block else "").split("\n\n"):
        header = _HEADER.match(part)
        if header:
            chunks.append((header.group(1), part[header.end() :].strip()))
    if not chunks:
        return {"answer": "The evidence does not say.", "confidence": 0.1, "used_chunks": []}
    q = _words(question)
    overlap = [len(q & _words(text)) for _, text in chunks]
    best = overlap.index(max(overlap))
    chunk_id, text = chunks[best]
    confidence = 0.9 if overlap[best] >= 2 else 0.3
    return {"answer": first_sentence(text), "confidence": confidence, "used_chunks": [chunk_id]}


def _handler(req: ServerRequest) -> Reply:
    return Reply(content=json.dumps(reader_reply(last_user_text(req))), model=MODEL)


def reader_server() -> OpenAICompatServer:
    """The reader's server (not started: use it as a context manager)."""
    return OpenAICompatServer(handler=_handler, models=(MODEL,))
