"""Options generated from an analysis's config record: one declaration, its fields.

An analysis's config record (a ``msgspec.Struct``, :mod:`groundtrace.analyzer._analysis`)
already says what can be set: each field's name, type, default and, in its docstring's
``Attributes:`` section, what it means. :func:`record_options` turns it into an option group
(:func:`~groundtrace.analyzer.cli._options.uses`): one option per field, named after it
(``quote_threshold`` -> ``--quote-threshold``), typed after it and helped by its docstring
(a shared field type's ``msgspec.Meta(description=...)`` where the docstring does not describe
the field, :data:`groundtrace.analyzer._settings.ReplayKwargs`)::

    PATHS = record_options(
        paths.Config,
        argument="traces",                      # the command's argument, not an option
        left_out=("strict",),                   # set by the command itself
    )

A field whose option is not named after it says so in the record, on its annotation, so that
every command offering the field (the friendly command and ``groundtrace analyze NAME``, whose
options :func:`override_options` makes) spells it the same way::

    trace_format: Annotated[TraceFormat, msgspec.Meta(extra={"option": "--format"})] = "otlp"

    @uses(PATHS, ExecutorOptions)
    def paths_command(out: Path, *, config: paths.Config, executor: ExecutorOptions): ...

The command receives the record built from the values given (unset fields keep the record's
default) and names a bad field by its option with ``fields_as_options(PATHS.option_names)``.

Types: ``Literal`` -> a choice of its values; ``tuple[str, ...]`` -> a repeatable option (or
the argument); ``bool`` -> a ``--name/--no-name`` flag; ``int``, ``float``, ``str`` as they are;
``dict[str, str]`` -> a repeatable ``NAME=VALUE`` option (``--replay-kwarg budget=small``);
``X | None`` -> an option whose absence is ``None``. A field of another type is declared by
the command (``declared``: its ``Annotated`` type and the function making the field's value
of what typer gives), or left out.
"""

from __future__ import annotations

import enum
import inspect
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Annotated, Any, Literal

import msgspec
import typer

from ._options import OptionGroup, fields_as_options

__all__ = ["Overrides", "RecordOptions", "field_help", "override_options", "record_options"]

#: A field's command-line form given by the command: its ``Annotated`` type (the typer
#: option or argument), the function making the field's value of what typer gives and,
#: optionally, the option's default (else the field's, when it is a scalar).
Declared = tuple[Any, Callable[[Any], Any]] | tuple[Any, Callable[[Any], Any], Any]

#: A generated form: a :data:`Declared` and the function showing the field's default.
_Form = tuple[Any, Callable[[Any], Any], Callable[[Any], Any]]

_ROLE = re.compile(r":[a-z:]+:`~?(?:[\w.]*\.)?([^`]+)`")
_LITERAL = re.compile(r"``([^`]*)``")
_NONE = re.compile(r"(^|[(;] ?)None:")


def _plain(text: str) -> str:
    """Docstring text as plain help: roles and literals unquoted, a word capitalised, full stop,
    the field's ``None`` said as the option's absence (``(None: X)`` -> ``(default: X)``)."""
    text = " ".join(text.split())
    word = text[:1].islower()  # a word, not a literal (``lexical`` stays as written)
    text = _NONE.sub(r"\1default:", _LITERAL.sub(r"\1", _ROLE.sub(r"\1", text)))
    if word:
        text = text[0].upper() + text[1:]
    return text if text.endswith((".", ")", ":")) else text + "."


@cache
def field_help(record: type[Any]) -> dict[str, str]:
    """Each field's help: its entry in the ``Attributes:`` section of ``record``'s docstring.

    Raises:
        TypeError: a field of ``record`` the section does not describe.
    """
    found = _described(record)
    missing = [f for f in msgspec.structs.fields(record) if f.name not in found]
    if missing:
        names = ", ".join(f.name for f in missing)
        raise TypeError(f"{record.__name__}'s docstring describes no field {names} (Attributes:)")
    return found


