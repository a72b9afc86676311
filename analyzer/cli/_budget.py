"""``--call-profile``, ``--rate-limit``, ``--max-calls``, ``--max-cost``, ``--prices`` and
``--estimate``: the options every model-calling command shares (:class:`CallOptions`), and
what they resolve to (:class:`CallSettings`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from groundtrace.analyzer.llm import Budget, CallCache, CallProfile, ChatRequest, PriceTable

__all__ = ["CallOptions", "CallSettings", "existing_cache", "print_estimate"]


@dataclass(frozen=True, slots=True)
class CallSettings:
    """A run's model-call settings: the call profile with the command's options over it.

    Attributes:
        profile: the ``--call-profile`` file, if any.
        prices: ``--prices``, else the profile's price table.
        budget: the ceilings (``--max-calls`` / ``--max-cost``, else the profile's budget).
        rate_limit_option: ``--rate-limit`` as given.
        concurrency_option: ``--concurrency`` as given.
    """

    profile: CallProfile | None
    prices: PriceTable | None
    budget: Budget | None
    rate_limit_option: float | None
    concurrency_option: int | None

    def rate_limit(self, url: str) -> float | None:
        """Calls per second to ``url``: the option, else the profile's, else no limit."""
        if self.rate_limit_option is not None or self.profile is None:
            return self.rate_limit_option
        return self.profile.endpoint(url).rate_limit

    def concurrency(self, url: str | None, default: int) -> int:
        """Calls in flight to ``url``: the option, else the profile's, else ``default``."""
        if self.concurrency_option is not None:
            return self.concurrency_option
        found = None if self.profile is None or url is None else self.profile.endpoint(url)
        return default if found is None or found.concurrency is None else found.concurrency

    def units(self, default: int) -> int:
        """Work units in flight: ``--concurrency``, else ``default``."""
        return default if self.concurrency_option is None else self.concurrency_option


@dataclass(frozen=True, slots=True, kw_only=True)
class CallOptions:
    """The model-call options of a command (an option group, see :mod:`._options`).

    Attributes:
        call_profile: ``--call-profile``: the model-call settings file.
        rate_limit: ``--rate-limit``: calls per second to the endpoint.
        max_calls: ``--max-calls``: the ceiling on model calls.
        max_cost: ``--max-cost``: the ceiling on their cost in USD.
        prices: ``--prices``: the price table file.
        estimate: ``--estimate``: print the calls the run would make, call nothing.
    """

    call_profile: Annotated[
        Path | None,
        typer.Option(
            "--call-profile",
            help="Model-call settings TOML: [models.NAME] prices, [endpoints.URL] rate_limit "
            "and concurrency, [budget] max_calls and max_cost. The options below override it.",
        ),
    ] = None
    rate_limit: Annotated[
        float | None,
        typer.Option(
            help="Calls per second to the endpoint, shared by every worker; a 429 pauses them all."
        ),
    ] = None
    max_calls: Annotated[
        int | None,
        typer.Option(help="Stop issuing model calls at N (in-flight work finishes; exit 5)."),
    ] = None
    max_cost: Annotated[
        float | None,
        typer.Option(help="Stop issuing model calls at this cost in USD (needs prices; exit 5)."),
    ] = None
    prices: Annotated[
        Path | None,
        typer.Option(help="Price table TOML: [models.NAME] input_per_million, output_per_million."),
    ] = None
    estimate: Annotated[
        bool,
        typer.Option(
            help="Print the calls the run would make, cached ones and cost; call nothing."
        ),
    ] = False

    def settings(self, concurrency: int | None) -> CallSettings:
        """Read the call profile and resolve the options (and the command's
        ``--concurrency``) over it.

        Raises:
            ConfigError: an unreadable or invalid profile or price table, or bad ceilings.
        """
        from groundtrace.analyzer.errors import ConfigError
        from groundtrace.analyzer.llm import Budget, CallProfile, PriceTable

        if concurrency is not None and concurrency < 1:
            raise ConfigError(
                f"--concurrency must be >= 1, got {concurrency}", field="--concurrency"
            )
        read = None if self.call_profile is None else CallProfile.from_file(self.call_profile)
        table = read.prices if read is not None else None
        calls = read.max_calls if read is not None and self.max_calls is None else self.max_calls
        cost = read.max_cost if read is not None and self.max_cost is None else self.max_cost
        if self.prices is not None:
            table = PriceTable.from_file(self.prices)
        budget = None
        if calls is not None or cost is not None:
            budget = Budget(max_calls=calls, max_cost=cost, prices=table)
        return CallSettings(read, table, budget, self.rate_limit, concurrency)


@contextmanager
def existing_cache(path: Path) -> Iterator[CallCache | None]:
    """The run's call cache when it exists (an estimate creates nothing), closed on exit."""
    from groundtrace.analyzer.llm import CallCache

    cache = CallCache(path) if path.exists() else None
    try:
        yield cache
    finally:
        if cache is not None:
            cache.close()


def print_estimate(
    requests: Sequence[ChatRequest],
    cache: CallCache | None,
    prices: PriceTable | None,
    *,
    as_json: bool,
    units_done: int = 0,
    dependent: int = 0,
) -> None:
    """``--estimate``: print what the run would call (nothing is sent, nothing is created).

    Args:
        requests: the model requests the run would make.
        cache: the run's call cache (see :func:`existing_cache`).
        prices: the price table, if any.
        as_json: print one JSON object instead of text.
        units_done: work units the run's journal already holds.
        dependent: further calls, at most, that depend on replies not made yet.
    """
    from groundtrace.analyzer._results import encode
    from groundtrace.analyzer.llm import estimate_calls

    found = estimate_calls(requests, cache, prices, units_done=units_done, dependent=dependent)
    typer.echo(encode(found).decode() if as_json else found.text(), nl=as_json)
