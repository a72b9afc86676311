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
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from groundtrace.analyzer.errors import ConfigError

from ._bayes import BayesSettings, StratumThresholds

__all__ = ["BUILTIN_PROFILES", "Profile", "load_profile"]

#: Names of the profiles shipped with groundtrace.
BUILTIN_PROFILES: tuple[str, ...] = ("balanced_default", "decision_grade")


@dataclass(frozen=True, slots=True)
class Profile:
    """A loaded profile: its identity, raw data, hash and the parsed Bayesian settings.

    Attributes:
        name: the profile's ``profile.name``.
        version: the profile's ``profile.version`` (``"0"`` when absent).
        source: ``builtin:<name>`` or the file path.
        sha256: sha256 of the file's exact bytes (no newline translation).
        raw_text: the file's text, decoded as UTF-8 with its newlines as they are.
        data: the parsed TOML.
        bayes: the Bayesian decision settings.
        min_evaluable: least share of evaluable cases (``coverage.min_evaluable``).
        paths_critical: whether a failed command path always blocks (``paths.critical``;
            default false: the case goes to manual review, or blocks when it is critical).
    """

    name: str
    version: str
    source: str
    sha256: str
    raw_text: str
    data: dict[str, Any]
    bayes: BayesSettings
    min_evaluable: float
    paths_critical: bool = False


def _number(table: dict[str, Any], key: str, default: float, where: str) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"expected a number, got {value!r}", path=where, field=key)
    return float(value)


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
    meta = data.get("profile", {})
    bayes = data.get("bayes", {})
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError("missing profile name", path=source, field="profile.name")
    strata_table = bayes.get("strata", {})
    strata = {
        stratum: StratumThresholds(
            delta=_number(t, "delta", 0.03, source),
            tau_block=_number(t, "tau_block", 0.8, source),
            tau_review=_number(t, "tau_review", 0.5, source),
        )
        for stratum, t in strata_table.items()
    }
    weights = {
        k: _number(bayes.get("weights", {}), k, 0.0, source) for k in bayes.get("weights", {})
    }
    samples = int(_number(bayes, "samples", 20_000, source))
    settings = BayesSettings(
        prior_alpha=_number(bayes, "prior_alpha", 1.0, source),
        prior_beta=_number(bayes, "prior_beta", 1.0, source),
        delta=_number(bayes, "delta", 0.03, source),
        tau_block=_number(bayes, "tau_block", 0.8, source),
        tau_review=_number(bayes, "tau_review", 0.5, source),
        samples=samples,
        seed=int(_number(bayes, "seed", 20260709, source)),
        weights=weights,
        strata=strata,
    )
    if not 0.0 <= settings.tau_review <= settings.tau_block <= 1.0:
        raise ConfigError("need 0 <= tau_review <= tau_block <= 1", path=source, field="bayes")
    if settings.prior_alpha <= 0 or settings.prior_beta <= 0 or samples < 1:
        raise ConfigError("priors must be > 0 and samples >= 1", path=source, field="bayes")
    paths_critical = data.get("paths", {}).get("critical", False)
    if not isinstance(paths_critical, bool):
        raise ConfigError(
            f"expected true or false, got {paths_critical!r}", path=source, field="paths.critical"
        )
    return Profile(
        name=name,
        version=str(meta.get("version", "0")),
        source=source,
        sha256=hashlib.sha256(raw).hexdigest(),
        raw_text=text,
        data=data,
        bayes=settings,
        min_evaluable=_number(data.get("coverage", {}), "min_evaluable", 0.9, source),
        paths_critical=paths_critical,
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
