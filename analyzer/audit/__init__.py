"""The multi-source audit (SPEC §4.6): same question, different sources, different answers.

Each question is answered once per in-scope source, grounded in that source alone; every pair
of answers to a question gets one of five labels (``absent``, ``consistent``,
``complementary``, ``divergent``, ``contradictory``) with the topic and significance of any
difference. Deterministic pre-filters decide the certain pairs, an offline baseline labeller or
a validated pair judge the rest; the reports show absence, disagreement prevalence by
question, topic, group and source, and a source x source heat map. Every interval (run
figures, run comparisons, validation) is a seeded cluster bootstrap over questions: the pairs
of one question share its answers, so pairs are not independent draws.

Usage::

    import asyncio
    from groundtrace.analyzer.audit import AuditSettings, run_audit, write_reports
    from groundtrace.examples.license_audit.app import make_answerer
    from groundtrace.examples.license_audit.corpus import load_corpus

    run = asyncio.run(run_audit(load_corpus(), make_answerer("extractive"), AuditSettings()))
    print(run.summary.overall.prevalence, run.summary.prefilter_share)
"""

from __future__ import annotations

from ._compare import AuditComparison, Delta, FlippedPair, QuestionChange, compare_runs
from ._judge import JUDGE_PROMPT_VERSION, JUDGE_SCHEMA, PairJudge, read_pair_reply
from ._model import (
    GENERAL_SCOPE,
    LABELS,
    Answer,
    Corpus,
    Label,
    PairLabel,
    Question,
    Significance,
    Source,
    Stance,
    in_scope,
)
from ._pairs import (
    PREFILTER_RULES,
    answer_pairs,
    baseline_label,
    gold_pair_labels,
    make_label,
    normalise,
    prefilter,
    significance_of,
)
from ._records import AuditRun, AuditSettings, PairError, SourceInfo
from ._report import (
    render_comparison_markdown,
    render_html,
    render_markdown,
    render_validation_markdown,
    write_reports,
)
from ._run import (
    BASELINE_FINGERPRINT,
    AnswerOne,
    BaselineLabeller,
    PairLabeller,
    Progress,
    judge_counts,
    run_audit,
)
from ._structured import CallError, StructuredCaller
from ._summary import (
    DISAGREEMENT_LABELS,
    AbsenceFigure,
    AuditSummary,
    HeatCell,
    PrevalenceFigure,
    pair_id,
    summarise,
)
from ._validate import AuditAcceptance, AuditValidation, multiclass_kappa_batch, validate_labels

__all__ = [
    "BASELINE_FINGERPRINT",
    "DISAGREEMENT_LABELS",
    "GENERAL_SCOPE",
    "JUDGE_PROMPT_VERSION",
    "JUDGE_SCHEMA",
    "LABELS",
    "PREFILTER_RULES",
    "AbsenceFigure",
    "Answer",
    "AnswerOne",
    "AuditAcceptance",
    "AuditComparison",
    "AuditRun",
    "AuditSettings",
    "AuditSummary",
    "AuditValidation",
    "BaselineLabeller",
    "CallError",
    "Corpus",
    "Delta",
    "FlippedPair",
    "HeatCell",
    "Label",
    "PairError",
    "PairJudge",
    "PairLabel",
    "PairLabeller",
    "PrevalenceFigure",
    "Progress",
    "Question",
    "QuestionChange",
    "Significance",
    "Source",
    "SourceInfo",
    "Stance",
    "StructuredCaller",
    "answer_pairs",
    "baseline_label",
    "compare_runs",
    "gold_pair_labels",
    "in_scope",
    "judge_counts",
    "make_label",
    "multiclass_kappa_batch",
    "normalise",
    "pair_id",
    "prefilter",
    "read_pair_reply",
    "render_comparison_markdown",
    "render_html",
    "render_markdown",
    "render_validation_markdown",
    "run_audit",
    "significance_of",
    "summarise",
    "validate_labels",
    "write_reports",
]
