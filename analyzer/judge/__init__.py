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

from typing import TYPE_CHECKING

from groundtrace.analyzer._deprecation import imported_on_use, renamed

from ._config import Config

if TYPE_CHECKING:
    from ._fingerprint import fingerprint, fingerprint_digest
    from ._lexical import LexicalJudge
    from ._plan import plan
    from ._reading import reading
    from ._record import ValidationRecord
    from ._records import JudgeRunSummary, JudgeValidation
    from ._rubric import Rubric
    from ._run import judge_all
    from ._shape import ANALYSIS, JudgeResult, nothing_measured, run, verdicts, write_report
    from ._types import (
        ContextSource,
        Judge,
        JudgeCase,
        Judgment,
        Metric,
        ProtocolError,
        ProtocolErrorKind,
    )

__all__ = [
    "ANALYSIS",
    "Config",
    "ContextSource",
    "Judge",
    "JudgeCase",
    "JudgeResult",
    "JudgeRunSummary",
    "JudgeValidation",
    "Judgment",
    "LexicalJudge",
    "Metric",
    "ProtocolError",
    "ProtocolErrorKind",
    "Rubric",
    "ValidationRecord",
    "fingerprint",
    "fingerprint_digest",
    "judge_all",
    "nothing_measured",
    "plan",
    "reading",
    "run",
    "verdicts",
    "write_report",
]

#: Every name but the config record is imported on first use: ``groundtrace judge --help``
#: builds its options from :class:`Config` without loading the statistics or the readers.
_SURFACE = {
    "._fingerprint": ("fingerprint", "fingerprint_digest"),
    "._lexical": ("LexicalJudge",),
    "._plan": ("plan",),
    "._reading": ("reading",),
    "._record": ("ValidationRecord",),
    "._records": ("JudgeRunSummary", "JudgeValidation"),
    "._rubric": ("Rubric",),
    "._run": ("judge_all",),
    "._shape": ("ANALYSIS", "JudgeResult", "nothing_measured", "run", "verdicts", "write_report"),
    "._types": ("ContextSource", "Judge", "JudgeCase", "Judgment", "Metric", "ProtocolError",
                "ProtocolErrorKind"),
}  # fmt: skip
_HERE = __name__
#: Old and internal names, kept working for a release with a DeprecationWarning naming where
#: they are now (0.2.0; removed in 0.3.0). ``JudgeResult`` now names the analysis's result
#: (it was ``JudgeReport``); the judge's result on one case is a :class:`Judgment`.
__getattr__ = renamed(
    __name__,
    {
        # renamed
        "JudgeReport": "JudgeResult",
        "load_record": f"{_HERE}._record.load_record",  # ValidationRecord.from_file(path)
        "check_record": f"{_HERE}._record.check_record",  # record.check(fingerprint)
        # shared statistics: groundtrace.analyzer.stats
        **{
            name: f"groundtrace.analyzer.stats.{name}"
            for name in ("Statistic", "auroc_batch", "bootstrap_statistic", "cohen_kappa_batch",
                         "mcc_batch", "raw_agreement_batch")
        },
        # building blocks, no longer public
        **{
            name: f"{_HERE}.{module}.{name}"
            for module, names in {
                "_cases": ("Unjudgeable", "cases_from_traces"),
                "_config": ("API_KEY_ENV", "CACHE_FILE", "DEFAULT_CONCURRENCY", "acceptance",
                            "build_judge"),
                "_gold": ("GoldItem", "GoldSet", "RowFilter", "load_cases", "load_gold"),
                "_lexical": ("LEXICAL_VERSION",),
                "_llm_judge": ("LLMJudge",),
                "_plan": ("JudgePlan",),
                "_protocol": ("SCORE_MAX", "SCORE_MIN", "failure_errors", "parse_judge_reply"),
                "_record": ("GATE_ELIGIBLE", "RECORD_SCHEMA", "REVIEW_ONLY", "AcceptanceProfile",
                            "Criterion", "RecordCheck", "RecordStatistics", "build_record"),
                "_records": ("VALIDATION_SCHEMA", "BootstrapSettings", "GoldSummary", "Grade",
                             "InterAnnotator", "MetricSummary", "NotJudgeable",
                             "ProtocolErrorCounts", "SweepPoint"),
                "_report": ("render_validation_markdown",),
                "_rubric": ("DEFAULT_RUBRIC", "OUTPUT_SCHEMA", "load_rubric"),
                "_run": ("summarize_results",),
                "_types": ("DEFAULT_THRESHOLD",),
                "_validate": ("SWEEP_THRESHOLDS", "grade_set", "meta_evaluate"),
            }.items()
            for name in names
        },
    },
    since="0.2.0",
    remove_in="0.3.0",
    fallback=imported_on_use(__name__, _SURFACE),
)  # fmt: skip
