"""The LLM pair judge: one structured-output call per open pair, through the shared client.

The reply must be one JSON object ``{"label", "topic", "significance"}`` (label one of the five
pair labels; significance ``none``/``low``/``medium``/``high``). Anything else -- a failed
call, a truncated reply, malformed JSON, a missing or unknown label -- is a visible protocol
error (a :class:`PairError` with the SPEC §4.4 kind), never imputed. Calls go through the
model client, so they are cached by content (a killed run resumes without repeating a call),
retried and bounded.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Final, NamedTuple

from groundtrace.analyzer.judge import ProtocolErrorKind
from groundtrace.analyzer.llm import CallFailure, ChatRequest, ModelClient

from ._model import LABELS, Answer, Label, PairLabel, Question, Significance
from ._records import PairError

__all__ = ["JUDGE_PROMPT_VERSION", "JUDGE_SCHEMA", "PairJudge", "PairVerdict", "parse_pair_reply"]

JUDGE_PROMPT_VERSION: Final = "audit-pair-judge-v1"
_SIGNIFICANCE: Final = ("none", "low", "medium", "high")
#: JSON schema of the judge's reply.
JUDGE_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "enum": list(LABELS)},
        "topic": {"type": "string", "maxLength": 60},
        "significance": {"type": "string", "enum": list(_SIGNIFICANCE)},
    },
    "required": ["label", "topic", "significance"],
}
_INSTRUCTIONS: Final = (
    "Two sources answered the same question. Compare the two answers and reply with one JSON "
    'object with the keys "label", "topic" and "significance".\n'
    "label: absent (a source does not address the question), consistent (same guidance), "
    "complementary (compatible, each adds detail), divergent (different guidance, not strictly "
    "incompatible) or contradictory (incompatible).\n"
    "topic: what the answers differ on, in a few words (empty when they do not differ).\n"
    "significance: none, low, medium or high (the practical weight of the difference)."
)


class PairVerdict(NamedTuple):
    """A readable judge reply."""

    label: Label
    topic: str | None
    significance: Significance | None


def parse_pair_reply(
    text: str, finish_reason: str | None
) -> PairVerdict | tuple[ProtocolErrorKind, str]:
    """The verdict of a reply, or ``(protocol error kind, message)``."""
    if finish_reason == "length":
        return ProtocolErrorKind.TRUNCATION, "the reply was cut at the token budget"
    try:
        body = json.loads(text.strip())
    except ValueError:
        return ProtocolErrorKind.MALFORMED_JSON, f"not JSON: {text[:120]!r}"
    if not isinstance(body, dict):
        return ProtocolErrorKind.MALFORMED_JSON, "the reply is not a JSON object"
    label = body.get("label")
    if label is None:
        return ProtocolErrorKind.MISSING, "the reply has no label"
    if label not in LABELS:
        return ProtocolErrorKind.OUT_OF_RANGE, f"unknown label {label!r}"
    significance = body.get("significance", "none")
    if significance not in _SIGNIFICANCE:
        return ProtocolErrorKind.OUT_OF_RANGE, f"unknown significance {significance!r}"
    topic = body.get("topic")
    return PairVerdict(
        label, str(topic) if topic else None, None if significance == "none" else significance
    )


class PairJudge:
    """Labels open pairs with a model behind an OpenAI-compatible endpoint.

    Args:
        client: the shared model client (cache, retries, concurrency).
        model: model id at the endpoint.
        seed: sampling seed (part of the fingerprint).
        max_tokens: reply budget (a reply cut there is a ``truncation`` error).
    """

    def __init__(
        self, client: ModelClient, model: str, *, seed: int = 0, max_tokens: int = 96
    ) -> None:
        self.client = client
        self.model = model
        self.seed = seed
        self.max_tokens = max_tokens

    @property
    def name(self) -> str:
        """``judge:<model>@<endpoint>``."""
        return f"judge:{self.model}@{self.client.base_url}"

    @property
    def fingerprint(self) -> str:
        """sha256 of endpoint, model, prompt, schema, temperature, seed and budget."""
        fields = {
            "endpoint": self.client.base_url, "model": self.model,
            "prompt": JUDGE_PROMPT_VERSION, "instructions": _INSTRUCTIONS,
            "schema": JUDGE_SCHEMA, "temperature": 0.0, "seed": self.seed,
            "max_tokens": self.max_tokens,
        }  # fmt: skip
        payload = json.dumps(fields, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def request(self, question: Question, a: Answer, b: Answer) -> ChatRequest:
        """The chat request for one pair (one user message)."""
        content = (
            f"{_INSTRUCTIONS}\n\nQuestion: {question.text}\n"
            f"Answer of source A: {a.text}\nSource A says: {a.quote[:600]}\n"
            f"Answer of source B: {b.text}\nSource B says: {b.quote[:600]}"
        )
        return ChatRequest(
            model=self.model,
            messages=({"role": "user", "content": content},),
            temperature=0.0,
            seed=self.seed,
            max_tokens=self.max_tokens,
            response_format={"type": "json_object", "schema": JUDGE_SCHEMA},
        )

    async def label(self, question: Question, a: Answer, b: Answer) -> PairLabel | PairError:
        """The pair's label, or a protocol error; never raises for a bad reply."""
        result = await self.client.complete(self.request(question, a, b))
        if isinstance(result, CallFailure):
            return self._error(a, b, result.kind.value, result.message)
        parsed = parse_pair_reply(result.text, result.finish_reason)
        if not isinstance(parsed, PairVerdict):
            return self._error(a, b, parsed[0].value, parsed[1])
        label, topic, significance = parsed
        differs = label not in ("absent", "consistent")
        return PairLabel(
            question_id=a.question_id,
            source_a=a.source_id,
            source_b=b.source_id,
            label=label,
            topic=(topic or question.topics[0]) if differs else None,
            significance=significance if differs else None,
            decided_by="judge",
        )

    @staticmethod
    def _error(a: Answer, b: Answer, kind: str, message: str) -> PairError:
        return PairError(
            question_id=a.question_id, source_a=a.source_id, source_b=b.source_id,
            kind=kind, message=message,
        )  # fmt: skip
