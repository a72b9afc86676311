"""The audit's pre-filters decide a pair only where they are right on real multi-source text.

Measured on the shipped RAMDocs sample (multi-document answers with per-document gold, see
``benchmarks/audit_prefilters.py``): every rule that decides pairs in the audit holds the
minimum precision there, the recorded precision of each rule is the measured one, and the
quantities of an answer leave out the numbers of names and identifiers, tell years from counts
and compare units.
"""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from groundtrace.analyzer.audit import Answer
from groundtrace.analyzer.audit._pairs import prefilter

ROOT = Path(__file__).resolve().parents[3]


def _benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("audit_prefilters", ROOT / "benchmarks" /
                                                  "audit_prefilters.py")  # fmt: skip
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _a(source: str, text: str) -> Answer:
    return Answer(question_id="q", source_id=source, stance="yes", text=text)


@pytest.mark.timeout(120)
def test_every_deciding_rule_holds_the_minimum_precision_on_real_text() -> None:
    bench = _benchmark()
    decided: Counter[str] = Counter()
    right: Counter[str] = Counter()
    for form in ("sentence", "short"):
        for a, b, gold in bench.labelled_pairs(bench.DEFAULT_DATA, form):
            label = prefilter(a, b, "answer")
            if label is not None:
                decided[label.decided_by] += 1
                right[label.decided_by] += label.label == gold
    assert decided["prefilter:identical"] > 100 and decided["prefilter:one-absent"] > 100
    low = {rule: f"{right[rule]}/{n}" for rule, n in decided.items() if right[rule] / n < 0.95}
    assert not low, f"rules deciding below 0.95 precision on RAMDocs: {low}"


@pytest.mark.timeout(120)
def test_the_recorded_precision_is_the_measured_one() -> None:
    from groundtrace.analyzer.audit._pairs import MIN_PRECISION, PREFILTER_PRECISION, rule_decides

    report = _benchmark().measure(_benchmark().DEFAULT_DATA, "sentence")
    for rule, (precision, fired) in PREFILTER_PRECISION.items():
        measured = report["rules"][rule]
        if precision is None:  # a definition of its label: it decides
            assert rule_decides(rule)
            continue
        assert (round(measured["precision"], 3), measured["decided"]) == (precision, fired)
        assert rule_decides(rule) == (precision >= MIN_PRECISION)
    # the replaced rule (numbers anywhere, none shared) was far below it
    assert report["rules"]["numbers-anywhere"]["precision"] < 0.5


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Under ISO 9001 audits are held every year.", "Audits are held every 12 months."),
        ("The COVID-19 vaccine needs two doses.", "Two doses of the vaccine are needed."),
        ("GPT-4 was released in March.", "It was released in March."),
        ("Windows 10 support ends after 5 years.", "Support ends after 5 years."),
    ],
)
def test_numbers_inside_names_are_not_quantities(a: str, b: str) -> None:
    assert prefilter(_a("a", a), _a("b", b), "t") is None
    from groundtrace.analyzer.audit._pairs import conflicting_quantities

    assert not conflicting_quantities(a, b)


def test_years_counts_and_units() -> None:
    from groundtrace.analyzer.audit._pairs import conflicting_quantities
    from groundtrace.analyzer.audit._quantities import template

    assert template("As of the 2010 census the population was 459.")[1] == (
        ("year", 2010.0), ("n:bare", 459.0))  # fmt: skip
    assert template("It has 2000 members.")[1] == (("n:member", 2000.0),)
    assert template("Version 3.11.2 needs 40% less memory.")[1] == (("n:percent", 40.0),)
    # a year is never compared with a count; equal quantities in other units agree
    assert not conflicting_quantities("founded in 1998", "founded with 1998 members")
    assert not conflicting_quantities("notice within 12 months", "notice within 1 year")
    assert not conflicting_quantities("a limit of 5 kg per bag", "a limit of 5000 g per bag")
    assert not conflicting_quantities("a 40% share of sales", "a 40 percent share of sales")
    # the same words around a different quantity of one kind differ
    assert conflicting_quantities("notice within 30 days", "notice within 60 days")
    assert conflicting_quantities(
        "in 2010 the population was 459", "in 2010 the population was 1,234"
    )
    # two bare numbers need not be about one subject
    assert not conflicting_quantities("9,523", "174")
