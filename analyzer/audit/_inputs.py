"""The audit's input files: sources, questions and answers made elsewhere (docs/audit.md).

* sources: JSON lines (one source a line: ``id``, ``text``, optional ``title``, ``group``,
  ``author``, ``institution``, ``version``, ``metadata``), or a folder of ``*.txt`` / ``*.md``
  files, each with optional YAML front matter or a sidecar ``<name>.yaml`` / ``<name>.yml``
  holding the same fields (the id is the file name without its suffix otherwise);
* questions: JSON lines (``id``, ``text``, optional ``scope``, ``topics``, ``gold`` -- a gold
  answer per source id -- and ``cues`` for the offline extractive answerer);
* answers: JSON lines (``question_id``, ``source_id``, ``answer``, optional ``stance``,
  ``points``, ``quote``, ``evidence``, ``trace_id``).

Bad input raises :class:`~groundtrace.analyzer.errors.InputError` naming file, line and field.

Usage::

    inputs = load_inputs(Path("guides/"), Path("questions.jsonl"))
    answers = load_answers(Path("answers.jsonl"), inputs.corpus)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final, Literal, TypeVar

import msgspec
import yaml

from groundtrace.analyzer.errors import InputError

from ._answerers import Cues, render_answer
from ._model import GENERAL_SCOPE, Answer, Corpus, Question, Source, Stance, in_scope
from ._pairs import normalise

__all__ = [
    "DEFAULT_GROUP",
    "AuditInputs",
    "answer_stance",
    "front_matter",
    "load_answers",
    "load_inputs",
    "load_questions",
    "load_sources",
]

_T = TypeVar("_T")
_K = TypeVar("_K", str, tuple[str, str])
#: The group of a source that names none.
DEFAULT_GROUP: Final = "ungrouped"
_TEXT_SUFFIXES: Final = (".txt", ".md")
_META_FIELDS: Final = ("author", "institution", "version")
_FIELD: Final = re.compile(r"`\$\.([A-Za-z_][\w.]*)|field `([A-Za-z_]\w*)`")
_ABSENT_OPENINGS: Final = ("not addressed", "the source does not say", "not stated", "unknown")


class _SourceMeta(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A source's fields in its front matter or sidecar file (the id defaults to the name)."""

    id: str | None = None
    title: str | None = None
    group: str = DEFAULT_GROUP
    author: str | None = None
    institution: str | None = None
    version: str | None = None
    metadata: dict[str, str] = msgspec.field(default_factory=dict)


