"""A full gate run: traces + cases + profile -> decision, with content-hashed snapshots.

Everything the decision depends on is frozen into two snapshots stored with the report:

* the dataset snapshot -- a :class:`DatasetSnapshot`: the cases and, per run, what each
  case's trace showed (answer and retrieved items), as sorted-key JSON;
* the profile snapshot -- the profile file's exact bytes.

:func:`evaluate` returns a :class:`GateResult`: the :class:`GateReport` record (``report.json``)
and the two snapshots. ``verify`` re-derives the decision from the two snapshots (checking
their hashes) with the current code and compares it with the recorded report.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import msgspec

from groundtrace.analyzer._foreign import analysable, case_by_question, question_index
from groundtrace.analyzer._results import Result, read
from groundtrace.analyzer._wording import some
from groundtrace.analyzer.cases import Case
from groundtrace.analyzer.errors import InputError, TraceReadError
from groundtrace.analyzer.executor import Executor, LocalExecutor
from groundtrace.collectors import Trace
from groundtrace.collectors.readers import ReadReport, read_traces

from ._bayes import Decision, RiskResult, StratumCounts, compare, most_severe
from ._cases import CaseOutcome, CheckResult, CheckStatus, RetrievedItem
from ._changes import FailureChanges, compare_cases
from ._checks import deterministic_checks
from ._decision import CaseDecision, RunDecision, decide_case, decide_run
from ._guardrails import run_guardrails
from ._judge_layer import JudgeSnapshot, JudgeVerdict, judge_checks
from ._match import SynonymMatcher
from ._path_layer import PathSnapshot, PathVerdict, path_checks
from ._profile import Profile, _parse

__all__ = [
    "EXIT_CODES",
    "DatasetSnapshot",
    "GateReport",
    "GateResult",
    "Snapshots",
    "code_version",
    "evaluate",
    "outcomes_from_traces",
    "verify_report",
]

#: The stratum whose cases are critical (SPEC 4.5): any failed check of one blocks.
CRITICAL_STRATUM = "critical"

#: Exit codes of ``groundtrace gate run`` per decision (documented in the CLI help).
EXIT_CODES: Mapping[Decision, int] = {
    Decision.PROMOTE: 0,
    Decision.MANUAL_REVIEW: 10,
    Decision.BLOCK: 20,
    Decision.NOT_EVALUABLE: 30,
}


def code_version() -> str:
    """Version of the installed groundtrace distribution."""
    try:
        return version("groundtrace")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0+unknown"


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def outcomes_from_traces(
    paths: Sequence[str], report: ReadReport | None = None, cases: Sequence[Case] = ()
) -> tuple[dict[str, CaseOutcome], list[str]]:
    """Map case id -> outcome of its trace; notes list traces skipped and why.

    A trace of another instrumentation is read with its answer from its last LLM call when
    it records none; one that records no case id is joined to the case of ``cases`` whose
    question is its question (noted), if exactly one.
    """
    outcomes: dict[str, CaseOutcome] = {}
    notes: list[str] = []
    by_question = question_index(cases)
    trace: Trace
    for trace in map(analysable, read_traces(paths, report=report)):
        case_id = trace.request.case_id
        if case_id is None:
            joined = None if trace.replay is not None else case_by_question(trace, by_question)
            if joined is None:
                notes.append(f"trace {trace.trace_id}: no case id, not joined")
                continue
            case_id = joined.case_id
            notes.append(f"trace {trace.trace_id}: no case id, joined to {case_id} by question")
        if trace.replay is not None:
            continue  # counterfactual replays are not runs of the app
        if case_id in outcomes:
            notes.append(
                f"case {case_id}: several traces, the first ({outcomes[case_id].trace_id}) is used"
            )
            continue
        incomplete = trace.incomplete
        if incomplete is not None:  # lost evidence is never a verdict
            notes.append(f"case {case_id}: incomplete trace {trace.trace_id}: {incomplete.message}")
            outcomes[case_id] = CaseOutcome(
                case_id, None, None, trace.trace_id, incomplete=incomplete.message
            )
            continue
        retrieve_steps = {s.span_id for s in trace.steps if s.action in {"RETRIEVE", "RERANK"}}
        retrieved: dict[str, RetrievedItem] = {}
        for ev in trace.evidence:
            key = ev.id or ev.content_hash or f"{ev.step_span_id}:{ev.rank}"
            retrieved.setdefault(
                key,
                RetrievedItem(
                    id=key,
                    title=ev.title or "",
                    source=ev.source or "",
                    version=ev.version,
                    content=ev.content,
                ),
            )
        outcomes[case_id] = CaseOutcome(
            case_id=case_id,
            answer=trace.answer,
            retrieved=tuple(retrieved.values()) if retrieve_steps or retrieved else None,
            trace_id=trace.trace_id,
            tool_results=tuple(c.result_content for c in trace.tool_calls if c.result_content),
        )
    return outcomes, notes


class DatasetSnapshot(msgspec.Struct, frozen=True):
    """Everything a decision depends on besides the profile (hashed; ``snapshots/``)."""

    cases: tuple[Case, ...]
    baseline: dict[str, CaseOutcome]
    candidate: dict[str, CaseOutcome]
    judge: JudgeSnapshot | None = None
    paths: PathSnapshot | None = None


class Snapshots(msgspec.Struct, frozen=True):
    """Where a report's decision can be re-derived from (see :func:`verify_report`)."""

    dataset_sha256: str
    profile_sha256: str
    profile_name: str
    profile_version: str
    code_version: str


