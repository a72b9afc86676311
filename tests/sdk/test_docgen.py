"""The attribute reference's section headings: a title over several comment lines is one title."""

from __future__ import annotations

import re
from pathlib import Path

from groundtrace.sdk import _docgen

REPO = Path(__file__).resolve().parents[2]

SOURCE = """
# Request (root span)
#: str -- the app. "support-rag"
APP: Final = "groundtrace.app.name"

# Evaluation results written back (``--write-back``): the GenAI
# ``gen_ai.evaluation.result`` event as a log
# record.
#: str -- the case. "q17"
CASE: Final = "groundtrace.evaluation.case_id"


def helper() -> None:
    # a comment inside a function is not a title
    return None


#: str -- still in the evaluation section. "p3"
EVIDENCE: Final = "groundtrace.evaluation.evidence_id"
"""


def test_a_title_over_several_comment_lines_is_one_section() -> None:
    sections = [d.section for d in _docgen.key_docs(SOURCE)]
    joined = (
        "Evaluation results written back (``--write-back``): the GenAI "
        "``gen_ai.evaluation.result`` event as a log record."
    )
    assert sections == ["Request (root span)", joined, joined]


def test_every_heading_of_the_page_is_a_whole_title() -> None:
    page = (REPO / "docs" / "attributes.md").read_text("utf-8")
    headings = re.findall(r"^## (.+)$", page, flags=re.MULTILINE)
    assert "## above), and Phoenix span annotations." not in page
    assert (
        "Evaluation results written back to the backend (`--write-back`): the GenAI "
        "`gen_ai.evaluation.result` event as an OTLP log record (with the GENAI_EVALUATION_* keys "
        "above), and Phoenix span annotations"
    ) in headings
    # no heading starts in the middle of a sentence or ends with a full stop
    assert all(h[0].isupper() or h[0] in "`g" for h in headings), headings
    assert not [h for h in headings if h.endswith(".")]
