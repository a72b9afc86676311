"""The one shape every analysis has, and the table of analyses the CLI, demo and write-back use.

An analysis is an :class:`Analysis` record of a few public names from its package:

* ``config``: its configuration record (a ``msgspec.Struct``; ``groundtrace analyze NAME
  --config FILE`` reads it from TOML or JSON, errors naming the file and the field);
* ``plan(config)`` → its units (what it will measure, read from the config's inputs);
* ``async run(units, config, context)`` → its :class:`~groundtrace.analyzer.Result`: the
  units run on ``context.executor`` (this process or a Ray cluster), through
  ``context.map`` when they are journaled (see :class:`~groundtrace.analyzer.RunContext`);
  the earlier form, a plain ``run(units, config, executor)``, is still accepted;
* ``write_report(result, out)`` → the main report file it wrote into the folder ``out``;
* ``reading(result)`` → the one-paragraph plain-language reading of the result;
* ``nothing_measured(result)`` → why nothing was measured (``None`` when something was): the
  callers then exit 6 with that reason, the reports written;
* ``verdicts(result, config)`` → the per-case results linked to their spans, for
  ``--write-back`` (``None``: the analysis has no per-span results);
* ``demo(inputs)`` → its config on the demo's traces and cases (``None``: not in the demo);
* ``exit_code(result)`` → the exit code its verdict asks for (``None``: 0 when it measured
  something), e.g. the gate's 10 manual review, 20 block;
* ``journal`` → the file name of its unit journal in the run folder (``None``: none): the
  driver opens it, so a re-run resumes;
* ``unit_key(unit)`` → a unit's content key (what the driver's estimate counts as done);
* ``estimate(units, config, journal)`` → the model requests the units the journal does not
  hold would make, how many it holds and, optionally, how many further calls at most depend
  on replies not made yet (``--estimate``; it may be ``async``);
* ``run_folder(config)`` → the folder of its journal and call cache when the config names
  one (``None``: the folder the reports are written in).

:func:`~groundtrace.analyzer.run_analysis` runs any of them end to end (lock, journal,
budget, progress, reports, write-back, exit code).

The built-in analyses live in their packages (``groundtrace.analyzer.paths:ANALYSIS``...).
Others are added without touching groundtrace: an installed distribution names its record in
the ``groundtrace.analyses`` entry-point group (``name = "package.module:ANALYSIS"``), or a
program calls :func:`register_analysis`.

Usage::

    from pathlib import Path

    from groundtrace.analyzer import get_analysis, run_analysis

    paths = get_analysis("paths")
    config = paths.config(traces=("runs/demo/traces",), cases="runs/demo/path_cases.jsonl")
    done = run_analysis(paths, config, out=Path("out/paths"))
    print(done.reading, done.exit_code)
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar, overload

import msgspec

from groundtrace.analyzer.errors import ConfigError, InputError

if TYPE_CHECKING:
    from groundtrace.analyzer._driver import RunContext
    from groundtrace.analyzer.executor import Executor, UnitJournal
    from groundtrace.analyzer.llm import ChatRequest
    from groundtrace.analyzer.writeback import Linked

__all__ = [
    "ENTRY_POINT_GROUP",
    "Analysis",
    "DemoInputs",
    "Plan",
    "analyses",
    "get_analysis",
    "load_config",
    "register_analysis",
]

C = TypeVar("C", bound=msgspec.Struct)
U = TypeVar("U")
R = TypeVar("R")

#: The entry-point group an installed distribution names its analyses in.
ENTRY_POINT_GROUP: Final = "groundtrace.analyses"

#: The built-in analyses, by name: where each one's :class:`Analysis` record is (imported on
#: first use, so ``groundtrace --help`` loads no analysis).
_BUILTIN: Final[Mapping[str, str]] = {
    "interventions": "groundtrace.analyzer.interventions:ANALYSIS",
    "paths": "groundtrace.analyzer.paths:ANALYSIS",
    "judge": "groundtrace.analyzer.judge:ANALYSIS",
    "gate": "groundtrace.analyzer.gate:ANALYSIS",
    "audit": "groundtrace.analyzer.audit:ANALYSIS",
    "attribution": "groundtrace.analyzer.attribution:ANALYSIS",
}


class Plan(Sequence[U]):
    """What ``plan(config)`` returns: a sequence of its ``units``, and whatever else the
    analysis read to find them (a subclass's fields: notes, read errors, counts...).

    A subclass is a frozen dataclass whose ``units`` field (or property) holds the units in
    run order; ``run`` accepts the plan or any sequence of its units.
    """

    __slots__ = ()

    if TYPE_CHECKING:  # a subclass's field or property (none here: a field may shadow it)

        @property
        def units(self) -> Sequence[U]:
            """The units, in run order."""

    @overload
    def __getitem__(self, index: int) -> U: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[U]: ...
    def __getitem__(self, index: int | slice) -> U | Sequence[U]:
        """The unit (or units) at ``index``."""
        return self.units[index]

    def __len__(self) -> int:
        """How many units the plan holds."""
        return len(self.units)

    def __iter__(self) -> Iterator[U]:
        """The units, in run order."""
        return iter(self.units)


@dataclass(frozen=True, slots=True)
class DemoInputs:
    """What the demo hands an analysis: the traces it captured and its cases.

    Attributes:
        traces: the folder of the demo app's OTLP trace files.
        cases: the demo's case file (JSON lines, ``docs/cases.md``).
        out: the folder this analysis writes its report into.
        dataset: the question set the app ran on (HotpotQA layout), e.g. a pool of
            replacement evidence (``None``: not known).
        candidate: the traces of a second version of the app on the same questions, a
            release candidate (``None``: not run).
        agent: the run folder of a tool-using agent (``None``: not run): its traces in
            ``traces/``, its path cases in ``cases.jsonl``, its tools config in ``tools.toml``.
    """

    traces: Path
    cases: Path
    out: Path
    dataset: Path | None = None
    candidate: Path | None = None
    agent: Path | None = None


@dataclass(frozen=True, slots=True)
class Analysis(Generic[C, U, R]):
    """One analysis, in the shape every analysis has (see the module docstring).

    Attributes:
        name: the analysis's name (``groundtrace analyze NAME``), lower case.
        title: one line saying what it measures.
        config: its configuration record type.
        plan: ``plan(config)`` → its units.
        run: ``async run(units, config, context)`` → its result (or the earlier
            ``run(units, config, executor)``).
        write_report: ``write_report(result, out)`` → the main report file written in ``out``.
        reading: ``reading(result)`` → the plain-language reading.
        nothing_measured: ``nothing_measured(result)`` → why nothing was measured, else None.
        verdicts: ``verdicts(result, config)`` → per-case results for ``--write-back``.
        demo: ``demo(inputs)`` → its config on the demo's data.
        exit_code: ``exit_code(result)`` → the exit code the verdict asks for.
        journal: its unit journal's file name in the run folder (opened by the driver).
        unit_key: ``unit_key(unit)`` → a unit's content key.
        estimate: ``estimate(units, config, journal)`` → (model requests, units done[,
            dependent calls]).
        run_folder: ``run_folder(config)`` → its journal's folder, when the config names one.
    """

    name: str
    title: str
    config: type[C]
    plan: Callable[[C], Sequence[U]]
    run: (
        Callable[[Sequence[U], C, RunContext], Awaitable[R]]
        | Callable[[Sequence[U], C, Executor], R]
    )
    write_report: Callable[[R, Path], Path]
    reading: Callable[[R], str]
    nothing_measured: Callable[[R], str | None]
    verdicts: Callable[[R, C], Linked] | None = None
    demo: Callable[[DemoInputs], C] | None = None
    exit_code: Callable[[R], int] | None = None
    journal: str | None = None
    unit_key: Callable[[U], str] | None = None
    estimate: (
        Callable[
            [Sequence[U], C, UnitJournal | None],
            tuple[Sequence[ChatRequest], int]
            | tuple[Sequence[ChatRequest], int, int]
            | Awaitable[tuple[Sequence[ChatRequest], int]]
            | Awaitable[tuple[Sequence[ChatRequest], int, int]],
        ]
        | None
    ) = None
    run_folder: Callable[[C], str | Path] | None = None


_NAME = re.compile(r"[a-z][a-z0-9_-]*")

#: Analyses registered in this process, by name (after the built-ins and entry points).
_REGISTERED: dict[str, Analysis[Any, Any, Any]] = {}


def register_analysis(analysis: Analysis[Any, Any, Any]) -> None:
    """Add ``analysis`` to this process's table.

    Registering the same record again does nothing.

    Raises:
        ConfigError: the name is not a lower-case word (``[a-z][a-z0-9_-]*``), or another
            analysis (built-in, a plugin's or registered) already has it.
    """
    if _NAME.fullmatch(analysis.name) is None:
        raise ConfigError(f"analysis name {analysis.name!r} is not a lower-case word")
    taken = _REGISTERED.get(analysis.name)
    if taken is analysis:
        return
    if taken is not None or analysis.name in _locations():
        raise ConfigError(f"an analysis named {analysis.name!r} is already registered; "
                          "give this one another name")  # fmt: skip
    _REGISTERED[analysis.name] = analysis


def _locations() -> dict[str, str]:
    """Name -> ``module:attribute`` of every analysis not registered in-process."""
    found = dict(_BUILTIN)
    for point in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(point.name, point.value)  # a plugin never shadows a built-in
    return found


def _load(name: str, location: str) -> Analysis[Any, Any, Any]:
    module_name, _, attribute = location.partition(":")
    try:
        value = getattr(importlib.import_module(module_name), attribute or "ANALYSIS")
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"analysis {name!r} cannot be loaded from {location!r}: {exc}") from exc
    if not isinstance(value, Analysis):
        raise ConfigError(f"analysis {name!r}: {location!r} is not an Analysis record")
    return value


def analyses() -> list[str]:
    """The names of every analysis this process can run, sorted."""
    return sorted({*_locations(), *_REGISTERED})


def get_analysis(name: str) -> Analysis[Any, Any, Any]:
    """The analysis called ``name``.

    Raises:
        ConfigError: no analysis has that name, or its record cannot be loaded.
    """
    if name in _REGISTERED:
        return _REGISTERED[name]
    location = _locations().get(name)
    if location is None:
        raise ConfigError(f"no analysis {name!r}; known: {', '.join(analyses())}")
    return _load(name, location)


def load_config(analysis: Analysis[C, Any, Any], path: str | Path) -> C:
    """Read ``analysis``'s config record from a TOML or JSON file.

    Raises:
        InputError: the file cannot be read, is not TOML/JSON, or a field is missing, unknown
            or of the wrong type (the message names the file and the field).
    """
    source = Path(path)
    try:
        data = source.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=str(source)) from None
    decode = msgspec.json.decode if source.suffix == ".json" else msgspec.toml.decode
    try:
        return decode(data, type=analysis.config)
    except msgspec.ValidationError as exc:
        message, _, where = str(exc).partition(" - at `$.")
        field = where.rstrip("`") or None
        raise InputError(
            f"{message} in the {analysis.name} config", path=str(source), field=field
        ) from None
    except msgspec.DecodeError as exc:
        raise InputError(f"not valid {'JSON' if decode is msgspec.json.decode else 'TOML'}: {exc}",
                         path=str(source)) from None  # fmt: skip
    except ConfigError as exc:  # the record's own check of a value: the file named too
        if exc.path is not None:
            raise
        raise ConfigError(exc.reason, path=str(source), field=exc.field) from None
