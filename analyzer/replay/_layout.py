"""Where an app without the SDK's rendering put its retrieved documents in its prompt.

A trace of another instrumentation (OpenInference, OpenLLMetry, OTel GenAI) records the
retrieved documents (a RETRIEVER / retrieval span) and the model request's messages, but not
how the app rendered the one into the other. :func:`document_layout` finds it from the text:
every document's content must occur verbatim, exactly once, in one message of the request;
the text between consecutive documents, with the next document's id (and title) taken out,
must be the same each time -- the app's separator and per-document header, e.g.
``"\\n[{id}] "``. The header of the first document is the longest end of that text that also
stands right before it. The block (first header to last content) is then re-rendered for
the perturbed evidence with the same header and separator, so the unperturbed evidence
renders to exactly the recorded block.

With a single document there is no second header to learn from: its header is the text
from the start of its line when that text names its id, else nothing, and documents are
separated by a newline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["DocumentLayout", "document_layout"]

_ID = "\x00id\x00"
_TITLE = "\x00title\x00"


@dataclass(frozen=True, slots=True)
class DocumentLayout:
    """How the documents sit in a message: the exact block, and how to render it again.

    Attributes:
        block: the recorded text from the first document's header to the last content.
        ids: the documents' ids in prompt order.
        header: the text before each document's content (``_ID`` / ``_TITLE`` marked).
        separator: the text between one document's content and the next one's header.
    """

    block: str
    ids: tuple[str, ...]
    header: str
    separator: str

    def render(self, items: Sequence[Mapping[str, Any]]) -> str:
        """The block for ``items`` (``id``, ``title``, ``content``) in the app's layout."""
        parts = []
        for item in items:
            head = self.header.replace(_ID, str(item["id"]))
            head = head.replace(_TITLE, str(item.get("title") or ""))
            parts.append(head + str(item["content"]))
        return self.separator.join(parts)


def _texts(messages: Sequence[Any]) -> list[str]:
    out: list[str] = []
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out.extend(
                p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
            )
    return out


def _generic(text: str, item: Mapping[str, Any]) -> str:
    title = str(item.get("title") or "")
    if title and title in text:
        text = text.replace(title, _TITLE)
    return text.replace(str(item["id"]), _ID)


def document_layout(
    messages: Sequence[Any], items: Sequence[Mapping[str, Any]]
) -> DocumentLayout | str:
    """The layout of ``items`` in ``messages`` (see the module docstring), or why none."""
    if not items:
        return "no retrieved documents to find in the recorded request"
    texts = _texts(messages)
    found: list[tuple[int, int, Mapping[str, Any]]] = []
    for item in items:
        content = str(item["content"])
        where = [(i, t.find(content)) for i, t in enumerate(texts) if content and content in t]
        if len(where) != 1 or texts[where[0][0]].count(content) != 1:
            n = sum(t.count(content) for t in texts) if content else 0
            return (
                f"document {item['id']!r} occurs {n} times in the recorded request's messages "
                "(endpoint replay needs each retrieved document's content verbatim, once)"
            )
        found.append((where[0][0], where[0][1], item))
    if len({i for i, _, _ in found}) != 1:
        return "the retrieved documents are spread over several messages of the recorded request"
    text = texts[found[0][0]]
    found.sort(key=lambda f: f[1])
    ends = [start + len(str(item["content"])) for _, start, item in found]
    for (_, start, _), end in zip(found[1:], ends, strict=False):
        if start < end:
            return "the retrieved documents overlap in the recorded request"
    first_start, first = found[0][1], found[0][2]
    if len(found) == 1:
        line = text.rfind("\n", 0, first_start) + 1
        before = text[line:first_start]
        header = _generic(before, first) if str(first["id"]) in before else ""
        separator = "\n"
    else:
        gaps = {
            _generic(text[end:start], item)
            for end, (_, start, item) in zip(ends, found[1:], strict=False)
        }
        if len(gaps) != 1:
            return (
                "the text between the retrieved documents differs from one to the next in the "
                "recorded request (no single separator and header to render them with)"
            )
        gap = gaps.pop()
        header = ""
        for size in range(len(gap), 0, -1):
            head = gap[-size:]
            concrete = head.replace(_ID, str(first["id"])).replace(
                _TITLE, str(first.get("title") or "")
            )
            if text[:first_start].endswith(concrete):
                header = head
                break
        separator = gap[: len(gap) - len(header)]
    layout = DocumentLayout("", tuple(str(item["id"]) for _, _, item in found), header, separator)
    block = layout.render([item for _, _, item in found])
    if not block or text.count(block) != 1:
        return "the retrieved documents' block cannot be located exactly once in the request"
    return DocumentLayout(block, layout.ids, header, separator)
