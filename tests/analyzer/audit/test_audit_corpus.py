"""The licence corpus: sources, groups, questions, gold answers and bad input."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from groundtrace.analyzer.audit import Corpus, Question, Source
from groundtrace.analyzer.audit._model import in_scope
from groundtrace.analyzer.errors import InputError
from groundtrace.examples.license_audit.corpus import (
    DATA_DIR,
    gold_answer,
    load_corpus,
    load_questions,
    load_sources,
)


def test_the_shipped_corpus_has_47_licences_in_three_groups() -> None:
    corpus = load_corpus()
    assert len(corpus.sources) == 47
    groups = {s.group for s in corpus.sources}
    assert groups == {"copyleft", "permissive", "public-domain"}
    by_id = {s.id: s for s in corpus.sources}
    assert by_id["gpl-3.0"].group == "copyleft"
    assert by_id["mit"].group == "permissive"
    assert by_id["unlicense"].group == "public-domain"
    assert by_id["mit"].metadata["spdx_id"] == "MIT"
    assert (DATA_DIR / "LICENSE.choosealicense.md").is_file()


def test_gold_answers_follow_the_tags() -> None:
    questions = {q.id: q for q in load_questions()}
    sources = {s.id: s for s in load_sources()}

    def gold(question: str, source: str) -> tuple[str, tuple[str, ...]]:
        answer = gold_answer(questions[question], sources[source])
        return answer.stance, answer.points

    assert gold("commercial-use", "mit") == ("yes", ())
    assert gold("patent-grant", "apache-2.0") == ("yes", ())
    assert gold("patent-grant", "cc0-1.0") == ("no", ())
    assert gold("patent-grant", "mit") == ("absent", ())
    assert gold("same-licence", "mpl-2.0") == ("conditional", ("file-level",))
    assert gold("same-licence", "lgpl-3.0") == ("conditional", ("library-exempt",))
    assert gold("keep-notice", "bsl-1.0") == ("conditional", ("source-only",))
    assert gold("obligations", "zlib") == ("yes", ("document-changes", "include-copyright--source"))


def test_a_scoped_question_is_asked_of_its_group_only() -> None:
    corpus = load_corpus()
    question = next(q for q in corpus.questions if q.id == "same-licence")
    scoped = in_scope(question, corpus.sources)
    assert scoped and all(s.group == "copyleft" for s in scoped)
    assert len([g for g in corpus.gold if g.question_id == "same-licence"]) == len(scoped)


def test_a_question_scoped_to_an_unknown_group_is_refused() -> None:
    source = Source(id="a", group="permissive", title="A", text="text")
    question = Question(id="q", text="?", scope="weak-copyleft", topics=("t",))
    with pytest.raises(InputError, match="unknown group 'weak-copyleft'") as info:
        Corpus(name="mine", sources=(source,), questions=(question,))
    assert info.value.field == "scope"


def test_a_licence_without_text_names_its_file(tmp_path: Path) -> None:
    shutil.copy(DATA_DIR / "licenses" / "mit.txt", tmp_path / "mit.txt")
    (tmp_path / "empty.txt").write_text("---\nspdx-id: EMPTY\n---\n\n", "utf-8")
    with pytest.raises(InputError, match="no text") as info:
        load_sources(tmp_path)
    assert info.value.path is not None and info.value.path.endswith("empty.txt")
    assert (info.value.line, info.value.field) == (4, "text")  # the line after the front matter
    assert str(info.value).endswith(
        "empty.txt:4 [text]: the licence has no text after its front matter"
    )


def test_a_licence_with_invalid_front_matter_names_the_line_of_the_error(
    tmp_path: Path,
) -> None:
    (tmp_path / "bad.txt").write_text("---\nspdx-id: BAD\ntitle: : x\n---\ntext\n", "utf-8")
    with pytest.raises(InputError, match="invalid YAML front matter") as info:
        load_sources(tmp_path)
    assert info.value.line == 3  # the line of ``title: : x``


def test_a_question_file_scoped_to_an_unknown_group_names_file_line_and_field(
    tmp_path: Path,
) -> None:
    lines = (DATA_DIR / "questions.jsonl").read_text("utf-8").splitlines()
    lines[4] = lines[4].replace('"scope": "copyleft"', '"scope": "weak-copyleft"')
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join(lines), "utf-8")
    assert len(load_questions(path)) == len(lines)  # unchecked without groups
    with pytest.raises(InputError, match="unknown group 'weak-copyleft'") as info:
        load_questions(path, groups={"copyleft", "permissive", "public-domain"})
    assert (info.value.path, info.value.line, info.value.field) == (str(path), 5, "scope")


def test_a_bad_question_line_names_file_line_and_field(tmp_path: Path) -> None:
    lines = (DATA_DIR / "questions.jsonl").read_text("utf-8").splitlines()
    lines[2] = lines[2].replace('"scope": "general"', '"scope": 3')
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join(lines), "utf-8")
    with pytest.raises(InputError) as info:
        load_questions(path)
    assert (info.value.line, info.value.field) == (3, "scope")