class GateReport(Result, frozen=True, kw_only=True):
    """``report.json``: everything a gate run decided, with the hashes of its snapshots.

    ``baseline_case_level`` is the baseline run's aggregate, ``case_level`` the candidate's.
    ``changes`` splits the candidate's failing cases into new ones and ones the baseline
    already had, and lists the fixed ones (``None`` in reports of format 1.1).
    """

    decision: Decision
    exit_code: int
    case_level: RunDecision
    baseline_case_level: RunDecision
    statistics: RiskResult | None
    statistics_note: str
    cases: tuple[CaseDecision, ...]
    snapshots: Snapshots
    notes: tuple[str, ...] = ()
    changes: FailureChanges | None = None


@dataclass(frozen=True, slots=True)
class GateResult:
    """A gate run: its report and the two snapshots it was derived from.

    Attributes:
        report: the record written to ``report.json``.
        dataset_json: the dataset snapshot as written (its SHA-256 is in the report).
        profile: the profile (its exact text is the profile snapshot).
        junit: where :func:`~groundtrace.analyzer.gate.write_report` also writes the JUnit
            XML of the case decisions (the config's ``junit``; None: not written).
        findings: the gold answers no trace matched (also in the report's notes).
        unreadable: the trace lines that could not be read, skipped (noted in the report).
    """

    report: GateReport
    dataset_json: str
    profile: Profile
    junit: Path | None = None
    findings: tuple[str, ...] = ()
    unreadable: tuple[TraceReadError, ...] = ()


@dataclass(frozen=True, slots=True)
class _CaseChecks:
    """Layers 1-2 of one case (deterministic checks, guardrails): an executor's unit."""

    matcher: SynonymMatcher
    actions: Mapping[str, str]
    f1_threshold: float

    @classmethod
    def of(cls, profile: Profile) -> _CaseChecks:
        """The layers 1-2 settings of ``profile``."""
        settings = profile.settings
        return cls(
            SynonymMatcher(settings.synonyms.groups),
            settings.guardrails.actions,
            settings.checks.f1_threshold,
        )

    def check(self, unit: tuple[Case, CaseOutcome]) -> list[CheckResult]:
        """The results of layers 1-2 on one (case, outcome)."""
        case, outcome = unit
        results = deterministic_checks(case, outcome, self.matcher, f1_threshold=self.f1_threshold)
        return results + run_guardrails(case, outcome, actions=self.actions)

    async def __call__(self, unit: tuple[Case, CaseOutcome]) -> list[CheckResult]:
        return self.check(unit)


#: Per run (candidate, baseline): case id -> the results of layers 1-2 of its traced case.
_Checked = tuple[dict[str, list[CheckResult]], dict[str, list[CheckResult]]]


def _traced(dataset: DatasetSnapshot) -> list[tuple[int, Case, CaseOutcome]]:
    """The (run, case, outcome) whose layers 1-2 run: every case with an answer or retrieved
    items in its run's trace (run 0 the candidate, 1 the baseline)."""
    return [
        (run, case, outcome)
        for run, outcomes in enumerate((dataset.candidate, dataset.baseline))
        for case in dataset.cases
        if (outcome := outcomes.get(case.case_id)) is not None
        and not (outcome.answer is None and outcome.retrieved is None)
    ]


