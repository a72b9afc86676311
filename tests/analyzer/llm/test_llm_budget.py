"""--max-calls / --max-cost ceilings, the price table and --estimate, against a real server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.errors import BudgetReachedError, ConfigError, RunStoppedError
from groundtrace.analyzer.executor import LocalExecutor
from groundtrace.analyzer.llm import (
    Budget,
    CallCache,
    ChatRequest,
    ModelClient,
    PriceTable,
    estimate_calls,
)
from groundtrace.analyzer.llm._types import CallResult
from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest

app = build_app()

PRICES = """
[models.m]
input_per_million = 2.0
output_per_million = 10.0
"""


def _request(text: str, max_tokens: int | None = 8) -> ChatRequest:
    return ChatRequest(
        model="m", messages=({"role": "user", "content": text},), max_tokens=max_tokens
    )


def _fixed_usage(_: ServerRequest) -> Reply:
    return Reply(content="ok", prompt_tokens=1000, completion_tokens=100)


def _run_units(client: ModelClient, budget: Budget, n: int, concurrency: int) -> list[str]:
    executor = LocalExecutor(concurrency)
    executor.budget = budget
    kept: list[str] = []

    async def work(i: int) -> CallResult:
        return await client.complete(_request(f"q{i}"))

    async def main() -> None:
        try:
            await executor.map(work, list(range(n)), on_result=lambda i, _r: kept.append(f"q{i}"))
        finally:
            await client.aclose()

    asyncio.run(main())
    return kept


@pytest.mark.parametrize("concurrency", [1, 3])
def test_max_calls_stops_issuing_within_the_in_flight_bound(concurrency: int) -> None:
    with OpenAICompatServer(handler=_fixed_usage) as srv:
        client = ModelClient(srv.base_url, concurrency=8, timeout=10.0)
        kept: list[str] = []
        with pytest.raises(BudgetReachedError) as info:
            kept = _run_units(client, Budget(max_calls=5), 40, concurrency)
        made = srv.request_count
    err = info.value
    assert isinstance(err, RunStoppedError) and err.exit_code == 5
    assert "--max-calls 5 reached" in str(err) and err.total == 40
    # one call per unit, no retries: at most max_calls - 1 + in-flight units
    assert 5 <= made <= 5 - 1 + concurrency
    assert err.done == made  # every call's unit finished and reached the driver
    del kept


def test_max_cost_counts_reported_tokens_at_the_table_prices(tmp_path: Path) -> None:
    (tmp_path / "prices.toml").write_text(PRICES)
    table = PriceTable.from_file(tmp_path / "prices.toml")
    # one call: 1000 in * 2 + 100 out * 10 = 3000 per million = 0.003 USD
    with OpenAICompatServer(handler=_fixed_usage) as srv:
        client = ModelClient(srv.base_url, timeout=10.0)
        with pytest.raises(BudgetReachedError, match=r"--max-cost 0\.01 USD reached") as info:
            _run_units(client, Budget(max_cost=0.01, prices=table), 20, 1)
        assert srv.request_count == 4  # 0.012 >= 0.01 after the 4th call
    assert info.value.done == 4


def test_a_run_under_its_ceilings_finishes() -> None:
    with OpenAICompatServer(handler=_fixed_usage) as srv:
        client = ModelClient(srv.base_url, timeout=10.0)
        _run_units(client, Budget(max_calls=10), 10 - 1, 2)
        assert srv.request_count == 9


def test_price_table_errors_name_the_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "prices.toml"
    bad.write_text("[models.m]\ninput_per_million = -1\noutput_per_million = 1\n")
    with pytest.raises(ConfigError, match="input_per_million") as info:
        PriceTable.from_file(bad)
    assert info.value.path == str(bad) and info.value.field == "models.m.input_per_million"
    bad.write_text("[models\n")
    with pytest.raises(ConfigError, match="not TOML"):
        PriceTable.from_file(bad)
    with pytest.raises(ConfigError, match="no price for model 'x'"):
        PriceTable.from_file(_good(tmp_path)).price("x")
    with pytest.raises(ConfigError, match="needs a price table"):
        Budget(max_cost=1.0)
    with pytest.raises(ConfigError, match="--max-calls must be >= 1"):
        Budget(max_calls=0)


def _good(tmp_path: Path) -> Path:
    path = tmp_path / "good.toml"
    path.write_text(PRICES)
    return path


def test_estimate_looks_up_the_cache_and_prices_the_rest(tmp_path: Path) -> None:
    cache = CallCache(tmp_path / "llm_cache.sqlite")
    with OpenAICompatServer() as srv:
        client = ModelClient(srv.base_url, cache=cache, timeout=10.0)

        async def warm() -> None:
            await client.complete(_request("cached one"))
            await client.aclose()

        asyncio.run(warm())
        requests = [_request("cached one"), _request("a" * 40), _request("a" * 40)]
        found = estimate_calls(requests, cache, PriceTable.from_file(_good(tmp_path)))
        assert srv.request_count == 1  # the warm-up only
    assert (found.requests, found.distinct, found.cached, found.calls) == (3, 2, 1, 1)
    assert found.completion_tokens == 8
    assert found.cost_usd == pytest.approx((found.prompt_tokens * 2 + 8 * 10) / 1e6)
    unbounded = estimate_calls([_request("x", max_tokens=None)], None, None)
    assert unbounded.completion_tokens is None and unbounded.cost_usd is None


def _cases(path: Path, n: int) -> Path:
    rows = [
        {"id": f"c{i}", "question": f"question {i}?", "context": f"context {i}.", "answer": "a"}
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_judge_run_estimate_makes_no_call_and_sees_the_cache(tmp_path: Path) -> None:
    cases = _cases(tmp_path / "cases.jsonl", 6)
    prices = _good(tmp_path)
    out = tmp_path / "run"
    with OpenAICompatServer() as srv:
        base = ["judge", "run", "--cases", str(cases), "--out", str(out), "--judge", srv.base_url,
                "--model", "m", "--prices", str(prices), "--concurrency", "1"]  # fmt: skip
        res = CliRunner().invoke(app, [*base, "--estimate", "--json"])
        assert res.exit_code == 0, res.output
        assert srv.request_count == 0 and not out.exists()
        before = json.loads(res.stdout)
        assert (before["requests"], before["cached"], before["calls"]) == (6, 0, 6)
        assert before["cost_usd"] > 0

        stopped = CliRunner().invoke(app, [*base, "--max-calls", "2"])
        assert stopped.exit_code == 5, stopped.output
        assert "--max-calls 2 reached" in stopped.output
        assert srv.request_count == 2  # concurrency 1: no call past the ceiling

        res = CliRunner().invoke(app, [*base, "--estimate"])
        assert res.exit_code == 0, res.output
        assert "answered by the cache: 2" in res.stdout
        assert "model calls to make: 4" in res.stdout
        assert srv.request_count == 2


def test_models_called_before_the_budget_need_no_price(tmp_path: Path) -> None:
    with OpenAICompatServer(handler=_fixed_usage) as srv:
        earlier = ChatRequest(model="unpriced", messages=({"role": "user", "content": "x"},))

        async def before() -> None:
            client = ModelClient(srv.base_url, timeout=10.0)
            await client.complete(earlier)
            await client.aclose()

        asyncio.run(before())
        table = PriceTable.from_file(_good(tmp_path))
        client = ModelClient(srv.base_url, timeout=10.0)
        with pytest.raises(BudgetReachedError, match="--max-cost"):
            _run_units(client, Budget(max_cost=0.005, prices=table), 5, 1)
