"""The shipped licence audit: the example's config, which ``groundtrace audit run`` without
``--sources`` runs through the one driver.

The licence example (its corpus files and retriever) is a user of the audit's public
interface; this module is the one place the command reaches it, like the demo's other phases.

Usage::

    config = licence_config("runs/audit", max_sources=12)
    done = await run_analysis_async(audit.ANALYSIS, config, out=config.out)
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from groundtrace.analyzer.audit import AuditResult, Config

__all__ = ["licence_config", "run_shipped_audit"]


def licence_config(
    out: str | Path,
    *,
    retrieval: Literal["auto", "flat"] = "auto",
    questions: Collection[str] = (),
    max_sources: int | None = None,
    subset: Path | None = None,
) -> Config:
    """The licence example's audit config (``licence_config`` of
    :mod:`groundtrace.examples.license_audit.audit`): the shipped corpus files, or a subset
    of them written into ``subset`` (default ``out/corpus``), and the example's retriever."""
    from groundtrace.examples.license_audit.audit import licence_config as made

    return made(
        out, retrieval=retrieval, questions=questions, max_sources=max_sources, subset=subset
    )


async def run_shipped_audit(
    *,
    out: Path,
    max_sources: int | None = None,
    progress: Callable[[str, int, int | None], None] | None = None,
) -> AuditResult:
    """The licence audit of :func:`licence_config` into ``out``, through the one driver.

    Deprecated since 0.2.0, removed in 0.3.0: ``await run_analysis_async(audit.ANALYSIS,
    licence_config(out), out=out)``.

    Raises:
        NothingMeasuredError: no answer says anything (the reports are written first).
    """
    warnings.warn(
        "groundtrace.analyzer.demo.run_shipped_audit is deprecated since groundtrace 0.2.0 and "
        "is removed in 0.3.0: use groundtrace.analyzer.run_analysis_async(audit.ANALYSIS, "
        "licence_config(out), out=out)", DeprecationWarning, stacklevel=2,
    )  # fmt: skip
    from groundtrace.analyzer import run_analysis_async
    from groundtrace.analyzer.audit import ANALYSIS
    from groundtrace.analyzer.errors import NothingMeasuredError

    config = licence_config(out, max_sources=max_sources)
    done = await run_analysis_async(ANALYSIS, config, out=out, progress=progress)
    if done.reason is not None:
        raise NothingMeasuredError(f"{done.reason}; the run's files are in {out}")
    assert done.result is not None
    return done.result
