"""The scorer contract: the log-probability of a fixed answer given a (possibly ablated)
prompt, and its binding to one context as the callable ``masks -> log-probabilities`` the
methods take.

Tiers, each named on every result it produced:

* ``in-process`` (:class:`~._llama.LlamaScorer`): an embedded GGUF model through the llama.cpp
  low-level API, logits only at the answer's positions, the shared prompt prefix kept in the
  KV cache;
* ``endpoint`` (:class:`~._endpoint.EndpointScorer`): a server that returns prompt
  log-probabilities: vLLM's ``/v1/completions`` with ``echo`` and ``logprobs`` or with its
  ``prompt_logprobs`` parameter, or TGI's ``/generate`` with ``decoder_input_details``
  (the form probed, or forced, and named on every row);
* ``behavioural``: no log-probabilities anywhere; the app is replayed without each item and
  the CUE-R replay outcomes are the score (:mod:`._behavioural`: no scorer of this protocol).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol

from ._cache import ScoreCache, score_key
from ._context import AblationContext, Mask

__all__ = ["AnswerScorer", "ContextScorer", "Tier", "logit"]

#: Which evidence a score rests on.
Tier = Literal["in-process", "endpoint", "behavioural"]


class AnswerScorer(Protocol):
    """Scores a fixed answer under several prompts."""

    @property
    def tier(self) -> Tier:
        """The tier of every score this scorer produces."""
        ...

    @property
    def model(self) -> str:
        """The model's identity (part of the cache key)."""
        ...

    def score_many(
        self, prompts: Sequence[Sequence[Mapping[str, Any]]], answer: str, prefix: str = ""
    ) -> list[list[float]]:
        """Per-token log-probabilities of ``answer`` after each prompt (messages) and the
        reply's unscored ``prefix``, in order."""
        ...


def logit(logprob: float) -> float:
    """``log(p / (1 - p))`` of the probability ``p = exp(logprob)`` (ContextCite's target)."""
    if logprob >= 0.0:
        return math.inf
    return logprob - math.log(-math.expm1(logprob))


class ContextScorer:
    """One context bound to a scorer: ``scorer(masks)`` is the answer's total log-probability
    (nats) under each ablation, through the content-addressed cache.

    Attributes:
        passes: model passes made (each uncached, distinct prompt is one pass).
        asked: ablations asked for (cached or not).
        answer_tokens: the answer's token count (0 until a first score).
    """

    def __init__(
        self, scorer: AnswerScorer, context: AblationContext, cache: ScoreCache | None = None
    ) -> None:
        self.scorer = scorer
        self.context = context
        self.cache = cache
        self.passes = 0
        self.asked = 0
        self.answer_tokens = 0
        self._memo: dict[Mask, float] = {}

    @property
    def tier(self) -> Tier:
        """The tier of the scores."""
        return self.scorer.tier

    def __call__(self, masks: Sequence[Mask]) -> list[float]:
        """The answer's log-probability under each mask (True keeps a source)."""
        self.asked += len(masks)
        todo = [m for m in dict.fromkeys(tuple(m) for m in masks) if m not in self._memo]
        prompts = {m: self.context.render(m) for m in todo}
        keys = {
            m: score_key(
                self.scorer.model, self.scorer.tier, p, self.context.answer, self.context.prefix
            )
            for m, p in prompts.items()
        }
        missing: list[Mask] = []
        for m in todo:
            cached = self.cache.get(keys[m]) if self.cache is not None else None
            if cached is None:
                missing.append(m)
            else:
                self._memo[m] = math.fsum(cached)
                self.answer_tokens = len(cached)
        if missing:
            scored = self.scorer.score_many(
                [prompts[m] for m in missing], self.context.answer, self.context.prefix
            )
            self.passes += len(missing)
            for m, logprobs in zip(missing, scored, strict=True):
                if self.cache is not None:
                    self.cache.put(keys[m], logprobs)
                self._memo[m] = math.fsum(logprobs)
                self.answer_tokens = len(logprobs)
        return [self._memo[tuple(m)] for m in masks]
