"""The judge analysis's configuration record, and the judge and settings it resolves to."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Final

import msgspec

from groundtrace.analyzer._settings import ModelCalls

if TYPE_CHECKING:
    from groundtrace.analyzer.llm import ModelClient

    from ._record import AcceptanceProfile
    from ._rubric import Rubric
    from ._types import Judge, Metric

__all__ = [
    "API_KEY_ENV",
    "CACHE_FILE",
    "DEFAULT_CONCURRENCY",
    "Config",
    "EndpointSettings",
    "acceptance",
    "build_judge",
    "endpoint_settings",
    "metric_of",
]

#: Environment variable read for the judge endpoint's API key (optional).
API_KEY_ENV: Final = "GROUNDTRACE_JUDGE_API_KEY"
#: File name of a run folder's model-call cache (``judge run`` / ``validate`` put it in OUT).
CACHE_FILE: Final = "llm_cache.sqlite"
#: Model calls in flight when neither ``concurrency`` nor the call profile says.
DEFAULT_CONCURRENCY: Final = 2


class Config(ModelCalls, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What the judge analysis judges, with which judge, and how it is validated.

    Without ``gold`` it is ``judge run``: the cases of ``traces`` and/or ``cases`` are scored
    on the RAG triad. With ``gold`` it is ``judge validate``: the gold items are scored and
    the judge's agreement with their labels is measured (``traces`` and ``cases`` stay empty).
    The model-call fields (``concurrency``, ``timeout``, ``call_profile``, ``rate_limit``,
    ``max_calls``, ``max_cost``, ``prices``) are
    :class:`~groundtrace.analyzer._settings.ModelCalls`' (an endpoint judge's calls).

    Attributes:
        judge: ``lexical`` (the built-in baseline) or the base URL of an OpenAI-compatible
            endpoint, e.g. ``http://127.0.0.1:8080/v1``.
        model: model id at the endpoint (required with a URL).
        rubric: rubric of an endpoint judge: a shipped version or a file (None:
            ``rag_triad_v1``). Part of the judge fingerprint.
        threshold: working threshold, a score >= it passes (None: the profile's, else 0.8).
            Part of the judge fingerprint.
        profile: acceptance profile file (TOML or JSON; None: the default profile). It holds
            the acceptance criteria, the gold-set grades and the bootstrap settings (B, seed).
        traces: trace files or folders (OTLP) whose judgeable traces are scored.
        cases: a JSONL case file (question, context, answer) to score.
        strict: refuse unreadable trace lines (else they are skipped and listed).
        gold: the gold set JSONL of a validation.
        dimension: the metric the gold labels grade (``adherence``, ``context_relevance``,
            ``answer_relevance``).
        label_field: single-label column of the gold set (None: the layout is detected).
        filters: gold row filters ``FIELD~TEXT``, ``FIELD!~TEXT``, ``FIELD=V``, ``FIELD!=V``.
        sample: a seeded random sample of this many gold rows (None: every row).
        stratify: sample half of ``sample`` from each class.
        sample_seed: seed of the sample.
        concurrency: model calls in flight (None: the call profile's, else 2).
        judge_seed: sampling seed sent to the model.
        max_tokens: reply token budget of the judge.
        cache: the model-call cache file (None: no cache); the CLI keeps it in OUT.
    """

    DEFAULT_CONCURRENCY: ClassVar[int] = DEFAULT_CONCURRENCY

    judge: str = "lexical"
    model: str | None = None
    rubric: str | None = None
    threshold: float | None = None
    profile: str | None = None
    traces: tuple[str, ...] = ()
    cases: str | None = None
    strict: bool = False
    gold: str | None = None
    dimension: str = "adherence"
    label_field: str | None = None
    filters: Annotated[tuple[str, ...], msgspec.Meta(extra={"option": "--filter"})] = ()
    sample: int | None = None
    stratify: bool = False
    sample_seed: int = 20260709
    judge_seed: int = 0
    max_tokens: int = 256
    cache: str | None = None

    def endpoint_url(self) -> str | None:
        """An endpoint judge's URL (its call-profile entry bounds the judgments in flight);
        None for the lexical judge."""
        return self.judge if self.judge.startswith(("http://", "https://")) else None

    def fingerprint(self) -> dict[str, Any]:
        """The fingerprint of the judge this config describes, at its working threshold
        (what ``judge check`` compares a validation record with); no model client is opened.

        Raises:
            ConfigError: as :func:`acceptance` and :func:`build_judge`.
        """
        from ._lexical import LexicalJudge
        from ._llm_judge import endpoint_fingerprint

        _, working = acceptance(self)
        settings = endpoint_settings(self)
        if settings is None:
            return dict(LexicalJudge().fingerprint(working))
        assert self.model is not None  # endpoint_settings refuses an endpoint without one
        return endpoint_fingerprint(
            self.judge, self.model, settings.rubric, self.judge_seed, working
        )


