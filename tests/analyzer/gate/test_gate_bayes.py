"""The Bayesian comparison of the gate: checked against numerical integration and properties."""

from __future__ import annotations

import hashlib
import json
from importlib import resources

import msgspec
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats
from typer.testing import CliRunner

from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.errors import ConfigError
from groundtrace.analyzer.gate import Decision, load_profile, simulate
from groundtrace.analyzer.gate._bayes import (
    BayesSettings,
    StratumCounts,
    StratumThresholds,
    compare,
    decide,
    most_severe,
)

app = build_app()


def _exact_rho(a: StratumCounts, b: StratumCounts, delta: float) -> float:
    """P(p_B < p_A - delta) for Beta(1+k, 1+n-k) posteriors, by quadrature."""
    pa = stats.beta(1 + a.k, 1 + a.n - a.k)
    pb = stats.beta(1 + b.k, 1 + b.n - b.k)
    value, _ = integrate.quad(lambda x: pa.pdf(x) * pb.cdf(x - delta), delta, 1.0, limit=200)
    return float(value)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (StratumCounts(50, 45), StratumCounts(50, 40)),
        (StratumCounts(20, 18), StratumCounts(20, 18)),
        (StratumCounts(100, 80), StratumCounts(100, 90)),
    ],
)
def test_single_stratum_rho_matches_quadrature(a: StratumCounts, b: StratumCounts) -> None:
    cfg = BayesSettings(samples=200_000, seed=7)
    result = compare({"all": a}, {"all": b}, cfg)
    exact = _exact_rho(a, b, cfg.delta)
    mc_error = np.sqrt(exact * (1 - exact) / cfg.samples)
    assert abs(result.rho - exact) < 5 * mc_error + 1e-9


def test_weighted_pool_uses_stratum_shares_by_default() -> None:
    base = {"general": StratumCounts(80, 72), "critical": StratumCounts(20, 16)}
    cand = {"general": StratumCounts(80, 72), "critical": StratumCounts(20, 16)}
    result = compare(base, cand, BayesSettings(samples=2000))
    weights = {s.stratum: s.weight for s in result.strata}
    assert weights == pytest.approx({"general": 0.8, "critical": 0.2})


def test_critical_regression_escalates_through_per_stratum_risk() -> None:
    """A collapse in a small critical stratum barely moves the pooled mean but is caught."""
    cfg = BayesSettings(
        samples=50_000,
        strata={"critical": StratumThresholds(delta=0.03, tau_block=0.95, tau_review=0.8)},
    )
    base = {"general": StratumCounts(950, 900), "critical": StratumCounts(50, 48)}
    cand = {"general": StratumCounts(950, 910), "critical": StratumCounts(50, 30)}
    result = compare(base, cand, cfg)
    assert result.pooled_decision is Decision.PROMOTE
    critical = next(s for s in result.strata if s.stratum == "critical")
    assert critical.decision is Decision.BLOCK
    assert result.decision is Decision.BLOCK


