"""The records of a judge validation and of a judge run.

:class:`JudgeValidation` (``validation.json``) and :class:`JudgeRunSummary` (``summary.json``
of ``judge run``) are versioned :class:`~groundtrace.analyzer._results.Result`s; the
validation record (``validation_record_<metric>.json``) is
:class:`~groundtrace.analyzer.judge.ValidationRecord`, beside the acceptance profile it applies.
"""

from __future__ import annotations

from typing import Any

import msgspec

from groundtrace.analyzer._agreement import Statistic
from groundtrace.analyzer._results import Result
from groundtrace.analyzer.llm import ClientCounts

__all__ = [
    "VALIDATION_SCHEMA",
    "BootstrapSettings",
    "GoldSummary",
    "Grade",
    "InterAnnotator",
    "JudgeRunSummary",
    "JudgeValidation",
    "MetricSummary",
    "NotJudgeable",
    "ProtocolErrorCounts",
    "SweepPoint",
]

#: Schema id of the validation JSON.
VALIDATION_SCHEMA = "groundtrace.judge_validation/1"


class GoldSummary(msgspec.Struct, frozen=True):
    """A gold set and how it was selected."""

    path: str
    layout: str
    label_field: str
    dimension: str
    filters: tuple[str, ...]
    rows_read: int
    sample: dict[str, Any] | None
    n_items: int
    n_pass: int
    n_fail: int


class Grade(msgspec.Struct, frozen=True):
    """Grade of a labelled set: ``decision``, ``smoke`` or ``invalid``, with the reasons.

    ``size_grade`` is what the size alone would give.
    """

    value: str
    size_grade: str
    valid: bool
    minority_share: float
    reasons: tuple[str, ...]


class ProtocolErrorCounts(msgspec.Struct, frozen=True):
    """Items the judge failed to score (left out of the statistics)."""

    count: int
    rate: float | None
    by_kind: dict[str, int]
    #: the first 100
    case_ids: tuple[str, ...]


class SweepPoint(msgspec.Struct, frozen=True):
    """MCC at one working threshold."""

    threshold: float
    mcc: Statistic


class InterAnnotator(msgspec.Struct, frozen=True, omit_defaults=True):
    """Agreement of the two annotators (``reason`` when the set has a single label)."""

    available: bool
    reason: str | None = None
    raw_agreement: Statistic | None = None
    kappa: Statistic | None = None


class BootstrapSettings(msgspec.Struct, frozen=True):
    """How the intervals were computed."""

    n_resamples: int
    seed: int
    confidence: float = 0.95
    method: str = "percentile"


class JudgeValidation(Result, frozen=True, kw_only=True):
    """``validation.json``: agreement of a judge's metric with a gold set.

    ``mode``, ``fingerprint`` and ``client`` are filled in by ``judge validate`` (the verdict
    of the :class:`ValidationRecord`, the judge's identity and the model client's counters).
    """

    schema: str = VALIDATION_SCHEMA
    dimension: str
    threshold: float
    n: int
    n_items: int
    gold: GoldSummary
    grade: Grade
    protocol_errors: ProtocolErrorCounts
    raw_agreement: Statistic
    kappa: Statistic
    mcc: Statistic
    auroc: Statistic
    sweep: tuple[SweepPoint, ...]
    inter_annotator: InterAnnotator
    judge_pass_rate: float | None
    bootstrap: BootstrapSettings
    mode: str | None = None
    fingerprint: dict[str, Any] | None = None
    client: ClientCounts | None = None


class MetricSummary(msgspec.Struct, frozen=True):
    """Scores of one metric over a run (``pass``/``fail`` at the working threshold)."""

    scored: int
    protocol_errors: int
    errors_by_kind: dict[str, int]
    mean: float | None
    passed: int = msgspec.field(name="pass")
    failed: int = msgspec.field(name="fail")


class NotJudgeable(msgspec.Struct, frozen=True):
    """A trace that could not be judged (or that the judge does not apply to) and why.

    Attributes:
        case_id: the case id the trace records (``None``: it records none).
        missing: what the trace lacks.
        trace_id: the trace's id.
    """

    case_id: str | None
    missing: tuple[str, ...]
    trace_id: str | None = None

    @property
    def name(self) -> str:
        """The case, with the trace beside: ``case c1 (trace 4bf9…)``, or ``trace 4bf9…
        (no case id)``."""
        if self.case_id is None:
            return f"trace {self.trace_id} (no case id)"
        return f"case {self.case_id}" + (f" (trace {self.trace_id})" if self.trace_id else "")


class JudgeRunSummary(Result, frozen=True, kw_only=True):
    """``summary.json`` of ``judge run``.

    ``not_judgeable`` are traces that lack their query, answer or evidence content;
    ``not_applicable`` traces that have their query and answer but retrieved no document and
    called no tool: nothing can ground their answer, so the judge does not apply to them.
    """

    cases: int
    needs_review: int
    threshold: float
    metrics: dict[str, MetricSummary]
    not_judgeable: tuple[NotJudgeable, ...] = ()
    not_applicable: tuple[NotJudgeable, ...] = ()
    #: how many judgments were judged against each context (``retrieved documents``, ``tool
    #: results``, or both)
    contexts: dict[str, int] = msgspec.field(default_factory=dict)
    read_errors: tuple[str, ...] = ()
    fingerprint: dict[str, Any] = msgspec.field(default_factory=dict)
    client: ClientCounts | None = None
    #: why nothing was measured (no case to judge, every judgment a protocol error)
    nothing_measured: str | None = None
