"""The judge's and the interventions' public surfaces: the shape, the records a user reads and
the extension points; every earlier public name still imports for one release.

Each name that was public before 0.2.0 and is not any more resolves to the same object, with
a DeprecationWarning that names where it is now and the release that removes it.
"""

from __future__ import annotations

import warnings
from types import ModuleType

import pytest

import groundtrace.analyzer.interventions as iv
import groundtrace.analyzer.judge as jd

SHAPE = {"ANALYSIS", "Config", "plan", "run", "write_report", "reading", "nothing_measured"}

#: ``groundtrace.analyzer.judge.__all__`` of 0.1 (77 names) but ``JudgeResult``: it named the
#: per-case record (now ``Judgment``) and names the analysis's result now.
JUDGE_BEFORE = """
ANALYSIS API_KEY_ENV CACHE_FILE DEFAULT_CONCURRENCY DEFAULT_RUBRIC DEFAULT_THRESHOLD
GATE_ELIGIBLE LEXICAL_VERSION OUTPUT_SCHEMA RECORD_SCHEMA REVIEW_ONLY SCORE_MAX SCORE_MIN
SWEEP_THRESHOLDS VALIDATION_SCHEMA AcceptanceProfile BootstrapSettings Config ContextSource
Criterion GoldItem GoldSet GoldSummary Grade InterAnnotator Judge JudgeCase JudgePlan
JudgeReport JudgeRunSummary JudgeValidation LLMJudge LexicalJudge Metric MetricSummary
NotJudgeable ProtocolError ProtocolErrorCounts ProtocolErrorKind RecordCheck RecordStatistics
RowFilter Rubric Statistic SweepPoint Unjudgeable ValidationRecord acceptance auroc_batch
bootstrap_statistic build_judge build_record cases_from_traces check_record cohen_kappa_batch
failure_errors fingerprint fingerprint_digest grade_set judge_all load_cases load_gold
load_record load_rubric mcc_batch meta_evaluate nothing_measured parse_judge_reply plan
raw_agreement_batch reading render_validation_markdown run summarize_results verdicts
write_report
""".split()

#: ``groundtrace.analyzer.interventions.__all__`` of 0.1 (53 names).
INTERVENTIONS_BEFORE = """
ALL_OPERATORS ANALYSIS DELTA_AXES DIVERGENCE MAX_SHAPLEY_PLAYERS REPORTED_AXES AxisEffect
AxisSettings CallCounts Config CounterfactualAnswer DivergenceParts Estimate Hardness
HardnessLevel InputCounts InterventionStatistics InterventionSummary ItemPlan Items
JointResult OperatorResult OriginalAnswer PlanSettings PoolCandidate ReplaySettings Role
RoleThresholds RoleVerdict RolesResult RunConfig RunResult RunSeeds SensitivityRow ShapleyItem
ShapleyResult Shift TargetChoice TargetRule UnitError UnitRow estimate_requests estimate_run
nothing_measured operator_table_md parse_operators plan reading run run_interventions
run_interventions_async verdicts write_report
""".split()

#: Renamed: old name -> the public name that replaces it.
RENAMED = {
    (jd, "JudgeReport"): "JudgeResult",
    (iv, "RunResult"): "InterventionsResult",
    (iv, "UnitRow"): "ReplayRow",
}


@pytest.mark.parametrize(
    ("package", "limit", "before"),
    [(jd, 24, JUDGE_BEFORE), (iv, 20, INTERVENTIONS_BEFORE)],
    ids=["judge", "interventions"],
)
def test_the_surface_is_the_shape_records_and_extension_points(
    package: ModuleType, limit: int, before: list[str]
) -> None:
    assert len(package.__all__) <= limit < len(before)
    assert SHAPE | {"verdicts"} <= set(package.__all__)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        for name in package.__all__:
            getattr(package, name)


@pytest.mark.parametrize(
    ("package", "name"),
    [(jd, n) for n in JUDGE_BEFORE if n not in jd.__all__]
    + [(iv, n) for n in INTERVENTIONS_BEFORE if n not in iv.__all__],
    ids=lambda value: value if isinstance(value, str) else value.__name__.rsplit(".", 1)[1],
)
def test_an_earlier_public_name_imports_for_a_release_with_a_warning(
    package: ModuleType, name: str
) -> None:
    with pytest.warns(DeprecationWarning) as caught:
        found = getattr(package, name)
    message = str(caught[0].message)
    assert message.startswith(f"{package.__name__}.{name} is deprecated since groundtrace 0.2.0")
    assert "and is removed in 0.3.0: use groundtrace.analyzer." in message
    home, _, attr = message.rpartition(": use ")[2].rpartition(".")
    module = __import__(home, fromlist=[attr])
    assert found is getattr(module, attr)
    renamed = RENAMED.get((package, name))
    if renamed is not None:
        assert found is getattr(package, renamed)


def test_the_judge_result_is_the_analysis_result_and_a_judgment_one_case() -> None:
    assert jd.ANALYSIS.run.__annotations__["return"] == "JudgeResult"
    assert jd.Judge.judge.__annotations__["return"] == "Judgment"
    assert "judgments" in jd.JudgeResult.__struct_fields__
    assert "case_id" in jd.Judgment.__struct_fields__
