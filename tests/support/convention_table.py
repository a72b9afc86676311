"""Print the conventions × instrumentations table: spans (and log records) in, τ out, findings.

Runs every scenario of :mod:`tests.support.instrumented` (real instrumentations, local
OpenAI-compatible server, LangChain's fake chat model) and prints one Markdown row each::

    python -m tests.support.convention_table
"""

from __future__ import annotations

import warnings

from tests.support.instrumented import SCENARIOS, summary

__all__ = ["main"]

COLUMNS = (
    "instrumentation",
    "convention",
    "spans",
    "log_records",
    "traces",
    "steps",
    "actions",
    "evidence",
    "llm_calls",
    "tool_calls",
    "findings",
)


def main() -> None:
    """Run the scenarios and print the table."""
    warnings.simplefilter("ignore")
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS))
    for scenario in SCENARIOS.values():
        row = summary(scenario())
        cells = [", ".join(v) if isinstance(v, list) else str(v) for v in map(row.get, COLUMNS)]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