def acceptance(config: Config) -> tuple[AcceptanceProfile, float]:
    """The acceptance profile and the working threshold ``config`` names.

    Raises:
        ConfigError: an unreadable or invalid profile, or a threshold outside [0, 1].
    """
    from groundtrace.analyzer.errors import ConfigError

    from ._record import AcceptanceProfile

    profile = AcceptanceProfile.from_file(config.profile) if config.profile else AcceptanceProfile()
    working = profile.threshold if config.threshold is None else config.threshold
    if not 0.0 <= working <= 1.0:
        raise ConfigError("--threshold must be within [0, 1]", field="threshold")
    return profile, working


def metric_of(config: Config) -> Metric:
    """The metric ``config.dimension`` names.

    Raises:
        ConfigError: no metric of that name.
    """
    from groundtrace.analyzer.errors import ConfigError

    from ._types import Metric

    try:
        return Metric(config.dimension)
    except ValueError:
        choices = ", ".join(m.value for m in Metric)
        raise ConfigError(
            f"unknown dimension {config.dimension!r} (one of {choices})", field="dimension"
        ) from None


@dataclass(frozen=True, slots=True)
class EndpointSettings:
    """What an endpoint judge is built with, resolved from a config.

    Attributes:
        rubric: the rubric sent to the model.
        concurrency: model calls in flight.
        rate_limit: calls per second to the endpoint (None: no limit).
    """

    rubric: Rubric
    concurrency: int
    rate_limit: float | None


def endpoint_settings(config: Config) -> EndpointSettings | None:
    """The settings of ``config``'s endpoint judge (None: the lexical judge), all checked.

    Raises:
        ConfigError: a rubric for the lexical judge, a judge that is neither ``lexical`` nor
            an http(s) URL, an endpoint without a model, or a bad rubric or call setting.
    """
    from groundtrace.analyzer.errors import ConfigError

    spec = config.judge
    if spec == "lexical":
        if config.rubric is not None:
            raise ConfigError(
                "--rubric applies to an endpoint judge; the lexical judge has no rubric",
                field="rubric",
            )
        return None
    if not spec.startswith(("http://", "https://")):
        raise ConfigError("--judge must be 'lexical' or an http(s) URL", field="judge")
    if not config.model:
        raise ConfigError("--model is required with an endpoint judge", field="model")
    from ._rubric import DEFAULT_RUBRIC, load_rubric

    rubric = DEFAULT_RUBRIC if config.rubric is None else load_rubric(config.rubric)
    calls = config.calls()
    concurrency, rate_limit = calls.concurrency(spec), calls.rate_limit(spec)
    return EndpointSettings(rubric, concurrency, rate_limit)


def build_judge(config: Config, *, cache: bool = True) -> tuple[Judge, ModelClient | None]:
    """The judge ``config`` describes, and the model client of an endpoint judge.

    The caller closes the client (``await client.aclose()``, and its cache).

    Args:
        config: the configuration.
        cache: open ``config.cache`` (False: no cache, e.g. to compute a fingerprint or the
            requests of an estimate without creating one).

    Raises:
        ConfigError: as :func:`endpoint_settings`.
    """
    from groundtrace.analyzer.llm import CallCache, ModelClient, RetryPolicy

    from ._lexical import LexicalJudge
    from ._llm_judge import LLMJudge

    settings = endpoint_settings(config)
    if settings is None:
        return LexicalJudge(), None
    assert config.model is not None  # endpoint_settings refuses an endpoint without one
    client = ModelClient(
        config.judge,
        api_key=os.environ.get(API_KEY_ENV),
        cache=CallCache(config.cache) if cache and config.cache is not None else None,
        concurrency=settings.concurrency,
        timeout=config.timeout,
        retry=RetryPolicy(seed=config.judge_seed),
        rate_limit=settings.rate_limit,
    )
    judge = LLMJudge(
        client,
        config.model,
        rubric=settings.rubric,
        seed=config.judge_seed,
        max_tokens=config.max_tokens,
    )
    return judge, client
