"""The gate's config record: what a gate run compares and how (its options and its
``groundtrace analyze gate --config`` file), apart from the run so that ``groundtrace gate run
--help`` loads it alone."""

from __future__ import annotations

from typing import Annotated

import msgspec

__all__ = ["Config"]


class Config(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What a gate run compares and how (``groundtrace analyze gate --config FILE``).

    Attributes:
        baseline: trace files or folders of the baseline run (the version in production).
        candidate: trace files or folders of the candidate run (the version to ship).
        cases: the case file (JSON lines, ``docs/cases.md``); a case file that still holds PII
            or secrets is refused (``groundtrace gate curate`` redacts it).
        profile: a built-in profile name (``balanced_default``, ``decision_grade``) or the
            path of a profile TOML file.
        judge: the judge layer's judge: ``"lexical"`` (the offline baseline judge); None: no
            judge layer.
        judge_records: validation records of the judge (``groundtrace judge validate``); a
            ``block`` metric blocks only with a gate-eligible record.
        junit: where to also write the JUnit XML of the case decisions (None: not written).
        strict: refuse the traces when any line cannot be read (else the line is skipped
            and noted in the report).
        tools_config: which tool arguments are resources read, for the command-path layer
            (``groundtrace paths --tools-config``, ``docs/agents.md``); None: each TOOL
            span's recorded ``paths_read``.
    """

    baseline: tuple[str, ...]
    candidate: tuple[str, ...]
    cases: str
    profile: str = "balanced_default"
    judge: str | None = None
    judge_records: Annotated[tuple[str, ...], msgspec.Meta(extra={"option": "--judge-record"})] = ()
    junit: str | None = None
    strict: bool = False
    tools_config: str | None = None
