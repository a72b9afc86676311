"""groundtrace analyzer: offline, batch analyses of captured traces.

Sub-packages: ``metrics`` and ``stats`` (axes and seeded statistics), ``interventions``
(evidence utility by counterfactual replay), ``judge`` (LLM-judge checks and their
meta-evaluation), ``gate`` (the release gate), ``llm`` (the shared model client),
``backends`` (local model backends), ``errors`` (the one exception tree and its exit codes),
``cli`` (the ``groundtrace`` command).

Usage::

    from groundtrace.analyzer.gate import load_profile, simulate

    cells = simulate(profiles={"balanced_default": load_profile("balanced_default").bayes})
"""

from __future__ import annotations

__all__: list[str] = []