def _sorted(traced: Sequence[tuple[int, Case, CaseOutcome]],
            results: Sequence[list[CheckResult]]) -> _Checked:  # fmt: skip
    checked: _Checked = ({}, {})
    for (run, case, _), found in zip(traced, results, strict=True):
        checked[run].setdefault(case.case_id, found)
    return checked


async def _check(dataset: DatasetSnapshot, profile: Profile, executor: Executor) -> _Checked:
    """Layers 1-2 of both runs' traced cases, each a unit of ``executor``."""
    traced = _traced(dataset)
    units = [(case, outcome) for _, case, outcome in traced]
    return _sorted(traced, await executor.map(_CaseChecks.of(profile), units))


def _check_here(dataset: DatasetSnapshot, profile: Profile) -> _Checked:
    """Layers 1-2 of both runs' traced cases, in this thread (``verify``)."""
    traced = _traced(dataset)
    checks = _CaseChecks.of(profile)
    return _sorted(traced, [checks.check((case, outcome)) for _, case, outcome in traced])


def _decide_cases(
    cases: Iterable[Case],
    outcomes: Mapping[str, CaseOutcome],
    profile: Profile,
    checked: Mapping[str, list[CheckResult]],
    judge: JudgeSnapshot | None = None,
    verdicts: Mapping[str, JudgeVerdict] | None = None,
    paths: Mapping[str, PathVerdict] | None = None,
) -> list[CaseDecision]:
    decided: list[CaseDecision] = []
    for case in cases:
        critical = case.critical or case.stratum == CRITICAL_STRATUM
        outcome = outcomes.get(case.case_id)
        if outcome is not None and outcome.incomplete is not None:  # no layer checks it
            decided.append(decide_case(case.case_id, case.stratum, [_incomplete(outcome)]))
            continue
        results = checked.get(case.case_id)
        if results is None:
            results = []  # no trace: nothing produced a result
        elif judge is not None:
            results = results + judge_checks((verdicts or {}).get(case.case_id), judge.layer)
        if paths is not None:
            results = results + path_checks(
                paths.get(case.case_id), critical=profile.paths_critical
            )
        decided.append(decide_case(case.case_id, case.stratum, results, critical=critical))
    return decided


def _incomplete(outcome: CaseOutcome) -> CheckResult:
    """The result of a case whose trace is incomplete: nothing checked (not evaluable)."""
    detail = f"incomplete trace {outcome.trace_id}: {outcome.incomplete}"
    return CheckResult("trace", "complete", CheckStatus.MISSING, detail=detail)


def _counts(decisions: Sequence[CaseDecision]) -> dict[str, StratumCounts]:
    totals: dict[str, list[int]] = {}
    for d in decisions:
        if d.decision is Decision.NOT_EVALUABLE:
            continue
        n_k = totals.setdefault(d.stratum, [0, 0])
        n_k[0] += 1
        n_k[1] += int(d.passed)
    return {s: StratumCounts(n, k) for s, (n, k) in totals.items()}


def _derive(
    dataset: DatasetSnapshot,
    profile: Profile,
    snapshots: Snapshots,
    notes: Sequence[str],
    checked: _Checked,
) -> GateReport:
    judge, paths = dataset.judge, dataset.paths
    cand = _decide_cases(dataset.cases, dataset.candidate, profile, checked[0], judge,
                         None if judge is None else judge.candidate,
                         None if paths is None else paths.candidate)  # fmt: skip
    base = _decide_cases(dataset.cases, dataset.baseline, profile, checked[1], judge,
                         None if judge is None else judge.baseline,
                         None if paths is None else paths.baseline)  # fmt: skip
    case_level = decide_run(cand, profile.min_evaluable)
    base_level = decide_run(base, profile.min_evaluable)
    counts_b, counts_a = _counts(cand), _counts(base)
    strata = sorted(set(counts_a) & set(counts_b))
    stats: RiskResult | None = None
    note = ""
    if strata:
        stats = compare(
            {s: counts_a[s] for s in strata}, {s: counts_b[s] for s in strata}, profile.bayes
        )
        dropped = sorted((set(counts_a) | set(counts_b)) - set(strata))
        if dropped:
            note = f"strata without evaluable cases in both runs left out: {', '.join(dropped)}"
        decision = most_severe([case_level.decision, stats.decision])
    else:
        note = "no stratum has evaluable cases in both runs: statistical comparison not possible"
        decision = most_severe([case_level.decision, Decision.NOT_EVALUABLE])
    return GateReport(
        decision=decision,
        exit_code=EXIT_CODES[decision],
        case_level=case_level,
        baseline_case_level=base_level,
        statistics=stats,
        statistics_note=note,
        cases=tuple(cand),
        snapshots=snapshots,
        notes=tuple(notes),
        changes=compare_cases(base, cand),
    )


