"""Does a quoted snippet occur in the content that was read? (normalised, fuzzy)

Both texts are normalised: Unicode NFKC, lower-case, every run of punctuation or
whitespace becomes one space. A quote *occurs* when its normalised form is a substring of
the normalised content (ratio 1.0), or else when some window of the content's tokens, as
long as the quote (plus or minus one token), reaches a ``difflib.SequenceMatcher`` ratio of
at least :data:`DEFAULT_QUOTE_THRESHOLD` (0.9) with it. The window search is exhaustive (no
sampling), with ``real_quick_ratio``/``quick_ratio`` as exact upper bounds to skip windows.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Final

__all__ = ["DEFAULT_QUOTE_THRESHOLD", "QuoteMatch", "best_quote_match", "normalise_snippet"]

#: Minimum SequenceMatcher ratio for a fuzzy quote match (a profile setting).
DEFAULT_QUOTE_THRESHOLD: Final = 0.9

_SEPARATORS: Final = re.compile(r"[\W_]+", re.UNICODE)


def normalise_snippet(text: str) -> str:
    """NFKC, lower-case, punctuation and whitespace runs collapsed to one space."""
    folded = unicodedata.normalize("NFKC", text).lower()
    return _SEPARATORS.sub(" ", folded).strip()


@dataclass(frozen=True, slots=True)
class QuoteMatch:
    """Best occurrence of a quote in one source.

    Attributes:
        source: the resource (path / id) whose content was searched.
        ratio: 1.0 for a normalised substring, else the best window ratio.
        excerpt: the best-matching normalised window of the content.
    """

    source: str
    ratio: float
    excerpt: str


def _best_in(quote: str, content: str) -> tuple[float, str]:
    if not quote:
        return 0.0, ""
    if quote in content:
        return 1.0, quote
    q_tokens = quote.split()
    c_tokens = content.split()
    best, best_text = 0.0, ""
    n = len(q_tokens)
    for size in (n, n - 1, n + 1):
        if size < 1 or size > len(c_tokens):
            continue
        for start in range(len(c_tokens) - size + 1):
            window = " ".join(c_tokens[start : start + size])
            matcher = SequenceMatcher(None, quote, window, autojunk=False)
            if matcher.real_quick_ratio() <= best or matcher.quick_ratio() <= best:
                continue
            ratio = matcher.ratio()
            if ratio > best:
                best, best_text = ratio, window
    return best, best_text


def best_quote_match(quote: str, sources: Iterable[tuple[str, str]]) -> QuoteMatch | None:
    """The best occurrence of ``quote`` over ``(source, content)`` pairs (``None``: no sources).

    Args:
        quote: the quoted snippet (raw).
        sources: the content actually read, per resource.
    """
    wanted = normalise_snippet(quote)
    best: QuoteMatch | None = None
    for source, content in sources:
        ratio, excerpt = _best_in(wanted, normalise_snippet(content))
        if best is None or ratio > best.ratio:
            best = QuoteMatch(source=source, ratio=ratio, excerpt=excerpt)
        if ratio == 1.0:
            break
    return best
