"""The four axes on hand-worked cases, deltas, operator summaries, sensitivity (SPEC 4.2.1)."""

from __future__ import annotations

import numpy as np
import pytest

from groundtrace.analyzer._results import to_builtins
from groundtrace.analyzer.errors import ConfigError, InputError
from groundtrace.analyzer.interventions._axes import (
    Gold,
    Outcome,
    compare,
    divergence_sensitivity,
    score_outcome,
    summarise_operators,
)
from groundtrace.analyzer.metrics import (
    DivergenceWeights,
    calibration_error,
    grounding,
    trace_divergence,
)
from groundtrace.analyzer.metrics._evidence import jaccard_distance
from groundtrace.analyzer.stats import StatsSettings

TITLES = {"c1": "Paris", "c2": "Rome", "c3": "Paris", "c4": "Oslo"}


def _out(answer: str, c: float | None = None, used: set[str] | None = None) -> Outcome:
    return Outcome(answer, c, frozenset(used or set()), TITLES)


@pytest.mark.parametrize(
    ("answer", "reference", "correct", "em"),
    [
        ("Yes, they are both American.", "yes", True, True),
        ("No.", "yes", False, False),
        ("1,000 people", "1000 people", True, True),
        ("three", "3", True, True),
        ("Steven Spielberg Jr", "Steven Spielberg", True, False),  # F1 = 0.8 exactly
        ("Steven Allan Spielberg Jr", "Steven Spielberg", False, False),  # F1 = 2/3
    ],
)
def test_soft_correctness_cases(answer: str, reference: str, correct: bool, em: bool) -> None:
    s = score_outcome(_out(answer), Gold(reference))
    assert s.correct is correct and s.exact_match is em
    assert s.f1 is not None


def test_f1_threshold_is_a_setting() -> None:
    from groundtrace.analyzer.interventions._axes import AxisSettings

    loose = AxisSettings(f1_threshold=0.6)
    assert score_outcome(_out("Steven Allan Spielberg Jr"), Gold("Steven Spielberg"), loose).correct


def test_grounding_counts_used_chunks_with_gold_titles() -> None:
    assert grounding({"c1", "c2", "c3"}, TITLES, {"Paris"}) == pytest.approx(2 / 3)
    assert grounding(set(), TITLES, {"Paris"}) == 0.0
    assert grounding({"c2"}, TITLES, set()) == 0.0
    with pytest.raises(InputError, match="no title"):
        grounding({"zz"}, TITLES, {"Paris"})


def test_calibration_error_and_missing_confidence() -> None:
    assert calibration_error(0.9, True) == pytest.approx(0.1)
    assert calibration_error(0.9, False) == pytest.approx(0.9)
    assert calibration_error(None, True) is None
    with pytest.raises(InputError):
        calibration_error(1.2, True)
    s = score_outcome(_out("Paris", None), Gold("Paris"))
    assert s.calibration_error is None  # missing, never 0
    assert score_outcome(_out("Rome", 0.25), Gold("Paris")).calibration_error == 0.25


def test_no_reference_means_correctness_not_computed() -> None:
    s = score_outcome(_out("Paris", 0.9, {"c1"}), Gold(None, frozenset({"Paris"})))
    assert (s.correct, s.exact_match, s.f1, s.calibration_error) == (None, None, None, None)
    assert s.grounding == 1.0


def test_trace_divergence_hand_worked() -> None:
    # d_J({a,b},{b,c}) = 1 - 1/3; answers equal after normalisation; |0.9-0.5| = 0.4
    d = trace_divergence({"a", "b"}, {"b", "c"}, "The Paris!", "paris", 0.9, 0.5)
    assert d == pytest.approx(0.5 * (2 / 3) + 0.3 * 0 + 0.2 * 0.4)
    d2 = trace_divergence(set(), set(), "Paris", "Rome", 0.5, 0.5)
    assert d2 == pytest.approx(0.3)
    assert jaccard_distance(set(), set()) == 0.0
    assert trace_divergence({"a"}, {"a"}, "x", "x", None, 0.5) is None
    used_only = DivergenceWeights(1.0, 0.0, 0.0)
    assert trace_divergence({"a"}, {"b"}, "x", "x", None, None, used_only) == 1.0
    with pytest.raises(ConfigError):
        DivergenceWeights(0.5, 0.5, 0.5)


