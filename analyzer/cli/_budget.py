"""``--call-profile``, ``--rate-limit``, ``--max-calls``, ``--max-cost``, ``--prices`` and
``--estimate``: the options every model-calling command shares (:class:`CallOptions`).

They are the call fields of an analysis's record
(:class:`~groundtrace.analyzer._settings.ModelCalls`), set over the record's by
:meth:`CallOptions.over` (in ``groundtrace NAME`` and ``groundtrace analyze NAME`` alike), and
resolve as the record's do (:meth:`CallOptions.settings`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, TypeVar

import typer

if TYPE_CHECKING:
    from groundtrace.analyzer._settings import Calls

__all__ = ["CALL_FIELDS", "CallOptions", "with_concurrency"]

R = TypeVar("R")


#: The call options that are fields of the same names of a model-calling analysis's record
#: (:class:`~groundtrace.analyzer._settings.ModelCalls`): a command offering the options leaves
#: these fields out of its record's options.
CALL_FIELDS: Final = ("call_profile", "rate_limit", "max_calls", "max_cost", "prices")


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

    def over(self, record: R) -> R:
        """``record`` (a :class:`~groundtrace.analyzer._settings.ModelCalls`) with the
        options given over its call fields of the same names; any other record as it is.

        Raises:
            ConfigError: a value the record refuses (named by its field).
        """
        import msgspec

        from groundtrace.analyzer._settings import ModelCalls

        from ._options import fields_as_options

        given = {n: getattr(self, n) for n in CALL_FIELDS if getattr(self, n) is not None}
        if not isinstance(record, ModelCalls) or not given:
            return record
        paths = {n: str(v) for n, v in given.items() if isinstance(v, Path)}
        with fields_as_options({n: "--" + n.replace("_", "-") for n in given}):
            return msgspec.structs.replace(record, **{**given, **paths})

    def settings(self, record: Any = None) -> Calls:
        """The run's call settings: ``record``'s call fields with the options over them (a
        record of another kind, or none: the options' alone).

        Raises:
            ConfigError: an unreadable or invalid profile or price table, or bad ceilings.
        """
        from groundtrace.analyzer._settings import ModelCalls

        found = record if isinstance(record, ModelCalls) else ModelCalls()
        return self.over(found).calls()


def with_concurrency(record: R, concurrency: int | None) -> tuple[R, int]:
    """``groundtrace analyze NAME --concurrency``: ``record`` with it as its ``concurrency``
    field (a :class:`~groundtrace.analyzer._settings.ModelCalls`: the work, and so the model
    calls, in flight, as the analysis's own command means it), and the units in flight: the
    record's (``concurrency``, else the call profile's, else the analysis's default); a record
    without the field: ``--concurrency``, else 4.

    Raises:
        ConfigError: a concurrency below 1 (named ``--concurrency``), an unreadable profile.
    """
    import msgspec

    from groundtrace.analyzer._settings import ModelCalls

    from ._options import fields_as_options

    with fields_as_options({"concurrency": "--concurrency"}):
        calls = record if isinstance(record, ModelCalls) else ModelCalls()
        if concurrency is not None:
            calls = msgspec.structs.replace(calls, concurrency=concurrency)
        if isinstance(record, ModelCalls):
            record = calls  # type: ignore[assignment]  # the same record, concurrency set
        return record, calls.in_flight()
