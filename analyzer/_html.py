"""The one way the analyzer writes its HTML reports: self-contained pages that fit a window.

Every report page (gate, interventions, paths, audit) is built from these pieces: :func:`page`
(the document, one stylesheet, no scripts, no external assets), :func:`table` (escaped cells;
a wide table scrolls inside its own box so the page never scrolls sideways), :func:`ident`
(an id that may wrap at any character, so a table of ids fits the page), :func:`left_out` (what a
capped table does not show, and where the full data is), :func:`details`
(collapsible groups), :func:`banner` (a decision), :func:`reading` (the plain-language reading
of the numbers), :func:`figure` (a matplotlib figure inlined as a PNG data URI) and
:func:`value` (any result value -- a struct, mapping, list or scalar -- rendered generically, so
a field added to a record shows up without new rendering code).
"""

from __future__ import annotations

import base64
import io
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

import msgspec

__all__ = [
    "CONTENT_WIDTH",
    "Html",
    "banner",
    "bullets",
    "details",
    "figure",
    "figure_inches",
    "heading",
    "ident",
    "join",
    "left_out",
    "no_plot",
    "page",
    "paragraphs",
    "pyplot",
    "reading",
    "section",
    "table",
    "text",
    "value",
]

#: Content width of every page (px); figures are drawn to fit it.
CONTENT_WIDTH = 1120

_STYLE = f"""
*{{box-sizing:border-box}}
body{{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;line-height:1.45;color:#1d232a;
margin:0 auto;padding:1.5em 2em;max-width:{CONTENT_WIDTH + 64}px;overflow-wrap:break-word}}
h1{{font-size:1.6em;margin:.3em 0}}h2{{font-size:1.25em;margin:1.4em 0 .4em;
border-bottom:1px solid #e2e5e9}}h3{{font-size:1.05em;margin:1em 0 .3em}}
table{{border-collapse:collapse;font-size:13px;display:block;overflow-x:auto;max-width:100%;
margin:.5em 0}}
td,th{{border:1px solid #d5d9de;padding:3px 8px;vertical-align:top;text-align:left}}
.id{{overflow-wrap:anywhere}}
th{{background:#f3f5f7}}td.num{{text-align:right;font-variant-numeric:tabular-nums}}
img,svg{{max-width:100%;height:auto}}
details{{margin:.3em 0;border:1px solid #e2e5e9;border-radius:4px;padding:.3em .6em}}
summary{{cursor:pointer;font-weight:600}}
.banner{{padding:.8em 1.2em;border-radius:6px;font-size:1.3em;font-weight:700;margin:.6em 0}}
.good{{background:#e3f4e8;border:1px solid #2e8b57}}.warn{{background:#fdf3d8;
border:1px solid #c99a06}}.bad{{background:#fbe4e1;border:1px solid #c0392b}}
.neutral{{background:#eef0f3;border:1px solid #8a939d}}
.reading{{background:#f6f8fb;border-left:4px solid #4a78b5;padding:.6em 1em;margin:.8em 0}}
.muted{{color:#5b6570;font-size:.9em}}
"""


class Html(str):
    """Markup that is already safe (rendered by this module); every other string is escaped."""

    __slots__ = ()


def text(content: object) -> Html:
    """``content`` as escaped text (``None``: an en dash)."""
    if isinstance(content, Html):
        return content
    if content is None:
        return Html("–")
    if isinstance(content, float):
        return Html(f"{content:.3f}")
    return Html(escape(str(content)))


def _cell(content: object) -> str:
    numeric = isinstance(content, int | float) and not isinstance(content, bool)
    return f"<td class='num'>{text(content)}</td>" if numeric else f"<td>{text(content)}</td>"