def test_compare_gives_deltas_original_minus_counterfactual() -> None:
    gold = Gold("Paris", frozenset({"Paris"}))
    c = compare(_out("Paris", 0.9, {"c1", "c2"}), _out("Rome", 0.6, {"c2"}), gold)
    assert c.deltas["correctness"] == 1.0
    assert c.deltas["grounding"] == pytest.approx(0.5 - 0.0)
    # calibration error 0.1 -> 0.6: Δ = -0.5, the intervention worsened calibration
    assert c.deltas["calibration_error"] == pytest.approx(0.1 - 0.6)
    assert c.deltas["exact_match"] == 1.0 and c.deltas["f1"] == 1.0
    assert c.divergence == pytest.approx(0.5 * 0.5 + 0.3 + 0.2 * 0.3)
    missing = compare(_out("Paris", None, {"c1"}), _out("Paris", 0.5, {"c1"}), gold)
    assert missing.deltas["calibration_error"] is None and missing.divergence is None


def test_operator_summary_means_and_one_sided_divergence() -> None:
    gold = Gold("Paris", frozenset({"Paris"}))
    orig = _out("Paris", 0.9, {"c1"})
    hurt = compare(orig, _out("Rome", 0.9, {"c2"}), gold)
    same = compare(orig, _out("Paris", 0.9, {"c1"}), gold)
    stats = StatsSettings(n_resamples=2000, seed=1)
    out = summarise_operators({"REMOVE": [hurt] * 6 + [same] * 4, "DUPLICATE": [same] * 10}, stats)
    rem = out["REMOVE"].axes["correctness"]
    assert (rem.mean_original, rem.mean_counterfactual) == (1.0, 0.4)
    assert rem.delta.mean == pytest.approx(0.6)
    assert rem.delta.ci_low is not None and rem.delta.ci_low > 0
    d = out["REMOVE"].divergence
    assert d.alternative == "greater"
    assert d.mean == pytest.approx(0.6 * (0.5 + 0.3))
    assert d.p_value == pytest.approx(1 / 2**6)  # exact: 6 non-zero D values
    dup = out["DUPLICATE"]
    assert dup.axes["correctness"].delta.p_value == 1.0
    assert dup.divergence.ci_low == dup.divergence.ci_high == 0.0
    assert to_builtins(out["REMOVE"])["axes"]["grounding"]["delta"]["seed"] == 1


def test_weight_sensitivity_table() -> None:
    gold = Gold("Paris", frozenset({"Paris"}))
    comps = [
        compare(_out("Paris", None, {"c1"}), _out("Rome", None, {"c2"}), gold),
        compare(_out("Paris", None, {"c1"}), _out("Paris", None, {"c1", "c2"}), gold),
    ]
    rows = divergence_sensitivity({"REMOVE": comps}, stats=StatsSettings(n_resamples=500))
    by_name = {r.weights_name: r.summary for r in rows}
    assert set(by_name) == {"default", "equal", "used_only", "answer_only", "confidence_only"}
    assert by_name["used_only"].mean == pytest.approx((1.0 + 0.5) / 2)
    assert by_name["answer_only"].mean == pytest.approx(0.5)
    # Confidence was never reported: every row that weights it is missing, not 0.
    for name in ("default", "equal", "confidence_only"):
        assert by_name[name].n == 0 and by_name[name].mean is None
    assert np.isfinite(by_name["used_only"].ci_low or 0.0)
