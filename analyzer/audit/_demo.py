"""The audit's ``demo`` hook: the shipped licence example, as data.

The licence example ships its corpus in the audit's documented input formats (a sources and a
questions file, ``docs/audit.md``) and a retriever; the config here names them, so the demo
and ``groundtrace audit run`` without ``--sources`` run it as any user's corpus. The example
is named by strings (its package's data folder, its retriever's ``module:qualname``): the
analyzer does not import it.

Usage::

    config = licence_config("runs/audit")
    done = await run_analysis_async(ANALYSIS, config, out=config.out)
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ._config import Config

if TYPE_CHECKING:
    from groundtrace.analyzer import DemoInputs

__all__ = ["EXAMPLE", "demo_config", "licence_config"]

#: The licence example's package (its ``data`` folder holds the corpus files).
EXAMPLE: Final = "groundtrace.examples.license_audit"


def licence_config(out: str | Path) -> Config:
    """The licence audit into ``out``: the shipped sources and questions, the example's
    hierarchical retriever, answered offline (the questions' cues), labelled by the baseline."""
    data = Path(str(files(EXAMPLE) / "data"))
    return Config(
        out=str(out), sources=str(data / "sources.jsonl"),
        questions=str(data / "audit_questions.jsonl"), retriever=f"{EXAMPLE}.app:hierarchical",
    )  # fmt: skip


def demo_config(inputs: DemoInputs) -> Config:
    """The audit the demo runs: the licence audit into the demo's ``inputs.out``."""
    return licence_config(inputs.out)
