"""Names the smaller packages no longer export keep working for one release: each is served from
its package with a DeprecationWarning naming the release that removes it and pointing at the
line that used it (shown by Python's default filters in a user's script), and is the object of
its module (groundtrace 0.2.0 deprecated them; 0.3.0 removes them)."""

from __future__ import annotations

import importlib
import warnings

import pytest

#: package -> the names it no longer exports.
DROPPED = {
    "groundtrace.analyzer": ("ENTRY_POINT_GROUP", "decode", "encode", "to_builtins"),
    "groundtrace.analyzer.llm": (
        "CallResult", "ClientStats", "EndpointLimits", "Price", "absorb_counts",
        "absorb_ledger", "ledger", "take_counts", "take_ledger",
    ),
    "groundtrace.analyzer.metrics": (
        "Fact", "distinguishing_facts", "exact_match", "jaccard_distance", "soft_correct",
        "token_f1",
    ),
    "groundtrace.analyzer.stats": (
        "Alternative", "BOOTSTRAP_METHOD", "SIGN_STREAM", "WILCOXON_METHOD",
        "bootstrap_mean_ci", "bootstrap_means", "sign_flip_pvalues", "wilcoxon_test",
    ),
    "groundtrace.analyzer.cases": ("ExpectedSource", "LAYOUTS", "SupportingFact", "ToolSpec"),
    "groundtrace.analyzer.executor": ("OnResult", "UnitRecord", "Work"),
    "groundtrace.analyzer.backends": (
        "assemble_model", "lexical_transport", "model_cache_dir", "model_spec",
    ),
    "groundtrace.analyzer.replay": ("UnitStatus",),
}  # fmt: skip

CASES = [(package, name) for package, names in DROPPED.items() for name in names]


@pytest.mark.parametrize(("package", "name"), CASES, ids=[f"{p}.{n}" for p, n in CASES])
def test_a_dropped_name_still_imports_with_a_warning(package: str, name: str) -> None:
    module = importlib.import_module(package)
    assert name not in module.__all__
    said = rf"{package}\.{name} is deprecated since groundtrace 0\.2\.0 and is removed in 0\.3\.0"
    with pytest.warns(DeprecationWarning, match=said) as caught:
        found = getattr(module, name)
    assert caught[0].filename == __file__  # the line that used it, not the package's
    home, _, attr = str(caught[0].message).rpartition("use ")[2].rpartition(".")
    assert home.startswith(package + "._")  # the module it lives in
    assert getattr(importlib.import_module(home), attr) is found


@pytest.mark.parametrize("package", list(DROPPED))
def test_the_kept_names_import_without_a_warning(package: str) -> None:
    module = importlib.import_module(package)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in module.__all__:
            getattr(module, name)


@pytest.mark.parametrize("package", ["groundtrace.analyzer", "groundtrace.analyzer.stats"])
def test_an_unknown_name_is_still_an_attribute_error(package: str) -> None:
    with pytest.raises(AttributeError, match=rf"'{package}' has no attribute 'nothing_here'"):
        _ = importlib.import_module(package).nothing_here
