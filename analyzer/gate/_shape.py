"""The gate in the one analysis shape: ``Config`` → ``plan`` → ``run`` → ``write_report``.

``plan`` reads the config's case file and the two runs' traces into one :class:`GateCase` per
case (what the baseline's and the candidate's traces showed for it), within a
:class:`GatePlan` that also keeps every outcome read, the notes on the traces and the
profile. ``run`` decides the release (:func:`~groundtrace.analyzer.gate.evaluate`), the
judge layer included when the config names a judge; its :class:`GateResult` is what
``write_report``, ``reading``, ``nothing_measured`` and ``verdicts`` take. ``groundtrace gate
run`` and ``groundtrace analyze gate --config FILE`` both go through these names::

    from groundtrace.analyzer import gate, run_analysis

    config = gate.Config(baseline=("runs/v1",), candidate=("runs/v2",), cases="cases.jsonl")
    done = run_analysis(gate.ANALYSIS, config, out="out/gate")  # report.json, summary.md...
    print(done.reading, done.exit_code)  # 0 promote, 10 manual review, 20 block, 30 not evaluable

    # in a notebook or an async service:
    # done = await run_analysis_async(gate.ANALYSIS, config, out="out/gate")
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, overload

import msgspec

from groundtrace.analyzer._analysis import Analysis, Plan
from groundtrace.analyzer._unreadable import refuse_unreadable
from groundtrace.analyzer.cases import Case, read_cases
from groundtrace.analyzer.errors import InputError, TraceReadError
from groundtrace.collectors.readers import ReadReport, read_traces

from ._cases import CaseOutcome
from ._checks import gold_unmatched
from ._config import Config
from ._curate import CurationFinding, scan_case_file
from ._demo import demo_config
from ._judge_layer import JudgeSnapshot, judge_snapshot
from ._path_layer import PathSnapshot, path_snapshot
from ._profile import Profile, load_profile
from ._reading import reading
from ._report import write_report
from ._run import DatasetSnapshot, GateReport, GateResult, evaluate, outcomes_from_traces

if TYPE_CHECKING:
    from groundtrace.analyzer import RunContext
    from groundtrace.analyzer.writeback import Linked

__all__ = [
    "ANALYSIS",
    "Config",
    "GateCase",
    "GatePlan",
    "blocking_findings",
    "nothing_measured",
    "plan",
    "run",
    "verdicts",
]


#: How many blocking curation findings the refusal names.
_NAMED = 5


@dataclass(frozen=True, slots=True)
class GateCase:
    """One case to decide: what each run's trace showed for it (None: no trace).

    Attributes:
        case: the case (its checks, stratum and criticality).
        baseline: the baseline run's outcome of the case.
        candidate: the candidate run's outcome of the case.
    """

    case: Case
    baseline: CaseOutcome | None
    candidate: CaseOutcome | None


@dataclass(frozen=True, slots=True)
class GatePlan(Plan[GateCase]):
    """What :func:`plan` read: a sequence of one :class:`GateCase` per case, in file order.

    Attributes:
        cases: the case file's cases.
        baseline: case id -> the baseline's outcome, for every case id a trace named.
        candidate: case id -> the candidate's outcome, likewise.
        profile: the profile the decision is made under.
        notes: what reading the traces found (skipped, joined or unreadable traces, gold
            answers no trace matched), kept in the report.
        findings: the gold answers no trace matched (``run: case ...``), also in ``notes``.
        unreadable: the trace lines that could not be read (skipped).
    """

    cases: tuple[Case, ...]
    baseline: Mapping[str, CaseOutcome]
    candidate: Mapping[str, CaseOutcome]
    profile: Profile
    notes: tuple[str, ...] = ()
    findings: tuple[str, ...] = ()
    unreadable: tuple[TraceReadError, ...] = field(default=())

    @overload
    def __getitem__(self, index: int) -> GateCase: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[GateCase]: ...
    def __getitem__(self, index: int | slice) -> GateCase | Sequence[GateCase]:
        if isinstance(index, slice):
            return [self._unit(c) for c in self.cases[index]]
        return self._unit(self.cases[index])

    def __len__(self) -> int:
        return len(self.cases)

    def __iter__(self) -> Iterator[GateCase]:
        return map(self._unit, self.cases)

    @property
    def units(self) -> tuple[GateCase, ...]:
        """One :class:`GateCase` per case, built as they are read."""
        return tuple(self)

    def _unit(self, case: Case) -> GateCase:
        return GateCase(case, self.baseline.get(case.case_id), self.candidate.get(case.case_id))


def blocking_findings(cases: str | Path) -> list[CurationFinding]:
    """The blocking curation findings of a case file (PII or secrets left in it); none when
    the file does not exist (reading it then says so)."""
    path = Path(cases)
    return [f for f in scan_case_file(path) if f.blocking] if path.is_file() else []


def plan(config: Config) -> GatePlan:
    """Read the config's cases, profile and both runs' traces: the cases to decide.

    Raises:
        InputError: the case file holds blocking curation findings, cannot be read or is
            invalid (file, line and field named); the profile or the tools config is invalid
            (``ConfigError``); ``strict`` and a trace line cannot be read (``TraceReadError``).
            Nothing is decided yet: the path layer validates in :func:`run`.
    """
    blocking = blocking_findings(config.cases)
    if blocking:
        named = "; ".join(f.message for f in blocking[:_NAMED])
        more = f"; and {len(blocking) - _NAMED} more" if len(blocking) > _NAMED else ""
        raise InputError(
            f"{len(blocking)} blocking curation finding(s): redact the case file first "
            f"(groundtrace gate curate): {named}{more}",
            path=config.cases,
        )
    cases = tuple(read_cases(config.cases))
    profile = load_profile(config.profile)
    notes: list[str] = []
    findings: list[str] = []
    unreadable: list[TraceReadError] = []
    outcomes: dict[str, dict[str, CaseOutcome]] = {}
    for label, paths in (("baseline", config.baseline), ("candidate", config.candidate)):
        read = ReadReport()
        outcomes[label], run_notes = outcomes_from_traces(list(paths), read, cases)
        notes += [f"{label}: {n}" for n in run_notes]
        notes += [f"{label}: read error {e}" for e in read.errors]
        unreadable += read.errors
    # A gold no trace of either run matches is a format problem; one that only this run's
    # trace misses is a retrieval regression (required_context fails), not a finding.
    everywhere = [i for run_outcomes in outcomes.values() for o in run_outcomes.values()
                  for i in o.retrieved or ()]  # fmt: skip
    for label, run_outcomes in outcomes.items():
        for case in cases:
            outcome = run_outcomes.get(case.case_id)
            unmatched = None if outcome is None else gold_unmatched(case, outcome, everywhere)
            if unmatched is not None:
                notes.append(f"{label}: {unmatched}")
                findings.append(f"{label}: {unmatched}")
    if config.strict:
        refuse_unreadable(unreadable)
    return GatePlan(
        cases, outcomes["baseline"], outcomes["candidate"], profile, tuple(notes),
        tuple(findings), tuple(unreadable),
    )  # fmt: skip


async def run(units: Sequence[GateCase], config: Config, context: RunContext) -> GateResult:
    """Decide the release on ``units``: each case's layers 1-2 run on the run's executor.

    ``units`` is normally :func:`plan`'s :class:`GatePlan`: its notes go into the report,
    and the command paths of both runs' traces are validated on the run's executor
    (``groundtrace paths``, with ``config.tools_config``: the gate's path layer). Any other
    sequence of cases is decided under ``config.profile`` with no notes and no path layer
    (it holds no traces). With ``config.judge``, the judge layer scores both runs first.
    The driver runs it (:func:`~groundtrace.analyzer.run_analysis`).

    Raises:
        InputError: no case, an unknown judge, an unreadable validation record or a bad
            tools config (``ConfigError``, file and field named).
    """
    paths: PathSnapshot | None = None
    if isinstance(units, GatePlan):
        paths = await path_snapshot(config.baseline, config.candidate, units.cases,
                                    (units.baseline, units.candidate), config.tools_config,
                                    context.executor)  # fmt: skip
    else:
        units = GatePlan(
            tuple(u.case for u in units),
            {u.case.case_id: u.baseline for u in units if u.baseline is not None},
            {u.case.case_id: u.candidate for u in units if u.candidate is not None},
            load_profile(config.profile),
        )
    judge: JudgeSnapshot | None = None
    if config.judge is not None:
        judge = await judge_snapshot(config.judge, config.judge_records, units.profile,
                                     units.cases, units.baseline, units.candidate)  # fmt: skip
    result = await evaluate(units.cases, units.baseline, units.candidate, units.profile,
                            units.notes, judge, context.executor, paths)  # fmt: skip
    junit = None if config.junit is None else Path(config.junit)
    return replace(result, junit=junit, findings=units.findings, unreadable=units.unreadable)


def nothing_measured(result: GateResult | GateReport) -> str | None:
    """Why the gate measured nothing: no case of the candidate could be evaluated.

    ``groundtrace gate run`` and ``groundtrace analyze gate`` exit 30 (not evaluable) then,
    its decision code (the driver's policy: an analysis's own code wins over 6). None when a
    case was evaluated.
    """
    report = result.report if isinstance(result, GateResult) else result
    counts = report.case_level.counts
    if sum(counts.values()) - counts.get("not_evaluable", 0):
        return None
    why = "; ".join(report.case_level.reasons) or "the case file has no case"
    return f"no case of the candidate could be evaluated ({why})"


def verdicts(result: GateResult, config: Config) -> Linked:
    """The candidate's case decisions linked to the root spans of its traces (write-back)."""
    from groundtrace.analyzer.writeback import root_spans

    from ._verdicts import gate_verdicts

    dataset = msgspec.json.decode(result.dataset_json, type=DatasetSnapshot)
    trace_ids = {k: o.trace_id for k, o in dataset.candidate.items()}
    roots = root_spans(read_traces(list(config.candidate), report=ReadReport()))
    return gate_verdicts(result.report, trace_ids, roots)


#: The gate in the table of analyses (``groundtrace.analyzer.get_analysis("gate")``).
def _exit_code(result: GateResult) -> int:
    """The decision's exit code (0 promote, 10 manual review, 20 block, 30 not evaluable)."""
    return result.report.exit_code


ANALYSIS: Analysis[Config, GateCase, GateResult] = Analysis(
    name="gate",
    title="Release gate: promote / manual review / block / not evaluable, candidate vs baseline",
    config=Config,
    plan=plan,
    run=run,
    write_report=write_report,
    reading=reading,
    nothing_measured=nothing_measured,
    verdicts=verdicts,
    demo=demo_config,
    exit_code=_exit_code,
)