def _described(record: type[Any]) -> dict[str, str]:
    """The fields the ``Attributes:`` sections of ``record``'s docstring and its bases'
    describe (a shared record's fields, :mod:`groundtrace.analyzer._settings`), or their
    type's ``msgspec.Meta(description=...)`` (a shared field type's): their help, the
    record's own where it says it otherwise."""
    hints = typing.get_type_hints(record, include_extras=True)
    found = {name: _plain(text) for name in hints if (text := _description(hints[name]))}
    for kind in reversed(record.__mro__):
        if kind is not record and (kind is msgspec.Struct or not issubclass(kind, msgspec.Struct)):
            continue
        found.update(_section(kind.__doc__ or ""))
    return found


def _fields(record: type[Any]) -> list[msgspec.structs.FieldInfo]:
    """``record``'s fields, its own first (in its order), then those of its base (a shared
    record of :mod:`groundtrace.analyzer._settings`): the options' order."""
    bases = [getattr(base, "__struct_fields__", None) for base in record.__mro__[1:]]
    inherited = {n for names in bases if isinstance(names, tuple) for n in names}
    fields = msgspec.structs.fields(record)
    return [f for f in fields if f.name not in inherited] + [
        f for f in fields if f.name in inherited
    ]


def _section(doc: str) -> dict[str, str]:
    """The help of each field the ``Attributes:`` section of a docstring describes."""
    lines = doc.expandtabs().splitlines()
    found: dict[str, list[str]] = {}
    inside, indent, current = False, -1, None  # indent: the entries' (the first one's)
    for line in lines:
        depth = len(line) - len(line.lstrip())
        if line.strip() == "Attributes:":
            inside, indent, current = True, -1, None
            continue
        if not inside or not line.strip():
            continue
        if indent < 0:
            indent = depth
        if depth < indent:
            break  # the section ended
        entry = re.match(r"\s*(\w+):\s*(.*)", line)
        if entry and depth == indent:
            current = entry.group(1)
            found[current] = [entry.group(2)]
        elif current is not None:
            found[current].append(line)
    return {name: _plain(" ".join(text)) for name, text in found.items()}


def _metas(hint: Any) -> list[Any]:
    """The ``msgspec.Meta`` annotations of ``hint`` (an ``Annotated`` type's)."""
    if typing.get_origin(hint) is not Annotated:
        return []
    return [m for m in typing.get_args(hint)[1:] if isinstance(m, msgspec.Meta)]


def _description(hint: Any) -> str | None:
    """The help a field type declares: its ``msgspec.Meta(description=...)``."""
    return next((m.description for m in _metas(hint) if m.description), None)


def _option_name(name: str) -> str:
    return "--" + name.replace("_", "-")


def _option_of(name: str, hint: Any) -> str:
    """The option of the field ``name`` of type ``hint``: the one its annotation names
    (``msgspec.Meta(extra={"option": "--format"})``), else one named after the field."""
    for meta in _metas(hint):
        named = (meta.extra or {}).get("option")
        if isinstance(named, str):
            return named
    return _option_name(name)


def _pairs(option: str) -> Callable[[Any], dict[str, str]]:
    """The conversion of a repeatable ``NAME=VALUE`` option's values to a mapping; a value
    that is not a pair is refused, naming the option."""

    def convert(given: Any) -> dict[str, str]:
        from groundtrace.analyzer.errors import ConfigError

        found: dict[str, str] = {}
        for pair in given or ():
            name, sep, value = pair.partition("=")
            if not sep or not name:
                raise ConfigError(f"expected NAME=VALUE, got {pair!r}", field=option)
            found[name] = value
        return found

    return convert


def _strip(hint: Any) -> tuple[Any, bool]:
    """``hint`` without ``Annotated`` metadata and ``None``; whether ``None`` was allowed."""
    if typing.get_origin(hint) is Annotated:
        hint = typing.get_args(hint)[0]
    args = typing.get_args(hint)
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1 and len(rest) < len(args):
            inner, _ = _strip(rest[0])
            return inner, True
    return hint, False


