"""The licence corpus: 47 choosealicense.com texts, the audit questions and their gold answers.

A source is one licence (id = SPDX id, lower-cased). Its group comes from its condition tags:
``copyleft`` when it requires disclosing source or releasing changes under the same licence
(in any form), ``public-domain`` when it sets no condition at all, ``permissive`` otherwise.

A question (``data/questions.jsonl``, one JSON object a line) carries a scope and topics, the
rule deriving its gold answer from a licence's tags (``gold``) and the cue patterns of the
offline extractive answerer (``cues``). The derivation is documented in this example's README.

The audit reads the corpus as any user's: :data:`SOURCES_FILE` and :data:`QUESTIONS_FILE`, the
licences and their questions in the audit's documented input formats (``docs/audit.md``; the
questions with each in-scope licence's gold answer), made from the files above by
:func:`audit_inputs` (``python -m groundtrace.examples.license_audit.corpus`` writes them; a
test checks they are in step).

Usage::

    from groundtrace.examples.license_audit.corpus import load_corpus

    corpus = load_corpus()
    print(len(corpus.sources), len(corpus.questions), len(corpus.gold))
"""

from __future__ import annotations

import functools
from collections.abc import Collection
from importlib.resources import files
from pathlib import Path
from typing import Final

import msgspec

from groundtrace.analyzer.audit import (
    GENERAL_SCOPE,
    Answer,
    Corpus,
    Cues,
    Question,
    Source,
    Stance,
    front_matter,
    in_scope,
    render_answer,
)
from groundtrace.analyzer.errors import InputError

__all__ = [
    "DATA_DIR",
    "QUESTIONS_FILE",
    "SOURCES_FILE",
    "GoldRule",
    "LicenceQuestion",
    "QuestionCues",
    "audit_inputs",
    "gold_answer",
    "licence_group",
    "licence_tags",
    "load_corpus",
    "load_questions",
    "load_sources",
    "render_answer",
]

#: The shipped data folder (licence texts, rules.yml, questions.jsonl, the attribution).
DATA_DIR: Final = Path(str(files(__package__ or __name__) / "data"))
#: The licences as the audit's sources file (JSON lines; made by :func:`audit_inputs`).
SOURCES_FILE: Final = DATA_DIR / "sources.jsonl"
#: The questions as the audit's questions file, with their gold answers (:func:`audit_inputs`).
QUESTIONS_FILE: Final = DATA_DIR / "audit_questions.jsonl"
_TAG_KINDS: Final = ("permissions", "conditions", "limitations")
_COPYLEFT_TAGS: Final = frozenset(
    {
        "conditions:disclose-source",
        "conditions:same-license",
        "conditions:same-license--file",
        "conditions:same-license--library",
        "conditions:network-use-disclose",
    }
)


