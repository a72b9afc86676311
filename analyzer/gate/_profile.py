"""Versioned gate profiles (TOML) with a content hash.

A profile holds every setting of the gate; the built-in ones live in ``profiles/`` next to
this module. A decision is re-derivable from (dataset snapshot hash, profile snapshot hash,
code version): :attr:`Profile.sha256` is the sha256 of the profile file's exact bytes, read
without newline or encoding translation, so a CRLF copy of a file has another hash than the
LF original and the snapshot names exactly the file that decided.
"""

from __future__ import annotations

import hashlib
import tomllib
import warnings
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import msgspec

from groundtrace.analyzer._invalid import located
from groundtrace.analyzer.errors import ConfigError

from ._bayes import BayesSettings

__all__ = [
    "BUILTIN_PROFILES",
    "ChecksTable",
    "CoverageTable",
    "GuardrailsTable",
    "JudgeTable",
    "PathsTable",
    "Profile",
    "ProfileMeta",
    "ProfileSettings",
    "SynonymsTable",
    "load_profile",
]

#: A judge metric's mode (``[judge] modes``).
JudgeMode = Literal["block", "review", "observe"]
#: A guardrail rule's action, from most to least severe (``[guardrails] actions``).
Action = Literal["block", "warn", "log"]

#: Names of the profiles shipped with groundtrace.
BUILTIN_PROFILES: tuple[str, ...] = ("balanced_default", "decision_grade")


class _Table(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A table of the profile file: a misspelt key is refused, never ignored."""


class ProfileMeta(_Table, frozen=True, kw_only=True):
    """``[profile]``: the profile's identity (recorded in every gate snapshot)."""

    name: str
    version: str | int | float = "0"


class CoverageTable(_Table, frozen=True, kw_only=True):
    """``[coverage]``: the least share of evaluable cases (below it: not evaluable)."""

    min_evaluable: float = 0.9


class JudgeTable(_Table, frozen=True, kw_only=True):
    """``[judge]``: layer 3, the working threshold and each metric's mode."""

    threshold: float = 0.8  # the judge's DEFAULT_THRESHOLD
    modes: dict[str, JudgeMode] = msgspec.field(default_factory=lambda: {"adherence": "review"})


class GuardrailsTable(_Table, frozen=True, kw_only=True):
    """``[guardrails]``: layer 2, the actions of the non-critical rules."""

    actions: dict[str, Action] = msgspec.field(default_factory=dict)


class SynonymsTable(_Table, frozen=True, kw_only=True):
    """``[synonyms]``: groups of terms an expected term or forbidden phrase matches alike."""

    groups: tuple[tuple[str, ...], ...] = ()


class ChecksTable(_Table, frozen=True, kw_only=True):
    """``[checks]``: layer 1, the token F1 a reference answer needs."""

    f1_threshold: float = 0.8


class PathsTable(_Table, frozen=True, kw_only=True):
    """``[paths]``: whether a failed command path always blocks (default: manual review, or
    block for a critical case)."""

    critical: bool = False


class ProfileSettings(_Table, frozen=True, kw_only=True):
    """A profile file, decoded: every table with its defaults (an absent table is its
    defaults; an unknown table or key, or a value of the wrong type, is refused)."""

    profile: ProfileMeta
    bayes: BayesSettings = msgspec.field(default_factory=BayesSettings)
    coverage: CoverageTable = msgspec.field(default_factory=CoverageTable)
    judge: JudgeTable = msgspec.field(default_factory=JudgeTable)
    guardrails: GuardrailsTable = msgspec.field(default_factory=GuardrailsTable)
    synonyms: SynonymsTable = msgspec.field(default_factory=SynonymsTable)
    checks: ChecksTable = msgspec.field(default_factory=ChecksTable)
    paths: PathsTable = msgspec.field(default_factory=PathsTable)


@dataclass(frozen=True, slots=True)
class Profile:
    """A loaded profile: its identity, settings, hash and the parsed Bayesian settings.

    Attributes:
        name: the profile's ``profile.name``.
        version: the profile's ``profile.version`` (``"0"`` when absent).
        source: ``builtin:<name>`` or the file path.
        sha256: sha256 of the file's exact bytes (no newline translation).
        raw_text: the file's text, decoded as UTF-8 with its newlines as they are.
        settings: the file's tables, decoded with their defaults.
        bayes: the Bayesian decision settings (the ``[bayes]`` table, ``settings.bayes``).
    """

    name: str
    version: str
    source: str
    sha256: str
    raw_text: str
    settings: ProfileSettings
    bayes: BayesSettings

    @property
    def min_evaluable(self) -> float:
        """Least share of evaluable cases (``coverage.min_evaluable``)."""
        return self.settings.coverage.min_evaluable

    @property
    def paths_critical(self) -> bool:
        """Whether a failed command path always blocks (``paths.critical``)."""
        return self.settings.paths.critical

    @property
    def data(self) -> dict[str, Any]:
        """The parsed TOML (deprecated: read the typed :attr:`settings`)."""
        warnings.warn(
            "groundtrace.analyzer.gate.Profile.data is deprecated since groundtrace 0.2.0 and "
            "is removed in 0.3.0: use Profile.settings",
            DeprecationWarning,
            stacklevel=2,
        )
        return tomllib.loads(self.raw_text)


def _parse(raw: bytes, source: str) -> Profile:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"not UTF-8 text: {exc.reason} at byte {exc.start}", path=source
        ) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML: {exc}", path=source) from None
    try:
        settings = msgspec.convert(data, ProfileSettings)
    except msgspec.ValidationError as exc:
        reason, field = located(exc)
        raise ConfigError(reason, path=source, field=field or None) from None
    if not settings.profile.name:
        raise ConfigError("missing profile name", path=source, field="profile.name")
    bayes = settings.bayes
    if not 0.0 <= bayes.tau_review <= bayes.tau_block <= 1.0:
        raise ConfigError("need 0 <= tau_review <= tau_block <= 1", path=source, field="bayes")
    if bayes.prior_alpha <= 0 or bayes.prior_beta <= 0 or bayes.samples < 1:
        raise ConfigError("priors must be > 0 and samples >= 1", path=source, field="bayes")
    return Profile(
        name=settings.profile.name,
        version=str(settings.profile.version),
        source=source,
        sha256=hashlib.sha256(raw).hexdigest(),
        raw_text=text,
        settings=settings,
        bayes=bayes,
    )


def load_profile(name_or_path: str | Path) -> Profile:
    """Load a built-in profile by name or a profile file by path."""
    if str(name_or_path) in BUILTIN_PROFILES:
        ref = resources.files(__package__).joinpath("profiles", f"{name_or_path}.toml")
        return _parse(ref.read_bytes(), f"builtin:{name_or_path}")
    path = Path(name_or_path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read profile: {exc.strerror}", path=str(path)) from None
    return _parse(raw, str(path))
