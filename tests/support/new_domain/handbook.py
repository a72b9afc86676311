"""The greenhouse handbook: pages, cases (ids as gold) and an audit corpus of the same domain.

Every file here is written as docs/cases.md and the audit's input formats describe them; the
results a correct analysis must give were worked out by hand from these texts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

__all__ = [
    "AUDIT_ANSWERS",
    "AUDIT_QUESTIONS",
    "AUDIT_SOURCES",
    "CASES",
    "DISTRACTORS",
    "PAGES",
    "AuditPaths",
    "case_rows",
    "first_sentence",
    "write_audit_corpus",
    "write_cases",
]

#: chunk id -> (title, text): the app's knowledge base, one page a chunk.
PAGES: Final[dict[str, tuple[str, str]]] = {
    "gh-01": (
        "Seedling watering",
        "Water tomato seedlings in the early morning so the leaves dry before night. "
        "Wet foliage overnight invites damping off.",
    ),
    "gh-02": (
        "Night temperature",
        "Keep the night temperature of a tomato house between 16 and 18 degrees Celsius. "
        "Colder nights slow fruit set.",
    ),
    "gh-03": (
        "Shade cloth",
        "Fit a 30 percent shade cloth when summer light exceeds 60 klux at midday. "
        "Lettuce and herbs scorch above that light level.",
    ),
    "gh-04": (
        "Whitefly control",
        "Release Encarsia formosa wasps against whitefly at two wasps per square metre "
        "each week. Yellow sticky cards show when whitefly numbers rise.",
    ),
    "gh-05": (
        "Ventilation",
        "Open the roof vents when relative humidity passes 85 percent. "
        "Stagnant humid air spreads grey mould on cucumbers.",
    ),
    "gh-06": (
        "Pollination",
        "Place one bumblebee hive per 1000 square metres of tomato crop. "
        "Bruise marks on the flowers show the bees are working.",
    ),
    "gh-07": (
        "Feeding cucumbers",
        "Feed cucumbers a nutrient solution with an electrical conductivity of 2.5 mS/cm. "
        "Raise it to 3.0 mS/cm in dull winter weather.",
    ),
}

#: (case id, question, gold chunk id, an expected term, stratum).
CASES: Final[tuple[tuple[str, str, str, str, str], ...]] = (
    ("g1", "When should tomato seedlings be watered?", "gh-01", "early morning", "general"),
    ("g2", "What night temperature suits a tomato house?", "gh-02", "16", "domain_specific"),
    ("g3", "When is a shade cloth fitted for lettuce?", "gh-03", "shade cloth", "general"),
    ("g4", "How are Encarsia wasps released against whitefly?", "gh-04", "Encarsia", "critical"),
    ("g5", "When should the roof vents be opened for humidity?", "gh-05", "85", "general"),
    ("g6", "How many bumblebee hives does a tomato crop need?", "gh-06", "hive", "general"),
    ("g7", "What electrical conductivity do cucumbers need?", "gh-07", "2.5", "domain_specific"),
)


#: case id -> a related but non-supporting page of another handbook (the case's distractor:
#: REPLACE swaps the gold chunk for it).
DISTRACTORS: Final[dict[str, tuple[str, str]]] = {
    "g1": ("Seedling trays", "Tomato seedlings are sown in trays of 77 cells."),
    "g2": ("Day temperature", "A tomato house runs at 22 degrees Celsius by day."),
    "g3": ("Glazing", "Lettuce grows under double glazing that keeps in the heat."),
    "g4": ("Aphid control", "Aphidius wasps are released against aphids."),
    "g5": ("Heating", "Heating pipes run along the roof vents to dry the glass."),
    "g6": ("Hive storage", "A bumblebee hive is stored in shade before it is opened."),
    "g7": ("Cucumber spacing", "Cucumbers are planted at two plants per square metre."),
}


def first_sentence(text: str) -> str:
    """The first sentence of a page (what the extractive reader answers with)."""
    head, dot, _ = text.partition(". ")
    return head + dot.strip() if dot else text


def _distractor(case_id: str) -> dict[str, str]:
    title, text = DISTRACTORS[case_id]
    return {"id": f"x-{case_id}", "title": title, "text": text}


def case_rows() -> list[dict[str, Any]]:
    """The cases in the case model's own layout (docs/cases.md), chunk ids as the gold and
    one distractor each (a REPLACE candidate)."""
    return [
        {
            "case_id": case_id,
            "question": question,
            "reference_answer": first_sentence(PAGES[gold][1]),
            "support_titles": [gold],
            "expected_terms": [term],
            "stratum": stratum,
            "distractors": [_distractor(case_id)],
        }
        for case_id, question, gold, term, stratum in CASES
    ]


def write_cases(path: Path) -> Path:
    """Write the case file (JSON lines) to ``path``; returns it."""
    path.write_text("".join(json.dumps(row) + "\n" for row in case_rows()), "utf-8")
    return path


#: The audit corpus: three growers' guides (sources JSON lines, docs/audit.md).
AUDIT_SOURCES: Final[list[dict[str, str]]] = [
    {
        "id": "valley-coop",
        "title": "Valley growers' co-op greenhouse guide",
        "group": "cooperative",
        "text": "Water tomato seedlings in the early morning. Fit shade cloth above 60 klux. "
        "Bumblebees pollinate tomatoes.",
    },
    {
        "id": "hill-station",
        "title": "Hill research station notes",
        "group": "research",
        "text": "Water tomato seedlings in the evening, never in the morning. "
        "Fit shade cloth above 60 klux.",
    },
    {
        "id": "coast-nursery",
        "title": "Coast nursery handbook",
        "group": "cooperative",
        "text": "Water tomato seedlings in the early morning. Bumblebees pollinate tomatoes.",
    },
]

#: Two questions (questions JSON lines): one with the contradiction planted (hill-station
#: waters in the evening), one every guide that addresses it agrees on.
AUDIT_QUESTIONS: Final[list[dict[str, Any]]] = [
    {
        "id": "watering-time",
        "text": "Should tomato seedlings be watered in the morning?",
        "topics": ["watering time"],
        "gold": {"valley-coop": "yes", "hill-station": "no", "coast-nursery": "yes"},
    },
    {
        "id": "shade",
        "text": "Should shade cloth be fitted above 60 klux?",
        "topics": ["shade"],
        "gold": {"valley-coop": "yes", "hill-station": "yes", "coast-nursery": "absent"},
    },
]

#: The answers the growers' own app gave per (question, source) (answers JSON lines).
AUDIT_ANSWERS: Final[list[dict[str, str]]] = [
    {"question_id": "watering-time", "source_id": "valley-coop",
     "answer": "Yes: water tomato seedlings in the early morning."},
    {"question_id": "watering-time", "source_id": "hill-station",
     "answer": "No: water tomato seedlings in the evening, never in the morning."},
    {"question_id": "watering-time", "source_id": "coast-nursery",
     "answer": "Yes: water tomato seedlings in the early morning."},
    {"question_id": "shade", "source_id": "valley-coop",
     "answer": "Yes: fit shade cloth above 60 klux."},
    {"question_id": "shade", "source_id": "hill-station",
     "answer": "Yes: fit shade cloth above 60 klux."},
]  # fmt: skip


@dataclass(frozen=True)
class AuditPaths:
    """Where :func:`write_audit_corpus` wrote the audit's three input files."""

    sources: Path
    questions: Path
    answers: Path


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), "utf-8")
    return path


def write_audit_corpus(folder: Path) -> AuditPaths:
    """Write sources.jsonl, questions.jsonl and answers.jsonl into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    return AuditPaths(
        sources=_jsonl(folder / "sources.jsonl", AUDIT_SOURCES),
        questions=_jsonl(folder / "questions.jsonl", AUDIT_QUESTIONS),
        answers=_jsonl(folder / "answers.jsonl", AUDIT_ANSWERS),
    )
