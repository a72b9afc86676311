"""The audit's configuration record: what ``groundtrace audit run --sources ...`` takes.

:class:`Config` is also what ``groundtrace analyze audit --config FILE.toml`` decodes. Its
checks (one answerer, URLs with their model ids, readable call settings) raise a
:class:`~groundtrace.analyzer.errors.ConfigError` naming the config field at fault.

Usage::

    config = Config(out="runs/a", sources="guides/", questions="questions.jsonl")
"""

from __future__ import annotations

from typing import ClassVar, Final

from groundtrace.analyzer._settings import ModelCalls

__all__ = ["DEFAULT_CONCURRENCY", "Config", "model_url"]

#: Requests in flight when neither ``concurrency`` nor the call profile says.
DEFAULT_CONCURRENCY: Final = 8


class Config(ModelCalls, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One audit run of a user's corpus (the formats are in ``docs/audit.md``).

    Exactly one way of answering applies: answers made elsewhere (``answers`` or
    ``traces``), a model (``endpoint`` or ``answerer`` as a URL, with ``model``), or the
    offline extractive answerer (the questions' cues). The model-call fields
    (``concurrency``, ``timeout``, ``call_profile``, ``rate_limit``, ``max_calls``,
    ``max_cost``, ``prices``) are :class:`~groundtrace.analyzer._settings.ModelCalls`'.

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
    """

    DEFAULT_CONCURRENCY: ClassVar[int] = DEFAULT_CONCURRENCY

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

    def answerer_url(self) -> str | None:
        """The answerer's base URL, or None for the offline extractive answerer.

        Raises:
            ConfigError: both ``endpoint`` and ``answerer`` are given, or the answerer is
                neither built-in nor a URL with its model id.
        """
        from groundtrace.analyzer.errors import ConfigError  # on use: the collectors' tree

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


def model_url(spec: str, model: str | None, field: str) -> str | None:
    """``spec`` as a model's base URL (None for the built-in ``extractive`` / ``baseline``).

    Raises:
        ConfigError: ``spec`` is no http(s) URL, or a URL without its model id.
    """
    from groundtrace.analyzer.errors import ConfigError

    if spec in ("extractive", "baseline"):
        return None
    if not spec.startswith(("http://", "https://")):
        raise ConfigError(f"{field} must be built-in or an http(s) URL", field=field)
    if not model:
        raise ConfigError(f"a model id is required with a {field} URL", field=field)
    return spec