def table(header: Sequence[object], rows: Iterable[Sequence[object]]) -> Html:
    """A table (scrolling in its own box when wide); cells escaped unless :class:`Html`."""
    head = "".join(f"<th>{text(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(_cell(c) for c in row) + "</tr>" for row in rows)
    return Html(f"<table><tr>{head}</tr>{body}</table>")


def ident(content: object) -> Html:
    """An id or other long unbroken token: it may wrap at any character (its table fits)."""
    return Html(f"<span class='id'>{text(content)}</span>")


def left_out(count: int, what: str, where: str) -> Html:
    """The note under a capped table: how many rows it leaves out and where they all are."""
    if count <= 0:
        return Html("")
    return Html(f"<p class='muted'>{count} more {text(what)} not shown: {text(where)}.</p>")


def join(*parts: object) -> Html:
    """Parts in a row (each escaped unless it is :class:`Html`)."""
    return Html("".join(text(p) for p in parts))


def heading(content: object, *, level: int = 3) -> Html:
    """An ``<hN>`` heading."""
    return Html(f"<h{level}>{text(content)}</h{level}>")


def details(summary: object, body: object, *, open_: bool = False) -> Html:
    """A collapsible group."""
    flag = " open" if open_ else ""
    return Html(f"<details{flag}><summary>{text(summary)}</summary>{text(body)}</details>")


def banner(content: object, tone: str) -> Html:
    """A decision banner; ``tone`` is good, warn, bad or neutral."""
    return Html(f"<div class='banner {tone}' role='status'>{text(content)}</div>")


def reading(content: str) -> Html:
    """The plain-language reading of a result."""
    return Html(f"<p class='reading'><strong>Reading.</strong> {text(content)}</p>")


def section(title: str, *parts: object) -> Html:
    """An ``<h2>`` section."""
    return join(heading(title, level=2), *parts)


def paragraphs(lines: Iterable[object], *, cls: str = "") -> Html:
    """One ``<p>`` per line."""
    attr = f" class='{cls}'" if cls else ""
    return Html("".join(f"<p{attr}>{text(line)}</p>" for line in lines))


def bullets(items: Iterable[object]) -> Html:
    """An unordered list."""
    return Html("<ul>" + "".join(f"<li>{text(i)}</li>" for i in items) + "</ul>")


def value(obj: Any) -> Html:
    """Any result value rendered generically (structs and mappings as two-column tables)."""
    data = msgspec.to_builtins(obj) if isinstance(obj, msgspec.Struct) else obj
    if isinstance(data, Mapping):
        if not data:
            return Html("<p class='muted'>none</p>")
        return table(("field", "value"), [(k, value(v)) for k, v in data.items()])
    if isinstance(data, list | tuple):
        if not data:
            return Html("<p class='muted'>none</p>")
        if all(isinstance(item, Mapping) for item in data):
            keys = list(dict.fromkeys(k for item in data for k in item))
            return table(keys, [[value(item.get(k)) for k in keys] for item in data])
        return bullets(value(item) for item in data)
    return text(data)


def pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend, or ``None`` without the ``plots`` extra."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def no_plot(what: str) -> Html:
    """Said in place of a plot when matplotlib is not installed."""
    return Html(
        f"<p class='muted'>{escape(what)}: not drawn, matplotlib is not installed "
        "(install groundtrace[plots]).</p>"
    )


def figure(fig: Any, alt: str, *, dpi: int = 110) -> Html:
    """A matplotlib figure as an inline PNG (closed afterwards)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    pyplot().close(fig)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return Html(f"<img alt='{escape(alt)}' src='data:image/png;base64,{data}'>")


def figure_inches(columns: int, *, height: float) -> tuple[float, float]:
    """A figure size (inches at 110 dpi) whose width fits the page for ``columns`` panels."""
    width = min(CONTENT_WIDTH / 110, 3.4 * columns)
    return width, height


def page(title: str, *parts: object, style: str = "") -> str:
    """The whole self-contained document."""
    body = join(*parts)
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width,initial-scale=1'>"
        f"<title>{escape(title)}</title><style>{_STYLE}{style}</style></head>"
        f"<body><h1>{escape(title)}</h1>{body}</body></html>\n"
    )