def _choices(record: type[Any], name: str, values: tuple[Any, ...]) -> type[enum.Enum]:
    """A ``Literal``'s values as the enum typer offers as a choice (its values shown)."""
    if not all(isinstance(v, str) for v in values):
        raise TypeError(f"{record.__name__}.{name}: only Literal of str is offered as a choice")
    make: Any = enum.StrEnum  # a functional enum: its name is not a literal
    choice: type[enum.Enum] = make(f"{record.__name__}_{name}", {v: v for v in values})
    return choice


def _same(value: Any) -> Any:
    return value


def _scalar(value: Any) -> Any:
    return value if value is None or isinstance(value, bool | int | float | str) else None


def _generated(record: type[Any], name: str, hint: Any, argument: bool, option: str,
               help_text: str, absent: bool = False) -> _Form:  # fmt: skip
    """The typer form of a field of type ``hint``, its conversion to the field's value and
    the default shown for the field's (``absent``: the option may be absent, ``None``)."""
    kind, optional = _strip(hint)
    optional = optional or absent
    origin = typing.get_origin(kind)

    def info(shown: Any) -> Any:
        if argument:
            return Annotated[shown, typer.Argument(help=help_text)]
        # a flag keeps typer's --name/--no-name pair unless renamed
        names = () if kind is bool and option == _option_name(name) else (option,)
        return Annotated[shown, typer.Option(*names, help=help_text)]

    if origin is Literal:
        choice = _choices(record, name, typing.get_args(kind))
        shown = choice | None if optional else choice

        def member(d: Any) -> Any:
            return None if d is None else choice(d)

        return info(shown), lambda v: None if v is None else v.value, member
    if origin is tuple and typing.get_args(kind)[1:] == (Ellipsis,):
        item, _ = _strip(typing.get_args(kind)[0])
        if item not in (str, int, float):
            raise TypeError(f"{record.__name__}.{name}: tuple of {item} is not offered")
        # typer shows a repeatable option's default as a list (none: no default shown)
        return info(list[item] | None), lambda v: tuple(v or ()), lambda d: list(d) or None  # type: ignore[valid-type]
    if origin is dict and typing.get_args(kind) == (str, str) and not argument:
        help_text = f"{help_text} NAME=VALUE, repeatable.".lstrip()
        # a mapping's default is not shown (none: the record's, usually empty)
        return info(list[str] | None), _pairs(option), lambda d: None
    if kind in (bool, int, float, str):
        return info(kind | None if optional else kind), _same, _same
    raise TypeError(
        f"{record.__name__}.{name}: type {kind} is not offered as an option (declare it or "
        "leave it out)"
    )


