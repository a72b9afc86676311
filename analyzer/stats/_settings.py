"""Statistics settings (SPEC 4.2.2 defaults), one frozen object recorded with every result."""

from __future__ import annotations

from typing import Literal

import msgspec

from groundtrace.analyzer.errors import ConfigError

__all__ = ["Alternative", "StatsSettings"]

#: Direction of a test: ``"two-sided"`` (mean delta != 0), ``"greater"`` (> 0), ``"less"`` (< 0).
Alternative = Literal["two-sided", "greater", "less"]


class StatsSettings(msgspec.Struct, frozen=True):
    """How paired deltas are summarised; every field is a profile setting.

    Attributes:
        n_resamples: bootstrap resamples B (SPEC default 5000).
        seed: seed of the bootstrap index matrix (SPEC default 42).
        confidence: level of the percentile interval (0.95).
        n_permutations: random sign vectors of the sign-flip test (5000).
        permutation_seed: seed of the sign matrix (drawn from its own stream, see
            :data:`groundtrace.analyzer.stats.SIGN_STREAM`).
        exact_permutation: enumerate all ``2**n`` sign flips instead of sampling when
            ``2**n <= n_permutations`` (n <= 12 at the defaults): exact and cheaper.
    """

    n_resamples: int = 5000
    seed: int = 42
    confidence: float = 0.95
    n_permutations: int = 5000
    permutation_seed: int = 42
    exact_permutation: bool = True

    def __post_init__(self) -> None:
        if self.n_resamples < 1:
            raise ConfigError("must be >= 1", field="n_resamples")
        if self.n_permutations < 1:
            raise ConfigError("must be >= 1", field="n_permutations")
        if not 0.0 < self.confidence < 1.0:
            raise ConfigError("must lie strictly between 0 and 1", field="confidence")
