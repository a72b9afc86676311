"""The shared model client every analysis that calls a model uses (judge, replay...).

Async chat completions against any OpenAI-compatible endpoint with a content-addressed
sqlite cache, bounded concurrency, seeded retry/backoff and typed failures.

Usage::

    from groundtrace.analyzer.llm import CallCache, ChatRequest, ModelClient

    client = ModelClient("http://127.0.0.1:8080/v1", cache=CallCache("runs/x/llm_cache.sqlite"))
    result = await client.complete(
        ChatRequest(model="gemma-3-270m", messages=({"role": "user", "content": "Hi"},))
    )
    if result.ok:
        print(result.text)
    else:
        print(result.kind, result.message)
    print(client.stats.snapshot())  # calls made vs served from the cache
"""

from __future__ import annotations

from groundtrace.analyzer._deprecation import renamed

from ._budget import Budget, PriceTable
from ._cache import CallCache
from ._carry import WorkerCalls
from ._client import ClientCounts, ModelClient
from ._estimate import Estimate, RequestRecorder, estimate_calls
from ._ledger import Usage, UsageLedger, counting
from ._profile import CallProfile
from ._retry import RetryPolicy
from ._types import CallFailure, ChatRequest, ChatResponse, FailureKind

__all__ = [
    "Budget",
    "CallCache",
    "CallFailure",
    "CallProfile",
    "ChatRequest",
    "ChatResponse",
    "ClientCounts",
    "Estimate",
    "FailureKind",
    "ModelClient",
    "PriceTable",
    "RequestRecorder",
    "RetryPolicy",
    "Usage",
    "UsageLedger",
    "WorkerCalls",
    "counting",
    "estimate_calls",
]

#: Internals no longer public (0.2.0): importable from here for one release, with a warning.
__getattr__ = renamed(
    __name__,
    {
        "CallResult": f"{__name__}._types.CallResult",
        "ClientStats": f"{__name__}._client.ClientStats",
        "EndpointLimits": f"{__name__}._profile.EndpointLimits",
        "Price": f"{__name__}._budget.Price",
        "absorb_counts": f"{__name__}._client.absorb_counts",
        "absorb_ledger": f"{__name__}._ledger.absorb_ledger",
        "ledger": f"{__name__}._ledger.ledger",
        "take_counts": f"{__name__}._client.take_counts",
        "take_ledger": f"{__name__}._ledger.take_ledger",
    },
    since="0.2.0",
    remove_in="0.3.0",
)
