"""A bicycle workshop's help agent, written from the docs: a domain the repository does not hold.

Each request reads one workshop manual with the ``read_manual`` tool (a TOOL span that
records the path it read) and answers with the manual's sentence (the ANSWER step, its
evidence the tool's result). Its case file (``cases``) declares the command path of every
request by id: the manual it must read and the value the answer must state. A *broken*
request reads the wrong manual and answers from it: its path fails (``paths``) and its answer
no longer states the asked value.

``python -m tests.support.bike_shop --endpoint URL --version v1 --count 100`` sends the
requests over OTLP/HTTP (``--rate`` per second, ``--broken-every N`` breaks every N-th,
``--origin evaluation`` marks the traces as groundtrace's own); ``--out DIR`` writes them to
files instead. Case ids are ``bk-00000``... from ``--start``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import groundtrace.sdk as gt

__all__ = ["MANUALS", "TOPICS", "case_id", "main", "write_cases"]

#: path -> text of the workshop's manuals.
MANUALS: dict[str, str] = {
    "manuals/brakes.md": "Disc brake pads are replaced when they are thinner than 1.5 mm.",
    "manuals/gears.md": "The rear derailleur limit screws are set with the chain on 11 teeth.",
    "manuals/tyres.md": "Road tyres are pumped to 6 bar for riders under 70 kg.",
    "manuals/chain.md": "A chain is replaced once it has stretched by 0.5 percent.",
}
#: (question, manual, the value the answer must state), one per case in turn.
TOPICS: tuple[tuple[str, str, str], ...] = (
    ("When are disc brake pads replaced?", "manuals/brakes.md", "1.5 mm"),
    ("With the chain on which sprocket are the limit screws set?", "manuals/gears.md", "11 teeth"),
    ("How hard are road tyres pumped for a light rider?", "manuals/tyres.md", "6 bar"),
    ("When is a chain replaced?", "manuals/chain.md", "0.5 percent"),
)
_WRONG = {
    "manuals/brakes.md": "manuals/tyres.md",
    "manuals/gears.md": "manuals/chain.md",
    "manuals/tyres.md": "manuals/brakes.md",
    "manuals/chain.md": "manuals/gears.md",
}


def case_id(i: int) -> str:
    """The id of the i-th request's case."""
    return f"bk-{i:05d}"


def write_cases(path: Path, count: int) -> Path:
    """The case file of requests 0..count-1: the manual each must read, the value it states."""
    with path.open("w", encoding="utf-8") as f:
        for i in range(count):
            question, manual, value = TOPICS[i % len(TOPICS)]
            row = {"case_id": case_id(i), "question": question, "required_reads": [manual],
                   "allowed_commands": ["read_manual"], "required_values": [value],
                   "reference_answer": value}  # fmt: skip
            f.write(json.dumps(row) + "\n")
    return path


@gt.tool(name="read_manual", paths=("path",))
def read_manual(path: str) -> str:
    """One workshop manual."""
    return MANUALS[path]


@gt.answer()
def respond(question: str, evidence: list[dict[str, Any]]) -> dict[str, Any]:
    """The manual's sentence, citing it."""
    return {"answer": evidence[0]["content"], "citations": [evidence[0]["id"]]}


def handle(i: int, *, broken: bool) -> str:
    question, manual, _ = TOPICS[i % len(TOPICS)]
    path = _WRONG[manual] if broken else manual

    @gt.request(app_name="bike-shop")
    def request(question: str, case_id: str | None = None) -> str:
        text = read_manual(path)
        return str(respond(question, [{"id": path, "title": path, "content": text}])["answer"])

    return request(f"{question} (ticket {i})", case_id=case_id(i))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--endpoint")
    parser.add_argument("--out")
    parser.add_argument("--version", default="v1")
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--broken-every", type=int, default=0)
    parser.add_argument("--rate", type=float, default=0.0, help="requests per second (0: flat out)")
    parser.add_argument("--origin", default=None)
    args = parser.parse_args(argv)
    attributes = {} if args.origin is None else {"groundtrace.origin": args.origin}
    if args.endpoint:
        gt.configure(service_name="bike-shop", app_version=args.version, exporter="otlp",
                     endpoint=args.endpoint, capture_content=True,
                     resource_attributes=attributes)  # fmt: skip
    else:
        gt.configure(service_name="bike-shop", app_version=args.version, exporter="file",
                     file_path=args.out, capture_content=True,
                     resource_attributes=attributes)  # fmt: skip
    started = time.monotonic()
    for n, i in enumerate(range(args.start, args.start + args.count)):
        if args.rate > 0:
            time.sleep(max(0.0, started + n / args.rate - time.monotonic()))
        handle(i, broken=args.broken_every > 0 and i % args.broken_every == 0)
    gt.shutdown()


if __name__ == "__main__":
    main()
