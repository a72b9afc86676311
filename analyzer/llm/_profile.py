"""The call profile: one settings file for a run's model calls (``--call-profile FILE``).

A TOML file with up to three parts, all optional; every model-calling command accepts it and
its options override what it says::

    [models."gpt-4o-mini"]                 # the price table (USD per million tokens)
    input_per_million = 0.15
    output_per_million = 0.60

    [endpoints."http://127.0.0.1:8080/v1"] # per endpoint, by base URL as given to the command
    rate_limit = 8.0                       # calls per second, shared by every worker
    concurrency = 4                        # calls in flight per process

    [endpoints."*"]                        # any endpoint not listed
    rate_limit = 2.0

    [budget]                               # ceilings of one run (exit 5 when reached)
    max_calls = 500
    max_cost = 2.5                         # USD, needs the [models] prices

A key it does not know is an error (a misspelt ``rate_limt`` must not pass unnoticed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from groundtrace.analyzer.errors import ConfigError

from ._budget import PriceTable, read_toml

__all__ = ["ANY_ENDPOINT", "CallProfile", "EndpointLimits"]

#: The ``[endpoints]`` key that applies to every endpoint not listed.
ANY_ENDPOINT = "*"
_PARTS = ("models", "endpoints", "budget")


@dataclass(frozen=True, slots=True)
class EndpointLimits:
    """What the profile says of one endpoint (None: not said).

    Attributes:
        rate_limit: calls per second, shared by every worker of the run.
        concurrency: calls in flight per process.
    """

    rate_limit: float | None = None
    concurrency: int | None = None


@dataclass(frozen=True, slots=True)
class CallProfile:
    """A parsed call profile (see the module docstring).

    Attributes:
        source: the file it was read from.
        prices: its price table, if it has ``[models]``.
        endpoints: limits by endpoint base URL (``"*"``: the others).
        max_calls: ``[budget] max_calls``.
        max_cost: ``[budget] max_cost`` in USD.
    """

    source: str
    prices: PriceTable | None = None
    endpoints: dict[str, EndpointLimits] = field(default_factory=dict)
    max_calls: int | None = None
    max_cost: float | None = None

    @classmethod
    def from_file(cls, path: str | Path) -> CallProfile:
        """Read a call profile.

        Raises:
            ConfigError: the file cannot be read or is not TOML (with the line), or a part or
                value is unknown or invalid (the message names the file and the field).
        """
        source = str(path)
        data = read_toml(path, "call profile")
        _known(data, _PARTS, "", source)
        endpoints: dict[str, EndpointLimits] = {}
        for url, entry in _table(data, "endpoints", source).items():
            where = f"endpoints.{url}"
            if not isinstance(entry, dict):
                raise ConfigError("expected a table", path=source, field=where)
            _known(entry, ("rate_limit", "concurrency"), where, source)
            endpoints[str(url).rstrip("/")] = EndpointLimits(
                _positive(entry, "rate_limit", where, source, "calls per second"),
                _count(entry, "concurrency", where, source),
            )
        budget = _table(data, "budget", source)
        _known(budget, ("max_calls", "max_cost"), "budget", source)
        cost = _positive(budget, "max_cost", "budget", source, "USD")
        prices = PriceTable.from_data(data.get("models"), source)
        if cost is not None and prices is None:
            raise ConfigError("budget.max_cost needs the [models.NAME] prices", path=source,
                              field="budget.max_cost")  # fmt: skip
        return cls(
            source=source,
            prices=prices,
            endpoints=endpoints,
            max_calls=_count(budget, "max_calls", "budget", source),
            max_cost=cost,
        )

    def endpoint(self, url: str) -> EndpointLimits:
        """The limits of the endpoint at ``url`` (its own entry, else ``"*"``, else none)."""
        found = self.endpoints.get(url.rstrip("/")) or self.endpoints.get(ANY_ENDPOINT)
        return found or EndpointLimits()


def _table(data: dict[str, object], name: str, source: str) -> dict[str, object]:
    value = data.get(name, {})
    if not isinstance(value, dict):
        raise ConfigError("expected a table", path=source, field=name)
    return value


def _known(table: dict[str, object], keys: tuple[str, ...], where: str, source: str) -> None:
    for key in table:
        if key not in keys:
            name = f"{where}.{key}" if where else key
            raise ConfigError(f"unknown key (known: {', '.join(keys)})", path=source, field=name)


def _positive(
    table: dict[str, object], key: str, where: str, source: str, unit: str
) -> float | None:
    value = table.get(key)
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not (math.isfinite(value) and value > 0)
    ):
        raise ConfigError(f"{key} must be a number > 0 ({unit}), got {value!r}", path=source,
                          field=f"{where}.{key}")  # fmt: skip
    return float(value)


def _count(table: dict[str, object], key: str, where: str, source: str) -> int | None:
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{key} must be an integer >= 1, got {value!r}", path=source,
                          field=f"{where}.{key}")  # fmt: skip
    return value
