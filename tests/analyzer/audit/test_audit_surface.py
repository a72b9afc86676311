"""The audit's public surface is its shape, its records and its extension points.

Every name dropped from ``groundtrace.analyzer.audit.__all__`` still imports for one release,
with a DeprecationWarning naming its private home and the release that removes it.
"""

from __future__ import annotations

import importlib
import warnings

import pytest

import groundtrace.analyzer.audit as audit

#: What a user of the audit reads: the shape, and the records it takes and gives.
SHAPE = {"ANALYSIS", "Config", "plan", "run", "estimate", "write_report", "reading"}
#: Names a plugged-in answerer, retriever or labeller is written against.
EXTENSION_POINTS = {"AnswerFn", "Cues", "Retriever", "Chosen", "PairLabeller"}
#: The source format's helpers a corpus builder uses (the licence example's ``corpus.py``).
SOURCE_FORMAT = {"GENERAL_SCOPE", "Stance", "front_matter", "in_scope", "render_answer"}


def test_the_surface_is_small_and_holds_the_shape_and_the_extension_points() -> None:
    assert len(audit.__all__) <= 33
    assert SHAPE | EXTENSION_POINTS | SOURCE_FORMAT <= set(audit.__all__)
    for name in audit.__all__:
        assert getattr(audit, name) is not None


@pytest.mark.parametrize(
    ("old", "home"),
    [
        ("AuditComparison", "groundtrace.analyzer.audit._compare"),
        ("summarise", "groundtrace.analyzer.audit._summary"),
        ("run_audit", "groundtrace.analyzer.audit._run"),
        ("run_audit_folder", "groundtrace.analyzer.audit._folder"),
        ("PREFILTER_RULES", "groundtrace.analyzer.audit._pairs"),
        ("TracedAnswering", "groundtrace.analyzer.audit._app"),
        ("load_inputs", "groundtrace.analyzer.audit._inputs"),
    ],
)
def test_a_dropped_name_imports_for_a_release_with_a_warning(old: str, home: str) -> None:
    with pytest.warns(DeprecationWarning, match=rf"audit\.{old} .* removed in 0\.3\.0: use {home}"):
        found = getattr(audit, old)
    assert found is getattr(importlib.import_module(home), old)
    assert old not in audit.__all__


def test_the_public_names_import_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        for name in audit.__all__:
            getattr(audit, name)
