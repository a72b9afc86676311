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

from ._budget import Budget, Price, PriceTable
from ._cache import CallCache
from ._client import ClientCounts, ClientStats, ModelClient, absorb_counts, take_counts
from ._estimate import Estimate, RequestRecorder, estimate_calls
from ._ledger import Usage, UsageLedger, absorb_ledger, counting, ledger, take_ledger
from ._profile import CallProfile, EndpointLimits
from ._retry import RetryPolicy
from ._types import CallFailure, CallResult, ChatRequest, ChatResponse, FailureKind

__all__ = [
    "Budget",
    "CallCache",
    "CallFailure",
    "CallProfile",
    "CallResult",
    "ChatRequest",
    "ChatResponse",
    "ClientCounts",
    "ClientStats",
    "EndpointLimits",
    "Estimate",
    "FailureKind",
    "ModelClient",
    "Price",
    "PriceTable",
    "RequestRecorder",
    "RetryPolicy",
    "Usage",
    "UsageLedger",
    "absorb_counts",
    "absorb_ledger",
    "counting",
    "estimate_calls",
    "ledger",
    "take_counts",
    "take_ledger",
]
