"""Standard evidence rendering, prompt building and answer parsing.

Apps that render their evidence with :func:`render_evidence` (directly or through
:func:`build_prompt`) let the analyzer replay a captured LLM call with edited evidence: the
exact block is recorded on the current span (``groundtrace.prompt.evidence_block``), found
again inside the captured messages and swapped for a re-rendered one with
:func:`replace_evidence_block`.

Format ``groundtrace.chunks/1`` (:data:`EVIDENCE_FORMAT`)::

    <<<EVIDENCE>>>
    [d1] Jaws (film)
    Jaws is a 1975 American thriller film directed by Steven Spielberg.

    [d2] Steven Spielberg
    Steven Allan Spielberg is an American filmmaker.
    <<<END EVIDENCE>>>

Each chunk is a header line ``[id] title`` (just ``[id]`` without a title) followed by its
content with line endings normalised to ``\\n`` and surrounding whitespace stripped; chunks
are separated by one blank line. An empty list renders as ``(no evidence)`` between the
delimiters. The output depends only on the items' ids, titles and contents.

Usage::

    from groundtrace.sdk import rendering

    prompt = rendering.build_prompt(question, chunks)   # also records the block on the span
    reply = client.chat.completions.create(model=m, messages=prompt.messages)
    parsed = rendering.parse_answer(reply.choices[0].message.content)
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from opentelemetry import trace

from . import semconv as sc
from ._attributes import SCAN_MARGIN, mask, safe_str
from ._evidence import EvidenceItem, normalize_evidence
from ._record import as_float, text_of
from ._runtime import logger, settings
from ._settings import Content

__all__ = [
    "BLOCK_END",
    "BLOCK_START",
    "DEFAULT_INSTRUCTIONS",
    "EVIDENCE_FORMAT",
    "ParsedAnswer",
    "Prompt",
    "build_prompt",
    "parse_answer",
    "record_prompt_evidence",
    "render_evidence",
    "replace_evidence_block",
]

#: Name and version of the rendering format, recorded as ``groundtrace.prompt.format``.
EVIDENCE_FORMAT: Final = "groundtrace.chunks/1"
#: First line of a rendered evidence block.
BLOCK_START: Final = "<<<EVIDENCE>>>"
#: Last line of a rendered evidence block.
BLOCK_END: Final = "<<<END EVIDENCE>>>"
_CAPTURE_EVIDENCE: Final = Content.EVIDENCE
_EMPTY: Final = "(no evidence)"

#: System instructions used by :func:`build_prompt` unless others are given.
DEFAULT_INSTRUCTIONS: Final = (
    "Answer the question using only the evidence chunks between "
    f"{BLOCK_START} and {BLOCK_END}. Each chunk starts with its id in square brackets. "
    'Reply with one JSON object and nothing else: {"answer": "<short answer>", '
    '"confidence": <number between 0 and 1>, "used_chunks": ["<id of each chunk you used>"]}. '
    'If the evidence does not contain the answer, say so in "answer" and use a low confidence.'
)


def _chunk(item: EvidenceItem) -> str:
    header = f"[{item.id if item.id is not None else item.rank}]"
    if item.title:
        header += " " + " ".join(item.title.split())
    content = (item.content or "").replace("\r\n", "\n").replace("\r", "\n").strip()
    return f"{header}\n{content}" if content else header


def _render(items: Sequence[EvidenceItem]) -> str:
    body = "\n\n".join(_chunk(item) for item in items) if items else _EMPTY
    return f"{BLOCK_START}\n{body}\n{BLOCK_END}"


def render_evidence(evidence: object) -> str:
    """Render evidence (dicts, objects or strings, as RETRIEVE records them) as one block."""
    return _render(normalize_evidence(evidence))


@dataclass(frozen=True, slots=True)
class Prompt:
    """A built prompt: the chat messages plus the evidence block they contain."""

    system: str
    user: str
    evidence_block: str
    evidence_ids: tuple[str, ...]
    format: str = EVIDENCE_FORMAT

    @property
    def messages(self) -> list[dict[str, str]]:
        """OpenAI-style chat messages (system, user)."""
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user}]


def record_prompt_evidence(block: str, evidence_ids: Sequence[str]) -> None:
    """Record a rendered evidence block and its ids on the current span.

    The block itself is content and is only recorded when ``evidence`` capture is on, masked
    by the configured redaction; the ids and the format always are. Never raises.
    """
    try:
        span = trace.get_current_span()
        if not span.is_recording():
            return
        current = settings()
        span.set_attribute(sc.GT_PROMPT_EVIDENCE_IDS, list(evidence_ids))
        span.set_attribute(sc.GT_PROMPT_FORMAT, EVIDENCE_FORMAT)
        if current.captures(_CAPTURE_EVIDENCE):
            # Masked as the captured messages that contain it are (so replay finds it there
            # again), never clipped: a cut block could not be found.
            limit = current.max_attribute_length
            fired: set[str] = set()
            if len(block) <= limit + SCAN_MARGIN:
                block = mask(block, current, fired)
            if len(block) <= limit:
                span.set_attribute(sc.GT_PROMPT_EVIDENCE_BLOCK, block)
                if fired:
                    span.set_attribute(sc.GT_REDACTED, sorted(fired))
            else:
                span.set_attribute(sc.GT_TRUNCATED, [sc.GT_PROMPT_EVIDENCE_BLOCK])
    except Exception:
        logger.debug("recording the prompt evidence block failed", exc_info=True)


def build_prompt(
    question: str,
    evidence: object,
    *,
    instructions: str = DEFAULT_INSTRUCTIONS,
    record: bool = True,
) -> Prompt:
    """Build the standard prompt: instructions as system message, evidence + question as user.

    Args:
        question: the user question.
        evidence: the evidence list (any form RETRIEVE accepts).
        instructions: the system instructions.
        record: record the evidence block/ids/format on the current span.
    """
    items = normalize_evidence(evidence)
    block = _render(items)
    ids = tuple(item.id if item.id is not None else str(item.rank) for item in items)
    user = f"{block}\n\nQuestion: {question}"
    if record:
        record_prompt_evidence(block, ids)
    return Prompt(system=instructions, user=user, evidence_block=block, evidence_ids=ids)


def replace_evidence_block(messages: Any, old_block: str, new_block: str) -> Any:
    """Swap ``old_block`` for ``new_block`` inside captured messages.

    ``messages`` is a list of chat messages whose ``content`` is a string or a list of
    parts with a ``text`` field, or a plain prompt string. The input is not modified.

    Raises:
        ValueError: ``old_block`` is empty, or does not occur exactly once in total.
    """
    if not old_block:
        raise ValueError("old_block is empty")
    if isinstance(messages, str):
        count = messages.count(old_block)
        if count != 1:
            raise ValueError(f"evidence block found {count} times in the prompt, expected 1")
        return messages.replace(old_block, new_block)
    out = copy.deepcopy(list(messages))
    found = 0
    for message in out:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            n = content.count(old_block)
            if n:
                found += n
                message["content"] = content.replace(old_block, new_block)
        elif isinstance(content, list):
            for part in content:
                text = part.get("text") if isinstance(part, dict) else None
                if isinstance(text, str) and old_block in text:
                    found += text.count(old_block)
                    part["text"] = text.replace(old_block, new_block)
    if found != 1:
        raise ValueError(f"evidence block found {found} times in the messages, expected 1")
    return out


@dataclass(frozen=True, slots=True)
class ParsedAnswer:
    """The result of :func:`parse_answer`.

    Attributes:
        answer: the answer text (the whole reply when no JSON object was found).
        confidence: the confidence in [0, 1]; ``None`` when missing or invalid.
        used_chunks: ids of the chunks the model says it used.
        raw: the reply as received.
        error: what was wrong with the reply, ``None`` when it parsed cleanly.
    """

    answer: str
    confidence: float | None
    used_chunks: list[str] = field(default_factory=list)
    raw: str = ""
    error: str | None = None


_FENCE: Final = re.compile(r"```[A-Za-z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_ANSWER_KEYS: Final = ("answer", "final_answer", "text", "response")
_CONF_KEYS: Final = ("confidence", "score", "probability")
_USED_KEYS: Final = ("used_chunks", "used_chunk_ids", "cited_ids", "citations", "sources")


def _first_object(text: str) -> dict[str, Any] | None:
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _ids(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str | int) and not isinstance(value, bool):
        return [str(value)]
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, str | int) and not isinstance(v, bool)]
    return []


def parse_answer(text: object) -> ParsedAnswer:
    """Parse a model reply ``{"answer", "confidence", "used_chunks"}``; never raises.

    Tolerates code fences and text around the JSON object. Without a JSON object the whole
    reply is the answer and ``error`` says so; an invalid confidence becomes ``None`` with an
    ``error``, never a made-up number.
    """
    try:
        raw = text_of(text) or ""
        candidates = [m.group(1) for m in _FENCE.finditer(raw)] + [raw]
        obj = None
        for candidate in candidates:
            obj = _first_object(candidate)
            if obj is not None:
                break
        if obj is None:
            stripped = _FENCE.sub(lambda m: m.group(1), raw).strip()
            return ParsedAnswer(stripped, None, [], raw, "no JSON object in the reply")
        errors: list[str] = []
        answer_value = next((obj[k] for k in _ANSWER_KEYS if k in obj), None)
        if answer_value is None:
            errors.append("missing answer")
            answer = ""
        else:
            answer = answer_value if isinstance(answer_value, str) else safe_str(answer_value)
        conf_value = next((obj[k] for k in _CONF_KEYS if k in obj), None)
        confidence = as_float(conf_value)
        if conf_value is None:
            errors.append("missing confidence")
        elif confidence is None or not 0.0 <= confidence <= 1.0:
            errors.append(f"invalid confidence {conf_value!r}")
            confidence = None
        used = _ids(next((obj[k] for k in _USED_KEYS if k in obj), None))
        return ParsedAnswer(answer.strip(), confidence, used, raw, "; ".join(errors) or None)
    except Exception as exc:  # parse_answer never raises
        logger.debug("parse_answer failed", exc_info=True)
        return ParsedAnswer(
            "", None, [], safe_str(text), f"unparseable reply: {type(exc).__name__}"
        )
