"""The multi-source audit (SPEC §4.6): same question, different sources, different answers.

Each question is answered once per in-scope source, grounded in that source alone; every pair
of answers to a question gets one of five labels (``absent``, ``consistent``,
``complementary``, ``divergent``, ``contradictory``) with the topic and significance of any
difference. Deterministic pre-filters decide the certain pairs, an offline baseline labeller or
a validated pair judge the rest; the reports show absence, disagreement prevalence by
question, topic, group and source, and a source x source heat map. Every interval (run
figures, run comparisons, validation) is a seeded cluster bootstrap over questions: the pairs
of one question share its answers, so pairs are not independent draws.

The inputs are files of documented formats (``docs/audit.md``): sources (JSON lines or a
folder of text / Markdown files), questions (JSON lines, optional gold answers and cues of the
offline extractive answerer) and, optionally, answers made elsewhere (an answers file or
captured traces carrying the source id on their REQUEST span).

In the one analysis shape (``groundtrace analyze audit --config FILE``): :class:`Config`,
:func:`plan` (the answer units), :func:`run`, :func:`write_report`, :func:`reading`,
:func:`nothing_measured` and :data:`ANALYSIS` (see :mod:`groundtrace.analyzer._analysis`).

Usage::

    import asyncio
    from pathlib import Path
    from groundtrace.analyzer.audit import (
        AuditSettings, GivenAnswers, TracedAnswering, extractive_answer, load_answers,
        load_inputs, run_audit,
    )

    inputs = load_inputs(Path("sources.jsonl"), Path("questions.jsonl"))
    # answers made elsewhere (e.g. by the production app), labelled pair by pair
    given = GivenAnswers(tuple(load_answers(Path("answers.jsonl"), inputs.corpus)))
    run = asyncio.run(run_audit(inputs.corpus, given, AuditSettings(answerer="given")))
    print(run.summary.overall.prevalence, run.summary.prefilter_share)
    # or answered here, one trace per answer, by the offline answerer from the questions' cues
    one = TracedAnswering(Path("traces"), extractive_answer, inputs.cues)
    run = asyncio.run(run_audit(inputs.corpus, one, AuditSettings()))
"""

from __future__ import annotations

from groundtrace.analyzer._deprecation import renamed

from ._answerers import (
    STANCES,
    AnswerFn,
    Cues,
    EndpointAnswerer,
    extractive_answer,
    read_stance_reply,
    render_answer,
)
from ._app import (
    AUDIT_APP_NAME,
    AUDIT_APP_VERSION,
    Chosen,
    Retriever,
    TracedAnswering,
    answer_from_source,
    whole_source,
)
from ._compare import AuditComparison, Delta, FlippedPair, QuestionChange, compare_runs
from ._config import Config
from ._folder import GivenAnswers, answers_from_traces, nothing_measured, run_audit_folder
from ._inputs import (
    DEFAULT_GROUP,
    AuditInputs,
    answer_stance,
    front_matter,
    load_answers,
    load_inputs,
    load_questions,
    load_sources,
)
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
    MIN_CONTEXT_WORDS,
    MIN_PRECISION,
    PREFILTER_PRECISION,
    PREFILTER_RULES,
    answer_pairs,
    baseline_label,
    conflicting_quantities,
    gold_pair_labels,
    make_label,
    normalise,
    prefilter,
    prefilter_rule,
    rule_decides,
    significance_of,
)
from ._plan import AnswerUnit, AuditPlan, plan
from ._reading import reading
from ._records import AuditRun, AuditSettings, PairError, SourceInfo
from ._report import (
    render_comparison_markdown,
    render_html,
    render_markdown,
    render_validation_markdown,
    write_report,
)
from ._run import (
    BASELINE_FINGERPRINT,
    AnswerOne,
    BaselineLabeller,
    PairLabeller,
    Progress,
    answer_key,
    judge_counts,
    run_audit,
)
from ._shape import ANALYSIS, API_KEY_ENV, estimate, run
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
    "ANALYSIS",
    "API_KEY_ENV",
    "AUDIT_APP_NAME",
    "AUDIT_APP_VERSION",
    "BASELINE_FINGERPRINT",
    "DEFAULT_GROUP",
    "DISAGREEMENT_LABELS",
    "GENERAL_SCOPE",
    "JUDGE_PROMPT_VERSION",
    "JUDGE_SCHEMA",
    "LABELS",
    "MIN_CONTEXT_WORDS",
    "MIN_PRECISION",
    "PREFILTER_PRECISION",
    "PREFILTER_RULES",
    "STANCES",
    "AbsenceFigure",
    "Answer",
    "AnswerFn",
    "AnswerOne",
    "AnswerUnit",
    "AuditAcceptance",
    "AuditComparison",
    "AuditInputs",
    "AuditPlan",
    "AuditRun",
    "AuditSettings",
    "AuditSummary",
    "AuditValidation",
    "BaselineLabeller",
    "CallError",
    "Chosen",
    "Config",
    "Corpus",
    "Cues",
    "Delta",
    "EndpointAnswerer",
    "FlippedPair",
    "GivenAnswers",
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
    "Retriever",
    "Significance",
    "Source",
    "SourceInfo",
    "Stance",
    "StructuredCaller",
    "TracedAnswering",
    "answer_from_source",
    "answer_key",
    "answer_pairs",
    "answer_stance",
    "answers_from_traces",
    "baseline_label",
    "compare_runs",
    "conflicting_quantities",
    "estimate",
    "extractive_answer",
    "front_matter",
    "gold_pair_labels",
    "in_scope",
    "judge_counts",
    "load_answers",
    "load_inputs",
    "load_questions",
    "load_sources",
    "make_label",
    "multiclass_kappa_batch",
    "normalise",
    "nothing_measured",
    "pair_id",
    "plan",
    "prefilter",
    "prefilter_rule",
    "read_pair_reply",
    "read_stance_reply",
    "reading",
    "render_answer",
    "render_comparison_markdown",
    "render_html",
    "render_markdown",
    "render_validation_markdown",
    "rule_decides",
    "run",
    "run_audit",
    "run_audit_folder",
    "significance_of",
    "summarise",
    "validate_labels",
    "whole_source",
    "write_report",
]

__getattr__ = renamed(__name__, {"write_reports": "write_report"}, since="0.2.0")
