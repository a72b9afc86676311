"""``python -m groundtrace.examples.agent_docs --out runs/agent``: run every task, write traces."""

from __future__ import annotations

import argparse

from .app import EXAMPLE_DIR, run


def main() -> None:
    """Parse ``--out`` and run the agent."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="runs/agent", help="output folder")
    out = parser.parse_args().out
    answers = run(out)
    for case_id, reply in answers.items():
        print(f"{case_id:16} {reply['answer']!r:48} cites {reply['cited_ids']}")
    print(
        f"\nnext: groundtrace paths {out}/traces --cases {EXAMPLE_DIR}/cases.jsonl "
        f"--tools-config {EXAMPLE_DIR}/tools.toml --out {out}/paths"
    )


if __name__ == "__main__":
    main()