class GoldRule(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """How a licence's tags (``kind:tag``) give the gold answer to one question.

    The first rule that matches decides: ``no``, then ``conditional`` (tag -> qualifier), then
    ``yes``; a ``points`` rule maps tags to list items (stance yes when any is present). No
    matching tag means the licence does not address the question (``absent``).
    """

    yes: tuple[str, ...] = ()
    no: tuple[str, ...] = ()
    conditional: dict[str, str] = msgspec.field(default_factory=dict)
    points: dict[str, str] = msgspec.field(default_factory=dict)


#: The cue patterns of the audit's offline extractive answerer (one question's).
QuestionCues = Cues


class LicenceQuestion(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One line of ``questions.jsonl``."""

    id: str
    text: str
    scope: str
    topics: tuple[str, ...]
    gold: GoldRule
    cues: QuestionCues

    def question(self) -> Question:
        """The question as the audit sees it (no gold, no cues)."""
        return Question(id=self.id, text=self.text, scope=self.scope, topics=self.topics)


def _split_front_matter(text: str, path: Path) -> tuple[dict[str, object], str, int]:
    """(front matter, body, the body's first line) of a licence file."""
    if not text.startswith("---"):
        raise InputError("no YAML front matter (the file must start with ---)", path=str(path))
    meta, body, body_line = front_matter(text, path)
    if not isinstance(meta, dict):
        raise InputError("YAML front matter is not a mapping", path=str(path), line=2)
    return meta, body.strip(), body_line


def licence_tags(meta: dict[str, object]) -> frozenset[str]:
    """The licence's tags as ``kind:tag`` (e.g. ``conditions:same-license``)."""
    tags: set[str] = set()
    for kind in _TAG_KINDS:
        values = meta.get(kind) or []
        if isinstance(values, list):
            tags.update(f"{kind}:{tag}" for tag in values)
    return frozenset(tags)


def licence_group(tags: frozenset[str]) -> str:
    """``copyleft``, ``public-domain`` or ``permissive`` (see the module docstring)."""
    if tags & _COPYLEFT_TAGS:
        return "copyleft"
    if not any(t.startswith("conditions:") for t in tags):
        return "public-domain"
    return "permissive"


def _read_source(path: Path) -> Source:
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read licence text: {exc}", path=str(path)) from None
    meta, body, body_line = _split_front_matter(text, path)
    spdx = meta.get("spdx-id")
    if not isinstance(spdx, str) or not spdx:
        raise InputError("front matter has no spdx-id", path=str(path), field="spdx-id")
    if not body:
        raise InputError(
            "the licence has no text after its front matter", path=str(path), line=body_line,
            field="text",
        )  # fmt: skip
    tags = licence_tags(meta)
    return Source(
        id=spdx.lower(),
        group=licence_group(tags),
        title=str(meta.get("title", spdx)),
        text=body,
        metadata={
            "spdx_id": spdx,
            "file": path.name,
            "tags": " ".join(sorted(tags)),
            "author": "choosealicense.com",
        },
    )


def load_sources(folder: Path | None = None) -> list[Source]:
    """Every ``*.txt`` licence of ``folder`` (default: the shipped ``data/licenses``), by id.

    Raises:
        InputError: a file without front matter, spdx-id or text (the message names it).
    """
    root = folder or DATA_DIR / "licenses"
    paths = sorted(root.glob("*.txt"))
    if not paths:
        raise InputError("no licence texts (*.txt) in the folder", path=str(root))
    return sorted((_read_source(p) for p in paths), key=lambda s: s.id)


def load_questions(
    path: Path | None = None, *, groups: Collection[str] | None = None
) -> list[LicenceQuestion]:
    """The questions of ``path`` (default: the shipped ``data/questions.jsonl``).

    Args:
        path: the questions file.
        groups: the source groups a question may be scoped to (None: not checked).

    Raises:
        InputError: a line that is not a valid question, or one scoped to a group not in
            ``groups`` (names file, line and field).
    """
    target = path or DATA_DIR / "questions.jsonl"
    try:
        lines = target.read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read questions: {exc}", path=str(target)) from None
    decoder = msgspec.json.Decoder(LicenceQuestion)
    out: list[LicenceQuestion] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            out.append(decoder.decode(line))
        except msgspec.DecodeError as exc:
            message = str(exc)
            field = message.rsplit("`$.", 1)[1].rstrip("`") if "`$." in message else None
            raise InputError(
                f"invalid question: {message}", path=str(target), line=number, field=field
            ) from None
        scope = out[-1].scope
        if groups is not None and scope != GENERAL_SCOPE and scope not in groups:
            raise InputError(
                f"question {out[-1].id!r} is scoped to unknown group {scope!r} "
                f"(groups: {', '.join(sorted(groups))})", path=str(target), line=number,
                field="scope",
            )  # fmt: skip
    return out


def gold_answer(question: LicenceQuestion, source: Source) -> Answer:
    """The answer ``source``'s tags give to ``question`` (see :class:`GoldRule`)."""
    tags = frozenset(source.metadata.get("tags", "").split())
    rule = question.gold
    stance: Stance = "absent"
    points: tuple[str, ...] = ()
    if rule.points:
        points = tuple(sorted(p for tag, p in rule.points.items() if tag in tags))
        stance = "yes" if points else "absent"
    elif tags & set(rule.no):
        stance = "no"
    elif qualifiers := sorted(q for tag, q in rule.conditional.items() if tag in tags):
        stance, points = "conditional", tuple(qualifiers)
    elif tags & set(rule.yes):
        stance = "yes"
    return Answer(
        question_id=question.id,
        source_id=source.id,
        stance=stance,
        points=points,
        text=render_answer(stance, points),
    )


@functools.cache
def load_corpus() -> Corpus:
    """The shipped licence corpus with the gold answer of every (question, in-scope source)."""
    sources = tuple(load_sources())
    licence_questions = load_questions(groups={s.group for s in sources})
    questions = tuple(q.question() for q in licence_questions)
    corpus = Corpus(name=str(DATA_DIR), sources=sources, questions=questions)
    gold = tuple(
        gold_answer(lq, s) for lq, q in zip(licence_questions, questions, strict=True)
        for s in in_scope(q, sources)
    )  # fmt: skip
    return Corpus(name=corpus.name, sources=sources, questions=questions, gold=gold)


def audit_inputs(corpus: Corpus | None = None) -> tuple[str, str]:
    """The text of :data:`SOURCES_FILE` and :data:`QUESTIONS_FILE`, made from the licence texts
    and ``data/questions.jsonl``: a source per licence (its id, title, group, author and the
    ``spdx_id`` / ``file`` / ``tags`` metadata, its text), a question per question with the
    gold answer of each in-scope licence and its cues.

    Args:
        corpus: the licences and questions to write (default: :func:`load_corpus`'s, all).
    """
    corpus = corpus or load_corpus()
    encode = msgspec.json.encode
    sources = [
        encode({
            "id": s.id, "title": s.title, "group": s.group, "author": s.metadata["author"],
            "metadata": {k: v for k, v in s.metadata.items() if k != "author"}, "text": s.text,
        })
        for s in corpus.sources
    ]  # fmt: skip
    asked = {q.id for q in corpus.questions}
    questions = []
    for question in (q for q in load_questions() if q.id in asked):
        gold = {
            g.source_id: g.stance if not g.points else {"stance": g.stance, "points": g.points}
            for g in corpus.gold if g.question_id == question.id
        }  # fmt: skip
        questions.append(encode({
            "id": question.id, "text": question.text, "scope": question.scope,
            "topics": question.topics, "gold": gold, "cues": question.cues,
        }))  # fmt: skip
    return "".join(f"{line.decode()}\n" for line in sources), "".join(
        f"{line.decode()}\n" for line in questions
    )


def main() -> None:
    """Write :data:`SOURCES_FILE` and :data:`QUESTIONS_FILE` from the licences and questions."""
    sources, questions = audit_inputs()
    SOURCES_FILE.write_text(sources, "utf-8")
    QUESTIONS_FILE.write_text(questions, "utf-8")


if __name__ == "__main__":
    main()
