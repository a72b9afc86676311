"""Which evidence caused this answer: attribution of a recorded answer to its sources.

The score of an ablation is the log-probability of the *fixed* recorded answer given the
prompt with some sources removed, from a scorer whose tier is named on every result
(``in-process``: an embedded GGUF model; ``endpoint``: a server returning prompt
log-probabilities; ``behavioural``: the CUE-R replay outcomes, not built here).

Usage::

    from groundtrace.analyzer.attribution import AblationContext, ContextScorer, LlamaScorer

    context = AblationContext.locate(messages, [("d1", text1), ("d2", text2)], answer)
    score = ContextScorer(LlamaScorer("model.gguf"), context)
    print(score([(True, True), (False, True), (True, False)]))  # log p(answer | ablation)
"""

from __future__ import annotations

from ._cache import ScoreCache
from ._context import AblationContext, Mask, Source
from ._endpoint import EndpointScorer, chatml
from ._llama import LlamaScorer
from ._scorer import AnswerScorer, ContextScorer, Tier

__all__ = [
    "AblationContext",
    "AnswerScorer",
    "ContextScorer",
    "EndpointScorer",
    "LlamaScorer",
    "Mask",
    "ScoreCache",
    "Source",
    "Tier",
    "chatml",
]
