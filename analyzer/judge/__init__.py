"""Judge checks and judge meta-evaluation (SPEC §4.4).

A judge scores the RAG triad (context relevance, adherence, answer relevance) in [0, 1] with
strict protocol-error semantics; the meta-evaluation measures its agreement with a gold set and
writes a validation record bound to the judge's fingerprint, which decides whether a metric may
influence the release gate (gate-eligible) or only route cases to manual review.

Usage::

    from groundtrace.analyzer import run_analysis
    from groundtrace.analyzer.judge import ANALYSIS, Config

    config = Config(gold="gold.jsonl", dimension="adherence")
    done = run_analysis(ANALYSIS, config, out="out/judge")
    print(done.result.record.mode)  # "gate_eligible" or "review_only"
    print(done.reports[0])  # out/judge/report.md
    print(done.reading)

That is what ``groundtrace judge validate`` and ``groundtrace analyze judge --config FILE``
run: a :class:`Config` without ``gold`` scores its ``traces`` and ``cases`` (``judge run``);
with ``gold`` the result also holds the validation and its record. Inside a running event loop
(a notebook, an async service) ``await run_analysis_async(...)`` instead. A judge of your own
is any :class:`Judge` (its ``async judge(case)`` scores one :class:`JudgeCase`); ``await
judge_all(judge, cases)`` scores many.
"""

from __future__ import annotations

from ._agreement import (
    Statistic,
    auroc_batch,
    bootstrap_statistic,
    cohen_kappa_batch,
    mcc_batch,
    raw_agreement_batch,
)
from ._cases import Unjudgeable, cases_from_traces
from ._config import API_KEY_ENV, CACHE_FILE, DEFAULT_CONCURRENCY, Config, acceptance, build_judge
from ._fingerprint import fingerprint, fingerprint_digest
from ._gold import GoldItem, GoldSet, RowFilter, load_cases, load_gold
from ._lexical import LEXICAL_VERSION, LexicalJudge
from ._llm_judge import LLMJudge
from ._plan import JudgePlan, plan
from ._protocol import SCORE_MAX, SCORE_MIN, failure_errors, parse_judge_reply
from ._reading import reading
from ._record import (
    GATE_ELIGIBLE,
    RECORD_SCHEMA,
    REVIEW_ONLY,
    AcceptanceProfile,
    Criterion,
    RecordCheck,
    RecordStatistics,
    ValidationRecord,
    build_record,
    check_record,
    load_record,
)
from ._records import (
    VALIDATION_SCHEMA,
    BootstrapSettings,
    GoldSummary,
    Grade,
    InterAnnotator,
    JudgeRunSummary,
    JudgeValidation,
    MetricSummary,
    NotJudgeable,
    ProtocolErrorCounts,
    SweepPoint,
)
from ._report import render_validation_markdown
from ._rubric import DEFAULT_RUBRIC, OUTPUT_SCHEMA, Rubric, load_rubric
from ._run import judge_all, summarize_results
from ._shape import ANALYSIS, JudgeReport, nothing_measured, run, verdicts, write_report
from ._types import (
    DEFAULT_THRESHOLD,
    ContextSource,
    Judge,
    JudgeCase,
    JudgeResult,
    Metric,
    ProtocolError,
    ProtocolErrorKind,
)
from ._validate import SWEEP_THRESHOLDS, grade_set, meta_evaluate

__all__ = [
    "ANALYSIS",
    "API_KEY_ENV",
    "CACHE_FILE",
    "DEFAULT_CONCURRENCY",
    "DEFAULT_RUBRIC",
    "DEFAULT_THRESHOLD",
    "GATE_ELIGIBLE",
    "LEXICAL_VERSION",
    "OUTPUT_SCHEMA",
    "RECORD_SCHEMA",
    "REVIEW_ONLY",
    "SCORE_MAX",
    "SCORE_MIN",
    "SWEEP_THRESHOLDS",
    "VALIDATION_SCHEMA",
    "AcceptanceProfile",
    "BootstrapSettings",
    "Config",
    "ContextSource",
    "Criterion",
    "GoldItem",
    "GoldSet",
    "GoldSummary",
    "Grade",
    "InterAnnotator",
    "Judge",
    "JudgeCase",
    "JudgePlan",
    "JudgeReport",
    "JudgeResult",
    "JudgeRunSummary",
    "JudgeValidation",
    "LLMJudge",
    "LexicalJudge",
    "Metric",
    "MetricSummary",
    "NotJudgeable",
    "ProtocolError",
    "ProtocolErrorCounts",
    "ProtocolErrorKind",
    "RecordCheck",
    "RecordStatistics",
    "RowFilter",
    "Rubric",
    "Statistic",
    "SweepPoint",
    "Unjudgeable",
    "ValidationRecord",
    "acceptance",
    "auroc_batch",
    "bootstrap_statistic",
    "build_judge",
    "build_record",
    "cases_from_traces",
    "check_record",
    "cohen_kappa_batch",
    "failure_errors",
    "fingerprint",
    "fingerprint_digest",
    "grade_set",
    "judge_all",
    "load_cases",
    "load_gold",
    "load_record",
    "load_rubric",
    "mcc_batch",
    "meta_evaluate",
    "nothing_measured",
    "parse_judge_reply",
    "plan",
    "raw_agreement_batch",
    "reading",
    "render_validation_markdown",
    "run",
    "summarize_results",
    "verdicts",
    "write_report",
]
