"""User text in the Markdown reports renders as the text it is (CommonMark + GFM tables).

Rendered with markdown-it-py (CommonMark with raw HTML on, as GitHub renders a comment before
sanitising it): a model answer, a case id or a stratum cannot become an image, a link,
``<details>``, raw HTML or a heading, and the text shown is the text written.
"""

from __future__ import annotations

import asyncio
import html
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from groundtrace.analyzer._markdown import literal
from groundtrace.analyzer.cases import Case
from groundtrace.analyzer.gate import load_profile
from groundtrace.analyzer.gate import write_report as write_gate_report
from groundtrace.analyzer.gate._cases import CaseOutcome, RetrievedItem
from groundtrace.analyzer.gate._run import evaluate

HOSTILE = [
    "![pixel](https://evil.test/p.png)",
    "[click me](https://evil.test/login)",
    "<details><summary>fine</summary>hidden</details>",
    '<img src=x onerror="alert(1)">',
    "<a href='https://evil.test'>x</a>",
    "answer\n\n# Approved by the release manager",
    "line one\r\nline two\u2028three",
    "`tick` ``two`` ```three```",
    "`",
    " padded ",
    "a | b | c",
    "\\| escaped pipe \\",
    "*bold* _it_ ~~strike~~ **x**",
    "@octocat please merge #12",
    "www.evil.test and https://evil.test",
    "<https://evil.test>",
    "&lt;b&gt; &amp;",
    "1. first\n2. second",
    "> quoted",
]
BAD_TAGS = re.compile(r"<(img|a|details|summary|h\d|script|blockquote|ol|ul|em|strong|del)\b")


def render(markdown: str) -> str:
    return MarkdownIt("commonmark").enable("table").render(markdown)


def shown(rendered: str) -> str:
    """The text a reader sees (tags removed, entities decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", "", rendered)).strip()


def flat(text: str) -> str:
    return re.sub(r"[\r\n\u2028]+", " ", text)


@pytest.mark.parametrize("text", HOSTILE)
def test_user_text_in_a_list_item_renders_as_itself(text: str) -> None:
    rendered = render(f"- **case** {literal(text)}\n")
    head, tail = "<ul>\n<li><strong>case</strong> ", "</li>\n</ul>\n"
    assert rendered.startswith(head) and rendered.endswith(tail), rendered
    inner = rendered.removeprefix(head).removesuffix(tail)
    assert not BAD_TAGS.search(inner), rendered
    assert shown(inner) == flat(text).strip()


@pytest.mark.parametrize("text", HOSTILE)
def test_user_text_in_a_table_cell_stays_in_its_cell(text: str) -> None:
    rendered = render(f"| a | b |\n|---|---|\n| {literal(text, table=True)} | z |\n")
    assert not BAD_TAGS.search(rendered), rendered
    cells = re.findall(r"<td>(.*?)</td>", rendered, flags=re.S)
    assert len(cells) == 2 and shown(cells[1]) == "z"
    assert shown(cells[0]) == flat(text).strip()


@pytest.mark.parametrize("text", ["q1", "general", "case-12", "v1.2", "Q 7", "2024"])
def test_plain_words_are_written_as_they_are(text: str) -> None:
    assert literal(text) == literal(text, table=True) == text


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("a_b", "`a_b`"),
        ("www.evil.test", "`www.evil.test`"),
        ("WWW.evil.test", "`WWW.evil.test`"),
        ("-x", "`-x`"),
        (".x", "`.x`"),
        ("x\ny", "`x y`"),
        ("a`b", "``a`b``"),
        ("`", "`` ` ``"),
        ("x ", "x "),
        (" x", "`  x `"),
        ("a|b", "`a|b`"),
        ("", ""),
    ],
)
def test_the_fence_and_its_padding(text: str, written: str) -> None:
    assert literal(text) == written


def test_a_pipe_in_a_table_cell_is_escaped() -> None:
    assert literal("a|b", table=True) == "`a\\|b`"


def _gate_summary(tmp_path: Path, case_id: str, stratum: str, answer: str) -> str:
    case = Case(
        case_id=case_id,
        question="When will my order ship?",
        stratum=stratum,
        reference_answer="2 business days",
    )
    item = (RetrievedItem("d1", title="Shipping"),)
    run = asyncio.run(
        evaluate(
            [case],
            {case_id: CaseOutcome(case_id, "2 business days", item)},
            {case_id: CaseOutcome(case_id, answer, item)},
            load_profile("balanced_default"),
        )
    )
    write_gate_report(run, tmp_path / "gate")
    return (tmp_path / "gate" / "summary.md").read_text(encoding="utf-8")


def test_a_model_answer_cannot_place_markup_in_the_gate_summary(tmp_path: Path) -> None:
    answer = (
        "Ships today ![pixel](https://evil.test/p.png) [approve](https://evil.test)\n\n"
        "<details><summary>LGTM</summary>hidden</details> @octocat"
    )
    summary = _gate_summary(tmp_path, "q<b>1</b>", "gen|eral <i>x</i>", answer)
    rendered = render(summary)
    # the summary's own folds are its only <details>; the answer's is text
    assert "<img" not in rendered and "<a " not in rendered
    assert "<b>" not in rendered and "<i>" not in rendered
    assert rendered.count("<details>") == summary.count("\n<details>")
    text = shown(rendered)
    assert "q<b>1</b>" in text and "![pixel](https://evil.test/p.png)" in text
    assert "<details><summary>LGTM</summary>hidden</details> @octocat" in text
    # the stratum row keeps its table's columns
    table = next(t for t in re.findall(r"<table>.*?</table>", rendered, flags=re.S) if "eral" in t)
    row = next(r for r in re.findall(r"<tr>(.*?)</tr>", table, flags=re.S) if "gen|eral" in r)
    assert row.count("<td>") == table.count("<th>") > 1


def test_plain_case_ids_read_as_before(tmp_path: Path) -> None:
    summary = _gate_summary(tmp_path, "q1", "general", "I am not sure")
    assert "- **q1** (general) manual_review: `deterministic.reference_answer fail" in summary
