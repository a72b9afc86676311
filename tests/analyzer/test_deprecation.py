"""The older public drivers still work for a release and say what replaces them and when
they go (``remove_in``); renamed names say it too when given."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from groundtrace.analyzer._deprecation import deprecated, renamed
from groundtrace.analyzer.audit._folder import run_audit_folder
from groundtrace.analyzer.errors import GroundtraceError
from groundtrace.analyzer.interventions._deprecated import (
    RunConfig,
    estimate_requests,
    run_interventions,
    run_interventions_async,
)


@pytest.mark.parametrize(
    ("call", "name", "use"),
    [
        (lambda out: run_interventions([], RunConfig(out_dir=out)), "run_interventions",
         "groundtrace.analyzer.run_analysis"),
        (lambda out: run_interventions_async([], RunConfig(out_dir=out)),
         "run_interventions_async", "groundtrace.analyzer.run_analysis_async"),
        (lambda out: estimate_requests([], RunConfig(out_dir=out, endpoint="http://x", model="m")),
         "estimate_requests", "estimate=True"),
        (lambda out: run_audit_folder(out, None, None, None), "run_audit_folder",  # type: ignore[arg-type]
         "groundtrace.analyzer.run_analysis_async"),
    ],
)  # fmt: skip
def test_an_old_driver_warns_naming_its_replacement_and_removal(
    tmp_path: Path, call: Callable[[Path], Any], name: str, use: str
) -> None:
    with pytest.warns(DeprecationWarning) as caught:
        try:
            made = call(tmp_path)
        except GroundtraceError:  # the inputs are empty: only the warning matters here
            made = None
        if asyncio.iscoroutine(made):
            made.close()
    message = str(caught[0].message)
    assert f".{name} is deprecated since groundtrace 0.2.0 and is removed in 0.3.0" in message
    assert use in message
    assert caught[0].filename == __file__  # the warning names the caller's line


def test_the_helpers_name_the_removal_release_only_when_given() -> None:
    get = renamed("pkg", {"old": "json.dumps"}, since="0.2.0", remove_in="0.3.0")
    with pytest.warns(DeprecationWarning, match=r"pkg\.old is deprecated since groundtrace "
                      r"0\.2\.0 and is removed in 0\.3\.0: use json\.dumps"):  # fmt: skip
        get("old")

    @deprecated(since="0.2.0", use="something else")
    def old() -> int:
        return 7

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert old() == 7
    assert "removed" not in str(seen[0].message) and "use something else" in str(seen[0].message)
