"""Agreement statistics match scikit-learn where defined, and say 'undefined' where not."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score, matthews_corrcoef, roc_auc_score

from groundtrace.analyzer._agreement import (
    auroc_batch,
    bootstrap_statistic,
    cohen_kappa_batch,
    mcc_batch,
    raw_agreement_batch,
)


def _point(stat, *arrays):  # type: ignore[no-untyped-def]
    return bootstrap_statistic(stat, arrays, n_resamples=200, seed=1)


@pytest.mark.parametrize("seed", range(25))
def test_random_inputs_match_sklearn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 300))
    y = rng.random(n) < rng.uniform(0.2, 0.8)
    y[0], y[1] = True, False  # both classes present
    # Coarse scores create many ties, which AUROC must average like sklearn.
    scores = np.round(rng.random(n) * rng.choice([3, 10, 1000]), 0) / 1000.0
    pred = rng.random(n) < 0.5
    pred[0], pred[1] = True, False
    assert _point(cohen_kappa_batch, y, pred).value == pytest.approx(
        cohen_kappa_score(y, pred), abs=1e-12
    )
    assert _point(mcc_batch, y, pred).value == pytest.approx(matthews_corrcoef(y, pred), abs=1e-12)
    assert _point(auroc_batch, y, scores).value == pytest.approx(
        roc_auc_score(y, scores), abs=1e-12
    )
    assert _point(raw_agreement_batch, y, pred).value == pytest.approx(np.mean(y == pred))


def test_all_correct_is_one_everywhere() -> None:
    y = np.array([True, False, True, True, False])
    assert _point(cohen_kappa_batch, y, y).value == pytest.approx(cohen_kappa_score(y, y)) == 1
    assert _point(mcc_batch, y, y).value == pytest.approx(matthews_corrcoef(y, y)) == 1
    assert _point(auroc_batch, y, y.astype(float)).value == 1.0 == roc_auc_score(y, y)


def test_all_tied_scores_give_auroc_one_half() -> None:
    y = np.array([True, False, True, False, False])
    s = np.full(5, 0.7)
    assert _point(auroc_batch, y, s).value == 0.5 == roc_auc_score(y, s)


def test_single_class_gold_is_undefined_not_nan_or_zero() -> None:
    y = np.ones(40, dtype=bool)
    pred = np.arange(40) % 3 == 0
    with pytest.warns(Warning):
        assert roc_auc_score(y, pred.astype(float)) != roc_auc_score(y, pred.astype(float))
    for stat, arg in ((cohen_kappa_batch, pred), (mcc_batch, pred), (auroc_batch, pred * 1.0)):
        out = _point(stat, y, arg)
        assert out.value is None and out.ci_low is None and out.ci_high is None
        assert "single class" in (out.undefined_reason or "")
    # sklearn reports a number here (0.0); we refuse to: kappa is undefined on one class.
    assert cohen_kappa_score(y, pred) == 0.0


def test_constant_predictions_make_mcc_undefined_where_sklearn_says_zero() -> None:
    y = np.array([True, False] * 10)
    pred = np.ones(20, dtype=bool)
    assert matthews_corrcoef(y, pred) == 0.0
    out = _point(mcc_batch, y, pred)
    assert out.value is None and "predictions hold a single class" in (out.undefined_reason or "")
    # Kappa is defined (0: no better than chance) and equals sklearn's.
    assert _point(cohen_kappa_batch, y, pred).value == cohen_kappa_score(y, pred) == 0.0


def test_bootstrap_interval_is_seeded_recorded_and_brackets_the_estimate() -> None:
    rng = np.random.default_rng(3)
    y = rng.random(150) < 0.5
    s = np.clip(y * 0.3 + rng.random(150) * 0.7, 0, 1)
    a = bootstrap_statistic(auroc_batch, (y, s), n_resamples=1000, seed=42)
    b = bootstrap_statistic(auroc_batch, (y, s), n_resamples=1000, seed=42)
    c = bootstrap_statistic(auroc_batch, (y, s), n_resamples=1000, seed=43)
    assert a == b and (a.ci_low, a.ci_high) != (c.ci_low, c.ci_high)
    assert a.seed == 42 and a.n_resamples == 1000 and a.n == 150
    assert a.ci_low is not None and a.ci_high is not None and a.value is not None
    assert a.ci_low < a.value < a.ci_high


def test_undefined_resamples_are_counted_not_hidden() -> None:
    y = np.array([True] * 9 + [False])  # one negative: many resamples miss it
    s = np.linspace(0, 1, 10)
    out = bootstrap_statistic(auroc_batch, (y, s), n_resamples=500, seed=0)
    assert out.value is not None and 0 < out.undefined_resamples < 500
