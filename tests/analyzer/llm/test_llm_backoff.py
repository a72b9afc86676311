"""The client's retry policy and endpoint limiter, for callers that send their own requests
(the attribution endpoint tier): ``RetryPolicy.backoff`` and ``ModelClient.shared_limiter``."""

from __future__ import annotations

from groundtrace.analyzer.llm import ModelClient, RetryPolicy


def test_backoff_retries_only_retryable_statuses_until_the_attempts_are_spent() -> None:
    policy = RetryPolicy(max_attempts=3, base_delay=1.0, jitter=0.0)
    assert policy.backoff(1, 503) == 1.0 and policy.backoff(2, 429) == 2.0
    assert policy.backoff(1, 429, "7") == 7.0  # Retry-After honoured
    assert policy.backoff(1, 429, "soon") == 1.0  # not seconds: the policy's own delay
    assert policy.backoff(3, 503) is None  # the attempts are spent
    assert policy.backoff(1, 400) is None and policy.backoff(1, 404) is None


def test_every_caller_of_an_endpoint_shares_one_limiter_schedule() -> None:
    first = ModelClient.shared_limiter("http://127.0.0.1:1/v1", 5.0)
    second = ModelClient.shared_limiter("http://127.0.0.1:1/v1/", 5.0)
    other = ModelClient.shared_limiter("http://127.0.0.1:2/v1", 5.0)
    assert first._bucket is second._bucket is not None
    assert other._bucket is not first._bucket
