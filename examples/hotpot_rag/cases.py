"""HotpotQA cases for the example app, read by :func:`groundtrace.analyzer.cases.read_cases`.

The dataset may be HotpotQA (``_id, question, answer, type, level, supporting_facts [[title,
sent_id]], context [[title, [sentences]]]``), 2WikiMultihopQA or the case model's own layout,
as a JSON array or JSON lines. A case keeps the question, the reference answer, the gold
supporting titles and the question's context paragraphs as passages with stable ids
``<_id>:<index>``, each paragraph's text exactly as its layout joins the sentences.
"""

from __future__ import annotations

from itertools import islice
from pathlib import Path
from typing import Any

import msgspec

from groundtrace.analyzer.cases import Case, read_cases

__all__ = ["DEFAULT_DATASET", "case_record", "load_cases"]

#: The 200-question HotpotQA sample shipped with the example (CC BY-SA 4.0, see data/).
DEFAULT_DATASET = Path(__file__).parent / "data" / "hotpotqa_dev_distractor_200.jsonl"


def load_cases(path: Path | str = DEFAULT_DATASET, limit: int | None = None) -> list[Case]:
    """The first ``limit`` cases of a dataset (all of them by default), questions stripped.

    Raises:
        InputError: the file is missing or an item is malformed (file, line and field named).
    """
    return [
        msgspec.structs.replace(case, question=(case.question or "").strip())
        for case in islice(read_cases(path), limit)
    ]


def case_record(case: Case) -> dict[str, Any]:
    """The demo's case-file row (no passages); the join key is ``case_id``."""
    return {
        "case_id": case.case_id,
        "question": case.question,
        "reference_answer": case.reference_answer,
        "gold_support_titles": list(case.support_titles),
        "type": str(case.metadata.get("type", "")),
        "level": str(case.metadata.get("level", "")),
    }
