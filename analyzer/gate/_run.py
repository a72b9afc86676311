"""A full gate run: traces + cases + profile -> decision, with content-hashed snapshots.

Everything the decision depends on is frozen into two snapshots stored with the report:

* the dataset snapshot -- the cases and, per run, what each case's trace showed (answer and
  retrieved items), as canonical JSON;
* the profile snapshot -- the profile file's exact bytes.

``verify`` re-derives the decision from the two snapshots (checking their hashes) with the
current code and compares it with the recorded one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from groundtrace.analyzer.errors import InputError
from groundtrace.collectors import Trace
from groundtrace.collectors.readers import ReadReport, read_traces

from ._bayes import Decision, RiskResult, StratumCounts, compare, most_severe
from ._cases import Case, CaseOutcome, ExpectedSource, RetrievedItem
from ._checks import deterministic_checks
from ._decision import CaseDecision, RunDecision, decide_case, decide_run
from ._guardrails import run_guardrails
from ._judge_layer import JudgeLayer, judge_checks
from ._match import SynonymMatcher
from ._profile import Profile, _parse

__all__ = [
    "EXIT_CODES",
    "GateReport",
    "canonical_json",
    "code_version",
    "evaluate",
    "outcomes_from_traces",
    "verify_report",
]

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


def canonical_json(value: Any) -> str:
    """Sorted-key, compact JSON: the form that is hashed."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def outcomes_from_traces(
    paths: Sequence[str], report: ReadReport | None = None
) -> tuple[dict[str, CaseOutcome], list[str]]:
    """Map case id -> outcome of its trace; notes list traces skipped and why."""
    outcomes: dict[str, CaseOutcome] = {}
    notes: list[str] = []
    trace: Trace
    for trace in read_traces(paths, report=report):
        case_id = trace.request.case_id
        if case_id is None:
            notes.append(f"trace {trace.trace_id}: no case id, not joined")
            continue
        if trace.replay is not None:
            continue  # counterfactual replays are not runs of the app
        if case_id in outcomes:
            notes.append(
                f"case {case_id}: several traces, the first ({outcomes[case_id].trace_id}) is used"
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
        )
    return outcomes, notes


def _outcome_to_obj(o: CaseOutcome) -> dict[str, Any]:
    return asdict(o)


def _outcome_from_obj(d: dict[str, Any]) -> CaseOutcome:
    retrieved = d.get("retrieved")
    return CaseOutcome(
        case_id=d["case_id"],
        answer=d.get("answer"),
        retrieved=None if retrieved is None else tuple(RetrievedItem(**r) for r in retrieved),
        trace_id=d.get("trace_id"),
    )


def _case_from_obj(d: dict[str, Any]) -> Case:
    d = dict(d)
    d["expected_sources"] = tuple(ExpectedSource(**s) for s in d.get("expected_sources", ()))
    for key in ("expected_terms", "required_context", "forbidden_phrases"):
        d[key] = tuple(d.get(key, ()))
    return Case(**d)


@dataclass(frozen=True, slots=True)
class GateReport:
    """Everything a gate run decided, with the hashes that make it re-derivable."""

    decision: Decision
    case_level: RunDecision
    baseline_level: RunDecision
    statistics: RiskResult | None
    statistics_note: str
    cases: tuple[CaseDecision, ...]
    baseline_cases: tuple[CaseDecision, ...]
    profile: Profile
    dataset_sha256: str
    dataset_json: str
    notes: tuple[str, ...]
    code_version: str

    @property
    def exit_code(self) -> int:
        """The CLI exit code of the decision."""
        return EXIT_CODES[self.decision]

    def to_dict(self) -> dict[str, Any]:
        """The JSON report."""
        return {
            "decision": self.decision.value,
            "exit_code": self.exit_code,
            "case_level": {
                "decision": self.case_level.decision.value,
                "reasons": list(self.case_level.reasons),
                "counts": self.case_level.counts,
                "evaluable_share": self.case_level.evaluable_share,
            },
            "baseline_case_level": {
                "decision": self.baseline_level.decision.value,
                "counts": self.baseline_level.counts,
            },
            "statistics": None if self.statistics is None else self.statistics.to_dict(),
            "statistics_note": self.statistics_note,
            "cases": [c.to_dict() for c in self.cases],
            "snapshots": {
                "dataset_sha256": self.dataset_sha256,
                "profile_sha256": self.profile.sha256,
                "profile_name": self.profile.name,
                "profile_version": self.profile.version,
                "code_version": self.code_version,
            },
            "notes": list(self.notes),
        }


