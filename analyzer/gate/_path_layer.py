"""The command-path layer of the gate: each case's ``groundtrace paths`` verdict as a check.

A case that declares a command path (``required_reads``, ``required_calls``,
``required_values``, ``allowed_commands``, ``exclusive_tools``, ``turns``; or an answer
citing what it read) gets its path status from :func:`groundtrace.analyzer.paths
.validate_traces_async` on each run's traces. A path that fails (``missing_command``,
``param_error``, ``tool_error``, ``fabricated_quote``, ...) is a failed check
``paths.command_path``: the case goes to manual review, or blocks when the case is critical
or the profile puts path failures in the critical set::

    [paths]
    critical = true     # a failed command path always blocks (default false: review)

A run without tool calls whose case requires no path (a RAG app) is ``not_applicable``, and a
case with ``require_path = false`` is ``not_required``: neither gives a check. The verdicts are
data: they are stored in the dataset snapshot, so ``gate verify`` re-derives the decision
from them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from groundtrace.analyzer.cases import Case
from groundtrace.analyzer.executor import Executor
from groundtrace.analyzer.paths import (
    CaseVerdict,
    PathStatus,
    load_tools_config,
    validate_traces_async,
)
from groundtrace.analyzer.stats import StatsSettings
from groundtrace.collectors.readers import ReadReport, read_traces

from ._cases import CaseOutcome, CheckResult, CheckStatus

__all__ = ["PathSnapshot", "PathVerdict", "path_checks", "path_snapshot"]

_LAYER = "paths"
_CHECK = "command_path"
#: Statuses that check nothing: no check result.
_UNCHECKED = frozenset({PathStatus.NOT_REQUIRED.value, PathStatus.NOT_APPLICABLE.value})
#: The metrics of the paths report are not used by the gate: one bootstrap resample.
_VERDICTS_ONLY = StatsSettings(n_resamples=1)


class PathVerdict(msgspec.Struct, frozen=True, omit_defaults=True):
    """One case's path verdict as the gate stores it.

    Attributes:
        status: the :class:`~groundtrace.analyzer.paths.PathStatus` value.
        issues: the message of every issue found (empty on a pass).
        trace_id: the trace validated.
    """

    status: str
    issues: tuple[str, ...] = ()
    trace_id: str | None = None


class PathSnapshot(msgspec.Struct, frozen=True):
    """The path verdicts of both runs (stored in the dataset snapshot).

    Attributes:
        tools_config: the ``--tools-config`` file the verdicts were made with, if any.
        baseline: case id -> the baseline's verdict, for every case with a trace.
        candidate: case id -> the candidate's verdict, likewise.
    """

    tools_config: str | None
    baseline: dict[str, PathVerdict]
    candidate: dict[str, PathVerdict]


def _stored(verdict: CaseVerdict) -> PathVerdict:
    issues = tuple(str(i.get("message", i.get("status", ""))) for i in verdict.issues)
    return PathVerdict(verdict.status.value, issues, verdict.trace_id)


async def _verdicts(
    paths: Sequence[str],
    cases: Sequence[Case],
    outcomes: Mapping[str, CaseOutcome],
    tools_config: str | None,
    executor: Executor | None,
) -> dict[str, PathVerdict]:
    tools = None if tools_config is None else load_tools_config(tools_config)
    # The traces were read (and their unreadable lines noted) for the outcomes already. The
    # gate keeps the verdicts only: the report's bootstrap intervals are drawn once, not 5000
    # times (they were 90% of the validation's time on 1000 agent traces).
    traces = read_traces(list(paths), report=ReadReport())
    report = await validate_traces_async(
        traces, cases, tools, settings=_VERDICTS_ONLY, executor=executor
    )
    out: dict[str, PathVerdict] = {}
    for verdict in report.verdicts:
        outcome = outcomes.get(verdict.case_id)
        used = None if outcome is None else outcome.trace_id
        if verdict.case_id not in out or verdict.trace_id == used:
            # several runs of a case: the one the gate's outcome was read from
            out[verdict.case_id] = _stored(verdict)
    return {k: v for k, v in out.items() if v.status not in _UNCHECKED}


async def path_snapshot(
    baseline: Sequence[str],
    candidate: Sequence[str],
    cases: Sequence[Case],
    outcomes: tuple[Mapping[str, CaseOutcome], Mapping[str, CaseOutcome]],
    tools_config: str | None = None,
    executor: Executor | None = None,
) -> PathSnapshot | None:
    """Validate the command paths of both runs' traces against ``cases``, each (case,
    trace) a unit of ``executor`` (default: local, one at a time).

    ``outcomes`` are the two runs' outcomes (baseline, candidate): of several traces of one
    case, the verdict of the trace the outcome was read from is kept. Only the verdicts
    that check something are kept (``not_applicable`` and ``not_required`` give no check);
    None when neither run has one (a RAG app without tools: the layer does not apply).

    Raises:
        ConfigError: a bad tools config (file and field named).
    """
    base = await _verdicts(baseline, cases, outcomes[0], tools_config, executor)
    cand = await _verdicts(candidate, cases, outcomes[1], tools_config, executor)
    return PathSnapshot(tools_config, base, cand) if base or cand else None


def path_checks(verdict: PathVerdict | None, *, critical: bool) -> list[CheckResult]:
    """The check result of one case's path verdict (none when the path checks nothing)."""
    if verdict is None or verdict.status in _UNCHECKED:
        return []
    if verdict.status == PathStatus.PASS.value:
        return [CheckResult(_LAYER, _CHECK, CheckStatus.PASS, critical=critical)]
    return [
        CheckResult(
            _LAYER,
            _CHECK,
            CheckStatus.FAIL,
            critical=critical,
            detail=f"path status {verdict.status}"
            + ("" if verdict.trace_id is None else f" (trace {verdict.trace_id})"),
            evidence=verdict.issues,
        )
    ]
