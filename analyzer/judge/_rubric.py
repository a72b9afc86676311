"""The versioned rubric and output schema of the LLM judge.

A rubric is a shipped one (``rubrics/<version>.md``, chosen by its version) or a file of the
user's (its version is the file name without suffix); its exact text and version are part of
the judge fingerprint, so a validation record holds only for the rubric it was made with.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from groundtrace.analyzer.errors import ConfigError

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


def load_rubric(version_or_path: str | Path = "rag_triad_v1") -> Rubric:
    """Load a shipped rubric by its version (``rag_triad_v1``) or a rubric file by its path.

    Raises:
        ConfigError: no shipped rubric of that version and no readable UTF-8 file there.
    """
    shipped = resources.files(__package__).joinpath("rubrics", f"{version_or_path}.md")
    if isinstance(version_or_path, str) and "/" not in version_or_path and shipped.is_file():
        return Rubric(version=version_or_path, text=shipped.read_text("utf-8"))
    path = Path(version_or_path)
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        versions = sorted(
            Path(r.name).stem
            for r in resources.files(__package__).joinpath("rubrics").iterdir()
            if r.name.endswith(".md")
        )
        raise ConfigError(
            f"cannot read rubric: {exc.strerror} (shipped rubrics: {', '.join(versions)})",
            path=str(path),
        ) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"rubric is not UTF-8: {exc.reason}", path=str(path)) from None
    if not text.strip():
        raise ConfigError("rubric file is empty", path=str(path))
    return Rubric(version=path.stem, text=text)


#: The rubric used unless another one is chosen.
DEFAULT_RUBRIC = load_rubric()


def schema_digest() -> str:
    """sha256 of the canonical JSON of :data:`OUTPUT_SCHEMA`."""
    payload = json.dumps(OUTPUT_SCHEMA, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
