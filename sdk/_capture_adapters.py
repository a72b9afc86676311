"""Thin adapters that run a function inside a step, for the four kinds of callables.

Each adapter first asks whether any span could record (cached tracer, ``off`` flag, the global
provider slot: a few attribute loads) and calls straight through if not; otherwise it starts a
:class:`~._step.Step`, runs the user code with the step's context attached, records the
result or the exception (an ``Exception`` or the task's cancellation, :func:`~._step.failures`;
re-raised unchanged) and ends the span. The span's context is attached only while the
user's code runs: a generator's consumer never sees the generator's span as current, and an
abandoned generator leaves nothing attached.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncGenerator, Callable, Generator
from typing import Any, TypeVar

from opentelemetry.context import attach as _attach
from opentelemetry.context import detach as _detach

from . import semconv as sc
from ._capture import GenCollector, begin, build_spec
from ._runtime import _STATE, active_tracer, is_suppressed
from ._step import StepOptions, StepSpec, failures

__all__ = ["make_decorator", "wrap"]

F = TypeVar("F", bound=Callable[..., Any])


def _wrap_sync(fn: Callable[..., Any], spec: StepSpec) -> Callable[..., Any]:
    @functools.wraps(fn)
    def step_sync(*args: Any, **kwargs: Any) -> Any:
        tracer = _STATE.tracer
        if tracer is None and (_STATE.off or (tracer := active_tracer()) is None):
            return fn(*args, **kwargs)
        step = begin(spec, args, kwargs, tracer)
        if step is None:
            return fn(*args, **kwargs)
        token = _attach(step.ctx)
        try:
            result = fn(*args, **kwargs)
            step.succeed(result)
            return result
        except failures() as exc:
            step.fail(exc)
            raise
        finally:
            _detach(token)  # logs, never raises
            step.close()

    return step_sync


def _wrap_async(fn: Callable[..., Any], spec: StepSpec) -> Callable[..., Any]:
    @functools.wraps(fn)
    async def step_async(*args: Any, **kwargs: Any) -> Any:
        tracer = _STATE.tracer
        if tracer is None and (_STATE.off or (tracer := active_tracer()) is None):
            return await fn(*args, **kwargs)
        step = begin(spec, args, kwargs, tracer)
        if step is None:
            return await fn(*args, **kwargs)
        token = _attach(step.ctx)
        try:
            result = await fn(*args, **kwargs)
            step.succeed(result)
            return result
        except failures() as exc:
            step.fail(exc)
            raise
        finally:
            _detach(token)  # logs, never raises
            step.close()

    return step_async


def _wrap_gen(fn: Callable[..., Any], spec: StepSpec) -> Callable[..., Any]:
    @functools.wraps(fn)
    def step_gen(*args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
        tracer = _STATE.tracer
        if tracer is None and (_STATE.off or (tracer := active_tracer()) is None):
            return (yield from fn(*args, **kwargs))
        if is_suppressed():
            return (yield from fn(*args, **kwargs))
        step = begin(spec, args, kwargs, tracer)
        if step is None:
            return (yield from fn(*args, **kwargs))
        collector = GenCollector(step) if step.recording else None
        try:
            token = step.attach()
            try:
                gen = fn(*args, **kwargs)
            finally:
                step.detach(token)
            send: Any = None
            thrown: BaseException | None = None
            while True:
                token = step.attach()
                try:
                    item = gen.send(send) if thrown is None else gen.throw(thrown)
                except StopIteration as stop:
                    if collector is not None:
                        collector.finish(step)
                    return stop.value
                except failures() as exc:
                    step.fail(exc)
                    raise
                finally:
                    step.detach(token)
                    thrown = None
                if collector is not None:
                    collector.add(item)
                try:
                    send = yield item
                except GeneratorExit:  # closed early or abandoned by the consumer
                    token = step.attach()
                    try:
                        gen.close()
                    finally:
                        step.detach(token)
                    if collector is not None:
                        collector.finish(step)
                    raise
                except BaseException as exc:  # forwarded into the generator, as yield from does
                    thrown = exc
        finally:
            step.close()

    return step_gen


def _wrap_asyncgen(fn: Callable[..., Any], spec: StepSpec) -> Callable[..., Any]:
    @functools.wraps(fn)
    async def step_asyncgen(*args: Any, **kwargs: Any) -> AsyncGenerator[Any, Any]:
        tracer = _STATE.tracer
        if (
            tracer is None and (_STATE.off or (tracer := active_tracer()) is None)
        ) or is_suppressed():
            async for item in fn(*args, **kwargs):
                yield item
            return
        step = begin(spec, args, kwargs, tracer)
        if step is None:
            async for item in fn(*args, **kwargs):
                yield item
            return
        collector = GenCollector(step) if step.recording else None
        try:
            token = step.attach()
            try:
                agen = fn(*args, **kwargs)
            finally:
                step.detach(token)
            send: Any = None
            thrown: BaseException | None = None
            while True:
                token = step.attach()
                try:
                    if thrown is None:
                        item = await agen.asend(send)
                    else:
                        item = await agen.athrow(thrown)
                except StopAsyncIteration:
                    if collector is not None:
                        collector.finish(step)
                    return
                except failures() as exc:
                    step.fail(exc)
                    raise
                finally:
                    step.detach(token)
                    thrown = None
                if collector is not None:
                    collector.add(item)
                try:
                    send = yield item
                except GeneratorExit:  # aclose() or finalisation of an abandoned generator
                    token = step.attach()
                    try:
                        await agen.aclose()
                    finally:
                        step.detach(token)
                    if collector is not None:
                        collector.finish(step)
                    raise
                except BaseException as exc:
                    thrown = exc
        finally:
            step.close()

    return step_asyncgen


def wrap(fn: F, spec: StepSpec) -> F:
    """Wrap ``fn`` (sync, async, generator or async generator) in a step."""
    if inspect.isasyncgenfunction(fn):
        wrapper = _wrap_asyncgen(fn, spec)
    elif inspect.iscoroutinefunction(fn):
        wrapper = _wrap_async(fn, spec)
    elif inspect.isgeneratorfunction(fn):
        wrapper = _wrap_gen(fn, spec)
    else:
        wrapper = _wrap_sync(fn, spec)
    return wrapper  # type: ignore[return-value]


def make_decorator(action: sc.Action, fn: Callable[..., Any] | None, options: StepOptions) -> Any:
    """Apply a step decorator bare (``fn`` given) or return it configured (``fn`` None)."""

    def decorate(func: F) -> F:
        return wrap(func, build_spec(action, options, func))

    return decorate if fn is None else decorate(fn)
