"""Answerers of the audit: one question answered from one source's evidence alone.

An answerer (:data:`AnswerFn`) turns a question and the evidence retrieved from one source into
the ANSWER step's reply mapping (``answer``, ``stance``, ``points``, ``quote`` and, on a
protocol error, ``error``):

* :func:`extractive_answer`, offline and deterministic: the question's :class:`Cues` (regular
  expressions of the questions file) decide the stance; a question without cues is answered
  ``absent`` from every source (the offline answerer knows nothing else);
* :class:`EndpointAnswerer`: a model behind any OpenAI-compatible endpoint, through the shared
  model client (cache, retries, rate limit, budget), with a domain-neutral prompt. A reply that
  cannot be read is kept as a protocol error on the answer (``error``), never guessed.

Usage::

    client = ModelClient("http://127.0.0.1:8080/v1", cache=CallCache("runs/a/llm_cache.sqlite"))
    answerer = EndpointAnswerer(client, "qwen2.5-coder-0.5b")
    reply = await answerer("Are pizza boxes recycled?", evidence, Cues())
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final

import msgspec

from groundtrace.analyzer.llm import ModelClient
from groundtrace.sdk.rendering import build_prompt

from ._model import Stance
from ._structured import CallError, StructuredCaller

__all__ = [
    "STANCES",
    "AnswerFn",
    "Cues",
    "EndpointAnswerer",
    "extractive_answer",
    "read_stance_reply",
    "render_answer",
]

#: The stances an answer may take.
STANCES: Final = ("yes", "no", "conditional", "absent")
#: An answerer: (question text, evidence items, the question's cues) -> the ANSWER step's reply
#: mapping (``answer``, ``stance``, ``points``, ``quote`` and, on a protocol error, ``error``).
AnswerFn = Callable[[str, Sequence[Mapping[str, Any]], "Cues"], Awaitable[dict[str, Any]]]
_SENTENCE: Final = re.compile(r"(?<=[.;:!?])\s+|\n\s*\n")
_INSTRUCTIONS: Final = (
    "Answer the question using only the excerpts of the source below. Reply with one JSON "
    'object with the keys "stance" (yes, no, conditional, or absent when the excerpts do not '
    'address the question), "points" (the conditions or items that apply, from the allowed '
    'list), "answer" (one short sentence) and "quote" (the sentence of the excerpts you rely '
    "on)."
)


class Cues(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Regular expressions the offline extractive answerer looks for (case-insensitive).

    Attributes:
        yes: a sentence matching any of them answers ``yes``.
        no: a sentence matching any of them answers ``no``.
        conditional: qualifier -> patterns; every qualifier found makes a ``conditional``
            answer with those qualifiers as its points.
        points: item -> patterns, for a list question: ``yes`` with every item found.
        order: the order stances are tried in (default no, conditional, yes).
    """

    yes: tuple[str, ...] = ()
    no: tuple[str, ...] = ()
    conditional: dict[str, tuple[str, ...]] = msgspec.field(default_factory=dict)
    points: dict[str, tuple[str, ...]] = msgspec.field(default_factory=dict)
    order: tuple[Stance, ...] = ("no", "conditional", "yes")

    @property
    def empty(self) -> bool:
        """True when there is nothing to look for (the question is answered ``absent``)."""
        return not (self.yes or self.no or self.conditional or self.points)


def render_answer(stance: Stance, points: tuple[str, ...]) -> str:
    """The canonical text of a stance and its points, e.g. ``"Conditional: file-level."``."""
    head = {"yes": "Yes", "no": "No", "conditional": "Conditional", "absent": "Not addressed"}
    return f"{head[stance]}: {', '.join(points)}." if points else f"{head[stance]}."


def _sentences(evidence: Sequence[Mapping[str, Any]]) -> list[str]:
    out: list[str] = []
    for item in evidence:
        out.extend(" ".join(s.split()) for s in _SENTENCE.split(str(item.get("content", ""))))
    return [s for s in out if s]


def _first(patterns: Sequence[str], sentences: Sequence[str]) -> str | None:
    for sentence in sentences:
        if any(re.search(p, sentence, re.IGNORECASE) for p in patterns):
            return sentence
    return None


async def extractive_answer(
    question: str, evidence: Sequence[Mapping[str, Any]], cues: Cues
) -> dict[str, Any]:
    """The offline, deterministic answerer: the first cue found decides the stance.

    Stances are tried in ``cues.order``; a conditional answer carries every qualifier whose cue
    occurs; a list question (``cues.points``) answers yes with every point whose cue occurs.
    Nothing found (or no cues at all): ``absent``.
    """
    del question  # the cues encode what is asked
    sentences = _sentences(evidence)
    stance: Stance = "absent"
    points: tuple[str, ...] = ()
    quote = ""
    if cues.points:
        found = {p: _first(c, sentences) for p, c in cues.points.items()}
        points = tuple(sorted(p for p, s in found.items() if s))
        quotes = [s for s in found.values() if s]
        stance, quote = ("yes", quotes[0]) if points else ("absent", "")
    else:
        for candidate in cues.order:
            if candidate == "conditional":
                found = {q: _first(c, sentences) for q, c in cues.conditional.items()}
                hits = sorted(q for q, s in found.items() if s)
                if hits:
                    stance, points = "conditional", tuple(hits)
                    quote = next(s for s in found.values() if s)
                    break
            elif hit := _first(cues.yes if candidate == "yes" else cues.no, sentences):
                stance, quote = candidate, hit
                break
    return {
        "answer": render_answer(stance, points),
        "stance": stance,
        "points": list(points),
        "quote": quote,
    }


def _allowed_points(cues: Cues) -> list[str]:
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
    """An :data:`AnswerFn` backed by a model at an OpenAI-compatible endpoint.

    The prompt names no domain: the question, the source's excerpts (the SDK's standard
    evidence block) and the reply format; the allowed points are the question's cue names.

    Args:
        client: the shared model client (cache, retries, concurrency, rate limit).
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
        self, question: str, evidence: Sequence[Mapping[str, Any]], cues: Cues
    ) -> dict[str, Any]:
        """The reply mapping of the ANSWER step for ``question`` from ``evidence``."""
        allowed = _allowed_points(cues)
        instructions = _INSTRUCTIONS + (
            f" Allowed points: {', '.join(allowed)}." if allowed else ""
        )
        prompt = build_prompt(question, list(evidence), instructions=instructions)
        body = await self.caller.call(f"{prompt.system}\n\n{prompt.user}", _schema(allowed))
        return read_stance_reply(body, allowed)
