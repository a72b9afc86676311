"""The one case reader: JSON lines or a JSON array, any known layout, precise errors."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from groundtrace.analyzer._invalid import located
from groundtrace.analyzer.errors import InputError
from groundtrace.collectors.jsonl import read_jsonl

from ._layouts import LAYOUTS, LayoutError, bfcl_calls, layout_of, to_case
from ._model import STRATA, Case, RequiredCall, normalise_resource
from ._multiturn import MultiTurnError, bfcl_turns, class_tools

__all__ = ["parse_case", "read_cases"]

_T = TypeVar("_T")

#: Field of :class:`Case` -> the keys a case file may name it by (first: the field itself).
_ALIASES: dict[str, tuple[str, ...]] = {
    "case_id": ("case_id", "id"),
    "reference_answer": ("reference_answer", "answer"),
    "support_titles": ("support_titles", "gold_support_titles", "required_context"),
    "passages": ("passages", "distractors", "candidates"),
}
_FIELD_OF = {key: name for name, keys in _ALIASES.items() for key in keys}
#: The keys of the case model's layout: a dataset row naming one its layout does not map is
#: refused rather than have it land in ``metadata`` unread.
_CASE_KEYS = (frozenset(Case.__struct_fields__) | frozenset(_FIELD_OF)) - {"metadata"}
#: Descriptive fields the project's own writers emit (the demo's case file, the examples'
#: notes, the gate's curated drafts), kept in ``metadata``.
_DESCRIPTIVE = ("type", "level", "notes", "reference_origin", "source_trace_id", "app_version")
#: The fields that state a case's expected command path (``[]`` included: "no such call").
_PATH_FIELDS = (
    "required_reads",
    "required_calls",
    "required_values",
    "allowed_commands",
    "exclusive_tools",
)


def _source(value: Any) -> Any:
    if isinstance(value, str):
        return {"source": value}
    if isinstance(value, dict) and isinstance(value.get("version"), int | float):
        return {**value, "version": str(value["version"])}
    return value


def _passage(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    out = {k: v for k, v in value.items() if k != "content"}
    if "content" in value:
        out.setdefault("text", value["content"])
    if isinstance(out.get("id"), int) and not isinstance(out["id"], bool):
        out["id"] = str(out["id"])
    return out


def _check_calls(value: Any, key: str) -> None:
    for i, item in enumerate(value if isinstance(value, list) else ()):
        arguments = item.get("arguments") if isinstance(item, dict) else None
        for arg, acceptable in (arguments or {}).items() if isinstance(arguments, dict) else ():
            if not isinstance(acceptable, list) or not acceptable:
                raise LayoutError(
                    "must be a non-empty list of acceptable values ('' marks optional)",
                    f"{key}[{i}].arguments.{arg}",
                )


def _native(row: Mapping[str, Any], used: dict[str, str]) -> Case:
    fields: dict[str, Any] = {}
    for key, value in row.items():
        name = _FIELD_OF.get(key, key)
        if name in fields:
            raise LayoutError(f"{used[name]!r} and {key!r} name the same field", key)
        used[name] = key
        fields[name] = value
    metadata = fields.pop("metadata", {})
    if isinstance(metadata, dict):
        metadata = {**metadata, **{k: fields.pop(k) for k in _DESCRIPTIVE if k in fields}}
    case_id = fields.get("case_id")
    if isinstance(case_id, int) and not isinstance(case_id, bool):
        case_id = fields["case_id"] = str(case_id)
    if not isinstance(case_id, str) or not case_id:
        raise LayoutError("a case needs a non-empty id", used.get("case_id", "id"))
    fields.setdefault("critical", fields.get("stratum") == "critical")
    fields.setdefault("declares_path", any(k in fields for k in _PATH_FIELDS))
    if isinstance(fields.get("expected_sources"), list):
        fields["expected_sources"] = [_source(s) for s in fields["expected_sources"]]
    if isinstance(fields.get("passages"), list):
        fields["passages"] = [_passage(p) for p in fields["passages"]]
    _check_calls(fields.get("required_calls"), "required_calls")
    case = msgspec.convert({**fields, "metadata": metadata}, Case)
    if case.stratum not in STRATA:
        raise LayoutError(
            f"unknown stratum {case.stratum!r} (expected one of {', '.join(STRATA)})", "stratum"
        )
    reads = tuple(normalise_resource(r) for r in case.required_reads)
    return msgspec.structs.replace(case, required_reads=reads)


def _where(exc: msgspec.ValidationError, used: Mapping[str, str]) -> tuple[str, str | None]:
    """A msgspec message without its location, and the field it names (in the row's own
    spelling: ``used`` maps a case field to the row's key it came from)."""
    text, field = located(exc)
    head = re.match(r"[^.\[]+", field)
    if head and head.group(0) in used:
        field = used[head.group(0)] + field[head.end() :]
    return text, field or None


def parse_case(row: Any, *, path: str = "<cases>", line: int | None = None) -> Case:
    """The case of one row, in the case model's layout or a dataset's (see the package).

    Raises:
        InputError: naming ``path``, ``line`` and the field that is wrong.
    """
    if not isinstance(row, dict):
        raise InputError("a case must be a JSON object", path=path, line=line)
    layout = layout_of(row)
    used: dict[str, str] = {}
    try:
        if layout == "groundtrace":
            return _native(row, used)
        clash = sorted((row.keys() & _CASE_KEYS) - LAYOUTS[layout])
        if clash:
            raise LayoutError(f"a case field, but this row is read as a {layout} row", clash[0])
        return to_case(row, layout, line)
    except msgspec.ValidationError as exc:
        message, field = _where(exc, used)
        if layout != "groundtrace":
            message = f"{message} (read as a {layout} row)"
        raise InputError(message, path=path, line=line, field=field) from None
    except LayoutError as exc:
        raise InputError(str(exc), path=path, line=line, field=exc.field) from None


def _ground_truth(path: Path) -> dict[str, tuple[RequiredCall, ...]]:
    """BFCL ground truth by item id (a ``possible_answer`` file)."""
    out: dict[str, tuple[RequiredCall, ...]] = {}
    for line, row in read_jsonl(path, what="BFCL ground truth"):
        try:
            out[str(row.get("id"))] = bfcl_calls(row.get("ground_truth"))
        except LayoutError as exc:
            raise InputError(str(exc), path=str(path), line=line, field=exc.field) from None
    return out


def _raw_truth(path: Path) -> dict[str, tuple[int, Any]]:
    """BFCL multi-turn ground truth by item id: (line, the per-turn call strings)."""
    return {
        str(row.get("id")): (line, row.get("ground_truth"))
        for line, row in read_jsonl(path, what="BFCL ground truth")
    }


def _with_turns(case: Case, truth: tuple[int, Any], answers: Path, folder: Path) -> Case:
    """``case`` with each turn's required calls from its multi-turn ground truth."""
    line, calls = truth
    classes = case.metadata.get("involved_classes") or []
    tools = class_tools(folder / "multi_turn_func_doc", [str(c) for c in classes])
    try:
        per_turn = bfcl_turns(calls, tools)
    except MultiTurnError as exc:
        raise InputError(str(exc), path=str(answers), line=line, field=exc.field) from None
    if len(per_turn) != len(case.turns):
        raise InputError(
            f"{len(per_turn)} ground-truth turn(s) for {len(case.turns)} question turn(s) "
            f"of {case.case_id!r}",
            path=str(answers),
            line=line,
            field="ground_truth",
        )
    turns = tuple(
        msgspec.structs.replace(turn, required_calls=required)
        for turn, required in zip(case.turns, per_turn, strict=True)
    )
    return msgspec.structs.replace(case, turns=turns, tools=tuple(tools.values()))


def _truth_of(case: Case, table: Mapping[str, _T], answers: Path, name: str, line: int) -> _T:
    """The ground truth of ``case`` in ``table`` (read from ``answers``).

    Raises:
        InputError: ``answers`` has none for the case (named at its line of ``name``).
    """
    if case.case_id not in table:
        raise InputError(
            f"no ground truth for {case.case_id!r} in {answers}",
            path=name,
            line=line,
            field="id",
        )
    return table[case.case_id]


def read_cases(
    path: str | os.PathLike[str], *, ground_truth: str | os.PathLike[str] | None = None
) -> Iterator[Case]:
    """Read a case file: JSON lines (blank and ``#`` lines skipped) or one JSON array.

    Each row is read in its own layout (see the package docstring). A BFCL questions file
    takes its required calls from ``ground_truth``, by default the ``possible_answer`` file
    of the same name beside it.

    Raises:
        InputError: unreadable file, invalid JSON, a bad field, a repeated case id or a BFCL
            item without ground truth (file, line and field named).
    """
    name = os.fspath(path)
    answers = Path(ground_truth or Path(name).parent / "possible_answer" / Path(name).name)
    seen: dict[str, int] = {}
    truth: dict[str, tuple[RequiredCall, ...]] | None = None
    raw: dict[str, tuple[int, Any]] | None = None
    for line, row in read_jsonl(
        name, what="case file", objects=False, comments=True, allow_array=True
    ):
        case = parse_case(row, path=name, line=line)
        if case.case_id in seen:
            raise InputError(
                f"duplicate case id {case.case_id!r} (first on line {seen[case.case_id]})",
                path=name,
                line=line,
                field="id",
            )
        seen[case.case_id] = line
        layout = layout_of(row)
        if layout == "bfcl-multi-turn":
            raw = _raw_truth(answers) if raw is None else raw
            found = _truth_of(case, raw, answers, name, line)
            case = _with_turns(case, found, answers, Path(name).parent)
        if layout == "bfcl":
            truth = _ground_truth(answers) if truth is None else truth
            found_calls = _truth_of(case, truth, answers, name, line)
            case = msgspec.structs.replace(case, required_calls=found_calls, declares_path=True)
        yield case
