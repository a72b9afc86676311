"""The audit's plan: the answer units (every question x each of its in-scope sources).

:func:`plan` reads the config's input files once: the sources, the questions and any answers
made elsewhere (an answers file or captured traces). What it noticed on the way (unreadable
trace lines skipped, traces not used) is kept in :attr:`AuditPlan.notes` for the caller to
show.

Usage::

    units = plan(Config(out="runs/a", sources="guides/", questions="questions.jsonl"))
    print(len(units), units.notes)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec

from groundtrace.analyzer._analysis import Plan
from groundtrace.analyzer.errors import ConfigError, InputError, NothingMeasuredError
from groundtrace.collectors import ReadReport

from ._app import Retriever, named_retriever
from ._config import Config
from ._folder import answers_from_traces
from ._inputs import AuditInputs, load_answers, load_inputs
from ._model import Answer, Question, Source, in_scope

__all__ = ["AnswerUnit", "AuditPlan", "plan"]

#: Unreadable trace lines named one by one in the notes (the rest are counted).
_NAMED_ERRORS = 10


class AnswerUnit(msgspec.Struct, frozen=True, kw_only=True):
    """One answer to make: ``question`` answered from ``source`` alone.

    Attributes:
        question: the question.
        source: the in-scope source it is asked of.
    """

    question: Question
    source: Source


@dataclass(frozen=True, slots=True)
class AuditPlan(Plan[AnswerUnit]):
    """The answer units of a config, with the inputs read to find them.

    Attributes:
        units: the answer units, question by question.
        inputs: the corpus and its cues.
        given: the answers made elsewhere (None: answered in the run).
        answerer: the answerer name the run records for given answers
            (``answers:<file name>`` or ``traces``); empty when answered in the run.
        notes: what reading the inputs noticed (unreadable trace lines, traces not used).
        retriever: the config's named retriever, imported (None: each source whole).
    """

    units: tuple[AnswerUnit, ...]
    inputs: AuditInputs
    given: tuple[Answer, ...] | None = None
    answerer: str = ""
    notes: tuple[str, ...] = ()
    retriever: Retriever | None = None

    def restricted(self, units: Sequence[AnswerUnit]) -> AuditPlan:
        """This plan with only ``units`` (each one of this plan's).

        Raises:
            InputError: a unit is not in this plan (unknown question, or a source out of
                its scope).
        """
        known = {(u.question.id, u.source.id): u for u in self.units}
        kept: list[AnswerUnit] = []
        for unit in units:
            found = known.get((unit.question.id, unit.source.id))
            if found is None or found != unit:
                raise InputError(
                    f"unit {unit.question.id}/{unit.source.id} is not one of the plan's: the "
                    "question or the source is not in the inputs, or out of scope",
                    field="units",
                )  # fmt: skip
            kept.append(found)
        return AuditPlan(
            tuple(kept), self.inputs, self.given, self.answerer, self.notes, self.retriever
        )


def _path(value: str, field: str, what: str, *, folder: bool = False) -> Path:
    if not value:
        raise InputError(f"the {what} is required (docs/audit.md)", field=field)
    path = Path(value)
    if not (path.exists() if folder else path.is_file()):
        raise InputError(f"no such {what}", path=value, field=field)
    return path


def _given(config: Config, inputs: AuditInputs) -> tuple[tuple[Answer, ...], str, list[str]]:
    """Answers made elsewhere (answers or traces), the answerer name recorded, the notes."""
    if config.answers is not None:
        path = _path(config.answers, "answers", "answers file")
        return tuple(load_answers(path, inputs.corpus)), f"answers:{path.name}", []
    report = ReadReport()
    found, unused = answers_from_traces(config.traces, inputs.corpus, report)
    notes = [f"unreadable trace input skipped: {e}" for e in report.errors[:_NAMED_ERRORS]]
    if report.errors:
        notes.append(f"{len(report.errors)} unreadable trace line(s) skipped")
    if unused:
        notes.append(
            f"{unused} trace(s) not used: they name no (question, in-scope source) of the "
            "corpus, or a later trace replaced them"
        )
    return tuple(found), "traces", notes


def plan(config: Config) -> AuditPlan:
    """The answer units of ``config``: each question from each of its in-scope sources.

    Raises:
        ConfigError: two ways of answering are given (answers and traces, or answers made
            elsewhere and a model or a retriever), an answerer or judge is neither built-in
            nor a URL with its model id, or the retriever cannot be imported.
        InputError: an input file is missing or invalid (the message names its file, line
            and field).
        NothingMeasuredError: nothing can answer: the offline answerer is asked to answer
            questions none of which has cues.
    """
    url = config.answerer_url()
    config.judge_url()
    retriever = None if config.retriever is None else named_retriever(config.retriever)
    sources = _path(config.sources, "sources", "file or folder", folder=True)
    questions = _path(config.questions, "questions", "questions file")
    inputs = load_inputs(sources, questions)
    units = tuple(
        AnswerUnit(question=q, source=s)
        for q in inputs.corpus.questions
        for s in in_scope(q, inputs.corpus.sources)
    )
    if config.answers is not None and config.traces:
        raise ConfigError("give the answers once: answers or traces", field="answers")
    if config.answers is not None or config.traces:
        if url is not None:
            raise ConfigError("answers made elsewhere (answers / traces) need no answerer",
                              field="endpoint")  # fmt: skip
        if retriever is not None:
            raise ConfigError("answers made elsewhere (answers / traces) need no retriever",
                              field="retriever")  # fmt: skip
        given, name, notes = _given(config, inputs)
        return AuditPlan(units, inputs, given, name, tuple(notes))
    if url is None and not inputs.answerable_offline:
        raise NothingMeasuredError(
            f"nothing can answer this corpus offline: the extractive answerer answers only from "
            f"the questions' cues, and no question of {config.questions} has any; give --answers "
            "FILE or --traces PATH (answers of your own app) or --endpoint URL --model NAME"
        )
    return AuditPlan(units, inputs, retriever=retriever)
