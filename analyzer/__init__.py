"""groundtrace analyzer: offline, batch analyses of captured traces.

Sub-packages: ``metrics`` and ``stats`` (axes and seeded statistics), ``interventions``
(evidence utility by counterfactual replay), ``judge`` (LLM-judge checks and their
meta-evaluation), ``gate`` (the release gate), ``llm`` (the shared model client),
``backends`` (local model backends), ``errors`` (the one exception tree and its exit codes),
``cli`` (the ``groundtrace`` command).

Usage::

    from groundtrace.analyzer.gate import load_profile, simulate

    # one sample size, 20 runs per scenario (the default grid, 4 sizes x 1000 runs, takes minutes)
    profiles = {"balanced_default": load_profile("balanced_default").bayes}
    cells = simulate(profiles=profiles, sizes=(50,), reps=20)
    print([(c.scenario, c.promote_rate, c.block_rate) for c in cells])

Every analysis writes its results as typed records with a format version (:class:`Result`);
read one back with :func:`read`::

    from groundtrace.analyzer import read
    from groundtrace.analyzer.paths import PathReport

    report = read("out/paths/report.json", PathReport)

Every analysis has the same public shape, an :class:`Analysis` record (its config record,
``plan``, an async ``run`` given a :class:`RunContext`, ``write_report``, ``reading``,
``nothing_measured`` and the write-back and demo hooks); :func:`get_analysis` finds one by
name, built-in or a plugin's (entry-point group ``groundtrace.analyses``), and
:func:`run_analysis` (or, inside a running event loop, :func:`run_analysis_async`) runs it
end to end, returning an :class:`AnalysisRun`::

    from groundtrace.analyzer import analyses, get_analysis

    print(analyses())                       # ['audit', 'gate', 'interventions', 'judge', 'paths']
    print(get_analysis("paths").title)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._deprecation import imported_on_use, renamed

if TYPE_CHECKING:
    from ._analysis import (
        Analysis,
        DemoInputs,
        Plan,
        analyses,
        get_analysis,
        load_config,
        register_analysis,
    )
    from ._driver import AnalysisRun, RunContext, run_analysis, run_analysis_async
    from ._results import Result, read, write

__all__ = [
    "Analysis",
    "AnalysisRun",
    "DemoInputs",
    "Plan",
    "Result",
    "RunContext",
    "analyses",
    "get_analysis",
    "load_config",
    "read",
    "register_analysis",
    "run_analysis",
    "run_analysis_async",
    "write",
]

#: Imported on first use: ``import groundtrace.analyzer`` stays cheap.
_SURFACE = {
    "._analysis": ("Analysis", "DemoInputs", "Plan", "analyses", "get_analysis", "load_config",
                   "register_analysis"),
    "._driver": ("AnalysisRun", "RunContext", "run_analysis", "run_analysis_async"),
    "._results": ("Result", "read", "write"),
}  # fmt: skip

#: No longer public (0.2.0; :func:`read` and :func:`write` are the way to a result file):
#: importable from here for one release, with a warning.
__getattr__ = renamed(
    __name__,
    {
        "ENTRY_POINT_GROUP": f"{__name__}._analysis.ENTRY_POINT_GROUP",
        "RESULT_FORMAT_VERSION": f"{__name__}._results.RESULT_FORMAT_VERSION",
        "decode": f"{__name__}._results.decode",
        "encode": f"{__name__}._results.encode",
        "to_builtins": f"{__name__}._results.to_builtins",
    },
    since="0.2.0",
    remove_in="0.3.0",
    fallback=imported_on_use(__name__, _SURFACE),
)
