"""Validation of pair labels against gold pair labels (the SPEC §4.4 protocol, five labels).

Reports, each with a 95% percentile-bootstrap interval: raw agreement and Cohen's kappa over
the five labels, and kappa and MCC of the binary "disagreement" projection (divergent or
contradictory vs the rest), plus the confusion matrix. The intervals resample *questions*
(clusters), not pairs: the pairs of a question share their sources' answers, so they are not
independent (see :mod:`._clusters`); every statistic uses the same seeded resamples.
A labeller is *validated* when the lower bounds of both kappas reach ``kappa_ci_low_min`` and
its protocol-error rate stays within ``max_protocol_error_rate``; the validation is bound to the
labeller's fingerprint, so a changed judge needs a new validation before its labels count.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import msgspec
import numpy as np
import numpy.typing as npt

from groundtrace.analyzer._agreement import (
    Statistic,
    cohen_kappa_batch,
    mcc_batch,
    raw_agreement_batch,
)
from groundtrace.analyzer._results import Result

from ._clusters import BatchStat, cluster_statistic
from ._model import LABELS, PairLabel
from ._summary import DISAGREEMENT_LABELS

__all__ = [
    "AuditAcceptance",
    "AuditValidation",
    "multiclass_kappa_batch",
    "validate_labels",
]

_INDEX: Final = {label: i for i, label in enumerate(LABELS)}


class AuditAcceptance(msgspec.Struct, frozen=True, kw_only=True):
    """What a pair labeller must show before its labels count (every value is a setting)."""

    kappa_ci_low_min: float = 0.6
    max_protocol_error_rate: float = 0.05
    n_resamples: int = 1000
    seed: int = 20260709


class AuditValidation(Result, frozen=True, kw_only=True):
    """A pair labeller's agreement with the gold pair labels.

    Attributes:
        labeller: ``baseline`` or the judge's name.
        fingerprint: digest of the labeller's settings the validation is bound to.
        n_gold: gold pairs.
        n_labelled: gold pairs the labeller labelled (the others had protocol errors).
        n_questions: questions of the labelled pairs (the clusters the intervals resample).
        protocol_errors: gold pairs without a label because of a protocol error.
        agreement: five-label raw agreement.
        kappa: five-label Cohen's kappa.
        disagreement_kappa: kappa of the divergent-or-contradictory projection.
        disagreement_mcc: MCC of that projection.
        confusion: gold label -> predicted label -> count.
        acceptance: the criteria applied.
        validated: whether the labeller's labels count (else review-only).
        reasons: why not, when not.
    """

    labeller: str
    fingerprint: str
    n_gold: int
    n_labelled: int
    protocol_errors: int
    agreement: Statistic
    kappa: Statistic
    disagreement_kappa: Statistic
    disagreement_mcc: Statistic
    confusion: dict[str, dict[str, int]]
    acceptance: AuditAcceptance
    validated: bool
    reasons: tuple[str, ...]
    n_questions: int | None = None


def multiclass_kappa_batch(
    ref: npt.NDArray[np.int64], pred: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """Cohen's kappa over integer labels ``0..len(LABELS)-1``; undefined where chance
    agreement is 1 (both raters used one and the same label)."""
    po = np.mean(ref == pred, axis=-1)
    pe = np.zeros(po.shape, dtype=np.float64)
    for k in range(len(LABELS)):
        pe += np.mean(ref == k, axis=-1) * np.mean(pred == k, axis=-1)
    defined = pe < 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.where(defined, (po - pe) / np.where(defined, 1.0 - pe, 1.0), np.nan)
    return np.asarray(values, dtype=np.float64), np.asarray(defined, dtype=np.bool_)


def _disagreement_reason(ref: npt.NDArray[np.bool_], pred: npt.NDArray[np.bool_]) -> str:
    """Why a statistic of the disagreement projection is undefined (a single class)."""
    who, labels = ("gold", ref) if ref.all() or not ref.any() else ("predicted", pred)
    return f"the {who} labels hold {'only' if labels.all() else 'no'} disagreement"


def _low(stat: Statistic) -> str:
    if stat.ci_low is not None:
        return f"{stat.ci_low:.3f}"
    return "undefined" if stat.value is None else "undefined (fewer than 2 questions)"


def _passes(stat: Statistic, minimum: float) -> bool:
    return stat.ci_low is not None and stat.ci_low >= minimum


def validate_labels(
    gold: Sequence[PairLabel],
    labels: Sequence[PairLabel],
    *,
    labeller: str,
    fingerprint: str,
    protocol_errors: int = 0,
    acceptance: AuditAcceptance | None = None,
) -> AuditValidation:
    """Agreement of ``labels`` with ``gold``, matched by (question, source a, source b).

    Args:
        gold: the gold pair labels.
        labels: the labeller's labels (pairs without one are left out and counted).
        labeller: name recorded in the validation.
        fingerprint: digest of the labeller's settings.
        protocol_errors: gold pairs the labeller failed on.
        acceptance: the criteria (default :class:`AuditAcceptance`).
    """
    a = acceptance or AuditAcceptance()
    predicted = {p.key: p.label for p in labels}
    matched = [(g.label, predicted[g.key]) for g in gold if g.key in predicted]
    ref = np.asarray([_INDEX[g] for g, _ in matched], dtype=np.int64)
    pred = np.asarray([_INDEX[p] for _, p in matched], dtype=np.int64)
    ref_dis = np.asarray([g in DISAGREEMENT_LABELS for g, _ in matched], dtype=np.bool_)
    pred_dis = np.asarray([p in DISAGREEMENT_LABELS for _, p in matched], dtype=np.bool_)
    clusters = [g.question_id for g in gold if g.key in predicted]

    def clustered(stat: BatchStat, arrays: list[npt.NDArray[Any]], why: str = "") -> Statistic:
        return cluster_statistic(
            stat, arrays, clusters, n_resamples=a.n_resamples, seed=a.seed, undefined_reason=why
        )

    why = _disagreement_reason(ref_dis, pred_dis)
    agreement = clustered(raw_agreement_batch, [ref, pred])
    kappa = clustered(
        multiclass_kappa_batch, [ref, pred], "chance agreement is 1 (one label throughout)"
    )
    dis_kappa = clustered(cohen_kappa_batch, [ref_dis, pred_dis], why)
    dis_mcc = clustered(mcc_batch, [ref_dis, pred_dis], why)
    confusion: dict[str, dict[str, int]] = {g: dict.fromkeys(LABELS, 0) for g in LABELS}
    for g, p in matched:
        confusion[g][p] += 1
    reasons: list[str] = []
    if not _passes(kappa, a.kappa_ci_low_min):
        reasons.append(f"five-label kappa CI low {_low(kappa)} < {a.kappa_ci_low_min}")
    if not _passes(dis_kappa, a.kappa_ci_low_min):
        reasons.append(f"disagreement kappa CI low {_low(dis_kappa)} < {a.kappa_ci_low_min}")
    error_rate = protocol_errors / len(gold) if gold else 1.0
    if error_rate > a.max_protocol_error_rate:
        reasons.append(f"protocol-error rate {error_rate:.3f} > {a.max_protocol_error_rate}")
    return AuditValidation(
        labeller=labeller,
        fingerprint=fingerprint,
        n_gold=len(gold),
        n_labelled=len(matched),
        protocol_errors=protocol_errors,
        agreement=agreement,
        kappa=kappa,
        disagreement_kappa=dis_kappa,
        disagreement_mcc=dis_mcc,
        confusion=confusion,
        acceptance=a,
        validated=not reasons,
        reasons=tuple(reasons),
        n_questions=len(set(clusters)),
    )
