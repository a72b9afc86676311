"""A user corpus of a domain the repository does not contain: five cities' recycling guides.

Written from docs/audit.md alone: the guides as a folder of Markdown files (front matter on
four, a sidecar YAML file on one), six questions as JSON lines (ids as gold: every gold answer
names its source id), and the answers a production app could have given. The labels a correct
audit must give were worked out by hand from the texts (:data:`EXPECTED`).

Usage::

    paths = write_corpus(tmp_path)
    runner.invoke(app, ["audit", "run", "--sources", str(paths.sources), ...])
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = ["ANSWERS", "DISAGREE", "EXPECTED", "GUIDES", "QUESTIONS", "CorpusPaths", "write_corpus"]

#: city id -> (front matter or None for the sidecar one, text)
GUIDES: Final[dict[str, tuple[str, str]]] = {
    "oakridge": (
        "title: Oakridge curbside recycling guide\ngroup: curbside\nauthor: Oakridge Public Works\n"
        "version: '2025'",
        "Recycling is collected every 7 days on your trash day. Greasy pizza boxes are accepted "
        "in the blue cart. Glass bottles and jars are accepted in the blue cart. Plastic bags "
        "are not accepted in the cart; return them to a grocery store.",
    ),
    "pinehill": (
        "title: Pinehill recycling rules\ngroup: curbside\ninstitution: Pinehill County",
        "Recycling is collected every 14 days. Pizza boxes with grease are not accepted: put "
        "them in the trash. Glass bottles and jars are accepted in the blue cart. Plastic bags "
        "are not accepted in the cart.",
    ),
    "rivertown": (
        "title: Rivertown waste and recycling\ngroup: curbside",
        "Recycling is collected every 7 days. Greasy pizza boxes are accepted in the blue cart "
        "once the food is removed. Glass is not accepted at the curb: take it to the depot. "
        "Household batteries go to the library drop-off box.",
    ),
    "lakeview": (
        "title: Lakeview depot guide\ngroup: drop-off",
        "Lakeview has no curbside service; residents bring recycling to the depot on Main "
        "Street. Glass bottles and jars are accepted at the depot. Household batteries go to "
        "the depot's hazardous waste shelf.",
    ),
    "stonebridge": (
        "",  # metadata in stonebridge.yaml beside the text
        "Stonebridge residents take recycling to the transfer station. Plastic bags are "
        "accepted at the transfer station's film bin. Household batteries go to the transfer "
        "station's hazardous waste shelf.",
    ),
}
_SIDECAR: Final = "title: Stonebridge transfer station\ngroup: drop-off\nauthor: Stonebridge Town\n"

#: The six questions (JSON objects of questions.jsonl), with cues of the offline answerer.
QUESTIONS: Final[list[dict[str, object]]] = [
    {
        "id": "pizza-boxes",
        "text": "Are greasy pizza boxes accepted in the recycling?",
        "topics": ["pizza boxes"],
        "cues": {"no": [r"pizza boxes.*not accepted"], "yes": [r"pizza boxes.*accepted"]},
        "gold": {
            "oakridge": "yes",
            "pinehill": "no",
            "rivertown": "yes",
            "lakeview": "absent",
            "stonebridge": "absent",
        },
    },
    {
        "id": "glass",
        "text": "Is glass accepted?",
        "topics": ["glass"],
        "cues": {"no": [r"glass.*not accepted"], "yes": [r"glass.*accepted"]},
        "gold": {
            "oakridge": "yes",
            "pinehill": "yes",
            "rivertown": "no",
            "lakeview": "yes",
            "stonebridge": "absent",
        },
    },
    {
        "id": "plastic-bags",
        "text": "Can plastic bags be recycled?",
        "topics": ["plastic bags"],
        "cues": {"no": [r"plastic bags.*not accepted"], "yes": [r"plastic bags.*accepted"]},
        "gold": {
            "oakridge": "no",
            "pinehill": "no",
            "rivertown": "absent",
            "lakeview": "absent",
            "stonebridge": "yes",
        },
    },
    {
        "id": "batteries",
        "text": "Where do household batteries go?",
        "topics": ["batteries"],
        "cues": {
            "points": {
                "library": [r"batteries.*library"],
                "hazardous-shelf": [r"batteries.*hazardous waste shelf"],
            }
        },
        "gold": {
            "rivertown": {"stance": "yes", "points": ["library"]},
            "lakeview": {"stance": "yes", "points": ["hazardous-shelf"]},
            "stonebridge": {"stance": "yes", "points": ["hazardous-shelf"]},
        },
    },
    {
        "id": "collection",
        "text": "How often is recycling collected at the curb?",
        "scope": "curbside",
        "topics": ["collection frequency"],
    },
    {
        "id": "depot-hours",
        "text": "When is the depot open on Sundays?",
        "scope": "drop-off",
        "topics": ["opening hours"],
    },
]

#: What a production app answered (answers.jsonl); lakeview and stonebridge say nothing on
#: curbside collection (out of scope) and nobody on depot hours.
ANSWERS: Final[list[dict[str, object]]] = [
    {"question_id": "pizza-boxes", "source_id": "oakridge", "answer": "Yes, in the blue cart."},
    {"question_id": "pizza-boxes", "source_id": "pinehill", "answer": "No, put them in the trash."},
    {"question_id": "pizza-boxes", "source_id": "rivertown", "answer": "Yes, in the blue cart."},
    {"question_id": "glass", "source_id": "oakridge", "answer": "Yes."},
    {"question_id": "glass", "source_id": "pinehill", "answer": "Yes."},
    {"question_id": "glass", "source_id": "rivertown", "answer": "No, take it to the depot."},
    {"question_id": "glass", "source_id": "lakeview", "answer": "Yes, at the depot."},
    {
        "question_id": "plastic-bags",
        "source_id": "oakridge",
        "answer": "No.",
        "quote": "Plastic bags are not accepted in the cart",
    },
    {"question_id": "plastic-bags", "source_id": "pinehill", "answer": "No."},
    {"question_id": "plastic-bags", "source_id": "stonebridge", "answer": "Yes, in the film bin."},
    {"question_id": "collection", "source_id": "oakridge", "answer": "Every 7 days."},
    {"question_id": "collection", "source_id": "pinehill", "answer": "Every 14 days."},
    {"question_id": "collection", "source_id": "rivertown", "answer": "Every 7 days."},
    {"question_id": "batteries", "source_id": "lakeview", "answer": "The hazardous waste shelf."},
    {
        "question_id": "batteries",
        "source_id": "stonebridge",
        "answer": "The hazardous waste shelf.",
    },
    {"question_id": "batteries", "source_id": "rivertown", "answer": "The library drop-off box."},
]

#: Pair labels worked out by hand from the answers above: (question, a, b) -> label. (Oakridge
#: and Pinehill on collection, 7 against 14 days, disagree: :data:`DISAGREE`; whether the
#: number pre-filter calls it contradictory or the baseline divergent is the pre-filter's rule.)
EXPECTED: Final[dict[tuple[str, str, str], str]] = {
    ("pizza-boxes", "oakridge", "pinehill"): "contradictory",  # yes vs no
    ("pizza-boxes", "oakridge", "rivertown"): "consistent",  # the same answer
    ("pizza-boxes", "lakeview", "oakridge"): "absent",  # lakeview does not say
    ("glass", "oakridge", "pinehill"): "consistent",
    ("glass", "pinehill", "rivertown"): "contradictory",
    ("glass", "lakeview", "oakridge"): "complementary",  # yes, and where
    ("plastic-bags", "oakridge", "pinehill"): "consistent",
    ("plastic-bags", "oakridge", "stonebridge"): "contradictory",
    ("collection", "oakridge", "rivertown"): "consistent",
    ("batteries", "lakeview", "stonebridge"): "consistent",
    ("batteries", "lakeview", "rivertown"): "divergent",  # two different places
}


#: Pairs that must be labelled a disagreement (divergent or contradictory).
DISAGREE: Final = (("collection", "oakridge", "pinehill"),)


@dataclass(frozen=True)
class CorpusPaths:
    """Where :func:`write_corpus` put the files."""

    sources: Path
    questions: Path
    answers: Path
    sources_jsonl: Path


def write_corpus(root: Path, *, cues: bool = True) -> CorpusPaths:
    """Write the guides (a folder and a JSON lines file), the questions and the answers."""
    folder = root / "guides"
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for city, (meta, text) in GUIDES.items():
        if meta:
            (folder / f"{city}.md").write_text(f"---\n{meta}\n---\n{text}\n", "utf-8")
        else:
            (folder / f"{city}.md").write_text(text + "\n", "utf-8")
            (folder / f"{city}.yaml").write_text(_SIDECAR, "utf-8")
        group = "drop-off" if city in ("lakeview", "stonebridge") else "curbside"
        lines.append({"id": city, "title": city.title(), "group": group, "text": text})
    sources_jsonl = root / "guides.jsonl"
    sources_jsonl.write_text("".join(json.dumps(x) + "\n" for x in lines), "utf-8")
    questions = root / "questions.jsonl"
    kept = [q if cues else {k: v for k, v in q.items() if k != "cues"} for q in QUESTIONS]
    questions.write_text("".join(json.dumps(q) + "\n" for q in kept), "utf-8")
    answers = root / "answers.jsonl"
    answers.write_text("".join(json.dumps(a) + "\n" for a in ANSWERS), "utf-8")
    return CorpusPaths(folder, questions, answers, sources_jsonl)
