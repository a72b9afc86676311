"""Which evidence caused this answer: attribution of a recorded answer to its sources.

The score of an ablation is the log-probability of the *fixed* recorded answer given the
prompt with some sources removed, from a scorer whose tier is named on every result
(``in-process``: an embedded GGUF model; ``endpoint``: a server returning prompt
log-probabilities; ``behavioural``: the CUE-R replay outcomes). From the command line:
``groundtrace attribution TRACES... --out DIR`` (docs/attribution.md).

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

from typing import TYPE_CHECKING

from groundtrace.analyzer._deprecation import imported_on_use

from ._config import Config

if TYPE_CHECKING:
    from ._context import AblationContext
    from ._endpoint import EndpointScorer
    from ._llama import LlamaScorer
    from ._methods import context_cite, exact_shapley, hierarchical, leave_one_out
    from ._scorer import ContextScorer
    from ._shape import ANALYSIS, AttributionResult

#: The analysis (``groundtrace attribution``), its record and result; what is attributed; the
#: scorers of the in-process and endpoint tiers and their binding to a context; the methods.
#: The metrics (``_metrics``) and the trace reading (``_traces.trace_context``) are building
#: blocks of the benchmarks, imported from their modules (docs/attribution.md).
__all__ = [
    "ANALYSIS",
    "AblationContext",
    "AttributionResult",
    "Config",
    "ContextScorer",
    "EndpointScorer",
    "LlamaScorer",
    "context_cite",
    "exact_shapley",
    "hierarchical",
    "leave_one_out",
]

#: Every name but the config record is imported on first use: ``groundtrace attribution
#: --help`` builds its options from :class:`Config` without numpy, the readers or the scorers.
__getattr__ = imported_on_use(
    __name__,
    {
        "._context": ("AblationContext",),
        "._endpoint": ("EndpointScorer",),
        "._llama": ("LlamaScorer",),
        "._methods": ("context_cite", "exact_shapley", "hierarchical", "leave_one_out"),
        "._scorer": ("ContextScorer",),
        "._shape": ("ANALYSIS", "AttributionResult"),
    },
)
