"""The settings several analyses share, declared once: the model-call fields as records an
analysis's ``Config`` inherits (:class:`ModelCalls`; :class:`Pacing` for an analysis that
paces an endpoint without ceilings), and the function replay's fields as field types
(:data:`Replay`, :data:`ReplayKwargs`) with their help: ``msgspec`` gives a record one base
with fields, not two, so a record already on :class:`Pacing` names them instead::

    replay: Replay = None
    replay_kwargs: ReplayKwargs = msgspec.field(default_factory=dict)

(a field's default is written where the field is: ``msgspec`` reads it from the class body,
not from the type). The help of such a type is its ``msgspec.Meta(description=...)``, which
the options read (``analyzer/cli/_fields.py``) unless the record's docstring describes the
field itself (attribution's ``replay`` is its behavioural tier).

A ``msgspec.Struct`` subclass keeps its base's fields flat, so a config file and the options
generated from the record (``groundtrace NAME`` and ``groundtrace analyze NAME``) spell them as
before: ``concurrency``, ``rate_limit``, ``max_calls``... in the file, ``--concurrency``,
``--rate-limit``, ``--max-calls``... on the command line. Each field's help is the base's
docstring entry (an analysis's own docstring may say more of it); its values are checked here,
once, when the record is made or decoded::

    class Config(ModelCalls, frozen=True, kw_only=True, forbid_unknown_fields=True):
        DEFAULT_CONCURRENCY: ClassVar[int] = 2
        judge: str = "lexical"
        ...

:meth:`ModelCalls.calls` resolves the call fields over the call profile (:class:`Calls`): the
run's ceilings, the price table, and each endpoint's rate limit and calls in flight.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, ClassVar

import msgspec

if TYPE_CHECKING:
    from groundtrace.analyzer.llm import Budget, CallProfile, PriceTable

__all__ = ["Calls", "ModelCalls", "Pacing", "Replay", "ReplayKwargs"]


class Pacing(msgspec.Struct, frozen=True, kw_only=True):
    """How fast an analysis calls its endpoint.

    Attributes:
        rate_limit: calls per second to the endpoint, shared by every worker (None: the call
            profile's where the record has one, else no limit).
        timeout: seconds per model call attempt.
    """

    rate_limit: float | None = None
    timeout: float = 120.0

    def __post_init__(self) -> None:
        from groundtrace.analyzer.errors import ConfigError  # on use: the collectors' tree

        if self.rate_limit is not None and not self.rate_limit > 0:
            raise ConfigError(f"rate_limit must be > 0 calls per second, got {self.rate_limit}",
                              field="rate_limit")  # fmt: skip
        if not self.timeout > 0:
            raise ConfigError(f"timeout must be > 0 seconds, got {self.timeout}", field="timeout")


class ModelCalls(Pacing, frozen=True, kw_only=True):
    """How an analysis calls models: in flight, paced, within ceilings (the options every
    model-calling command shares, and ``groundtrace analyze NAME``'s).

    Attributes:
        concurrency: work in flight: the units run at a time and the model calls in flight
            to the endpoint (None: the call profile's for the endpoint, else the analysis's
            default).
        call_profile: model-call settings TOML: [models.NAME] prices, [endpoints.URL]
            rate_limit and concurrency, [budget] max_calls and max_cost; the fields here
            override it.
        max_calls: stop issuing model calls at this many (what finished is kept; exit 5).
        max_cost: stop issuing model calls at this cost in USD (needs prices; exit 5).
        prices: price table TOML: [models.NAME] input_per_million, output_per_million (over
            the call profile's).
    """

    #: Work in flight when neither ``concurrency`` nor the call profile says.
    DEFAULT_CONCURRENCY: ClassVar[int] = 4

    concurrency: int | None = None
    call_profile: str | None = None
    max_calls: int | None = None
    max_cost: float | None = None
    prices: str | None = None

    def __post_init__(self) -> None:
        from groundtrace.analyzer.errors import ConfigError

        super().__post_init__()
        if self.concurrency is not None and self.concurrency < 1:
            raise ConfigError(f"concurrency must be >= 1, got {self.concurrency}",
                              field="concurrency")  # fmt: skip

    def endpoint_url(self) -> str | None:
        """The one endpoint whose call-profile entry bounds the work in flight (None: none;
        an analysis calling one endpoint names it)."""
        return None

    def calls(self) -> Calls:
        """The call fields resolved over the call profile (the profile and price table read).

        Raises:
            ConfigError: an unreadable or invalid profile or price table, or bad ceilings.
        """
        from groundtrace.analyzer.llm import Budget, CallProfile, PriceTable

        read = None if self.call_profile is None else CallProfile.from_file(self.call_profile)
        table = None if read is None else read.prices
        most = self.max_calls if self.max_calls is not None or read is None else read.max_calls
        cost = self.max_cost if self.max_cost is not None or read is None else read.max_cost
        if self.prices is not None:
            table = PriceTable.from_file(self.prices)
        budget = None
        if most is not None or cost is not None:
            budget = Budget(max_calls=most, max_cost=cost, prices=table)
        return Calls(read, table, budget, self)

    def in_flight(self) -> int:
        """Work in flight: ``concurrency``, else the call profile's for :meth:`endpoint_url`,
        else the analysis's :attr:`DEFAULT_CONCURRENCY`.

        Raises:
            ConfigError: an unreadable or invalid call profile.
        """
        url = self.endpoint_url()
        if self.concurrency is not None or url is None:
            return self.DEFAULT_CONCURRENCY if self.concurrency is None else self.concurrency
        return self.calls().concurrency(url)


@dataclass(frozen=True, slots=True)
class Calls:
    """A record's model-call settings: its call profile with the record's fields over it.

    Attributes:
        profile: the call profile, if any.
        prices: ``prices``, else the profile's price table.
        budget: the ceilings (``max_calls`` / ``max_cost``, else the profile's; None: none).
        given: the record the settings are of.
    """

    profile: CallProfile | None
    prices: PriceTable | None
    budget: Budget | None
    given: ModelCalls

    def rate_limit(self, url: str) -> float | None:
        """Calls per second to ``url``: the record's, else the profile's, else no limit."""
        if self.given.rate_limit is not None or self.profile is None:
            return self.given.rate_limit
        return self.profile.endpoint(url).rate_limit

    def concurrency(self, url: str) -> int:
        """Calls in flight to ``url``: the record's, else the profile's, else the default."""
        if self.given.concurrency is not None:
            return self.given.concurrency
        found = None if self.profile is None else self.profile.endpoint(url).concurrency
        return self.given.DEFAULT_CONCURRENCY if found is None else found


#: Function replay of the traced app (interventions, attribution): its entry point.
Replay = Annotated[
    str | None,
    msgspec.Meta(
        description="function replay: ``recorded`` (the trace's own entry point) or a "
        "``module:qualname``."
    ),
]

#: A replay's keyword arguments replacing recorded ones (interventions, attribution), given
#: as a repeatable ``--replay-kwarg NAME=VALUE`` in every command.
ReplayKwargs = Annotated[
    dict[str, str],
    msgspec.Meta(
        description="keyword arguments replacing recorded ones in function replay (e.g. a "
        "new ``base_url``).",
        extra={"option": "--replay-kwarg"},
    ),
]

# Settings that look alike but stay each record's own (not repetitions of one setting):
# - ``seed``: interventions' is the seed sent to the model with every replay, attribution's
#   draws its random masks, paths' the bootstrap's index matrix, the gate profile's
#   ``[bayes] seed`` its Monte-Carlo draws; judge's ``judge_seed`` / ``sample_seed`` the
#   judge model's and the gold sample's. Each has its own default (0, 0, 42, 20260709).
# - bootstrap settings: paths' record (``resamples`` 5000, ``seed`` 42) and the judge's
#   acceptance profile file (``n_resamples`` 1000, ``seed`` 20260709) spell and default them
#   each as its file format always has (one record would rename a config key or move a
#   result); both are passed on as ``groundtrace.analyzer.stats.StatsSettings`` / the
#   bootstrap's arguments. Interventions' are fixed (``Tuning.stats``); the gate's Monte-Carlo
#   draws are its profile's ``[bayes]`` table, decoded into the comparison's own record.
# - ``endpoint`` / ``model``: a replayed endpoint (interventions), a scoring endpoint
#   returning log-probabilities (attribution), an answering endpoint (audit): one name,
#   three meanings and defaults.
