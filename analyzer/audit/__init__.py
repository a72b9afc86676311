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

    from groundtrace.analyzer import run_analysis
    from groundtrace.analyzer.audit import ANALYSIS, Config

    # answers made elsewhere (e.g. by the production app), labelled pair by pair
    config = Config(out="runs/given", sources="sources.jsonl", questions="questions.jsonl",
                    answers="answers.jsonl")
    done = run_analysis(ANALYSIS, config, out=config.out)
    print(done.result.summary.overall.prevalence, done.exit_code, done.reports)
    # or answered here, one trace per answer, by the offline answerer from the questions'
    # cues (the retriever: each source whole, or retriever="module:qualname" of your own)
    config = Config(out="runs/offline", sources="sources.jsonl", questions="questions.jsonl")
    done = run_analysis(ANALYSIS, config, out=config.out)
    # in a notebook or an async service: await run_analysis_async(ANALYSIS, config, out=...)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from groundtrace.analyzer._deprecation import imported_on_use, renamed

from ._config import Config

if TYPE_CHECKING:
    from ._answerers import AnswerFn, Cues, EndpointAnswerer, extractive_answer, render_answer
    from ._app import Chosen, Retriever, answer_from_source
    from ._compare import compare_runs
    from ._folder import nothing_measured
    from ._inputs import front_matter
    from ._model import GENERAL_SCOPE, Answer, Corpus, PairLabel, Question, Source, Stance, in_scope
    from ._plan import plan
    from ._reading import reading
    from ._records import AuditResult, AuditSettings
    from ._report import render_comparison_markdown, render_validation_markdown, write_report
    from ._run import PairLabeller
    from ._shape import ANALYSIS, estimate, run
    from ._summary import AuditSummary
    from ._validate import AuditValidation

#: The shape, the records a user reads and writes, the extension points a user plugs in, the
#: source format's helpers (front matter, scope, the stance an answer renders) and what the
#: commands print.
__all__ = [
    "ANALYSIS",
    "GENERAL_SCOPE",
    "Answer",
    "AnswerFn",
    "AuditResult",
    "AuditSettings",
    "AuditSummary",
    "AuditValidation",
    "Chosen",
    "Config",
    "Corpus",
    "Cues",
    "EndpointAnswerer",
    "PairLabel",
    "PairLabeller",
    "Question",
    "Retriever",
    "Source",
    "Stance",
    "answer_from_source",
    "compare_runs",
    "estimate",
    "extractive_answer",
    "front_matter",
    "in_scope",
    "nothing_measured",
    "plan",
    "reading",
    "render_answer",
    "render_comparison_markdown",
    "render_validation_markdown",
    "run",
    "write_report",
]

