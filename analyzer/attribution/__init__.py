"""Which evidence caused this answer: attribution of a recorded answer to its sources.

The score of an ablation is the log-probability of the *fixed* recorded answer given the
prompt with some sources removed, from a scorer whose tier is named on every result
(``in-process``: an embedded GGUF model; ``endpoint``: a server returning prompt
log-probabilities; ``behavioural``: the CUE-R replay outcomes, not built here).

Usage::

    from groundtrace.analyzer.attribution import AblationContext, ContextScorer, LlamaScorer
    from groundtrace.analyzer.attribution import leave_one_out

    context = AblationContext.locate(messages, [("d1", text1), ("d2", text2)], answer)
    score = ContextScorer(LlamaScorer("model.gguf"), context)
    print(score([(True, True), (False, True), (True, False)]))  # log p(answer | ablation)
    print(leave_one_out(score, context.k).ranking())  # the sources, most important first
"""

from __future__ import annotations

from ._cache import ScoreCache
from ._context import AblationContext, Mask, Source
from ._endpoint import EndpointScorer, chatml
from ._llama import LlamaScorer
from ._methods import (
    Attribution,
    MaskScorer,
    context_cite,
    exact_shapley,
    hierarchical,
    leave_one_out,
)
from ._metrics import compare, context_dependence, lds, spearman, top_k_drop
from ._scorer import AnswerScorer, ContextScorer, Tier

__all__ = [
    "AblationContext",
    "AnswerScorer",
    "Attribution",
    "ContextScorer",
    "EndpointScorer",
    "LlamaScorer",
    "Mask",
    "MaskScorer",
    "ScoreCache",
    "Source",
    "Tier",
    "chatml",
    "compare",
    "context_cite",
    "context_dependence",
    "exact_shapley",
    "hierarchical",
    "lds",
    "leave_one_out",
    "spearman",
    "top_k_drop",
]
