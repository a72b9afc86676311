"""Seeds derived from content: the same draw whichever process makes it, in whatever order."""

from __future__ import annotations

import hashlib

__all__ = ["derived_seed", "derived_uniform"]


def derived_seed(base: int, *parts: object) -> int:
    """A 63-bit seed that depends on ``base`` and ``parts`` alone (sha256 of their text)."""
    text = "\x1f".join(map(str, (base, *parts)))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def derived_uniform(base: int, *parts: object) -> float:
    """A number in ``[0, 1)`` that depends on ``base`` and ``parts`` alone."""
    return derived_seed(base, *parts) / 2**63