#: Names no longer public (internals, and the older ways beside the shape): each still
#: imports for one release, with a DeprecationWarning naming its private home.
_DEPRECATED = {
    "write_reports": "write_report",
    "AuditRun": "AuditResult",
    "API_KEY_ENV": "groundtrace.analyzer.audit._shape.API_KEY_ENV",
    "AUDIT_APP_NAME": "groundtrace.analyzer.audit._app.AUDIT_APP_NAME",
    "AUDIT_APP_VERSION": "groundtrace.analyzer.audit._app.AUDIT_APP_VERSION",
    "AbsenceFigure": "groundtrace.analyzer.audit._summary.AbsenceFigure",
    "AnswerOne": "groundtrace.analyzer.audit._run.AnswerOne",
    "AnswerUnit": "groundtrace.analyzer.audit._plan.AnswerUnit",
    "AuditAcceptance": "groundtrace.analyzer.audit._validate.AuditAcceptance",
    "AuditComparison": "groundtrace.analyzer.audit._compare.AuditComparison",
    "AuditInputs": "groundtrace.analyzer.audit._inputs.AuditInputs",
    "AuditPlan": "groundtrace.analyzer.audit._plan.AuditPlan",
    "BASELINE_FINGERPRINT": "groundtrace.analyzer.audit._run.BASELINE_FINGERPRINT",
    "BaselineLabeller": "groundtrace.analyzer.audit._run.BaselineLabeller",
    "CallError": "groundtrace.analyzer.audit._structured.CallError",
    "DEFAULT_GROUP": "groundtrace.analyzer.audit._inputs.DEFAULT_GROUP",
    "DISAGREEMENT_LABELS": "groundtrace.analyzer.audit._summary.DISAGREEMENT_LABELS",
    "Delta": "groundtrace.analyzer.audit._compare.Delta",
    "FlippedPair": "groundtrace.analyzer.audit._compare.FlippedPair",
    "GivenAnswers": "groundtrace.analyzer.audit._folder.GivenAnswers",
    "HeatCell": "groundtrace.analyzer.audit._summary.HeatCell",
    "JUDGE_PROMPT_VERSION": "groundtrace.analyzer.audit._judge.JUDGE_PROMPT_VERSION",
    "JUDGE_SCHEMA": "groundtrace.analyzer.audit._judge.JUDGE_SCHEMA",
    "LABELS": "groundtrace.analyzer.audit._model.LABELS",
    "Label": "groundtrace.analyzer.audit._model.Label",
    "MIN_CONTEXT_WORDS": "groundtrace.analyzer.audit._pairs.MIN_CONTEXT_WORDS",
    "MIN_PRECISION": "groundtrace.analyzer.audit._pairs.MIN_PRECISION",
    "PREFILTER_PRECISION": "groundtrace.analyzer.audit._pairs.PREFILTER_PRECISION",
    "PREFILTER_RULES": "groundtrace.analyzer.audit._pairs.PREFILTER_RULES",
    "PairError": "groundtrace.analyzer.audit._records.PairError",
    "PairJudge": "groundtrace.analyzer.audit._judge.PairJudge",
    "PrevalenceFigure": "groundtrace.analyzer.audit._summary.PrevalenceFigure",
    "Progress": "groundtrace.analyzer.audit._run.Progress",
    "QuestionChange": "groundtrace.analyzer.audit._compare.QuestionChange",
    "STANCES": "groundtrace.analyzer.audit._answerers.STANCES",
    "Significance": "groundtrace.analyzer.audit._model.Significance",
    "SourceInfo": "groundtrace.analyzer.audit._records.SourceInfo",
    "StructuredCaller": "groundtrace.analyzer.audit._structured.StructuredCaller",
    "TracedAnswering": "groundtrace.analyzer.audit._app.TracedAnswering",
    "answer_key": "groundtrace.analyzer.audit._run.answer_key",
    "answer_pairs": "groundtrace.analyzer.audit._pairs.answer_pairs",
    "answer_stance": "groundtrace.analyzer.audit._inputs.answer_stance",
    "answers_from_traces": "groundtrace.analyzer.audit._folder.answers_from_traces",
    "baseline_label": "groundtrace.analyzer.audit._pairs.baseline_label",
    "conflicting_quantities": "groundtrace.analyzer.audit._pairs.conflicting_quantities",
    "gold_pair_labels": "groundtrace.analyzer.audit._pairs.gold_pair_labels",
    "judge_counts": "groundtrace.analyzer.audit._run.judge_counts",
    "load_answers": "groundtrace.analyzer.audit._inputs.load_answers",
    "load_inputs": "groundtrace.analyzer.audit._inputs.load_inputs",
    "load_questions": "groundtrace.analyzer.audit._inputs.load_questions",
    "load_sources": "groundtrace.analyzer.audit._inputs.load_sources",
    "make_label": "groundtrace.analyzer.audit._pairs.make_label",
    "multiclass_kappa_batch": "groundtrace.analyzer.audit._validate.multiclass_kappa_batch",
    "normalise": "groundtrace.analyzer.audit._pairs.normalise",
    "pair_id": "groundtrace.analyzer.audit._summary.pair_id",
    "prefilter": "groundtrace.analyzer.audit._pairs.prefilter",
    "prefilter_rule": "groundtrace.analyzer.audit._pairs.prefilter_rule",
    "read_pair_reply": "groundtrace.analyzer.audit._judge.read_pair_reply",
    "read_stance_reply": "groundtrace.analyzer.audit._answerers.read_stance_reply",
    "render_html": "groundtrace.analyzer.audit._report.render_html",
    "render_markdown": "groundtrace.analyzer.audit._report.render_markdown",
    "rule_decides": "groundtrace.analyzer.audit._pairs.rule_decides",
    "run_audit": "groundtrace.analyzer.audit._run.run_audit",
    "run_audit_folder": "groundtrace.analyzer.audit._folder.run_audit_folder",
    "significance_of": "groundtrace.analyzer.audit._pairs.significance_of",
    "summarise": "groundtrace.analyzer.audit._summary.summarise",
    "validate_labels": "groundtrace.analyzer.audit._validate.validate_labels",
    "whole_source": "groundtrace.analyzer.audit._app.whole_source",
}

#: Every name but the config record is imported on first use: ``groundtrace audit run --help``
#: builds its options from :class:`Config` without loading numpy, the collectors or the judge.
_SURFACE = {
    "._answerers": ("AnswerFn", "Cues", "EndpointAnswerer", "extractive_answer", "render_answer"),
    "._app": ("Chosen", "Retriever", "answer_from_source"),
    "._compare": ("compare_runs",),
    "._folder": ("nothing_measured",),
    "._inputs": ("front_matter",),
    "._model": ("GENERAL_SCOPE", "Answer", "Corpus", "PairLabel", "Question", "Source", "Stance",
                "in_scope"),
    "._plan": ("plan",),
    "._reading": ("reading",),
    "._records": ("AuditResult", "AuditSettings"),
    "._report": ("render_comparison_markdown", "render_validation_markdown", "write_report"),
    "._run": ("PairLabeller",),
    "._shape": ("ANALYSIS", "estimate", "run"),
    "._summary": ("AuditSummary",),
    "._validate": ("AuditValidation",),
}  # fmt: skip
__getattr__ = renamed(
    __name__, _DEPRECATED, since="0.2.0", remove_in="0.3.0",
    fallback=imported_on_use(__name__, _SURFACE),
)  # fmt: skip
