"""The shipped licence audit behind ``groundtrace audit run`` without ``--sources``.

The licence example (its retrieval, corpus and cues) is a user of the audit's public interface;
this module is the one place the command reaches it, like the demo's other phases.

Usage::

    run = asyncio.run(run_shipped_audit(out=Path("runs/audit"), answerer=extractive_answer))
"""

from __future__ import annotations

from typing import Any

from groundtrace.analyzer.audit import AuditRun

__all__ = ["estimate_shipped_audit", "run_shipped_audit"]


async def run_shipped_audit(**options: Any) -> AuditRun:
    """``run_licence_audit`` of the licence example with ``options``."""
    from groundtrace.examples.license_audit.audit import run_licence_audit

    return await run_licence_audit(**options)


async def estimate_shipped_audit(**options: Any) -> AuditRun:
    """``estimate_licence_audit`` of the licence example with ``options``."""
    from groundtrace.examples.license_audit.audit import estimate_licence_audit

    return await estimate_licence_audit(**options)