async def evaluate(
    cases: Sequence[Case],
    baseline: Mapping[str, CaseOutcome],
    candidate: Mapping[str, CaseOutcome],
    profile: Profile,
    notes: Sequence[str] = (),
    judge: JudgeSnapshot | None = None,
    executor: Executor | None = None,
    paths: PathSnapshot | None = None,
) -> GateResult:
    """Decide a release from the two runs' outcomes; the run carries the snapshots.

    ``judge`` holds the judge layer and its verdicts on both runs, ``paths`` the command-path
    verdicts of both runs (a failed declared path is a failed check ``paths.command_path``);
    both are stored in the dataset snapshot like the outcomes. Layers 1-2 of each traced case
    (deterministic checks and guardrails) are a unit of ``executor`` (default: local, one at
    a time); the report is the same whichever runs them.
    """
    if not cases:
        raise InputError("the case file has no cases")
    dataset = DatasetSnapshot(
        tuple(cases),
        dict(sorted(baseline.items())),
        dict(sorted(candidate.items())),
        judge,
        paths,
    )
    dataset_json = msgspec.json.encode(dataset, order="sorted").decode()
    snapshots = Snapshots(
        _sha256(dataset_json), profile.sha256, profile.name, profile.version, code_version()
    )
    checked = await _check(dataset, profile, executor or LocalExecutor(1))
    return GateResult(_derive(dataset, profile, snapshots, notes, checked), dataset_json, profile)


def verify_report(report_path: Path) -> tuple[bool, str]:
    """Re-derive the decision of a stored report from its snapshots.

    Returns:
        (identical, explanation).

    Raises:
        InputError: the report or a snapshot is missing, unreadable or fails its hash.
    """
    recorded = read(report_path, GateReport)
    snaps = recorded.snapshots
    folder = report_path.parent / "snapshots"
    dataset_path = folder / f"dataset-{snaps.dataset_sha256}.json"
    profile_path = folder / f"profile-{snaps.profile_sha256}.toml"
    try:
        dataset_text = dataset_path.read_text(encoding="utf-8")
        profile_bytes = profile_path.read_bytes()
    except OSError as exc:
        raise InputError(f"snapshot missing: {exc.strerror}", path=str(exc.filename)) from None
    if _sha256(dataset_text) != snaps.dataset_sha256:
        raise InputError("dataset snapshot does not match its hash", path=str(dataset_path))
    profile = _parse(profile_bytes, str(profile_path))
    if profile.sha256 != snaps.profile_sha256:
        raise InputError("profile snapshot does not match its hash", path=str(profile_path))
    try:
        dataset = msgspec.json.decode(dataset_text, type=DatasetSnapshot)
    except msgspec.ValidationError as exc:
        raise InputError(f"not a dataset snapshot: {exc}", path=str(dataset_path)) from None
    derived = _derive(dataset, profile, snaps, recorded.notes, _check_here(dataset, profile))
    recorded_cases = {c.case_id: c.decision for c in recorded.cases}
    derived_cases = {c.case_id: c.decision for c in derived.cases}
    problems = []
    if derived.decision != recorded.decision:
        problems.append(f"decision {derived.decision.value} != recorded {recorded.decision.value}")
    if derived_cases != recorded_cases:
        changed = sorted(k for k in derived_cases if derived_cases[k] != recorded_cases.get(k))
        problems.append(f"{len(changed)} case decision(s) differ: {some(changed)}")
    rho, recorded_rho = (None if r.statistics is None else r.statistics.rho
                         for r in (derived, recorded))  # fmt: skip
    if rho is not None and recorded_rho is not None and rho != recorded_rho:
        problems.append(f"rho {rho} != recorded {recorded_rho}")
    if snaps.code_version != code_version():
        note = f" (recorded with code {snaps.code_version}, verified with {code_version()})"
    else:
        note = ""
    if problems:
        return False, "; ".join(problems) + note
    return True, f"decision {derived.decision.value} re-derived from the snapshots{note}"
