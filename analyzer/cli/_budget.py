"""``--rate-limit``, ``--max-calls``, ``--max-cost``, ``--prices`` and ``--estimate``: the
options every model-calling command shares."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from groundtrace.analyzer.llm import Budget, ChatRequest, PriceTable

__all__ = [
    "EstimateOpt",
    "MaxCallsOpt",
    "MaxCostOpt",
    "PricesOpt",
    "RateLimitOpt",
    "budget_from",
    "prices_from",
    "print_estimate",
]

RateLimitOpt = Annotated[
    float | None,
    typer.Option(
        help="Calls per second to the endpoint, shared by every worker; a 429 pauses them all."
    ),
]
MaxCallsOpt = Annotated[
    int | None,
    typer.Option(help="Stop issuing model calls at N (in-flight work finishes; exit 5)."),
]
MaxCostOpt = Annotated[
    float | None,
    typer.Option(help="Stop issuing model calls at this cost in USD (needs --prices; exit 5)."),
]
PricesOpt = Annotated[
    Path | None,
    typer.Option(help="Price table TOML: [models.NAME] input_per_million, output_per_million."),
]
EstimateOpt = Annotated[
    bool,
    typer.Option(help="Print the calls the run would make, cached ones and cost; call nothing."),
]


def prices_from(path: Path | None) -> PriceTable | None:
    """The price table ``--prices`` names, if any."""
    from groundtrace.analyzer.llm import PriceTable

    return None if path is None else PriceTable.from_file(path)


def budget_from(
    max_calls: int | None, max_cost: float | None, prices: PriceTable | None
) -> Budget | None:
    """The ceilings the options ask for (None: none)."""
    from groundtrace.analyzer.llm import Budget

    if max_calls is None and max_cost is None:
        return None
    return Budget(max_calls=max_calls, max_cost=max_cost, prices=prices)


def print_estimate(
    requests: Sequence[ChatRequest],
    cache_path: Path | None,
    prices: PriceTable | None,
    *,
    as_json: bool,
) -> None:
    """``--estimate``: print what the run would call (nothing is sent, nothing is created).

    Args:
        requests: the model requests the run would make.
        cache_path: the run's call cache, looked up when it exists.
        prices: the price table, if any.
        as_json: print one JSON object instead of text.
    """
    from groundtrace.analyzer._results import encode
    from groundtrace.analyzer.llm import CallCache, estimate_calls

    cache = CallCache(cache_path) if cache_path is not None and cache_path.exists() else None
    try:
        found = estimate_calls(requests, cache, prices)
    finally:
        if cache is not None:
            cache.close()
    typer.echo(encode(found).decode() if as_json else found.text(), nl=as_json)
