"""Which evidence caused this answer: attribution of a recorded answer to its sources.

The score of an ablation is the log-probability of the *fixed* recorded answer given the
prompt with some sources removed, from a scorer whose tier is named on every result
(``in-process``: an embedded GGUF model; ``endpoint``: a server returning prompt
log-probabilities; ``behavioural``: the CUE-R replay outcomes, not built here).

Usage::

    from groundtrace.analyzer.attribution import AblationContext, leave_one_out

    prompt = "[d1] Paris is in France. [d2] Rome is old. Where is Paris?"
    messages = [{"role": "user", "content": prompt}]
    sources = [("d1", "Paris is in France."), ("d2", "Rome is old.")]
    context = AblationContext.locate(messages, sources, "France")


    def score(masks):  # in use: ContextScorer(LlamaScorer(gguf_path), context), or an endpoint
        return [0.0 if "France" in context.render(m)[0]["content"] else -6.0 for m in masks]


    print(leave_one_out(score, context.k).scores)  # (6.0, 0.0): the answer rests on d1
"""

from __future__ import annotations

from ._context import AblationContext
from ._methods import leave_one_out
from ._shape import ANALYSIS, AttributionResult, Config

#: The analysis, its record and result, and the one method its usage example shows; the
#: scorers, the other methods and the metrics are public once the analysis is a built-in.
__all__ = ["ANALYSIS", "AblationContext", "AttributionResult", "Config", "leave_one_out"]
