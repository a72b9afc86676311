"""User text in Markdown reports, fenced so it renders as the text it is.

Case ids, titles, strata, reasons that quote a model answer: everything that comes from a case
file, a trace or a model goes into ``summary.md`` (a job summary, a pull-request comment) and
the other Markdown reports through :func:`literal`. Plain words (letters, digits, spaces,
``-`` and ``.``, as most case ids and strata are) are written as they are; any other text as an
inline code span, so a model answer cannot place an image, a link, ``<details>``, raw HTML, an
``@`` mention or an ``#123`` reference where the report is rendered: inside a code span GitHub
renders none of these. The HTML reports escape their text with :func:`html.escape` instead.
"""

from __future__ import annotations

import re

__all__ = ["literal"]

#: Line breaks of any kind: a code span is one line (a break could end the list item or row).
_BREAKS = re.compile(r"[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]+")
_TICKS = re.compile(r"`+")
#: Text that renders as itself in Markdown (no markup, no autolink: ``www.`` needs a fence).
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9.\- ]*")


def literal(text: str, *, table: bool = False) -> str:
    """``text`` as inline Markdown that renders exactly as ``text`` (on one line).

    Plain words are returned as they are; anything else becomes a code span. Its fence is one
    backtick longer than the longest run of backticks in ``text``; a space pads a text that
    starts or ends with a backtick or a space (CommonMark strips one). Line breaks become
    spaces. ``table``: the span is in a table cell, where GitHub needs ``|`` written ``\\|``
    even inside a code span (it still renders ``|``).

    Args:
        text: user text (a case id, a title, a model answer, a reason quoting one).
        table: escape ``|`` for a table cell.
    """
    if _PLAIN.fullmatch(text) and "www." not in text.lower():
        return text
    flat = _BREAKS.sub(" ", text)
    if table:
        flat = flat.replace("|", "\\|")
    if not flat:
        return ""
    fence = "`" * (1 + max((len(run) for run in _TICKS.findall(flat)), default=0))
    pad = " " if flat[0] in "` " or flat[-1] in "` " else ""
    return f"{fence}{pad}{flat}{pad}{fence}"
