"""The licence audit as an audit config: the shipped corpus files and this example's retriever.

The corpus ships as the audit's input files (``data/sources.jsonl``,
``data/audit_questions.jsonl``, see :mod:`.corpus`) and the retrieval as a retriever of
:mod:`.app`; :func:`licence_config` names them in an audit config, which the audit runs as any
user's corpus (``groundtrace audit run`` without ``--sources`` runs it). A subset (some
questions, the first licences) is written as the same files.

Usage::

    from groundtrace.analyzer import run_analysis
    from groundtrace.analyzer.audit import ANALYSIS
    from groundtrace.examples.license_audit.audit import licence_config

    config = licence_config("runs/audit")
    done = run_analysis(ANALYSIS, config, out=config.out)
    print(done.result.summary.overall.prevalence)
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Final

from groundtrace.analyzer.audit import Config, Corpus
from groundtrace.analyzer.errors import InputError

from .corpus import QUESTIONS_FILE, SOURCES_FILE, audit_inputs, load_corpus
from .retrieval import RetrievalMode

__all__ = ["RETRIEVERS", "licence_config", "subset_corpus", "write_subset"]

#: The audit config's retriever for each retrieval mode (``module:qualname``).
RETRIEVERS: Final[dict[RetrievalMode, str]] = {
    "auto": f"{__package__}.app:hierarchical",
    "flat": f"{__package__}.app:flat",
}


def subset_corpus(
    corpus: Corpus, *, questions: Collection[str] = (), max_sources: int | None = None
) -> Corpus:
    """The corpus restricted to ``questions`` (ids; empty: all) and its first sources.

    Raises:
        InputError: an unknown question id, or ``max_sources`` below 2.
    """
    known = {q.id for q in corpus.questions}
    if unknown := sorted(set(questions) - known):
        raise InputError(f"unknown question id(s): {', '.join(unknown)}", field="--questions")
    if max_sources is not None and max_sources < 2:
        raise InputError("an audit needs at least two sources", field="--sources")
    kept_questions = tuple(q for q in corpus.questions if not questions or q.id in questions)
    kept_sources = corpus.sources[:max_sources] if max_sources else corpus.sources
    ids = {s.id for s in kept_sources}
    gold = tuple(
        g for g in corpus.gold
        if g.source_id in ids and g.question_id in {q.id for q in kept_questions}
    )  # fmt: skip
    groups = {s.group for s in kept_sources}
    kept_questions = tuple(q for q in kept_questions if q.scope == "general" or q.scope in groups)
    return Corpus(name=corpus.name, sources=kept_sources, questions=kept_questions, gold=gold)


def write_subset(
    folder: Path, *, questions: Collection[str] = (), max_sources: int | None = None
) -> tuple[Path, Path]:
    """The subset of :func:`subset_corpus` as a sources and a questions file in ``folder``.

    Raises:
        InputError: what :func:`subset_corpus` raises, or ``folder`` cannot be written.
    """
    sources, asked = audit_inputs(
        subset_corpus(load_corpus(), questions=questions, max_sources=max_sources)
    )
    paths = folder / "sources.jsonl", folder / "questions.jsonl"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        paths[0].write_text(sources, "utf-8")
        paths[1].write_text(asked, "utf-8")
    except OSError as exc:
        raise InputError(f"cannot write the corpus: {exc.strerror}", path=str(folder)) from None
    return paths


def licence_config(
    out: str | Path,
    *,
    retrieval: RetrievalMode = "auto",
    questions: Collection[str] = (),
    max_sources: int | None = None,
    subset: Path | None = None,
) -> Config:
    """The licence audit into ``out``: answered offline from the questions' cues, labelled by
    the baseline (set the config's other fields for a model answerer or a pair judge).

    Args:
        out: the run folder.
        retrieval: ``auto`` (whole / hierarchical) or ``flat``.
        questions: question ids to keep (empty: every question).
        max_sources: keep the first licences only.
        subset: where a subset's files are written (default: ``out/corpus``).

    Raises:
        InputError: an unknown question id, fewer than two licences, an unwritable folder.
    """
    sources, asked = SOURCES_FILE, QUESTIONS_FILE
    if questions or max_sources is not None:
        folder = subset or Path(out) / "corpus"
        sources, asked = write_subset(folder, questions=questions, max_sources=max_sources)
    return Config(
        out=str(out), sources=str(sources), questions=str(asked), retriever=RETRIEVERS[retrieval]
    )