class _SourceLine(_SourceMeta, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """One line of a sources JSON lines file: the same fields, with its id and text."""

    id: str
    text: str


class _GoldAnswer(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    stance: Stance
    points: tuple[str, ...] = ()
    answer: str | None = None


class _QuestionLine(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    id: str
    text: str
    scope: str = GENERAL_SCOPE
    topics: tuple[str, ...] = ()
    gold: dict[str, Stance | _GoldAnswer] = msgspec.field(default_factory=dict)
    cues: Cues = msgspec.field(default_factory=Cues)


class _AnswerLine(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    question_id: str
    source_id: str
    answer: str
    stance: Stance | None = None
    points: tuple[str, ...] | None = None
    quote: str = ""
    evidence: Any = None
    trace_id: str | None = None


class AuditInputs(msgspec.Struct, frozen=True, kw_only=True):
    """A corpus read from the input files, with each question's cues.

    Attributes:
        corpus: sources, questions and the gold answers the questions file gives.
        cues: question id -> the cues of the offline extractive answerer.
    """

    corpus: Corpus
    cues: dict[str, Cues]

    @property
    def answerable_offline(self) -> bool:
        """True when some question has cues the extractive answerer can look for."""
        return any(not c.empty for c in self.cues.values())


def _field_of(message: str) -> str | None:
    found = _FIELD.search(message)
    return (found.group(1) or found.group(2)) if found else None


def _lines(path: Path, what: str) -> Iterator[tuple[int, bytes]]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the {what} file: {exc.strerror}", path=str(path)) from None
    for number, line in enumerate(data.splitlines(), start=1):
        if line.strip():
            yield number, line


def _decode(
    decoder: msgspec.json.Decoder[_T], line: bytes, path: Path, number: int, what: str
) -> _T:
    try:
        return decoder.decode(line)
    except msgspec.DecodeError as exc:
        message = str(exc)
        raise InputError(
            f"invalid {what}: {message}", path=str(path), line=number, field=_field_of(message)
        ) from None


def _once(seen: dict[_K, int], key: _K, what: str, path: Path, line: int, field: str) -> None:
    """Note ``key`` read on ``line``; read before: refused, naming the line it was first on."""
    if key in seen:
        raise InputError(f"{what} (first on line {seen[key]})", path=str(path), line=line,
                         field=field)  # fmt: skip
    seen[key] = line


def _need(value: str, path: Path, line: int | None, field: str, what: str) -> None:
    if not value.strip():
        raise InputError(f"the {what} has an empty {field}", path=str(path), line=line, field=field)


def _source(meta: _SourceMeta, ident: str, text: str, path: Path, line: int | None) -> Source:
    _need(ident, path, line, "id", "source")
    _need(text, path, line, "text", "source")
    _need(meta.group, path, line, "group", "source")
    if meta.group == GENERAL_SCOPE:
        raise InputError(
            f"a source group may not be {GENERAL_SCOPE!r} (the scope of every source)",
            path=str(path), line=line, field="group",
        )  # fmt: skip
    extra = {k: v for k in _META_FIELDS if (v := getattr(meta, k)) is not None}
    return Source(
        id=ident, group=meta.group, title=meta.title or ident, text=text.strip(),
        metadata={**meta.metadata, **extra},
    )  # fmt: skip


def front_matter(text: str, path: Path) -> tuple[Any, str, int]:
    """The YAML front matter of a source file's ``text`` (between a first line ``---`` and
    the next ``---``), read from ``path``: (what the YAML holds, or ``None`` without front
    matter; the body after it; the line the body starts on).

    Raises:
        InputError: front matter not closed, or not YAML (its file line named).
    """
    if not text.startswith("---"):
        return None, text, 1
    head, sep, body = text[3:].partition("\n---")
    if not sep:
        raise InputError("YAML front matter is not closed by ---", path=str(path), line=1)
    try:
        meta = yaml.safe_load(head)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise InputError(f"invalid YAML front matter: {exc}", path=str(path), line=line) from None
    rest = body.split("\n", 1)[1] if "\n" in body else ""
    return meta, rest, head.count("\n") + 3


def _meta(raw: Any, path: Path, line: int | None) -> _SourceMeta:
    if raw is None:
        return _SourceMeta()
    if not isinstance(raw, dict):
        raise InputError("the source's metadata is not a mapping", path=str(path), line=line)
    try:
        return msgspec.convert(raw, _SourceMeta, str_keys=True)
    except msgspec.ValidationError as exc:
        message = str(exc)
        raise InputError(
            f"invalid source metadata: {message}", path=str(path), line=line,
            field=_field_of(message),
        ) from None  # fmt: skip


def _sidecar(text_path: Path) -> tuple[Any, Path] | None:
    for suffix in (".yaml", ".yml"):
        side = text_path.with_suffix(suffix)
        if side.is_file():
            try:
                return yaml.safe_load(side.read_text("utf-8")), side
            except (OSError, UnicodeDecodeError) as exc:
                raise InputError(f"cannot read the metadata file: {exc}", path=str(side)) from None
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                raise InputError(
                    f"invalid YAML: {exc}", path=str(side),
                    line=mark.line + 1 if mark is not None else None,
                ) from None  # fmt: skip
    return None


def _folder_sources(folder: Path) -> list[Source]:
    paths = sorted(p for p in folder.iterdir() if p.suffix in _TEXT_SUFFIXES and p.is_file())
    if not paths:
        raise InputError("no source files (*.txt, *.md) in the folder", path=str(folder))
    out: list[Source] = []
    for path in paths:
        try:
            text = path.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read the source: {exc}", path=str(path)) from None
        raw, body, body_line = front_matter(text, path)
        meta = _meta(raw, path, 1 if raw is not None else None)
        if (side := _sidecar(path)) is not None:
            if raw is not None:
                raise InputError(
                    f"metadata in both the front matter and {side[1].name}: keep one",
                    path=str(path), line=1,
                )  # fmt: skip
            meta = _meta(side[0], side[1], None)
        if not body.strip():
            raise InputError("the source has no text", path=str(path), line=body_line, field="text")
        out.append(_source(meta, meta.id or path.stem, body, path, None))
    return out


def load_sources(path: Path) -> list[Source]:
    """The sources of a JSON lines file or a folder of text / Markdown files, in file order.

    Raises:
        InputError: unreadable or invalid input, an empty id or text, or a duplicate id
            (the message names file, line and field).
    """
    if path.is_dir():
        sources = _folder_sources(path)
    else:
        decoder = msgspec.json.Decoder(_SourceLine)
        sources = []
        where: dict[str, int] = {}
        for number, line in _lines(path, "sources"):
            record = _decode(decoder, line, path, number, "source")
            _once(where, record.id, f"duplicate source id {record.id!r}", path, number, "id")
            sources.append(_source(record, record.id, record.text, path, number))
        if not sources:
            raise InputError("the sources file holds no source", path=str(path))
    seen: set[str] = set()
    for source in sources:
        if source.id in seen:
            raise InputError(f"duplicate source id {source.id!r}", path=str(path), field="id")
        seen.add(source.id)
    if len(sources) < 2:
        raise InputError("an audit needs at least two sources", path=str(path))
    return sources


def _gold(
    record: _QuestionLine, question: Question, sources: list[Source], path: Path, number: int
) -> list[Answer]:
    scoped = {s.id for s in in_scope(question, sources)}
    out: list[Answer] = []
    for source_id, given in record.gold.items():
        if source_id not in scoped:
            known = "not a source" if source_id not in {s.id for s in sources} else "out of scope"
            raise InputError(
                f"gold answer for source {source_id!r} ({known} of question {record.id!r})",
                path=str(path), line=number, field="gold",
            )  # fmt: skip
        gold = _GoldAnswer(stance=given) if isinstance(given, str) else given
        points = tuple(sorted(set(gold.points)))
        out.append(Answer(
            question_id=record.id, source_id=source_id, stance=gold.stance, points=points,
            text=gold.answer if gold.answer is not None else render_answer(gold.stance, points),
        ))  # fmt: skip
    return out


def load_questions(
    path: Path, sources: list[Source]
) -> tuple[list[Question], dict[str, Cues], list[Answer]]:
    """The questions of a JSON lines file, their cues and their gold answers.

    Raises:
        InputError: an invalid line, a duplicate id, a scope naming no source group, a gold
            answer for a source out of the question's scope (file, line and field named).
    """
    groups = {s.group for s in sources}
    decoder = msgspec.json.Decoder(_QuestionLine)
    questions: list[Question] = []
    cues: dict[str, Cues] = {}
    gold: list[Answer] = []
    lines: dict[str, int] = {}
    for number, line in _lines(path, "questions"):
        record = _decode(decoder, line, path, number, "question")
        _need(record.id, path, number, "id", "question")
        _need(record.text, path, number, "text", "question")
        _once(lines, record.id, f"duplicate question id {record.id!r}", path, number, "id")
        if record.scope != GENERAL_SCOPE and record.scope not in groups:
            raise InputError(
                f"question {record.id!r} is scoped to unknown group {record.scope!r} "
                f"(groups: {', '.join(sorted(groups))}; {GENERAL_SCOPE!r} asks every source)",
                path=str(path), line=number, field="scope",
            )  # fmt: skip
        for kind, patterns in _patterns(record.cues):
            for pattern in patterns:
                try:
                    re.compile(pattern)
                except re.error as exc:
                    raise InputError(
                        f"invalid regular expression {pattern!r}: {exc}", path=str(path),
                        line=number, field=f"cues.{kind}",
                    ) from None  # fmt: skip
        question = Question(
            id=record.id, text=record.text, scope=record.scope, topics=record.topics or (record.id,)
        )
        questions.append(question)
        cues[record.id] = record.cues
        gold.extend(_gold(record, question, sources, path, number))
    if not questions:
        raise InputError("the questions file holds no question", path=str(path))
    return questions, cues, gold


def _patterns(cues: Cues) -> Iterator[tuple[str, tuple[str, ...]]]:
    yield "yes", cues.yes
    yield "no", cues.no
    yield from (("conditional", p) for p in cues.conditional.values())
    yield from (("points", p) for p in cues.points.values())


def load_inputs(sources: Path, questions: Path, *, name: str | None = None) -> AuditInputs:
    """The corpus of a sources and a questions file (see the module docstring)."""
    found = load_sources(sources)
    asked, cues, gold = load_questions(questions, found)
    corpus = Corpus(
        name=name or str(sources), sources=tuple(found), questions=tuple(asked), gold=tuple(gold)
    )
    return AuditInputs(corpus=corpus, cues=cues)


def answer_stance(text: str) -> Literal["yes", "no", "absent"] | None:
    """The stance an answer's text opens with: ``yes`` / ``no`` as its first word, ``absent``
    for an empty answer or one opening with "not addressed", "the source does not say",
    "not stated" or "unknown"; None otherwise (a free-text answer)."""
    words = re.findall(r"[a-z']+", text.casefold())
    if not words:
        return "absent"
    opening = " ".join(words[:5])
    if any(opening.startswith(p) for p in _ABSENT_OPENINGS):
        return "absent"
    if words[0] == "yes":
        return "yes"
    return "no" if words[0] == "no" else None


def _given_answer(record: _AnswerLine) -> Answer:
    read = answer_stance(record.answer) if record.stance is None else None
    stance: Stance = record.stance or read or "conditional"
    if record.points is not None:
        points = tuple(sorted(set(record.points)))
    elif stance == "absent":
        points = ()
    else:  # a free-text answer: its claim is what it says after a leading yes / no
        claim = normalise(record.answer)
        if stance in ("yes", "no") and claim.split(" ", 1)[0] == stance:
            claim = claim.partition(" ")[2]
        points = (claim,) if claim else ()
    return Answer(
        question_id=record.question_id, source_id=record.source_id, stance=stance,
        points=points, text=record.answer, quote=record.quote, trace_id=record.trace_id,
    )  # fmt: skip


def load_answers(path: Path, corpus: Corpus) -> list[Answer]:
    """The answers of a JSON lines file, one per (question, in-scope source) at most.

    Without ``stance`` an answer's stance is read from its text (:func:`answer_stance`; a
    free-text answer is ``conditional``), and without ``points`` its claim (the normalised
    text after a leading yes / no) is its one point, so two different claims are told apart.
    A (question, in-scope source) without an answer line is ``absent``.

    Raises:
        InputError: an invalid line, an unknown question or source, a source out of the
            question's scope, or a second answer to the same pair (file, line, field named).
    """
    questions = {q.id: q for q in corpus.questions}
    scoped = {q.id: {s.id for s in in_scope(q, corpus.sources)} for q in corpus.questions}
    decoder = msgspec.json.Decoder(_AnswerLine)
    given: dict[tuple[str, str], Answer] = {}
    lines: dict[tuple[str, str], int] = {}
    for number, line in _lines(path, "answers"):
        record = _decode(decoder, line, path, number, "answer")
        if record.question_id not in questions:
            raise InputError(
                f"unknown question id {record.question_id!r}", path=str(path), line=number,
                field="question_id",
            )  # fmt: skip
        if record.source_id not in scoped[record.question_id]:
            known = {s.id for s in corpus.sources}
            why = "unknown source id" if record.source_id not in known else "source out of scope of"
            raise InputError(
                f"{why} {record.source_id!r} (question {record.question_id!r})",
                path=str(path), line=number, field="source_id",
            )  # fmt: skip
        key = (record.question_id, record.source_id)
        second = f"a second answer of source {key[1]!r} to question {key[0]!r}"
        _once(lines, key, second, path, number, "source_id")
        given[key] = _given_answer(record)
    if not given:
        raise InputError("the answers file holds no answer", path=str(path))
    return [
        given.get((q.id, s.id)) or Answer(question_id=q.id, source_id=s.id, stance="absent")
        for q in corpus.questions for s in in_scope(q, corpus.sources)
    ]  # fmt: skip
