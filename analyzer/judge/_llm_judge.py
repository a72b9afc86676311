"""The LLM judge: one temperature-0, JSON-constrained call per case."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from groundtrace.analyzer.llm import CallFailure, ChatRequest, ModelClient

from ._fingerprint import fingerprint
from ._protocol import failure_errors, parse_judge_reply
from ._rubric import DEFAULT_RUBRIC, OUTPUT_SCHEMA, Rubric, schema_digest
from ._types import ContextSource, JudgeCase, Judgment

__all__ = ["LLMJudge", "build_prompt", "endpoint_fingerprint"]

#: The LLM judge samples at temperature 0 (part of its fingerprint).
TEMPERATURE = 0.0


def endpoint_fingerprint(
    endpoint: str,
    model: str,
    rubric: Rubric,
    seed: int,
    threshold: float,
    temperature: float = TEMPERATURE,
) -> dict[str, Any]:
    """The fingerprint of an LLM judge (:meth:`LLMJudge.fingerprint`), with no client opened."""
    return fingerprint(
        endpoint=endpoint,
        model=model,
        rubric_version=rubric.version,
        rubric_digest=rubric.digest,
        schema_digest=schema_digest(),
        threshold=threshold,
        temperature=temperature,
        seed=seed,
    )


def build_prompt(rubric: Rubric, case: JudgeCase) -> str:
    """The single user message sent to the judge.

    Instructions go in the user message (some chat templates, e.g. Gemma's, drop system
    messages). A context other than retrieved documents is named in its heading
    (``CONTEXT (tool results):``).
    """
    label = "CONTEXT" if case.source is ContextSource.DOCUMENTS else f"CONTEXT ({case.source})"
    return (
        f"{rubric.text.strip()}\n\n"
        f"QUESTION:\n{case.query.strip()}\n\n"
        f"{label}:\n{case.context_text.strip()}\n\n"
        f"ANSWER:\n{case.answer.strip()}\n\n"
        "JSON:"
    )


class LLMJudge:
    """Scores the RAG triad with a model behind any OpenAI-compatible endpoint.

    The request uses ``response_format = {"type": "json_object", "schema": OUTPUT_SCHEMA}``
    (honoured by llama.cpp's server and others; endpoints that ignore ``schema`` still get a
    JSON-object constraint), temperature 0 and a fixed seed. Replies are parsed strictly by
    :func:`parse_judge_reply`; call failures become protocol errors.

    Args:
        client: the shared model client (cache, retries, concurrency).
        model: model id at the endpoint.
        rubric: rubric text and version.
        seed: sampling seed (recorded in the fingerprint).
        max_tokens: reply budget (a reply cut at this budget is a ``truncation`` error).
    """

    name = "llm"

    def __init__(
        self,
        client: ModelClient,
        model: str,
        *,
        rubric: Rubric = DEFAULT_RUBRIC,
        seed: int = 0,
        max_tokens: int = 256,
    ) -> None:
        self.client = client
        self.model = model
        self.rubric = rubric
        self.seed = seed
        self.max_tokens = max_tokens
        self.temperature = TEMPERATURE

    def fingerprint(self, threshold: float) -> Mapping[str, Any]:
        """Fingerprint of this judge at ``threshold``."""
        return endpoint_fingerprint(
            self.client.base_url, self.model, self.rubric, self.seed, threshold, self.temperature
        )

    def request(self, case: JudgeCase) -> ChatRequest:
        """The chat request for ``case``."""
        return ChatRequest(
            model=self.model,
            messages=({"role": "user", "content": build_prompt(self.rubric, case)},),
            temperature=self.temperature,
            seed=self.seed,
            max_tokens=self.max_tokens,
            response_format={"type": "json_object", "schema": OUTPUT_SCHEMA},
        )

    async def judge(self, case: JudgeCase) -> Judgment:
        """Score ``case``; never raises for a bad reply or a failed call."""
        result = await self.client.complete(self.request(case))
        if isinstance(result, CallFailure):
            errors = failure_errors(result)
            details = {"failure": result.kind.value, "status": result.status}
            return Judgment(case.case_id, {}, None, tuple(errors), result.raw, details)
        scores, rationale, errs = parse_judge_reply(result.text, result.finish_reason)
        details = {"cached": result.cached, "finish_reason": result.finish_reason}
        return Judgment(case.case_id, scores, rationale, tuple(errs), result.text, details)
