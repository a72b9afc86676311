"""The case model: one :class:`Case` for every analysis, and the small types it holds."""

from __future__ import annotations

import posixpath
from typing import Any

import msgspec

__all__ = [
    "STRATA",
    "Case",
    "ExpectedSource",
    "Passage",
    "RequiredCall",
    "SupportingFact",
    "ToolSpec",
    "Turn",
    "normalise_resource",
]

#: The strata of the SPEC (4.5); a case names one of them.
STRATA: tuple[str, ...] = ("general", "domain_specific", "critical")


def normalise_resource(value: str) -> str:
    """Normalise a path-like resource id (``a/./b.md`` -> ``a/b.md``); ids stay as they are."""
    text = value.strip()
    if "/" in text or "\\" in text:
        return posixpath.normpath(text.replace("\\", "/"))
    return text


class RequiredCall(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    """A required tool call with argument constraints.

    Attributes:
        name: the tool/function name.
        arguments: argument name -> list of acceptable values; ``""`` among them marks the
            argument optional. Dict values are nested constraints (key -> acceptable list).
    """

    name: str
    arguments: dict[str, list[Any]] = {}


class ExpectedSource(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    """A source the answer must rest on, optionally at a given document version."""

    source: str
    version: str | None = None


class SupportingFact(msgspec.Struct, frozen=True, gc=False, array_like=True):
    """One gold supporting sentence: ``[title, sentence index]`` as HotpotQA writes it."""

    title: str
    sentence: int


class Passage(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    """One context paragraph or replacement candidate.

    Attributes:
        id: stable id (``<case id>:<index>`` for a dataset's context paragraphs).
        title: the article or document title (matched against the support titles).
        text: the paragraph text, joined from ``sentences`` as its layout needs.
        sentences: the sentences as the dataset split them (empty when it gave text).
    """

    id: str
    title: str = ""
    text: str = ""
    sentences: tuple[str, ...] = ()


class ToolSpec(msgspec.Struct, frozen=True, gc=False):
    """A declared function (BFCL ``function``): its name and JSON-schema parameters."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = {}


class Turn(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    """What one turn of a multi-turn case requires (BFCL multi-turn: one list of calls each).

    Attributes:
        question: the user's message(s) of the turn.
        required_calls: the calls the turn must make (extra calls are allowed, as BFCL's
            multi-turn checker allows them: it compares the state and that the ground-truth
            calls ran).
        required_reads: resources the turn must read successfully.
        required_values: values the turn's answer must state.
    """

    question: str | None = None
    required_calls: tuple[RequiredCall, ...] = ()
    required_reads: tuple[str, ...] = ()
    required_values: tuple[str, ...] = ()


class Case(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    """One case, whatever the analysis: its question, gold labels and expectations.

    Every field but ``case_id`` is optional; each analysis reads the fields it needs.

    Attributes:
        case_id: join key to the traces (``id``, ``_id`` or ``task_id`` in other layouts).
        question: the user's question (or a task's instruction).
        reference_answer: the gold answer (``answer``).
        response: an answer to judge (a judge item's ``answer`` or ``response``).
        support_titles: gold supporting titles or ids: S of the interventions, the required
            context K* of the gate (``gold_support_titles``, ``required_context``).
        supporting_facts: gold supporting sentences (HotpotQA, 2WikiMultihopQA).
        evidences: gold ``(subject, relation, object)`` triples (2WikiMultihopQA).
        passages: context paragraphs, replacement candidates or the evidence an answer to
            judge rests on (``context``, ``distractors``, ``candidates``, ``evidence``).
        expected_terms: terms the answer must contain (gate).
        expected_sources: sources (and versions) the answer must rest on (gate).
        forbidden_phrases: phrases the answer must not contain (gate).
        stratum: one of :data:`STRATA` (gate).
        critical: a failure always blocks (default: the ``critical`` stratum).
        expects_json: the answer must be JSON (gate).
        require_path: false means no strict path check (paths).
        declares_path: the case states its expected command path, even an empty one (a row
            naming ``required_reads``, ``required_calls``, ``required_values``,
            ``allowed_commands`` or ``exclusive_tools``, even as ``[]``; a tau-bench task's
            actions; BFCL ground truth): paths checks a run of it that made no tool call
            (pass or fail) instead of calling it not applicable.
        required_reads: resources that must be read successfully (paths).
        required_calls: tool calls that must be made (paths; tau-bench, BFCL ground truth).
        ordered: the required calls must be made in order (paths).
        allowed_commands: if given, any other executed tool is disallowed (paths).
        exclusive_tools: every successful call of these tools must be required (paths).
        required_values: values the answer must state (paths: ``missing_value`` otherwise,
            ``unused_result`` when a tool returned the value and the answer dropped it).
        tools: the functions declared to the model (BFCL).
        turns: a multi-turn case's expectations, turn by turn (paths checks each turn
            against its own trace or part of one; the case passes when every turn passes).
        metadata: every other field of the row, unchanged (``type``, ``level``, ``notes``...).
    """

    case_id: str
    question: str | None = None
    reference_answer: str | None = None
    response: str | None = None
    support_titles: tuple[str, ...] = ()
    supporting_facts: tuple[SupportingFact, ...] = ()
    evidences: tuple[tuple[str, str, str], ...] = ()
    passages: tuple[Passage, ...] = ()
    expected_terms: tuple[str, ...] = ()
    expected_sources: tuple[ExpectedSource, ...] = ()
    forbidden_phrases: tuple[str, ...] = ()
    stratum: str = "general"
    critical: bool = False
    expects_json: bool = False
    require_path: bool = True
    declares_path: bool = False
    required_reads: tuple[str, ...] = ()
    required_calls: tuple[RequiredCall, ...] = ()
    ordered: bool = False
    allowed_commands: tuple[str, ...] | None = None
    exclusive_tools: tuple[str, ...] = ()
    required_values: tuple[str, ...] = ()
    tools: tuple[ToolSpec, ...] = ()
    turns: tuple[Turn, ...] = ()
    metadata: dict[str, Any] = {}

    @property
    def has_checks(self) -> bool:
        """Whether the case asks the gate for anything beyond an answer being present."""
        return bool(
            self.reference_answer
            or self.expected_terms
            or self.expected_sources
            or self.support_titles
            or self.forbidden_phrases
            or self.expects_json
        )
