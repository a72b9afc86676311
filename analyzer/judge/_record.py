"""Acceptance profile, validation record and the check that binds it to a fingerprint."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from groundtrace.analyzer.errors import ConfigError, InputError

from ._fingerprint import fingerprint_digest

__all__ = [
    "GATE_ELIGIBLE",
    "RECORD_SCHEMA",
    "REVIEW_ONLY",
    "AcceptanceProfile",
    "RecordCheck",
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


@dataclass(frozen=True, slots=True)
class AcceptanceProfile:
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
    threshold: float = 0.8
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
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"unknown settings {unknown}", path=source, field=unknown[0])
        if data.get("min_grade", "decision") not in ("smoke", "decision"):
            raise ConfigError("min_grade must be smoke or decision", path=source, field="min_grade")
        return cls(**data)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready settings."""
        return asdict(self)


def _criterion(name: str, required: Any, observed: Any, passed: bool) -> dict[str, Any]:
    return {"name": name, "required": required, "observed": observed, "passed": passed}


def _at_least(observed: float | None, required: float) -> bool:
    return observed is not None and observed >= required


def build_record(
    validation: Mapping[str, Any],
    fingerprint: Mapping[str, Any],
    profile: AcceptanceProfile,
) -> dict[str, Any]:
    """The validation record of one metric: criteria, verdict and the fingerprint it binds.

    The metric is ``gate_eligible`` only if every criterion passes; otherwise it runs
    ``review_only``, and the failed criteria are listed as reasons.
    """
    grade = validation["grade"]
    kappa, auroc, mcc = validation["kappa"], validation["auroc"], validation["mcc"]
    errors = validation["protocol_errors"]
    criteria = [
        _criterion(
            "grade",
            f">= {profile.min_grade}",
            grade["value"],
            _GRADES[grade["value"]] >= _GRADES[profile.min_grade],
        ),
        _criterion(
            "kappa_ci_low",
            f">= {profile.kappa_ci_low_min}",
            kappa["ci_low"] if kappa["value"] is not None else kappa["undefined_reason"],
            _at_least(kappa["ci_low"], profile.kappa_ci_low_min),
        ),
        _criterion(
            "auroc",
            f">= {profile.auroc_min}",
            auroc["value"] if auroc["value"] is not None else auroc["undefined_reason"],
            _at_least(auroc["value"], profile.auroc_min),
        ),
        _criterion(
            "protocol_error_rate",
            f"<= {profile.max_protocol_error_rate}",
            errors["rate"],
            errors["rate"] is not None and errors["rate"] <= profile.max_protocol_error_rate,
        ),
    ]
    if profile.mcc_min is not None:
        criteria.append(
            _criterion(
                "mcc",
                f">= {profile.mcc_min}",
                mcc["value"] if mcc["value"] is not None else mcc["undefined_reason"],
                _at_least(mcc["value"], profile.mcc_min),
            )
        )
    passed = all(c["passed"] for c in criteria)
    reasons = [
        f"{c['name']}: observed {c['observed']}, required {c['required']}"
        for c in criteria
        if not c["passed"]
    ]
    return {
        "schema": RECORD_SCHEMA,
        "metric": validation["dimension"],
        "mode": GATE_ELIGIBLE if passed else REVIEW_ONLY,
        "reasons": reasons + [f"grade: {r}" for r in grade["reasons"]],
        "criteria": criteria,
        "fingerprint": dict(fingerprint),
        "profile": profile.as_dict(),
        "statistics": {
            "n": validation["n"],
            "grade": grade["value"],
            "kappa": kappa,
            "auroc": auroc,
            "mcc": mcc,
            "protocol_error_rate": errors["rate"],
        },
        "gold": validation["gold"],
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }


@dataclass(frozen=True, slots=True)
class RecordCheck:
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

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "valid": self.valid,
            "mode": self.mode,
            "metric": self.metric,
            "reason": self.reason,
            "changed": list(self.changed),
        }


def check_record(record: Mapping[str, Any], fingerprint: Mapping[str, Any]) -> RecordCheck:
    """Check ``record`` against the current judge ``fingerprint``.

    A record whose stored fingerprint was edited (its digest no longer matches its fields) or
    differs from the current one is invalid: the metric runs review-only.
    """
    metric = str(record.get("metric", "?"))
    stored = record.get("fingerprint")
    if record.get("schema") != RECORD_SCHEMA or not isinstance(stored, Mapping):
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
    mode = str(record.get("mode", REVIEW_ONLY))
    reason = "fingerprint matches; " + (
        "criteria met" if mode == GATE_ELIGIBLE else "criteria not met: review-only"
    )
    return RecordCheck(True, mode, metric, reason)


def load_record(path: str | Path) -> dict[str, Any]:
    """Read a validation record JSON file."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read validation record: {exc}", path=str(path)) from exc
    if not isinstance(data, dict):
        raise InputError("validation record is not a JSON object", path=str(path))
    return data
