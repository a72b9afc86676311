"""Acceptance profile, validation record and the check that binds it to a fingerprint."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from groundtrace.analyzer._agreement import Statistic
from groundtrace.analyzer._results import Result, read
from groundtrace.analyzer.errors import ConfigError

from ._fingerprint import fingerprint_digest
from ._records import GoldSummary, JudgeValidation
from ._types import DEFAULT_THRESHOLD

__all__ = [
    "GATE_ELIGIBLE",
    "RECORD_SCHEMA",
    "REVIEW_ONLY",
    "AcceptanceProfile",
    "Criterion",
    "RecordCheck",
    "RecordStatistics",
    "ValidationRecord",
    "build_record",
    "check_record",
    "load_record",
]

#: Schema id of a validation record.
RECORD_SCHEMA = "groundtrace.judge_validation_record/1"
#: The metric may run in block or review mode in the gate.
GATE_ELIGIBLE = "gate_eligible"
#: The metric's failures may only route to manual review; it never blocks or promotes.
REVIEW_ONLY = "review_only"
_GRADES = {"invalid": 0, "smoke": 1, "decision": 2}


class AcceptanceProfile(msgspec.Struct, frozen=True):
    """What a judge metric must show to be gate-eligible (every value is a setting).

    Attributes:
        name: profile id, recorded.
        min_grade: least gold-set grade (``smoke`` or ``decision``).
        kappa_ci_low_min: least lower bound of the 95% CI of judge-vs-gold Cohen's kappa.
        auroc_min: least AUROC point estimate.
        mcc_min: least MCC point estimate at the working threshold (None: not required).
        max_protocol_error_rate: largest share of items with a protocol error.
        threshold: working threshold (score >= threshold means pass).
        n_resamples: bootstrap resamples B.
        seed: bootstrap seed.
        smoke_min: items for smoke grade.
        decision_min: items for decision grade.
        minority_min: least minority-class share.
    """

    name: str = "judge_acceptance_default_v1"
    min_grade: str = "decision"
    kappa_ci_low_min: float = 0.4
    auroc_min: float = 0.7
    mcc_min: float | None = None
    max_protocol_error_rate: float = 0.05
    threshold: float = DEFAULT_THRESHOLD
    n_resamples: int = 1000
    seed: int = 20260709
    smoke_min: int = 30
    decision_min: int = 100
    minority_min: float = 0.30

    @classmethod
    def from_file(cls, path: str | Path) -> AcceptanceProfile:
        """Read a TOML or JSON profile (a ``[judge_acceptance]`` table or top-level keys)."""
        source = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
            data: Any = json.loads(text) if source.endswith(".json") else tomllib.loads(text)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read acceptance profile: {exc}", path=source) from exc
        if isinstance(data, dict) and isinstance(data.get("judge_acceptance"), dict):
            data = data["judge_acceptance"]
        if not isinstance(data, dict):
            raise ConfigError("profile must be a table of settings", path=source)
        known = set(cls.__struct_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"unknown settings {unknown}", path=source, field=unknown[0])
        if data.get("min_grade", "decision") not in ("smoke", "decision"):
            raise ConfigError("min_grade must be smoke or decision", path=source, field="min_grade")
        return cls(**data)


class Criterion(msgspec.Struct, frozen=True):
    """One acceptance criterion: what was required, what was observed."""

    name: str
    required: str
    observed: float | str | None
    passed: bool


class RecordStatistics(msgspec.Struct, frozen=True):
    """The statistics a validation record was decided on."""

    n: int
    grade: str
    kappa: Statistic
    auroc: Statistic
    mcc: Statistic
    protocol_error_rate: float | None


class ValidationRecord(Result, frozen=True, kw_only=True):
    """``validation_record_<metric>.json``: a metric's verdict (``gate_eligible`` or
    ``review_only``), bound to a judge fingerprint."""

    schema: str = RECORD_SCHEMA
    metric: str
    mode: str
    reasons: tuple[str, ...]
    criteria: tuple[Criterion, ...]
    fingerprint: dict[str, Any]
    profile: AcceptanceProfile
    statistics: RecordStatistics
    gold: GoldSummary
    created: str

    @classmethod
    def from_file(cls, path: str | Path) -> ValidationRecord:
        """The record in a ``validation_record_<metric>.json`` file (:func:`load_record`).

        Raises:
            InputError: unreadable, of another result format, or a field of the wrong type.
        """
        return load_record(path)

    def check(self, fingerprint: Mapping[str, Any]) -> RecordCheck:
        """Whether this record applies to the judge of ``fingerprint`` now
        (:func:`check_record`)."""
        return check_record(self, fingerprint)


def _at_least(name: str, stat: Statistic, value: float | None, required: float) -> Criterion:
    """``value`` of ``stat`` at least ``required`` (observed: its undefined reason when it has
    no value)."""
    observed = value if stat.value is not None else stat.undefined_reason
    return Criterion(name, f">= {required}", observed, value is not None and value >= required)


def build_record(
    validation: JudgeValidation,
    fingerprint: Mapping[str, Any],
    profile: AcceptanceProfile,
) -> ValidationRecord:
    """The validation record of one metric: criteria, verdict and the fingerprint it binds.

    The metric is ``gate_eligible`` only if every criterion passes; otherwise it runs
    ``review_only``, and the failed criteria are listed as reasons.
    """
    grade = validation.grade
    kappa, auroc, mcc = validation.kappa, validation.auroc, validation.mcc
    rate = validation.protocol_errors.rate
    criteria = [
        Criterion(
            "grade",
            f">= {profile.min_grade}",
            grade.value,
            _GRADES[grade.value] >= _GRADES[profile.min_grade],
        ),
        _at_least("kappa_ci_low", kappa, kappa.ci_low, profile.kappa_ci_low_min),
        _at_least("auroc", auroc, auroc.value, profile.auroc_min),
        Criterion(
            "protocol_error_rate",
            f"<= {profile.max_protocol_error_rate}",
            rate,
            rate is not None and rate <= profile.max_protocol_error_rate,
        ),
    ]
    if profile.mcc_min is not None:
        criteria.append(_at_least("mcc", mcc, mcc.value, profile.mcc_min))
    passed = all(c.passed for c in criteria)
    reasons = [
        f"{c.name}: observed {c.observed}, required {c.required}" for c in criteria if not c.passed
    ]
    return ValidationRecord(
        metric=validation.dimension,
        mode=GATE_ELIGIBLE if passed else REVIEW_ONLY,
        reasons=(*reasons, *(f"grade: {r}" for r in grade.reasons)),
        criteria=tuple(criteria),
        fingerprint=dict(fingerprint),
        profile=profile,
        statistics=RecordStatistics(validation.n, grade.value, kappa, auroc, mcc, rate),
        gold=validation.gold,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
    )


class RecordCheck(msgspec.Struct, frozen=True):
    """Whether a record still applies to a judge, and the mode the metric may run in.

    Attributes:
        valid: the record's fingerprint matches the judge's.
        mode: ``gate_eligible`` or ``review_only`` (always review-only when not valid).
        metric: the metric of the record.
        reason: why, in one sentence.
        changed: fingerprint fields that differ.
    """

    valid: bool
    mode: str
    metric: str
    reason: str
    changed: tuple[str, ...] = ()


def check_record(record: ValidationRecord, fingerprint: Mapping[str, Any]) -> RecordCheck:
    """Check ``record`` against the current judge ``fingerprint``.

    A record whose stored fingerprint was edited (its digest no longer matches its fields) or
    differs from the current one is invalid: the metric runs review-only.
    """
    metric = record.metric
    stored = record.fingerprint
    if record.schema != RECORD_SCHEMA:
        return RecordCheck(False, REVIEW_ONLY, metric, "not a judge validation record")
    if fingerprint_digest(dict(stored)) != stored.get("digest"):
        return RecordCheck(False, REVIEW_ONLY, metric, "record fingerprint was altered")
    if stored.get("digest") != fingerprint.get("digest"):
        changed = tuple(
            sorted(
                k
                for k in set(stored) | set(fingerprint)
                if k != "digest" and stored.get(k) != fingerprint.get(k)
            )
        )
        reason = f"judge fingerprint changed ({', '.join(changed)}): record no longer applies"
        return RecordCheck(False, REVIEW_ONLY, metric, reason, changed)
    mode = record.mode
    reason = "fingerprint matches; " + (
        "criteria met" if mode == GATE_ELIGIBLE else "criteria not met: review-only"
    )
    return RecordCheck(True, mode, metric, reason)


def load_record(path: str | Path) -> ValidationRecord:
    """Read a validation record JSON file.

    A record written before results were versioned (it has no ``format_version`` but its
    own ``schema`` id, checked by :func:`check_record`) reads as the current version.

    Raises:
        InputError: unreadable, of another result format, or a field of the wrong type.
    """
    return read(path, ValidationRecord, legacy=True)
