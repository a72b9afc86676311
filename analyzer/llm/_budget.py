"""Ceilings on a run's model calls and cost, and the price table the cost comes from.

A price table is a TOML file with one table per model, prices in USD per million tokens::

    [models."gpt-4o-mini"]
    input_per_million = 0.15
    output_per_million = 0.60

    [models."gemma-3-270m"]        # a local server: free, but still counted
    input_per_million = 0.0
    output_per_million = 0.0
"""

from __future__ import annotations

import contextlib
import math
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from groundtrace.analyzer.errors import ConfigError

from ._ledger import Usage, UsageLedger, counting

__all__ = ["Budget", "Price", "PriceTable", "read_toml"]


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million input and output tokens of one model."""

    input_per_million: float
    output_per_million: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """USD for these token counts."""
        return (
            prompt_tokens * self.input_per_million + completion_tokens * self.output_per_million
        ) / 1e6


@dataclass(frozen=True, slots=True)
class PriceTable:
    """Prices by model id, as the endpoint names the model.

    Attributes:
        prices: the models' prices.
        source: the file they were read from.
    """

    prices: dict[str, Price]
    source: str = "(none)"

    @classmethod
    def from_file(cls, path: str | Path) -> PriceTable:
        """Read a price table (see the module docstring for the format).

        Raises:
            ConfigError: the file cannot be read, is not TOML, or a price is missing or
                not a finite number >= 0 (the message names the file and the field).
        """
        data = read_toml(path, "price table")
        table = cls.from_data(data.get("models"), str(path))
        if table is None:
            raise ConfigError("the price table has no [models.NAME] tables", path=str(path),
                              field="models")  # fmt: skip
        return table

    @classmethod
    def from_data(cls, models: object, source: str) -> PriceTable | None:
        """The table of a parsed ``models`` TOML table read from ``source`` (None: absent).

        Raises:
            ConfigError: a price is missing or not a finite number >= 0.
        """
        if models is None:
            return None
        if not isinstance(models, dict) or not models:
            raise ConfigError("[models] must hold [models.NAME] tables", path=source,
                              field="models")  # fmt: skip
        prices: dict[str, Price] = {}
        for model, entry in models.items():
            values: list[float] = []
            for name in ("input_per_million", "output_per_million"):
                value = entry.get(name) if isinstance(entry, dict) else None
                if not _price_value(value):
                    raise ConfigError(
                        f"{name} must be a number >= 0 (USD per million tokens), got {value!r}",
                        path=source, field=f"models.{model}.{name}",
                    )  # fmt: skip
                values.append(float(value))
            prices[str(model)] = Price(*values)
        return cls(prices, source)

    def price(self, model: str) -> Price:
        """The price of ``model``.

        Raises:
            ConfigError: the table has no price for it.
        """
        found = self.prices.get(model)
        if found is None:
            raise ConfigError(f"the price table has no price for model {model!r}",
                              path=self.source, field=f"models.{model}")  # fmt: skip
        return found

    def cost(self, usage: dict[str, Usage]) -> float:
        """USD of these ledger entries."""
        return sum(
            self.price(m).cost(u.prompt_tokens, u.completion_tokens) for m, u in usage.items()
        )


def read_toml(path: str | Path, what: str) -> dict[str, object]:
    """The parsed TOML file ``path`` (a ``what``).

    Raises:
        ConfigError: it cannot be read or is not TOML (with the parser's line, if it gives
            one).
    """
    p = Path(path)
    try:
        return tomllib.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the {what}: {exc}", path=str(p)) from None
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"at line (\d+)", str(exc))
        line = int(found.group(1)) if found else None
        raise ConfigError(f"the {what} is not TOML: {exc}", path=str(p), line=line) from None


def _price_value(value: object) -> TypeGuard[float]:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value) and value >= 0


class Budget:
    """``--max-calls`` / ``--max-cost``: checked by the driver as each result arrives.

    The counts are the budget's own ledger (:attr:`ledger`): the calls made while it watches
    (:meth:`watching`: the driver and the executors watch while a run's units run, workers'
    calls included: they travel back with each result) since it was made (or :meth:`start`).
    Another run in the same process never counts against it. When a ceiling is reached the
    executor starts no new unit; the in-flight ones finish and are kept. So a run makes at
    most ``max_calls - 1 + in_flight * k`` calls, where ``in_flight`` is the executor's bound
    (``--concurrency``, times ``--ray-workers`` on Ray) and ``k`` the most HTTP attempts one
    unit makes (its model requests times the retry policy's attempts); the cost overshoots
    likewise by at most those calls' cost.

    Args:
        max_calls: HTTP attempts allowed (None: no ceiling).
        max_cost: USD allowed (None: no ceiling); needs ``prices``.
        prices: the price table.
    """

    def __init__(
        self,
        *,
        max_calls: int | None = None,
        max_cost: float | None = None,
        prices: PriceTable | None = None,
    ) -> None:
        if max_calls is not None and max_calls < 1:
            raise ConfigError(f"--max-calls must be >= 1, got {max_calls}", field="--max-calls")
        if max_cost is not None and not (math.isfinite(max_cost) and max_cost > 0):
            raise ConfigError(f"--max-cost must be > 0 USD, got {max_cost}", field="--max-cost")
        if max_cost is not None and prices is None:
            raise ConfigError("--max-cost needs a price table (--prices FILE)", field="--prices")
        self.max_calls = max_calls
        self.max_cost = max_cost
        self.prices = prices
        #: The calls counted against this budget, by model.
        self.ledger = UsageLedger()
        self._base: dict[str, Usage] = {}

    def start(self) -> None:
        """Count from now."""
        self._base = self.ledger.entries()

    @contextlib.contextmanager
    def watching(self) -> Iterator[None]:
        """Within the block (its tasks and threads too), model calls count against the budget."""
        with counting(self.ledger):
            yield

    def spent(self) -> dict[str, Usage]:
        """Ledger entries since :meth:`start`, by model."""
        out: dict[str, Usage] = {}
        for model, now in self.ledger.entries().items():
            base = self._base.get(model, Usage())
            if now.calls == base.calls:
                continue  # not called since the start
            out[model] = Usage(
                calls=now.calls - base.calls,
                prompt_tokens=now.prompt_tokens - base.prompt_tokens,
                completion_tokens=now.completion_tokens - base.completion_tokens,
            )
        return out

    def reached(self) -> str | None:
        """Which ceiling the run has reached, in words; None while under both."""
        spent = self.spent()
        calls = sum(u.calls for u in spent.values())
        if self.max_calls is not None and calls >= self.max_calls:
            return f"--max-calls {self.max_calls} reached ({calls} model calls made)"
        if self.max_cost is not None and self.prices is not None:
            cost = self.prices.cost(spent)
            if cost >= self.max_cost:
                return f"--max-cost {self.max_cost:g} USD reached ({cost:.6f} USD spent)"
        return None
