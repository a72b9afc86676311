"""Gold labels and replacement candidates joined to traces by case id.

A case file is JSON lines, one object per case, joined to traces by ``case_id`` (the demo's
``cases.jsonl``). Recognised fields: ``reference_answer`` (or ``answer``), the gold supporting
titles ``gold_support_titles`` (or ``support_titles``), and optional replacement candidates
``distractors`` / ``candidates`` (objects with ``id``, ``title``, ``text`` or ``content``).

A HotpotQA-layout file (``_id``, ``context`` [[title, [sentences]]]) can supply the candidates
instead: the question's paragraphs, with the ids ``<_id>:<index>`` the example app gives them,
so those retrieved into R are recognised and excluded from the pool (SPEC: candidates beyond
the top-k).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundtrace.analyzer.errors import InputError
from groundtrace.collectors.jsonl import read_jsonl

from ._targets import EvidenceChunk

__all__ = ["CaseGold", "read_case_file", "read_pool_dataset"]


@dataclass(frozen=True, slots=True)
class CaseGold:
    """Gold of one case and its replacement candidates.

    Attributes:
        case_id: join key.
        reference: reference answer, ``None`` when the case has none.
        support_titles: S.
        candidates: replacement candidates (beyond-top-k paragraphs or distractors).
    """

    case_id: str
    reference: str | None
    support_titles: tuple[str, ...] = ()
    candidates: tuple[EvidenceChunk, ...] = ()


def _lines(path: Path) -> Iterable[tuple[int, Any]]:
    return read_jsonl(path, objects=False, allow_array=True)


def _chunks(value: Any, path: Path, line: int, name: str) -> tuple[EvidenceChunk, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InputError("must be a list of objects", path=str(path), line=line, field=name)
    out: list[EvidenceChunk] = []
    for i, item in enumerate(value):
        if not isinstance(item, dict) or "id" not in item:
            raise InputError(
                "each candidate needs an id", path=str(path), line=line, field=f"{name}[{i}]"
            )
        text = item.get("text", item.get("content", ""))
        out.append(EvidenceChunk(str(item["id"]), str(item.get("title", "")), str(text), i))
    return tuple(out)


def read_case_file(path: str | Path) -> dict[str, CaseGold]:
    """Read a case file (see the module docstring) into case id -> :class:`CaseGold`.

    Raises:
        InputError: unreadable file, bad JSON, a row without ``case_id``, a repeated case id
            or malformed fields (file, line and field named).
    """
    file = Path(path)
    out: dict[str, CaseGold] = {}
    for line, row in _lines(file):
        if not isinstance(row, dict) or not row.get("case_id"):
            raise InputError("a case needs a case_id", path=str(file), line=line, field="case_id")
        case_id = str(row["case_id"])
        if case_id in out:
            raise InputError("repeated case id", path=str(file), line=line, field="case_id")
        ref = row.get("reference_answer", row.get("answer"))
        titles = row.get("gold_support_titles", row.get("support_titles")) or []
        if not isinstance(titles, list):
            raise InputError(
                "must be a list", path=str(file), line=line, field="gold_support_titles"
            )
        raw = row.get("distractors", row.get("candidates"))
        out[case_id] = CaseGold(
            case_id=case_id,
            reference=None if ref is None else str(ref),
            support_titles=tuple(str(t) for t in titles),
            candidates=_chunks(raw, file, line, "distractors"),
        )
    return out


def read_pool_dataset(path: str | Path) -> dict[str, tuple[EvidenceChunk, ...]]:
    """Candidates per case id from a HotpotQA-layout JSONL file (see the module docstring).

    Raises:
        InputError: unreadable file or a malformed item.
    """
    file = Path(path)
    out: dict[str, tuple[EvidenceChunk, ...]] = {}
    for line, item in _lines(file):
        if not isinstance(item, dict) or "_id" not in item or "context" not in item:
            raise InputError("not a HotpotQA item (_id, context)", path=str(file), line=line)
        case_id = str(item["_id"])
        try:
            out[case_id] = tuple(
                EvidenceChunk(f"{case_id}:{i}", str(title), "".join(str(s) for s in sents), i)
                for i, (title, sents) in enumerate(item["context"])
            )
        except (TypeError, ValueError) as exc:
            raise InputError(
                f"malformed context: {exc}", path=str(file), line=line, field="context"
            ) from exc
    return out
