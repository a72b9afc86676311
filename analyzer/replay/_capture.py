"""Recording counterfactual traces with the SDK, into the run folder.

:class:`CounterfactualRecorder` builds its own ``TracerProvider`` with the OTLP-JSON file
exporter (``<run>/counterfactual_traces/``), hands it to :func:`groundtrace.sdk.configure`
(content capture on; the global OpenTelemetry provider is not touched) and opens one root
REQUEST span per unit carrying the replay link: ``groundtrace.replay.of`` (the original trace
id), ``.operator``, ``.target_id`` and ``.replacement_id``. Everything the replayed code
records (ANSWER, LLM spans...) nests under it, so τ̃ is an ordinary trace of the same schema.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import format_trace_id

from groundtrace.sdk import StepHandle, configure, request_context, semconv, shutdown
from groundtrace.sdk.file_exporter import OTLPJsonFileExporter

from ._types import ReplayUnit

__all__ = ["CounterfactualRecorder", "trace_id_of"]


def trace_id_of(handle: StepHandle) -> str | None:
    """Hex trace id of the span behind ``handle`` (``None`` when it does not record)."""
    ctx = handle.span.get_span_context()
    return format_trace_id(ctx.trace_id) if ctx.is_valid else None


class CounterfactualRecorder:
    """Records every replay as a trace linked to its original (see the module docstring).

    Args:
        out_dir: folder of the OTLP-JSON lines files of τ̃.
        service_name: ``service.name`` of the counterfactual traces.
    """

    def __init__(self, out_dir: str | Path, service_name: str = "groundtrace-replay") -> None:
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self._exporter = OTLPJsonFileExporter(self.out_dir)
        self._provider = TracerProvider()
        self._provider.add_span_processor(SimpleSpanProcessor(self._exporter))
        self._service_name = service_name
        self._open = False

    def __reduce__(self) -> tuple[type[CounterfactualRecorder], tuple[Path, str]]:
        # a recorder pickles as its folder: unpickled in a cluster worker it writes that
        # process's own ``traces-<pid>.jsonl`` there once started
        return (CounterfactualRecorder, (self.out_dir, self._service_name))

    def start(self) -> None:
        """Install the provider in the SDK (capture on, redaction as the SDK defaults)."""
        configure(
            service_name=self._service_name,
            tracer_provider=self._provider,
            capture_content=True,
        )
        self._open = True

    def reinstall(self) -> None:
        """Install the provider again if started (code imported since may have called
        :func:`~groundtrace.sdk.configure` for itself)."""
        if self._open:
            self.start()

    def close(self) -> None:
        """Flush and close the exporter; the SDK is reset."""
        if not self._open:
            return
        self._open = False
        shutdown()
        self._provider.shutdown()

    @contextmanager
    def scope(self, unit: ReplayUnit) -> Iterator[StepHandle]:
        """The root span of one counterfactual trace, with the replay link attributes."""
        attributes: dict[str, str | int] = {
            semconv.GT_REPLAY_OF: unit.trace_id,
            semconv.GT_REPLAY_OPERATOR: unit.operator,
        }
        if unit.target_id is not None:
            attributes[semconv.GT_REPLAY_TARGET_ID] = unit.target_id
        if unit.replacement_id is not None:
            attributes[semconv.GT_REPLAY_REPLACEMENT_ID] = unit.replacement_id
        with request_context(
            unit.query, case_id=unit.case_id, name="replay", attributes=attributes
        ) as handle:
            yield handle

    def __enter__(self) -> CounterfactualRecorder:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
