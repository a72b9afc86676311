"""Option groups: options several commands share, declared once as a typed record.

A group is a frozen dataclass whose fields are the options, each annotated with its
``typer.Option`` and given its default::

    @dataclass(frozen=True, slots=True, kw_only=True)
    class ExecutorOptions:
        executor: Annotated[ExecutorName, typer.Option(help="...")] = ExecutorName.LOCAL
        ray_workers: Annotated[int, typer.Option(help="...")] = 2

A command names the groups it takes with :func:`uses` and declares one parameter per group,
typed by the group, where the group's options go in its ``--help``::

    @app.command("paths")
    @uses(WriteBackOptions, ExecutorOptions)
    def paths_command(out: ..., write_back: WriteBackOptions, executor: ExecutorOptions): ...

Typer sees the group's fields in that parameter's place (same names, types, defaults, help
and envvars as if each command spelled them out) and the command receives one record per
group, built from the values given. :func:`without` offers a group less some of its options
(those fields keep their record default). ``uses`` sits innermost (right above ``def``): the
decorators above it see the options one keyword argument each, as typer passes them.

An analysis's config record is a group too, generated from its fields and docstring
(:func:`groundtrace.analyzer.cli._fields.record_options`): the command declares a parameter
typed by the record and receives the record built from the options given.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import wraps
from typing import Any, TypeVar

__all__ = ["OptionGroup", "fields_as_options", "uses", "without"]

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class OptionGroup:
    """A group record offered to a command, perhaps without some of its options.

    Attributes:
        record: the group's dataclass.
        left_out: field names not offered (they keep the record's default).
    """

    record: type[Any]
    left_out: frozenset[str] = frozenset()

    def parameters(self, like: inspect.Parameter) -> list[inspect.Parameter]:
        """The offered fields as command parameters (``Annotated`` type, default), in order,
        of the kind of ``like`` (the command's parameter they replace).

        Raises:
            TypeError: the record is not a dataclass, or a field has no default.
        """
        if not dataclasses.is_dataclass(self.record):
            raise TypeError(f"{self.record.__name__} is not a dataclass option group")
        hints = typing.get_type_hints(self.record, include_extras=True)
        found = []
        for field in dataclasses.fields(self.record):
            if field.name in self.left_out:
                continue
            if field.default is dataclasses.MISSING:
                raise TypeError(f"option {self.record.__name__}.{field.name} needs a default")
            found.append(
                like.replace(name=field.name, default=field.default, annotation=hints[field.name])
            )
        return found

    def build(self, values: dict[str, Any]) -> Any:
        """The record of the values given (popped from ``values``)."""
        names = [f.name for f in dataclasses.fields(self.record) if f.name not in self.left_out]
        return self.record(**{name: values.pop(name) for name in names if name in values})


def without(record: type[Any], *names: str) -> OptionGroup:
    """``record`` offered without the options ``names`` (they keep their defaults).

    Raises:
        TypeError: a name that is not a field of ``record``.
    """
    known = {f.name for f in dataclasses.fields(record)}
    unknown = sorted(set(names) - known)
    if unknown:
        raise TypeError(f"{record.__name__} has no option {', '.join(unknown)}")
    return OptionGroup(record, frozenset(names))


def uses(*groups: type[Any] | OptionGroup) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """Give a command the options of ``groups``, one record per group.

    The command declares one parameter typed by each group's record; typer sees the group's
    options in its place and the command receives the record.

    Raises:
        TypeError: a group the command declares no parameter for, or an option name that is
            already a parameter of the command.
    """
    offered = [g if isinstance(g, OptionGroup) else OptionGroup(g) for g in groups]

    def decorate(func: Callable[..., R]) -> Callable[..., R]:
        signature = inspect.signature(func, eval_str=True)
        takes: dict[str, OptionGroup] = {}
        parameters: list[inspect.Parameter] = []
        for parameter in signature.parameters.values():
            group = next((g for g in offered if parameter.annotation is g.record), None)
            if group is None:
                parameters.append(parameter)
            else:
                takes[parameter.name] = group
                parameters.extend(group.parameters(parameter))
        missing = [g.record.__name__ for g in offered if g not in takes.values()]
        if missing:
            raise TypeError(f"{func.__qualname__} has no parameter typed {', '.join(missing)}")
        names = [p.name for p in parameters]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise TypeError(f"{func.__qualname__}: option(s) declared twice: {', '.join(twice)}")

        @wraps(func)
        def command(*args: Any, **kwargs: Any) -> R:
            records = {name: group.build(kwargs) for name, group in takes.items()}
            return func(*args, **kwargs, **records)

        shown = signature.replace(parameters=parameters)
        command.__signature__ = shown  # type: ignore[attr-defined]
        command.__annotations__ = {
            **{p.name: p.annotation for p in parameters},
            "return": signature.return_annotation,
        }
        return command

    return decorate


@contextmanager
def fields_as_options(options: Mapping[str, str], config: object | None = None) -> Iterator[None]:
    """Name a bad config field by the option it came from (``quote_threshold`` ->
    ``[--quote-threshold]``), for a command that builds an analysis's config from its options.

    An error about a file's content (it names a line), or about another file than the one the
    option gave (``config``'s value of the field), keeps its own naming.
    """
    from groundtrace.analyzer.errors import InputError

    try:
        yield
    except InputError as exc:
        option = options.get(exc.field or "")
        given = getattr(config, exc.field or "", None) if config is not None else None
        if option is None or exc.line is not None or exc.path not in (None, given):
            raise
        raise type(exc)(exc.reason, path=exc.path, field=option) from None
