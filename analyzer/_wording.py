"""How the readings write numbers, intervals and lists: one wording for every analysis.

Each analysis's reading (``<package>/_reading.py``) says what its result means in a paragraph
generated from the numbers; they all write a number, a share, a 95% interval and a list the
same way, with these helpers.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["ci", "excludes_zero", "interval", "join", "num", "pct", "some"]


def num(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` decimals; a non-zero value that would round to 0 keeps 2 digits."""
    shown = f"{x:.2g}" if 0 < abs(x) < 10**-digits else f"{x:.{digits}f}"
    return shown.replace("-", "−")


def pct(x: float) -> str:
    """``x`` as a percentage with one decimal."""
    return f"{100 * x:.1f}%"


def excludes_zero(low: float | None, high: float | None) -> bool | None:
    """Whether the interval excludes 0 (``None`` when there is no interval)."""
    if low is None or high is None:
        return None
    return low > 0 or high < 0


def ci(low: float | None, high: float | None) -> str:
    """ "95% CI a to b" (or that no interval could be computed)."""
    if low is None or high is None:
        return "no interval could be computed"
    return f"95% CI {num(low)} to {num(high)}"


def interval(low: float | None, high: float | None) -> str:
    """ "95% CI a to b, which excludes 0" (or includes 0, or no interval)."""
    side = excludes_zero(low, high)
    if side is None:
        return "no interval could be computed"
    return f"{ci(low, high)}, which {'excludes' if side else 'includes'} 0"


def join(items: Sequence[str]) -> str:
    """ "a, b and c"."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def some(items: Sequence[str], limit: int = 10, sep: str = ", ") -> str:
    """The first ``limit`` items, then "and N more" for the rest: a list never cut silently."""
    shown = sep.join(items[:limit])
    return shown if len(items) <= limit else f"{shown} and {len(items) - limit} more"
