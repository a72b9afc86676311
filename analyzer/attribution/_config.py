"""The attribution analysis's config record: what it reads and how it scores (its options and
its ``groundtrace analyze attribution --config`` file), apart from the run so that
``groundtrace attribution --help`` loads it alone."""

from __future__ import annotations

from typing import Literal

import msgspec

from groundtrace.analyzer._settings import Pacing, Replay, ReplayKwargs

__all__ = ["Config", "EndpointForm", "Method"]

Method = Literal["leave-one-out", "hierarchical", "shapley", "contextcite"]
#: How the endpoint is asked for prompt log-probabilities (``auto``: probed on the first
#: request, in the order ``vllm-chat``, ``vllm``, ``prompt-logprobs``, ``tgi``).
EndpointForm = Literal["auto", "vllm-chat", "vllm", "prompt-logprobs", "tgi"]


class Config(Pacing, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What the attribution analysis reads and how it scores (``rate_limit`` and ``timeout``:
    :class:`~groundtrace.analyzer._settings.Pacing`'s, of the endpoint tier; ``replay`` and
    ``replay_kwargs``: function replay's, :data:`~groundtrace.analyzer._settings.Replay` and
    :data:`~groundtrace.analyzer._settings.ReplayKwargs`, the behavioural tier's).

    Attributes:
        traces: trace files or folders.
        model_path: a GGUF file scored in-process (tier ``in-process``); with neither this
            nor ``endpoint``, the default embedded model (``analyzer.backends.DEFAULT_MODEL``,
            its file assembled into the model cache as the demo does).
        endpoint: an OpenAI-compatible base URL returning prompt log-probabilities (tier
            ``endpoint``); at most one of ``model_path`` and ``endpoint``.
        endpoint_model: the model name the endpoint serves.
        endpoint_form: how the endpoint returns prompt log-probabilities: ``vllm-chat``
            (vLLM's ``/v1/chat/completions`` with ``prompt_logprobs``, the prompt rendered
            by the server's own chat template), ``vllm`` (``/v1/completions`` with
            echo+logprobs), ``prompt-logprobs`` (vLLM's ``prompt_logprobs`` on
            ``/v1/completions``), ``tgi`` (``/generate`` with ``decoder_input_details``) or
            ``auto`` (probed on the first request, in that order; the form used is named on
            every row).
        rate_limit: requests per second to the endpoint (None: no limit); 429/5xx answers
            are retried with the project's backoff either way.
        method: ``leave-one-out`` (k + 1 passes), ``hierarchical`` (items, then sentences),
            ``shapley`` (2^k passes, k <= 6) or ``contextcite``.
        max_passes: the pass budget of ``hierarchical``.
        n_ablations: random ablations of ``contextcite``.
        seed: seed of the random masks of ``contextcite`` and ``hierarchical``.
        threads: CPU threads of the in-process model.
        n_ctx: context length of the in-process model.
        replay: the ``behavioural`` tier (no log-probabilities): function replay of the app,
            ``recorded`` (the trace's own entry point) or a ``module:qualname``; each
            evidence item is scored by what removing it does to the replayed answer
            (leave-one-out only, k + 1 replays; not with ``model_path`` or ``endpoint``).
        limit: attribute the first N traces that can be (in read order; ``None``: all).
    """

    traces: tuple[str, ...]
    model_path: str | None = None
    endpoint: str | None = None
    endpoint_model: str = "default"
    endpoint_form: EndpointForm = "auto"
    method: Method = "leave-one-out"
    max_passes: int = 24
    n_ablations: int = 32
    seed: int = 0
    threads: int = 1
    n_ctx: int = 4096
    replay: Replay = None
    replay_kwargs: ReplayKwargs = msgspec.field(default_factory=dict)
    limit: int | None = None

    def __post_init__(self) -> None:
        from groundtrace.analyzer.errors import ConfigError  # on use: the collectors' tree

        super().__post_init__()
        if self.replay is not None and (self.model_path or self.endpoint):
            raise ConfigError("replay (the behavioural tier) scores without a model: give no "
                              "model_path or endpoint with it", field="replay")  # fmt: skip
        if self.replay is not None and self.method != "leave-one-out":
            raise ConfigError("the behavioural tier (replay) runs leave-one-out only, got "
                              f"{self.method!r}", field="method")  # fmt: skip
        if self.model_path is not None and self.endpoint is not None:
            raise ConfigError("give at most one of model_path and endpoint (neither: the "
                              "default embedded model)", field="endpoint")  # fmt: skip
        if not self.traces:
            raise ConfigError("no trace file or folder given", field="traces")
        for name in ("max_passes", "n_ablations", "threads", "n_ctx", "limit"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}", field=name)
