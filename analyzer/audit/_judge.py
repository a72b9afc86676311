"""The LLM pair judge: one structured-output call per open pair, through the shared client.

The reply must be one JSON object ``{"label", "topic", "significance"}`` (label one of the five
pair labels; significance ``none``/``low``/``medium``/``high``). Anything else -- a failed
call, a truncated reply, malformed JSON, a missing or unknown label -- is a visible protocol
error (a :class:`PairError` with the SPEC §4.4 kind), never imputed. Calls go through the
model client, so they are cached by content (a killed run resumes without repeating a call),
retried and bounded.
"""

from __future__ import annotations

from typing import Any, Final

from groundtrace.analyzer.judge import ProtocolErrorKind, Rubric, fingerprint, fingerprint_digest
from groundtrace.analyzer.llm import ModelClient

from ._model import LABELS, Answer, PairLabel, Question
from ._pairs import make_label
from ._records import PairError
from ._structured import CallError, StructuredCaller

__all__ = ["JUDGE_PROMPT_VERSION", "JUDGE_SCHEMA", "PairJudge", "read_pair_reply"]

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


def read_pair_reply(
    body: dict[str, Any], question: Question, a: Answer, b: Answer
) -> PairLabel | CallError:
    """The pair label of a judge's JSON reply, or the protocol error that makes it unusable."""
    label = body.get("label")
    if label is None:
        return CallError(ProtocolErrorKind.MISSING, "the reply has no label")
    if label not in LABELS:
        return CallError(ProtocolErrorKind.OUT_OF_RANGE, f"unknown label {label!r}")
    significance = body.get("significance", "none")
    if significance not in _SIGNIFICANCE:
        return CallError(ProtocolErrorKind.OUT_OF_RANGE, f"unknown significance {significance!r}")
    topic = str(body.get("topic") or "") or question.topics[0]
    return make_label(a, b, label, topic, "judge", None if significance == "none" else significance)


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
        self.caller = StructuredCaller(client, model, seed=seed, max_tokens=max_tokens)

    @property
    def name(self) -> str:
        """``judge:<model>@<endpoint>``."""
        return f"judge:{self.caller.name}"

    @property
    def fingerprint_fields(self) -> dict[str, Any]:
        """The judge fingerprint (SPEC §4.4) of this pair judge, from the one judge
        fingerprint implementation: endpoint, model, prompt version and text, reply schema,
        temperature and seed (no threshold: the judge picks a label, not a score)."""
        c = self.caller
        rubric = Rubric(JUDGE_PROMPT_VERSION, _INSTRUCTIONS)
        return fingerprint(
            endpoint=c.client.base_url, model=c.model, rubric_version=rubric.version,
            rubric_digest=rubric.digest, schema_digest=fingerprint_digest(JUDGE_SCHEMA),
            threshold=None, temperature=0.0, seed=c.seed,
        )  # fmt: skip

    @property
    def fingerprint(self) -> str:
        """The digest of :attr:`fingerprint_fields` (what a validation is bound to)."""
        return str(self.fingerprint_fields["digest"])

    @staticmethod
    def prompt(question: Question, a: Answer, b: Answer) -> str:
        """The user message for one pair."""
        return (
            f"{_INSTRUCTIONS}\n\nQuestion: {question.text}\n"
            f"Answer of source A: {a.text}\nSource A says: {a.quote[:600]}\n"
            f"Answer of source B: {b.text}\nSource B says: {b.quote[:600]}"
        )

    async def label(self, question: Question, a: Answer, b: Answer) -> PairLabel | PairError:
        """The pair's label, or a protocol error; never raises for a bad reply."""
        reply = await self.caller.call(self.prompt(question, a, b), JUDGE_SCHEMA)
        result = reply if isinstance(reply, CallError) else read_pair_reply(reply, question, a, b)
        if isinstance(result, PairLabel):
            return result
        return PairError(
            question_id=a.question_id, source_a=a.source_id, source_b=b.source_id,
            kind=result.kind, message=result.message,
        )  # fmt: skip
