"""The attribution's public names, and the internals cut elsewhere to keep the analyzer's total
(tests/test_public_surface.py) at most 250: each still imports for a release, with a warning."""

from __future__ import annotations

import importlib
import warnings

import pytest

import groundtrace.analyzer.attribution as attribution

#: Made non-public when attribution's scorers and methods became public (0.2.0).
CUT = {
    "groundtrace.analyzer.demo": ("DEMO_FORMAT_VERSION", "DemoAnalysis", "DemoBackend",
                                  "ExportCounts"),
    "groundtrace.analyzer.pytest_plugin": ("load_gate_report", "load_path_report"),
}  # fmt: skip


def test_the_attribution_exports_its_shape_scorers_and_methods() -> None:
    assert {"ANALYSIS", "Config", "AttributionResult", "LlamaScorer", "EndpointScorer",
            "ContextScorer", "leave_one_out", "hierarchical", "exact_shapley",
            "context_cite"} <= set(attribution.__all__)  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        for name in attribution.__all__:
            getattr(attribution, name)


@pytest.mark.parametrize(
    ("module", "name"), [(m, n) for m, names in CUT.items() for n in names], ids=str
)
def test_a_cut_internal_imports_for_a_release_with_a_warning(module: str, name: str) -> None:
    package = importlib.import_module(module)
    assert name not in package.__all__
    with pytest.warns(DeprecationWarning, match=rf"{module}\.{name} is deprecated since "
                      r"groundtrace 0\.2\.0 and is removed in 0\.3\.0"):  # fmt: skip
        found = getattr(package, name)
    assert found is not None
