"""Function replay: call the app's recorded ANSWER entry point with perturbed evidence.

The ANSWER step of the app is decorated ``@answer(replayable=True)``, which records an
importable entry point ``module:qualname`` (e.g. ``groundtrace.examples.hotpot_rag.app:answer``),
the names of its query and evidence parameters and its other JSON-serialisable keyword arguments.
Replay imports it and calls ``fn(**kwargs, <query_param>=query, <evidence_param>=evidence)``
inside :meth:`CounterfactualRecorder.scope`, so the counterfactual trace is recorded by the
same SDK. A module entry point must be importable as it is: install the application (or put
its folder on ``PYTHONPATH``). An app run as a script (``python app.py``) records its file's
path instead (``/path/to/app.py:respond``): replay loads that file as a module of its own
name (its ``if __name__ == "__main__":`` block does not run) with the script's folder on
``sys.path``, as ``python app.py`` had it. The entry point is imported before the first unit
runs; if the import configures the SDK (a script calling ``configure()`` at module level),
the recorder installs its provider again, so τ̃ still goes to the run folder.

The reply is read with :func:`groundtrace.sdk.parse_answer` (a mapping return value is
serialised to JSON first), so answer, confidence and used chunks follow one convention.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import importlib.util
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from groundtrace.analyzer.errors import ReplayError
from groundtrace.collectors import Trace
from groundtrace.sdk import parse_answer

from ._capture import CounterfactualRecorder, trace_id_of
from ._types import ReplayUnit, UnitResult, UnitStatus, restrict_ids

__all__ = ["FunctionReplayer", "resolve_entrypoint"]


def resolve_entrypoint(entrypoint: str) -> Callable[..., Any]:
    """Import ``module:qualname`` (or load ``path/to/app.py:qualname``) and return the callable.

    Raises:
        ReplayError: malformed, not importable, or not callable; the message names the
            ``--replay`` value that fixes it.
    """
    module_name, sep, qualname = entrypoint.rpartition(":")
    if not sep or not module_name or not qualname:
        raise ReplayError(
            f"entry point {entrypoint!r} is not of the form module:qualname or "
            "path/to/app.py:qualname"
        )
    if module_name == "__main__":
        raise ReplayError(
            f"the entry point was recorded as {entrypoint!r}: the app ran as a script with an "
            "SDK that did not record its file, and __main__ here is not the app; pass "
            f"--replay path/to/app.py:{qualname} (the script) or --replay "
            f"package.module:{qualname} (an importable module)"
        )
    try:
        obj: Any = (
            _load_script(module_name)
            if module_name.endswith(".py")
            else importlib.import_module(module_name)
        )
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError, OSError) as exc:
        if module_name.endswith(".py"):
            script = Path(module_name).name
            fix = f"pass --replay path/to/{script}:{qualname}, the script's path on this machine"
        else:
            fix = (
                "install the application or put its folder on PYTHONPATH so the module is "
                f"importable, or pass --replay path/to/app.py:{qualname}"
            )
        raise ReplayError(
            f"cannot import the replay entry point {entrypoint!r}: {exc} ({fix})"
        ) from exc
    if not callable(obj):
        raise ReplayError(f"replay entry point {entrypoint!r} is not callable")
    fn: Callable[..., Any] = obj
    return fn


def _load_script(path: str) -> ModuleType:
    """The script at ``path`` as a module named after its file and location (loaded once)."""
    file = Path(path).resolve()
    if not file.is_file():
        raise ImportError(f"no script at {file}")
    digest = hashlib.sha256(str(file).encode("utf-8")).hexdigest()[:12]
    name = f"_groundtrace_replay_{file.stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise ImportError(f"{file} cannot be loaded as a Python module")
    folder = str(file.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # as ``python app.py`` had it: its sibling modules import
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:  # the app's own top-level code failed
        del sys.modules[name]
        raise ReplayError(
            f"loading the replay entry point ran {file}, and its top-level code raised "
            f"{type(exc).__name__}: {exc} (replay imports the script again: keep the code that "
            'runs the app under `if __name__ == "__main__":`)'
        ) from exc
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _reply_text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return json.dumps(dict(value), ensure_ascii=False, default=str)
    fields = ("answer", "confidence", "used_chunks")
    return json.dumps({k: getattr(value, k) for k in fields if hasattr(value, k)}, default=str)


class FunctionReplayer:
    """Replays units by calling the recorded entry point (see the module docstring).

    Args:
        recorder: where counterfactual traces are recorded.
        entrypoint: override of the recorded entry point (``module:qualname``).
        kwarg_overrides: keyword arguments replacing recorded ones (e.g. a new ``base_url``).
        concurrency: calls in flight (each runs in a worker thread).
    """

    mode = "function"

    def __init__(
        self,
        recorder: CounterfactualRecorder,
        *,
        entrypoint: str | None = None,
        kwarg_overrides: Mapping[str, Any] | None = None,
        concurrency: int = 1,
    ) -> None:
        self.recorder = recorder
        self.entrypoint = entrypoint
        self.overrides = dict(kwarg_overrides or {})
        self.concurrency = concurrency
        self._semaphore = asyncio.Semaphore(max(1, concurrency))
        self._functions: dict[str, Callable[..., Any]] = {}
        self.calls = 0

    def __reduce__(self) -> tuple[Any, ...]:
        # settings only: a cluster worker imports the entry point itself
        return (_rebuild, (self.recorder, self.entrypoint, self.overrides, self.concurrency))

    def check(self, trace: Trace) -> str | None:
        """Why ``trace`` cannot be replayed by function, or ``None`` when it can."""
        if self.entrypoint is None and trace.entrypoint is None:
            return (
                "no replayable ANSWER entry point recorded on the trace (decorate the answer "
                "function @answer(replayable=True), pass --replay module:function, or use "
                "--endpoint URL to replay the recorded LLM request)"
            )
        self._function(trace)  # import now: a bad entry point fails before any unit runs
        return None

    def _function(self, trace: Trace) -> Callable[..., Any]:
        name = self.entrypoint or (trace.entrypoint.entrypoint if trace.entrypoint else "")
        if name not in self._functions:
            self._functions[name] = resolve_entrypoint(name)
            self.recorder.reinstall()  # the import may have configured the SDK for the app
        return self._functions[name]

    def _call(self, unit: ReplayUnit, trace: Trace) -> UnitResult:
        fn = self._function(trace)
        ep = trace.entrypoint
        kwargs: dict[str, Any] = dict(ep.kwargs) if ep is not None else {}
        kwargs.update(self.overrides)
        query_param = (ep.query_param if ep else None) or "question"
        evidence_param = (ep.evidence_param if ep else None) or "evidence"
        kwargs[query_param] = unit.query
        kwargs[evidence_param] = [c.as_item() for c in unit.evidence]
        self.calls += 1
        with self.recorder.scope(unit) as handle:
            value = fn(**kwargs)
            cf_trace = trace_id_of(handle)
        parsed = parse_answer(_reply_text(value))
        error = parsed.error
        if isinstance(value, Mapping) and value.get("error"):
            error = str(value["error"])
        return UnitResult(
            key=unit.key,
            status=UnitStatus.OK,
            answer=parsed.answer,
            confidence=parsed.confidence,
            cited_ids=restrict_ids(parsed.used_chunks, unit.evidence),
            parse_error=error,
            counterfactual_trace_id=cf_trace,
            model_calls=1,
        )

    async def run(self, unit: ReplayUnit, trace: Trace) -> UnitResult:
        """Replay one unit; an exception of the app becomes a recorded failure of the unit."""
        async with self._semaphore:
            try:
                return await asyncio.to_thread(self._call, unit, trace)
            except ReplayError:
                raise
            except Exception as exc:
                return UnitResult.failure(unit.key, "exception", f"{type(exc).__name__}: {exc}", 1)

    async def aclose(self) -> None:
        """Nothing to close (the recorder is closed by its owner)."""


def _rebuild(
    recorder: CounterfactualRecorder,
    entrypoint: str | None,
    overrides: dict[str, Any],
    concurrency: int,
) -> FunctionReplayer:
    return FunctionReplayer(
        recorder, entrypoint=entrypoint, kwarg_overrides=overrides, concurrency=concurrency
    )
