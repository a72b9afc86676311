"""Recover the question and the evidence chunks from a chat prompt (for the lexical reader).

The reader sees exactly what a model would see: the chat messages. Evidence is read from the
standard rendering of :mod:`groundtrace.sdk.rendering` (format ``groundtrace.chunks/1``): the
last block between ``<<<EVIDENCE>>>`` and ``<<<END EVIDENCE>>>``, chunks opened by a header line
``[<id>] <title>``. Without those delimiters, header lines anywhere before the final question
are used. The question is the text after the last ``Question:`` label (else the last line).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from groundtrace.sdk.rendering import BLOCK_END, BLOCK_START

from ._lexical_reader import Chunk

__all__ = ["parse_prompt", "prompt_text"]

_HEADER_RE: Final = re.compile(r"^\[(?P<id>[^\]\n]+)\][ \t]*(?P<title>[^\n]*)$", re.M)
_QUESTION_RE: Final = re.compile(r"^\s*Question:\s*(?P<q>.+?)\s*$", re.M | re.I)
_BLOCK_END_RE: Final = re.compile(r"^(?:</?[a-z_]+>|-{3,}|={3,}|Question:|Answer:)", re.M | re.I)


def prompt_text(messages: Iterable[Mapping[str, Any]]) -> str:
    """The text of the user messages, joined (content parts of type ``text`` included)."""
    parts: list[str] = []
    for message in messages:
        if message.get("role") not in {"user", "system", "developer"}:
            continue
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(
                str(part.get("text", ""))
                for part in content
                if isinstance(part, Mapping) and part.get("type") == "text"
            )
    return "\n".join(parts)


def _last_example_free(text: str) -> str:
    """The part of the prompt after a worked example, if the prompt contains one.

    A worked example repeats the evidence/question layout; the real task is the last one.
    """
    marker = text.rfind("Question:")
    if marker < 0:
        return text
    previous = text.rfind("Question:", 0, marker)
    return text[previous + len("Question:") :] if previous >= 0 else text


def parse_prompt(text: str) -> tuple[str, list[Chunk]]:
    """Split a prompt into (question, evidence chunks).

    Args:
        text: the prompt text (see :func:`prompt_text`).

    Returns:
        The question and the chunks in prompt order (possibly empty).
    """
    questions = _QUESTION_RE.findall(text)
    if questions:
        question = questions[-1]
    else:
        lines = [line for line in text.splitlines() if line.strip()]
        question = lines[-1].strip() if lines else ""
    start = text.rfind(BLOCK_START)
    stop = text.find(BLOCK_END, start) if start >= 0 else -1
    if start >= 0 and stop >= 0:
        task = text[start + len(BLOCK_START) : stop]
    else:
        task = _last_example_free(text)
        # Evidence of the real task is the last evidence block before the final question.
        end = task.rfind("Question:")
        if end >= 0:
            task = task[:end]
    chunks: list[Chunk] = []
    headers = list(_HEADER_RE.finditer(task))
    for index, header in enumerate(headers):
        stop = headers[index + 1].start() if index + 1 < len(headers) else len(task)
        body = task[header.end() : stop]
        cut = _BLOCK_END_RE.search(body)
        if cut is not None:
            body = body[: cut.start()]
        chunks.append(Chunk(header["id"].strip(), header["title"].strip(), body.strip()))
    return question, chunks
