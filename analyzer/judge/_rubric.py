"""The versioned rubric and output schema of the LLM judge."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from ._types import Metric

__all__ = ["DEFAULT_RUBRIC", "OUTPUT_SCHEMA", "Rubric", "load_rubric"]

#: JSON schema the judge's reply must follow (sent as ``response_format.schema``).
OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        **{m.value: {"type": "number", "minimum": 0, "maximum": 1} for m in Metric},
        "rationale": {"type": "string"},
    },
    "required": [*(m.value for m in Metric), "rationale"],
}


@dataclass(frozen=True, slots=True)
class Rubric:
    """Rubric text with its version (both part of the judge fingerprint).

    Attributes:
        version: rubric id, e.g. ``rag_triad_v1``.
        text: the instructions given to the judge.
    """

    version: str
    text: str

    @property
    def digest(self) -> str:
        """sha256 of the rubric text."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def load_rubric(version: str = "rag_triad_v1") -> Rubric:
    """Load a rubric shipped in ``groundtrace.analyzer.judge.rubrics``."""
    text = resources.files(__package__).joinpath("rubrics", f"{version}.md").read_text("utf-8")
    return Rubric(version=version, text=text)


#: The rubric used unless another one is chosen.
DEFAULT_RUBRIC = load_rubric()


def schema_digest() -> str:
    """sha256 of the canonical JSON of :data:`OUTPUT_SCHEMA`."""
    payload = json.dumps(OUTPUT_SCHEMA, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
