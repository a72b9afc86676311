"""Flattened, indexed attribute keys (``prefix.{i}.suffix``) back into nested groups."""

from __future__ import annotations

from groundtrace.collectors.spans import AttributeValue

__all__ = ["indexed_groups"]


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
