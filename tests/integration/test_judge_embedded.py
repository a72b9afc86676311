"""The LLM judge against the real local default embedded model served by llama.cpp.

The model is far too weak to be a good judge; this checks the protocol end to end: every case
ends scored or with a typed protocol error (never an exception, never an empty score), and a
re-run is served entirely from the call cache.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from groundtrace.analyzer.backends import LlamaServer
from groundtrace.analyzer.judge import Metric, ProtocolErrorKind, judge_all
from groundtrace.analyzer.judge._gold import RowFilter, load_gold
from groundtrace.analyzer.judge._llm_judge import LLMJudge
from groundtrace.analyzer.llm import CallCache, ModelClient, RetryPolicy
from tests.support.data import DATA

pytestmark = [pytest.mark.integration, pytest.mark.llm, pytest.mark.timeout(1800)]


@pytest.fixture(scope="module")
def embedded() -> Iterator[LlamaServer]:
    with LlamaServer() as server:
        yield server


def test_embedded_judge_scores_or_reports_protocol_errors(
    embedded: LlamaServer, tmp_path: Path
) -> None:
    gold = load_gold(
        DATA / "groundedness/halueval_ragbench_dev.jsonl",
        label_field="supported",
        filters=(RowFilter.parse("source~RAGBench"),),
        sample=4,
        stratify=True,
        seed=1,
    )
    cases = [i.case for i in gold.items]

    def judge() -> LLMJudge:
        client = ModelClient(
            embedded.base_url,
            cache=CallCache(tmp_path / "llm_cache.sqlite"),
            concurrency=1,
            timeout=300,
            retry=RetryPolicy(max_attempts=2, seed=0),
        )
        return LLMJudge(client, embedded.model)

    first_judge = judge()
    first = asyncio.run(judge_all(first_judge, cases))
    assert first_judge.client.stats.api_calls >= len(cases)
    for result in first:
        for metric in Metric:
            error = result.error_for(metric)
            if error is None:
                assert 0.0 <= result.scores[metric] <= 1.0
            else:
                assert metric not in result.scores
                assert isinstance(error.kind, ProtocolErrorKind)
    # Transport failures would mean the server is broken, not the judge.
    transport = {ProtocolErrorKind.CONNECTION, ProtocolErrorKind.HTTP_ERROR}
    assert not any(e.kind in transport for r in first for e in r.errors)
    again_judge = judge()
    again = asyncio.run(judge_all(again_judge, cases))
    assert again_judge.client.stats.api_calls == 0
    assert again_judge.client.stats.cache_hits == len(cases)
    assert [r.scores for r in again] == [r.scores for r in first]
