"""The audit's configuration record: what ``groundtrace audit run --sources ...`` takes.

:class:`Config` is also what ``groundtrace analyze audit --config FILE.toml`` decodes. Its
checks (one answerer, URLs with their model ids, readable call settings) raise a
:class:`~groundtrace.analyzer.errors.ConfigError` naming the config field at fault.

Usage::

    config = Config(out="runs/a", sources="guides/", questions="questions.jsonl")
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import msgspec

from groundtrace.analyzer.errors import ConfigError
from groundtrace.analyzer.llm import Budget, CallProfile, PriceTable

__all__ = ["DEFAULT_CONCURRENCY", "Calls", "Config", "model_url"]

#: Requests in flight when neither ``concurrency`` nor the call profile says.
DEFAULT_CONCURRENCY: Final = 8


class Config(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One audit run of a user's corpus (the formats are in ``docs/audit.md``).

    Exactly one way of answering applies: answers made elsewhere (``answers`` or
    ``traces``), a model (``endpoint`` or ``answerer`` as a URL, with ``model``), or the
    offline extractive answerer (the questions' cues).

    Attributes:
        out: the run folder: the unit journal ``units.sqlite`` (a re-run into it resumes),
            the call cache ``llm_cache.sqlite`` and the answers' ``traces/``.
        sources: the sources: a JSON lines file or a folder of ``.txt`` / ``.md`` files.
        questions: the questions file (JSON lines; optional gold answers and cues).
        retriever: the RETRIEVE step of the traced app that answers here, as
            ``module:qualname`` of a retriever (``(query, source) -> (evidence, chosen)``,
            imported when the run is planned; default: each source whole). Its optional
            attributes label the run: ``mode`` (recorded as the run's ``retrieval``),
            ``app_name``, ``app_version`` and ``span_name`` (its traces).
        answers: answers made elsewhere (JSON lines): the pairs are labelled only.
        traces: captured traces holding the per-source answers (the source id on the
            REQUEST span, the question id as case id).
        endpoint: answer with the model at this OpenAI-compatible base URL (the same as
            ``answerer`` set to the URL; give one of them).
        answerer: ``extractive`` (offline) or an OpenAI-compatible base URL.
        model: the answerer's model id (with a URL).
        judge: ``baseline`` (offline) or the pair judge's base URL.
        judge_model: the pair judge's model id (with a URL).
        validation: the judge's validation record (from ``audit validate``); without a
            matching one the judge's labels are review-only.
        concurrency: requests in flight (default: the call profile's, else 8).
        timeout: seconds per model call attempt.
        call_profile: model-call settings TOML (prices, rate limits, concurrency, budget).
        rate_limit: calls per second to an endpoint, shared by every worker.
        max_calls: stop issuing model calls at this many (what finished is kept).
        max_cost: stop issuing model calls at this cost in USD (needs prices).
        prices: price table TOML (over the call profile's).
    """

    out: str
    sources: str
    questions: str
    retriever: str | None = None
    answers: str | None = None
    traces: tuple[str, ...] = ()
    endpoint: str | None = None
    answerer: str = "extractive"
    model: str | None = None
    judge: str = "baseline"
    judge_model: str | None = None
    validation: str | None = None
    concurrency: int | None = None
    timeout: float = 120.0
    call_profile: str | None = None
    rate_limit: float | None = None
    max_calls: int | None = None
    max_cost: float | None = None
    prices: str | None = None

    def answerer_url(self) -> str | None:
        """The answerer's base URL, or None for the offline extractive answerer.

        Raises:
            ConfigError: both ``endpoint`` and ``answerer`` are given, or the answerer is
                neither built-in nor a URL with its model id.
        """
        if self.endpoint is not None and self.answerer != "extractive":
            raise ConfigError("give the answerer once: endpoint or answerer", field="endpoint")
        if self.endpoint is not None:
            return model_url(self.endpoint, self.model, "endpoint")
        return model_url(self.answerer, self.model, "answerer")

    def judge_url(self) -> str | None:
        """The pair judge's base URL, or None for the offline baseline labeller.

        Raises:
            ConfigError: the judge is neither built-in nor a URL with its model id.
        """
        return model_url(self.judge, self.judge_model, "judge")

    def units(self) -> int:
        """Work units in flight: ``concurrency``, else 8.

        Raises:
            ConfigError: ``concurrency`` is below 1.
        """
        if self.concurrency is not None and self.concurrency < 1:
            raise ConfigError(f"must be >= 1, got {self.concurrency}", field="concurrency")
        return DEFAULT_CONCURRENCY if self.concurrency is None else self.concurrency


def model_url(spec: str, model: str | None, field: str) -> str | None:
    """``spec`` as a model's base URL (None for the built-in ``extractive`` / ``baseline``).

    Raises:
        ConfigError: ``spec`` is no http(s) URL, or a URL without its model id.
    """
    if spec in ("extractive", "baseline"):
        return None
    if not spec.startswith(("http://", "https://")):
        raise ConfigError(f"{field} must be built-in or an http(s) URL", field=field)
    if not model:
        raise ConfigError(f"a model id is required with a {field} URL", field=field)
    return spec


@dataclass(frozen=True, slots=True)
class Calls:
    """A config's model-call settings: the call profile with the config's values over it.

    Attributes:
        profile: the call profile, if any.
        prices: ``prices``, else the profile's price table.
        budget: the ceilings (``max_calls`` / ``max_cost``, else the profile's).
        rate_limit_option: ``rate_limit`` as given.
        concurrency_option: ``concurrency`` as given.
    """

    profile: CallProfile | None
    prices: PriceTable | None
    budget: Budget | None
    rate_limit_option: float | None
    concurrency_option: int | None

    @classmethod
    def of(cls, config: Config) -> Calls:
        """Read ``config``'s call profile and price table and resolve its values over them.

        Raises:
            ConfigError: an unreadable or invalid profile or price table, or bad ceilings.
        """
        config.units()
        read = None if config.call_profile is None else CallProfile.from_file(config.call_profile)
        table = read.prices if read is not None else None
        calls = read.max_calls if read is not None and config.max_calls is None else None
        cost = read.max_cost if read is not None and config.max_cost is None else None
        calls = config.max_calls if config.max_calls is not None else calls
        cost = config.max_cost if config.max_cost is not None else cost
        if config.prices is not None:
            table = PriceTable.from_file(config.prices)
        budget = None
        if calls is not None or cost is not None:
            budget = Budget(max_calls=calls, max_cost=cost, prices=table)
        return cls(read, table, budget, config.rate_limit, config.concurrency)

    def rate_limit(self, url: str) -> float | None:
        """Calls per second to ``url``: the config's, else the profile's, else no limit."""
        if self.rate_limit_option is not None or self.profile is None:
            return self.rate_limit_option
        return self.profile.endpoint(url).rate_limit

    def concurrency(self, url: str) -> int:
        """Calls in flight to ``url``: the config's, else the profile's, else 8."""
        if self.concurrency_option is not None:
            return self.concurrency_option
        found = None if self.profile is None else self.profile.endpoint(url)
        if found is None or found.concurrency is None:
            return DEFAULT_CONCURRENCY
        return found.concurrency
