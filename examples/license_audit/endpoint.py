"""The model answerer: a stance from an OpenAI-compatible endpoint, through the shared client.

The reply must be one JSON object ``{"stance", "points", "answer", "quote"}`` (stance yes / no /
conditional / absent; points from the question's own qualifiers or list items). A reply that
cannot be read is kept as a protocol error on the answer (``error``), never guessed.

Usage::

    client = ModelClient("http://127.0.0.1:8080/v1", cache=CallCache("runs/a/llm_cache.sqlite"))
    answerer = EndpointAnswerer(client, "gemma-3-270m")
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from groundtrace.analyzer.audit import CallError, StructuredCaller
from groundtrace.analyzer.llm import ModelClient
from groundtrace.sdk.rendering import build_prompt

from .corpus import QuestionCues, render_answer

__all__ = ["STANCES", "EndpointAnswerer", "read_stance_reply"]

STANCES: Final = ("yes", "no", "conditional", "absent")
_INSTRUCTIONS: Final = (
    "Answer the question using only the licence excerpts. Reply with one JSON object with the "
    'keys "stance" (yes, no, conditional, or absent when the excerpts do not address the '
    'question), "points" (the conditions or items that apply, from the allowed list), '
    '"answer" (one short sentence) and "quote" (the sentence of the excerpts you rely on).'
)


def _allowed_points(cues: QuestionCues) -> list[str]:
    return sorted({*cues.conditional, *cues.points})


def _schema(points: list[str]) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "stance": {"type": "string", "enum": list(STANCES)},
        "answer": {"type": "string", "maxLength": 200},
        "quote": {"type": "string", "maxLength": 300},
    }
    if points:  # a question without qualifiers or items asks for no points at all
        properties["points"] = {"type": "array", "items": {"type": "string", "enum": points},
                                "maxItems": min(len(points), 4)}  # fmt: skip
    return {"type": "object", "properties": properties, "required": sorted(properties)}


def read_stance_reply(body: dict[str, Any] | CallError, allowed: list[str]) -> dict[str, Any]:
    """The ANSWER step's reply mapping; ``error`` set (stance ``absent``) when unusable."""
    if isinstance(body, CallError):
        return {"answer": "", "stance": "absent", "points": [], "quote": "",
                "error": f"{body.kind}: {body.message}"}  # fmt: skip
    if body.get("stance") not in STANCES:
        return read_stance_reply(CallError("out_of_range", f"no valid stance in {body}"), allowed)
    points = body.get("points") or []
    if not isinstance(points, list) or any(p not in allowed for p in points):
        message = f"points {points!r} not in {allowed}"
        return read_stance_reply(CallError("out_of_range", message), allowed)
    stance = body["stance"]
    kept = tuple(sorted(set(points))) if stance in ("conditional", "yes") else ()
    return {
        "answer": str(body.get("answer") or render_answer(stance, kept)),
        "stance": stance,
        "points": list(kept),
        "quote": str(body.get("quote") or ""),
    }


class EndpointAnswerer:
    """An answerer (see ``app.AnswerFn``) backed by a model at an OpenAI-compatible endpoint.

    Args:
        client: the shared model client (cache, retries, concurrency).
        model: model id at the endpoint.
        seed: sampling seed.
        max_tokens: reply budget.
    """

    def __init__(
        self, client: ModelClient, model: str, *, seed: int = 0, max_tokens: int = 200
    ) -> None:
        self.caller = StructuredCaller(client, model, seed=seed, max_tokens=max_tokens)

    @property
    def name(self) -> str:
        """``<model>@<endpoint>``."""
        return self.caller.name

    async def __call__(
        self, question: str, evidence: Sequence[Mapping[str, Any]], cues: QuestionCues
    ) -> dict[str, Any]:
        """The reply mapping of the ANSWER step for ``question`` from ``evidence``."""
        allowed = _allowed_points(cues)
        instructions = _INSTRUCTIONS + (
            f" Allowed points: {', '.join(allowed)}." if allowed else ""
        )
        prompt = build_prompt(question, list(evidence), instructions=instructions)
        body = await self.caller.call(f"{prompt.system}\n\n{prompt.user}", _schema(allowed))
        return read_stance_reply(body, allowed)