def test_decide_thresholds_are_inclusive() -> None:
    assert decide(0.8, 0.8, 0.5) is Decision.BLOCK
    assert decide(0.5, 0.8, 0.5) is Decision.MANUAL_REVIEW
    assert decide(0.4999, 0.8, 0.5) is Decision.PROMOTE
    assert most_severe([Decision.PROMOTE, Decision.NOT_EVALUABLE]) is Decision.NOT_EVALUABLE
    assert most_severe([Decision.NOT_EVALUABLE, Decision.BLOCK]) is Decision.BLOCK


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(min_value=400, max_value=2000),
    rate=st.floats(min_value=0.05, max_value=0.95),
    profile=st.sampled_from(["balanced_default", "decision_grade"]),
)
def test_identical_candidate_never_blocks_at_large_n(n: int, rate: float, profile: str) -> None:
    cfg = msgspec.structs.replace(load_profile(profile).bayes, samples=4000)
    k = round(n * rate)
    counts = {
        "general": StratumCounts(n, k),
        "critical": StratumCounts(n // 4, round(n / 4 * rate)),
    }
    result = compare(counts, counts, cfg)
    assert result.decision is not Decision.BLOCK
    assert result.rho < cfg.tau_review


def test_result_is_reproducible_from_seed() -> None:
    base = {"g": StratumCounts(30, 25)}
    cand = {"g": StratumCounts(30, 22)}
    assert compare(base, cand).rho == compare(base, cand).rho
    other = compare(base, cand, BayesSettings(seed=1)).rho
    assert other != compare(base, cand).rho  # the seed is really used


def test_bad_inputs_are_rejected() -> None:
    with pytest.raises(ValueError, match="invalid stratum counts"):
        StratumCounts(5, 6)
    with pytest.raises(ValueError, match="strata differ"):
        compare({"a": StratumCounts(1, 1)}, {"b": StratumCounts(1, 1)})


def test_builtin_profiles_differ_only_where_the_spec_says() -> None:
    balanced = load_profile("balanced_default")
    grade = load_profile("decision_grade")
    assert (balanced.bayes.tau_review, grade.bayes.tau_review) == (0.5, 0.4)
    assert balanced.bayes.delta == grade.bayes.delta == 0.03
    assert balanced.bayes.tau_block == grade.bayes.tau_block == 0.8
    assert len(balanced.sha256) == 64 and balanced.sha256 != grade.sha256


def test_profile_hash_is_of_the_exact_bytes(tmp_path) -> None:
    # A user who checks a profile out with CRLF line ends sees another profile hash in the
    # gate snapshot than the LF original: the hash names exactly the file that decided.
    text = '[profile]\nname = "p"\nversion = "1"\n[bayes]\ntau_block = 0.9\n'
    lf = tmp_path / "lf.toml"
    crlf = tmp_path / "crlf.toml"
    lf.write_bytes(text.encode())
    crlf.write_bytes(text.replace("\n", "\r\n").encode())
    lf_profile, crlf_profile = load_profile(lf), load_profile(crlf)
    assert lf_profile.bayes == crlf_profile.bayes  # the same settings...
    assert lf_profile.sha256 == hashlib.sha256(lf.read_bytes()).hexdigest()
    assert crlf_profile.sha256 == hashlib.sha256(crlf.read_bytes()).hexdigest()
    assert lf_profile.sha256 != crlf_profile.sha256  # ...but not the same file
    assert crlf_profile.raw_text.encode() == crlf.read_bytes()
    builtin = load_profile("balanced_default")
    shipped = resources.files("groundtrace.analyzer.gate").joinpath(
        "profiles", "balanced_default.toml"
    )
    assert builtin.sha256 == hashlib.sha256(shipped.read_bytes()).hexdigest()


def test_profile_errors_name_file_and_field(tmp_path) -> None:
    bad = tmp_path / "p.toml"
    bad.write_text('[profile]\nname = "x"\n[bayes]\ntau_block = "high"\n')
    with pytest.raises(ConfigError, match=r"p\.toml.*\[bayes\.tau_block\]"):
        load_profile(bad)
    bad.write_text("[profile\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_profile(bad)
    with pytest.raises(ConfigError, match="cannot read profile"):
        load_profile(tmp_path / "missing.toml")


def test_simulation_separates_regression_from_improvement() -> None:
    bayes = load_profile("balanced_default").bayes
    profiles = {"balanced_default": msgspec.structs.replace(bayes, samples=500)}
    cells = simulate(sizes=(200,), profiles=profiles, reps=100)
    by = {c.scenario: c for c in cells}
    assert by["regression"].mean_rho > by["no_change"].mean_rho > by["improvement"].mean_rho
    assert by["improvement"].promote_rate > by["regression"].promote_rate
    for c in cells:
        assert c.promote_rate + c.review_rate + c.block_rate == pytest.approx(1.0)
    again = simulate(sizes=(200,), profiles=profiles, reps=100)
    assert again == cells


def test_gate_simulate_cli_json() -> None:
    result = CliRunner().invoke(
        app, ["gate", "simulate", "--reps", "20", "--samples", "200", "--json"]
    )
    assert result.exit_code == 0, result.output
    cells = json.loads(result.output)["cells"]
    keys = {
        "scenario",
        "n",
        "profile",
        "promote_rate",
        "review_rate",
        "block_rate",
        "mean_rho",
        "naive_promote_rate",
    }
    assert keys <= set(cells[0])
    assert {c["scenario"] for c in cells} >= {"regression", "no_change", "improvement"}
    assert {c["n"] for c in cells} == {20, 50, 100, 200}
    assert {c["profile"] for c in cells} == {"balanced_default", "decision_grade"}
