"""The one evidence-matching rule: which gold entries an evidence item stands for.

A case's gold support (``support_titles``: S of the interventions, the required context K*
of the gate) may hold ids, titles or both, as ``gate curate`` writes ids and HotpotQA-like
datasets titles. Every analysis that compares evidence with the gold uses this rule:

* an entry and a name are compared after :func:`evidence_key`: Unicode NFKC, case-folded,
  whitespace collapsed (``"  Tide  Tables "`` and ``"tide tables"`` are one key);
* an evidence item matches a gold entry if its id or its title matches it (the gate also
  names an item by its source).

Usage::

    from groundtrace.analyzer._evidence_match import GoldSupport

    gold = GoldSupport(["kb-17", "Mooring lines"])
    gold.match("KB-17", "Anchors")   # -> "kb-17"
    gold.match("kb-3", "mooring  LINES")   # -> "Mooring lines"
    gold.unmatched([("kb-3", "Anchors")])   # -> ("kb-17", "Mooring lines")
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence

from groundtrace.analyzer._wording import some

__all__ = ["GoldSupport", "evidence_key", "unmatched_note"]


def evidence_key(text: str) -> str:
    """``text`` as the rule compares it: NFKC, case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


class GoldSupport:
    """The gold entries of one case, each matched by an evidence item's id or title.

    Attributes:
        entries: the gold entries as the case gives them (duplicates after normalising kept
            once, first spelling wins).
    """

    __slots__ = ("_by_key", "entries")

    def __init__(self, entries: Iterable[str]) -> None:
        by_key: dict[str, str] = {}
        for entry in entries:
            key = evidence_key(entry)
            if key:
                by_key.setdefault(key, entry)
        self._by_key = by_key
        self.entries: tuple[str, ...] = tuple(by_key.values())

    def __bool__(self) -> bool:
        return bool(self._by_key)

    def __len__(self) -> int:
        return len(self._by_key)

    def match(self, *names: str | None) -> str | None:
        """The gold entry the first matching name of an item stands for, else ``None``.

        Args:
            names: the item's id, then its title (then, for the gate, its source).
        """
        for name in names:
            if name:
                entry = self._by_key.get(evidence_key(name))
                if entry is not None:
                    return entry
        return None

    def matches(self, *names: str | None) -> bool:
        """Whether an item with these names (id, title...) matches any gold entry."""
        return self.match(*names) is not None

    def matched(self, items: Iterable[Sequence[str | None]]) -> tuple[str, ...]:
        """The gold entries matched by any of ``items`` (each its names), in gold order."""
        found = {self.match(*names) for names in items}
        return tuple(e for e in self.entries if e in found)

    def unmatched(self, items: Iterable[Sequence[str | None]]) -> tuple[str, ...]:
        """The gold entries no item of ``items`` matches, in gold order."""
        found = set(self.matched(items))
        return tuple(e for e in self.entries if e not in found)


def unmatched_note(case_id: str, gold: GoldSupport, shown: int) -> str:
    """The finding of a case whose gold matches nothing among the ``shown`` evidence items."""
    entries = some(gold.entries, 5)
    return (
        f"case {case_id}: none of its {len(gold)} gold support entries ({entries}) matches the "
        f"id or title of any of the {shown} evidence item(s) of its trace: check that the "
        "gold holds the ids or titles the app records"
    )