def _decide_cases(
    cases: Iterable[Case],
    outcomes: Mapping[str, CaseOutcome],
    profile: Profile,
    judge: JudgeLayer | None = None,
    verdicts: Mapping[str, Any] | None = None,
) -> list[CaseDecision]:
    synonyms = profile.data.get("synonyms", {}).get("groups", [])
    matcher = SynonymMatcher(synonyms)
    actions = profile.data.get("guardrails", {}).get("actions", {})
    f1_threshold = float(profile.data.get("checks", {}).get("f1_threshold", 0.8))
    decided: list[CaseDecision] = []
    for case in cases:
        outcome = outcomes.get(case.case_id, CaseOutcome(case.case_id, None, None))
        if outcome.answer is None and outcome.retrieved is None:
            results = []  # no trace: nothing produced a result
        else:
            results = deterministic_checks(case, outcome, matcher, f1_threshold=f1_threshold)
            results += run_guardrails(case, outcome, actions=actions)
            if judge is not None:
                results += judge_checks((verdicts or {}).get(case.case_id), judge)
        decided.append(decide_case(case.case_id, case.stratum, results))
    return decided


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
    cases: Sequence[Case],
    baseline: Mapping[str, CaseOutcome],
    candidate: Mapping[str, CaseOutcome],
    profile: Profile,
    judge: Mapping[str, Any] | None = None,
) -> tuple[
    Decision,
    RunDecision,
    RunDecision,
    RiskResult | None,
    str,
    list[CaseDecision],
    list[CaseDecision],
]:
    layer = None if judge is None else JudgeLayer.from_dict(judge["layer"])
    verdicts = judge or {}
    cand = _decide_cases(cases, candidate, profile, layer, verdicts.get("candidate"))
    base = _decide_cases(cases, baseline, profile, layer, verdicts.get("baseline"))
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
    return decision, case_level, base_level, stats, note, cand, base


def evaluate(
    cases: Sequence[Case],
    baseline: Mapping[str, CaseOutcome],
    candidate: Mapping[str, CaseOutcome],
    profile: Profile,
    notes: Sequence[str] = (),
    judge: Mapping[str, Any] | None = None,
) -> GateReport:
    """Decide a release from the two runs' outcomes; the report carries the snapshot.

    ``judge`` holds the judge layer (``{"layer": JudgeLayer.to_dict(), "baseline": verdicts,
    "candidate": verdicts}``); it is stored in the snapshot like the outcomes.
    """
    if not cases:
        raise InputError("the case file has no cases")
    dataset = {
        "cases": [asdict(c) for c in cases],
        "baseline": {k: _outcome_to_obj(v) for k, v in sorted(baseline.items())},
        "candidate": {k: _outcome_to_obj(v) for k, v in sorted(candidate.items())},
        "judge": judge,
    }
    dataset_json = canonical_json(dataset)
    decision, case_level, base_level, stats, note, cand, base = _derive(
        cases, baseline, candidate, profile, judge
    )
    return GateReport(
        decision=decision,
        case_level=case_level,
        baseline_level=base_level,
        statistics=stats,
        statistics_note=note,
        cases=tuple(cand),
        baseline_cases=tuple(base),
        profile=profile,
        dataset_sha256=_sha256(dataset_json),
        dataset_json=dataset_json,
        notes=tuple(notes),
        code_version=code_version(),
    )


def verify_report(report_path: Path) -> tuple[bool, str]:
    """Re-derive the decision of a stored report from its snapshots.

    Returns:
        (identical, explanation).

    Raises:
        InputError: the report or a snapshot is missing, unreadable or fails its hash.
    """
    try:
        report = json.loads(report_path.read_text(encoding="utf-8"))
        snaps = report["snapshots"]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise InputError(f"not a gate report: {exc}", path=str(report_path)) from None
    folder = report_path.parent / "snapshots"
    dataset_path = folder / f"dataset-{snaps['dataset_sha256']}.json"
    profile_path = folder / f"profile-{snaps['profile_sha256']}.toml"
    try:
        dataset_text = dataset_path.read_text(encoding="utf-8")
        profile_text = profile_path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"snapshot missing: {exc.strerror}", path=str(exc.filename)) from None
    if _sha256(dataset_text) != snaps["dataset_sha256"]:
        raise InputError("dataset snapshot does not match its hash", path=str(dataset_path))
    profile = _parse(profile_text, str(profile_path))
    if profile.sha256 != snaps["profile_sha256"]:
        raise InputError("profile snapshot does not match its hash", path=str(profile_path))
    data = json.loads(dataset_text)
    cases = [_case_from_obj(c) for c in data["cases"]]
    baseline = {k: _outcome_from_obj(v) for k, v in data["baseline"].items()}
    candidate = {k: _outcome_from_obj(v) for k, v in data["candidate"].items()}
    decision, _, _, stats, _, cand, _ = _derive(
        cases, baseline, candidate, profile, data.get("judge")
    )
    recorded_cases = {c["case_id"]: c["decision"] for c in report.get("cases", [])}
    derived_cases = {c.case_id: c.decision.value for c in cand}
    problems = []
    if decision.value != report.get("decision"):
        problems.append(f"decision {decision.value} != recorded {report.get('decision')}")
    if derived_cases != recorded_cases:
        changed = sorted(k for k in derived_cases if derived_cases[k] != recorded_cases.get(k))
        problems.append(f"case decisions differ: {', '.join(changed[:10])}")
    recorded_rho = (report.get("statistics") or {}).get("rho")
    if stats is not None and recorded_rho is not None and stats.rho != recorded_rho:
        problems.append(f"rho {stats.rho} != recorded {recorded_rho}")
    if snaps.get("code_version") != code_version():
        note = f" (recorded with code {snaps.get('code_version')}, verified with {code_version()})"
    else:
        note = ""
    if problems:
        return False, "; ".join(problems) + note
    return True, f"decision {decision.value} re-derived from the snapshots{note}"
