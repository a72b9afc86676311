"""Flattened, indexed attribute keys (``prefix.{i}.suffix``) back into nested groups."""

from __future__ import annotations

from typing import Final

from groundtrace.collectors.spans import AttributeValue
from groundtrace.sdk import semconv as sc

__all__ = ["GROUPED_PREFIXES", "grouped_subset", "indexed_groups"]

#: The prefixes the normalisers group on a span's own attributes; one pass over the keys
#: (:func:`grouped_subset`) finds the candidates of all of them.
GROUPED_PREFIXES: Final = frozenset(
    {
        sc.OI_LLM_INPUT_MESSAGES,
        sc.OI_LLM_OUTPUT_MESSAGES,
        sc.OI_RETRIEVAL_DOCUMENTS,
        sc.OI_RERANKER_OUTPUT_DOCUMENTS,
        sc.GENAI_LEGACY_PROMPT,
        sc.GENAI_LEGACY_COMPLETION,
    }
)
_HEADS: Final = tuple(sorted(p + "." for p in GROUPED_PREFIXES))


def grouped_subset(attrs: dict[str, AttributeValue]) -> dict[str, AttributeValue]:
    """The attributes under any of :data:`GROUPED_PREFIXES`, in their original order."""
    return {k: v for k, v in attrs.items() if k.startswith(_HEADS)}


def indexed_groups(
    attrs: dict[str, AttributeValue], prefix: str
) -> list[tuple[int, dict[str, AttributeValue]]]:
    """Group ``{prefix}.{i}.{suffix}`` keys by ``i``, sorted by index.

    Example: ``llm.input_messages.0.message.role`` with prefix ``llm.input_messages`` gives
    ``[(0, {"message.role": ...})]``. Keys whose index is not a decimal number are ignored.
    """
    head = prefix + "."
    size = len(head)
    groups: dict[int, dict[str, AttributeValue]] = {}
    for key, value in attrs.items():
        if not key.startswith(head):
            continue
        index, sep, suffix = key[size:].partition(".")
        if sep and index.isdigit():
            groups.setdefault(int(index), {})[suffix] = value
    return sorted(groups.items())
