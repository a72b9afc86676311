"""The one exception tree of groundtrace's collectors and analyzer (both fail closed).

Every error raised on purpose is a :class:`GroundtraceError`; foreign errors
(``json.JSONDecodeError``, protobuf decode errors, ``OSError``, HTTP errors...) are mapped to
one of these at the boundary, with the file, line and field that caused them. The errors of
reading trace files live in :mod:`groundtrace.collectors.errors` (the collectors may not
import the analyzer) and are re-exported here, so analyzer code imports every error from this
module.
The ``groundtrace`` command prints the message (never a traceback) and exits with the
error's ``exit_code``::

    GroundtraceError              exit 2  root of every error raised on purpose
    ├── InputError                exit 2  a user-supplied file or value is invalid
    │   │                                 (carries path, line, field)
    │   ├── TraceReadError        exit 2  a trace file, or a record in it, cannot be read
    │   └── ConfigError           exit 2  a profile, tools config or option is invalid
    ├── MissingExtraError         exit 2  a command needs an extra that is not installed
    ├── ReplayError               exit 2  a replay cannot be set up
    ├── RunFolderBusyError        exit 2  another run holds the run folder (--out)
    ├── DemoError                 exit 1  the demo's traces do not cover every question
    ├── BackendUnavailableError   exit 3  a model backend cannot be started or reached
    ├── WriteBackError            exit 4  results could not be written back to the backend
    │                                     (the results files are written before)
    ├── ExecutorError             exit 3  a cluster's workers failed beyond their retries
    ├── NothingMeasuredError      exit 6  nothing was measured: no usable unit, every model
    │                                     call failed, or every judgment was a protocol error
    └── RunStoppedError           exit 130  SIGTERM/SIGINT stopped a run; what finished is kept
        └── BudgetReachedError    exit 5  --max-calls / --max-cost reached; what finished is kept

Other exit codes are decisions, not errors: ``gate run`` exits 0 promote, 10 manual review,
20 block, 30 not evaluable; ``gate verify``, ``judge check`` and ``paths --fail-on-failure``
exit 1 on a negative result.

Nothing measured (6) is the same for every analysis: ``interventions`` (no usable item, every
replay unit failed), ``judge run`` (no case, every judgment a protocol error), ``paths`` (no
case run checked) and ``audit run`` raise :class:`NothingMeasuredError` after writing what
they have, with the reason; ``gate run`` keeps its decision code 30 (not evaluable) for a
run in which nothing could be evaluated. An unreadable trace line is skipped and named by
every command that reads traces; ``--strict`` makes it a :class:`TraceReadError` (2).

Usage::

    from groundtrace.analyzer.errors import GroundtraceError

    try:
        run()
    except GroundtraceError as exc:
        raise SystemExit(exc.exit_code) from exc
"""

from __future__ import annotations

from groundtrace.collectors.errors import GroundtraceError, InputError, TraceReadError

__all__ = [
    "BackendUnavailableError",
    "BudgetReachedError",
    "ConfigError",
    "DemoError",
    "ExecutorError",
    "GroundtraceError",
    "InputError",
    "MissingExtraError",
    "NothingMeasuredError",
    "ReplayError",
    "RunFolderBusyError",
    "RunStoppedError",
    "TraceReadError",
    "WriteBackError",
]


class ConfigError(InputError):
    """A profile, tools config or CLI option is invalid."""


class MissingExtraError(GroundtraceError):
    """A command needs an optional dependency group (an extra) that is not installed.

    Attributes:
        extra: the extra to install, e.g. ``"analyzer"``.
        module: the top-level module that could not be imported.
    """

    def __init__(self, extra: str, module: str) -> None:
        self.extra = extra
        self.module = module
        super().__init__(
            f"this command needs the {extra!r} extra ({module} is not installed): "
            f"pip install 'groundtrace[{extra}]'"
        )


class ReplayError(GroundtraceError):
    """A replay could not be set up (e.g. the entry point cannot be imported)."""


class RunFolderBusyError(GroundtraceError):
    """Another run holds the run folder: two runs into one folder would repeat each other's
    units and interleave their files, so the second is refused before it starts.

    Attributes:
        folder: the run folder.
        holder: who holds it (pid, host, start time, command), when it wrote that yet.
    """

    def __init__(self, folder: str, holder: str | None) -> None:
        self.folder = folder
        self.holder = holder
        who = holder or "a process that has not written its identity yet"
        super().__init__(
            f"the run folder {folder} is in use by another run ({who}); wait for it to "
            "finish or stop it, or use another folder"
        )


class DemoError(GroundtraceError):
    """The demo ran but its traces do not account for every question."""

    exit_code: int = 1


class BackendUnavailableError(GroundtraceError):
    """A model backend could not be started or reached (missing package, model or server)."""

    exit_code: int = 3


class WriteBackError(GroundtraceError):
    """Results could not be written back (OTLP endpoint or Phoenix refused or unreachable)."""

    exit_code: int = 4


class ExecutorError(GroundtraceError):
    """The executor could not run a unit: its workers died more often than they may restart,
    or the cluster failed. Results that arrived before are kept (journaled)."""

    exit_code: int = 3


class NothingMeasuredError(GroundtraceError):
    """nothing was measured: no usable unit, every model call failed, or every judgment was a
    protocol error; the reason names what failed"""

    exit_code = 6


class RunStoppedError(GroundtraceError):
    """A run was asked to stop (SIGTERM/SIGINT): no new unit started, the in-flight ones
    finished and were kept, so a re-run into the same folder resumes without repeating them.

    Attributes:
        done: units whose result arrived before the stop.
        total: units the run was given.
    """

    exit_code: int = 130

    def __init__(self, done: int, total: int) -> None:
        self.done = done
        self.total = total
        super().__init__(
            f"stopped after {done} of {total} units (in-flight units were finished and "
            "kept; run again into the same folder to resume)"
        )


class BudgetReachedError(RunStoppedError):
    """A run reached ``--max-calls`` or ``--max-cost``: no new unit started, the in-flight
    ones finished and were kept (a re-run with a higher ceiling resumes).

    Attributes:
        reason: which ceiling, and what was spent.
    """

    exit_code: int = 5

    def __init__(self, done: int, total: int, reason: str) -> None:
        self.reason = reason
        super().__init__(done, total)
        self.args = (
            f"{reason}: stopped after {done} of {total} units (in-flight units were finished "
            "and kept; run again into the same folder with a higher ceiling to resume)",
        )
