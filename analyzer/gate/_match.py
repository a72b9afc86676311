"""Text matching for the deterministic checks: NFKC, case-folding, accent stripping, synonyms.

``"Café  Déjà-vu"`` and ``"cafe deja vu"`` match; a synonym group ``["refund", "reimbursement"]``
makes either term satisfy an expected term or trip a forbidden phrase. Synonym groups are
profile settings, versioned with the profile.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache

__all__ = ["SynonymMatcher", "fold"]

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


@lru_cache(maxsize=4096)
def fold(text: str) -> str:
    """NFKC, case-fold, strip accents, and collapse punctuation/whitespace to single spaces."""
    text = unicodedata.normalize("NFKC", text).casefold()
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _NON_WORD.sub(" ", stripped).strip()


class SynonymMatcher:
    """Finds a term, or any of its synonyms, as a whole-word phrase in a text."""

    def __init__(self, groups: Iterable[Sequence[str]] = ()) -> None:
        self._groups: dict[str, tuple[str, ...]] = {}
        for group in groups:
            folded = tuple(dict.fromkeys(fold(term) for term in group if fold(term)))
            for term in folded:
                self._groups[term] = tuple(dict.fromkeys(self._groups.get(term, ()) + folded))

    def variants(self, term: str) -> tuple[str, ...]:
        """The folded term and its synonyms."""
        key = fold(term)
        return self._groups.get(key, (key,)) if key else ()

    def find(self, term: str, text: str) -> str | None:
        """The first variant of ``term`` found in ``text`` (folded), else ``None``."""
        haystack = f" {fold(text)} "
        for variant in self.variants(term):
            if f" {variant} " in haystack:
                return variant
        return None
