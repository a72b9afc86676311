"""HotpotQA cases for the example app: loading the original layout (JSON or JSONL).

Each HotpotQA item has ``_id, question, answer, type, level, supporting_facts [[title,
sent_id]], context [[title, [sentences]]]``. A case keeps the question, the reference answer,
the gold supporting titles and the question's context paragraphs as chunks with stable ids
``<_id>:<index>``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundtrace.collectors.errors import InputError

__all__ = ["DEFAULT_DATASET", "Case", "Chunk", "load_cases"]

#: The 200-question HotpotQA sample shipped with the example (CC BY-SA 4.0, see data/).
DEFAULT_DATASET = Path(__file__).parent / "data" / "hotpotqa_dev_distractor_200.jsonl"


@dataclass(frozen=True, slots=True)
class Chunk:
    """One context paragraph: stable id, the article title and the paragraph text."""

    id: str
    title: str
    text: str


@dataclass(frozen=True, slots=True)
class Case:
    """One HotpotQA question with its context chunks and gold labels."""

    case_id: str
    question: str
    reference_answer: str
    gold_support_titles: tuple[str, ...]
    type: str
    level: str
    chunks: tuple[Chunk, ...]

    def to_record(self) -> dict[str, Any]:
        """The case-file row (no chunks): the join key is ``case_id``."""
        return {
            "case_id": self.case_id,
            "question": self.question,
            "reference_answer": self.reference_answer,
            "gold_support_titles": list(self.gold_support_titles),
            "type": self.type,
            "level": self.level,
        }


def _case(item: Any, path: Path, line: int | None) -> Case:
    if not isinstance(item, dict):
        raise InputError("a HotpotQA item must be a JSON object", path=str(path), line=line)
    for key in ("_id", "question", "answer", "context"):
        if key not in item:
            raise InputError("missing HotpotQA field", path=str(path), line=line, field=key)
    try:
        case_id = str(item["_id"])
        chunks = tuple(
            Chunk(f"{case_id}:{index}", str(title), "".join(str(s) for s in sentences))
            for index, (title, sentences) in enumerate(item["context"])
        )
        titles: list[str] = []
        for title, _sent_id in item.get("supporting_facts") or []:
            if str(title) not in titles:
                titles.append(str(title))
    except (TypeError, ValueError) as exc:
        raise InputError(
            f"malformed context/supporting_facts: {exc}", path=str(path), line=line
        ) from exc
    return Case(
        case_id=case_id,
        question=str(item["question"]).strip(),
        reference_answer=str(item["answer"]),
        gold_support_titles=tuple(titles),
        type=str(item.get("type", "")),
        level=str(item.get("level", "")),
        chunks=chunks,
    )


def load_cases(path: Path | str = DEFAULT_DATASET, limit: int | None = None) -> list[Case]:
    """Read HotpotQA items from a JSON array file or a JSONL file.

    Args:
        path: the dataset file (``.json`` array or ``.jsonl``, one item per line).
        limit: keep only the first ``limit`` items.

    Returns:
        The cases in file order.

    Raises:
        InputError: the file is missing or an item is malformed (file, line and field named).
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read dataset: {exc.strerror or exc}", path=str(file)) from exc
    cases: list[Case] = []
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}", path=str(file), line=exc.lineno) from exc
        for item in items[:limit] if limit is not None else items:
            cases.append(_case(item, file, None))
        return cases
    for number, line in enumerate(text.splitlines(), start=1):
        if limit is not None and len(cases) >= limit:
            break
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}", path=str(file), line=number) from exc
        cases.append(_case(item, file, number))
    return cases