@dataclass(frozen=True, slots=True)
class _Field:
    """One offered field: its parameter type, default and conversion."""

    name: str
    option: str
    annotation: Any
    default: Any
    convert: Callable[[Any], Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordOptions(OptionGroup):
    """An option group generated from a config record (see :func:`record_options`).

    Attributes:
        offered: the offered fields, in the record's order.
        option_names: field name -> the option (or ``ARGUMENT``) it is given with, for
            :func:`~groundtrace.analyzer.cli._options.fields_as_options`.
    """

    offered: tuple[_Field, ...] = ()
    option_names: Mapping[str, str] = field(default_factory=dict)

    def parameters(self, like: Any) -> list[Any]:
        """The offered fields as command parameters of the kind of ``like``."""
        return [
            like.replace(name=f.name, default=f.default, annotation=f.annotation)
            for f in self.offered
        ]

    def build(self, values: dict[str, Any]) -> Any:
        """The record of the values given (popped from ``values``); fields left out or not
        given keep the record's default. A field the record refuses as it is made is named
        by its option."""
        given = {f.name: f.convert(values.pop(f.name)) for f in self.offered if f.name in values}
        with fields_as_options(self.option_names):
            return self.record(**given)


@dataclass(frozen=True, slots=True, kw_only=True)
class Overrides(RecordOptions):
    """Options overriding fields of a config record read from a file (see
    :func:`override_options`); the command receives the fields given, field -> value."""

    def build(self, values: dict[str, Any]) -> Any:
        """The fields given (popped from ``values``): field -> its value."""
        found = {}
        for offered in self.offered:
            value = values.pop(offered.name, None)
            if value is not None:
                found[offered.name] = offered.convert(value)
        return found


def override_options(record: type[msgspec.Struct], *, reserved: Iterable[str]) -> Overrides:
    """An option for each field of ``record`` that has a generated form (others are set in
    the config file only), overriding the file's value when given; none is required and none
    has a default (absent: the file's value, else the record's default).

    Args:
        record: any analysis's config record, a plugin's too (a field its docstring does not
            describe has no help).
        reserved: names the command's own options take (such a field, or a field whose
            option is one of those or an earlier field's, is set in the file).
    """
    hints = typing.get_type_hints(record, include_extras=True)
    helps = _described(record)
    taken = frozenset(reserved)
    used = {_option_name(n) for n in taken}
    offered = []
    for spec in _fields(record):
        name, option = spec.name, _option_of(spec.name, hints[spec.name])
        if name in taken or option in used:
            continue
        try:
            annotation, convert, _ = _generated(
                record, name, hints[name], False, option, helps.get(name, ""), absent=True
            )
        except TypeError:
            continue  # a mapping, a nested record...: the file's only
        offered.append(_Field(name, option, annotation, None, convert))
        used.add(option)
    names = {f.name: f.option for f in offered}
    return Overrides(record, taken, offered=tuple(offered), option_names=names)


def record_options(
    record: type[msgspec.Struct],
    *,
    argument: str | None = None,
    help: Mapping[str, str] | None = None,
    declared: Mapping[str, Declared] | None = None,
    left_out: Iterable[str] = (),
    only: Iterable[str] | None = None,
    required: Iterable[str] = (),
) -> RecordOptions:
    """The options of ``record``'s fields, as an option group a command :func:`uses`.

    Args:
        record: the config record (its docstring's ``Attributes:`` give the help).
        argument: the field given as the command's argument (a ``tuple[str, ...]``: one or
            more values).
        help: field -> help where the command says it otherwise than the docstring.
        declared: field -> its command-line form given by the command (:data:`Declared`).
        left_out: fields not offered (the command sets them, or they keep their default).
        only: the fields offered, if not all (the others are left out).
        required: fields the command requires though the record has a default for them.

    Raises:
        TypeError: a name that is not a field of ``record``, a field whose type has no
            generated form, a field the docstring does not describe, or two fields of one
            option.
    """
    fields = {f.name: f for f in _fields(record)}
    help, declared = help or {}, declared or {}
    chosen = set(fields) if only is None else set(only)
    skipped = frozenset(left_out) | (set(fields) - chosen)
    needed = frozenset(required)
    named = {
        *help,
        *declared,
        *left_out,
        *chosen,
        *needed,
        *([argument] if argument else []),
    }
    unknown = sorted(named - set(fields))
    if unknown:
        raise TypeError(f"{record.__name__} has no field {', '.join(unknown)}")
    hints = typing.get_type_hints(record, include_extras=True)
    helps = field_help(record)
    offered = []
    for name, spec in fields.items():
        if name in skipped:
            continue
        option = _option_of(name, hints[name])
        default: Any = spec.default
        if default is msgspec.NODEFAULT and spec.default_factory is not msgspec.NODEFAULT:
            default = spec.default_factory()
        if name in declared:  # a default of another form than a scalar: none shown
            form: tuple[Any, ...] = declared[name]
            annotation, convert = form[0], form[1]
            show: Callable[[Any], Any] = _scalar
            if len(form) == 3:
                default = form[2]
        else:
            shown = help.get(name, helps[name])
            annotation, convert, show = _generated(
                record, name, hints[name], name == argument, option, shown
            )
        # no default: a required option (or argument)
        if default is msgspec.NODEFAULT or name in needed:
            default = inspect.Parameter.empty
        else:
            default = show(default)
        offered.append(_Field(name, option, annotation, default, convert))
    spelled = [f.option for f in offered if f.name != argument]
    twice = sorted({o for o in spelled if spelled.count(o) > 1})
    if twice:
        raise TypeError(f"{record.__name__}: two fields of one option {', '.join(twice)}")
    names = {f.name: (f.name.upper() if f.name == argument else f.option) for f in offered}
    return RecordOptions(record, skipped, offered=tuple(offered), option_names=names)
