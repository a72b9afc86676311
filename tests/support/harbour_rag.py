"""A small RAG app of a domain the repository does not otherwise hold, written from the docs.

Harbour operations: a handful of pages whose chunk ids (``hb-01``...) are the gold, BM25-ish
word overlap retrieval, and an extractive reader standing in for the model (the answer is
the best-overlapping sentence of the evidence it was given, with that chunk cited). It is
instrumented with the SDK exactly as the README's quick start shows, and its ANSWER step is
replayable, so ``groundtrace interventions --replay recorded`` replays it.

``python -m tests.support.harbour_rag OUT_DIR`` writes ``OUT_DIR/traces/`` (OTLP-JSON lines)
and ``OUT_DIR/cases.jsonl`` (ids as gold, as ``gate curate`` writes them). ``--wrong``
makes the app answer every question with the last chunk shown (a wrong answer, same
retrieval), for a candidate run of the gate; ``--no-content`` captures no content.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import groundtrace.sdk as gt

__all__ = ["CASES", "PAGES", "main", "respond", "respond_broken", "write_run"]

#: id -> (title, text): the app's knowledge base.
PAGES: dict[str, tuple[str, str]] = {
    "hb-01": ("Pilot boarding", "Pilots board inbound vessels at the Eastern buoy."),
    "hb-02": ("Berth depth", "Berth seven has a charted depth of twelve metres."),
    "hb-03": ("Mooring lines", "Vessels over 200 metres use eight mooring lines."),
    "hb-04": ("Night entry", "Night entry is allowed for tankers with two tugs."),
    "hb-05": ("Speed limit", "The inner harbour speed limit is six knots."),
    "hb-06": ("Waste reception", "Oily waste is taken at the south quay barge."),
}

#: (case id, question, gold chunk id); the reference answer is the gold page's sentence.
CASES: tuple[tuple[str, str, str], ...] = (
    ("h1", "Where do pilots board inbound vessels?", "hb-01"),
    ("h2", "What is the charted depth of berth seven?", "hb-02"),
    ("h3", "How many mooring lines do vessels over 200 metres use?", "hb-03"),
    ("h4", "When is night entry allowed for tankers?", "hb-04"),
    ("h5", "What is the inner harbour speed limit?", "hb-05"),
    ("h6", "Where is oily waste taken?", "hb-06"),
)

_ROOT = Path(__file__).resolve().parents[2]
_WORD = re.compile(r"[a-z0-9]+")
_WRONG = {"on": False}


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


@gt.retrieve(retriever="overlap", k=3)
def search(query: str) -> list[dict[str, Any]]:
    """The three pages sharing most words with the query."""
    q = _words(query)
    ranked = sorted(PAGES, key=lambda i: (-len(q & _words(PAGES[i][1])), i))[:3]
    return [
        {
            "id": i,
            "title": PAGES[i][0],
            "content": PAGES[i][1],
            "score": len(q & _words(PAGES[i][1])),
        }
        for i in ranked
    ]


@gt.answer(replayable=True)
def respond(question: str, evidence: list[dict[str, Any]]) -> dict[str, Any]:
    """Extractive reader: the sentence of the evidence sharing most words with the question."""
    gt.build_prompt(question, evidence)  # records the standard evidence block
    if not evidence:
        return {"answer": "unknown", "confidence": 0.1, "used_chunks": []}
    q = _words(question)
    best = (
        evidence[-1]
        if _WRONG["on"]
        else max(evidence, key=lambda e: len(q & _words(str(e["content"]))))
    )
    return {"answer": str(best["content"]), "confidence": 0.9, "used_chunks": [best["id"]]}


def respond_broken(question: str, evidence: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A replay entry point whose every call fails (a model server that is down)."""
    raise ConnectionError("model server refused the connection")


@gt.request(app_name="harbour-rag", app_version="1.0")
def handle(question: str, case_id: str | None = None) -> str:
    """One request: retrieve, answer."""
    return str(respond(question, search(question))["answer"])


def main(argv: Sequence[str]) -> None:
    """Run the app on every case, writing traces and the case file into ``argv[0]``."""
    out = Path(argv[0])
    _WRONG["on"] = "--wrong" in argv
    gt.configure(
        service_name="harbour-rag",
        exporter="file",
        file_path=out / "traces",
        capture_content="--no-content" not in argv,
    )
    for case_id, question, _ in CASES:
        handle(question, case_id=case_id)
    gt.shutdown()
    rows = [
        {"case_id": c, "question": q, "reference_answer": PAGES[g][1], "support_titles": [g]}
        for c, q, g in CASES
    ]
    (out / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def write_run(out: Path, *, wrong: bool = False, content: bool = True) -> Path:
    """Run the app in a fresh interpreter (as a user would) into ``out``; returns ``out``.

    ``wrong``: answer with the last chunk shown; ``content=False``: capture no content.
    """
    out.mkdir(parents=True, exist_ok=True)
    argv = [str(out), *(["--wrong"] if wrong else []), *([] if content else ["--no-content"])]
    code = f"from tests.support.harbour_rag import main; main({argv!r})"
    subprocess.run([sys.executable, "-c", code], cwd=_ROOT, check=True, timeout=120)
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
