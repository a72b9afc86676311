"""Gold sets for judge meta-evaluation: loading, field mapping, filters and sampling.

Two layouts are read:

* **two annotators** (SPEC §4.4): ``annotator_a``, ``annotator_b`` and ``adjudicated`` labels;
* **single label**: one label column (``label`` by default, or any ``label_field`` such as
  ``supported`` in the groundedness file) -- reported as a single-label set, without
  inter-annotator agreement.

The judged item is either an ``item`` object or the row itself, read as a judge item by
:func:`groundtrace.analyzer.cases.parse_case`: the question under ``question``/``query``, the
context under ``context``/``contexts``/``evidence`` (a string or a list of strings) and the
answer under ``answer``/``response``. A label may be a bool, 0/1, a
``pass``/``fail``-style word, or an object keyed by dimension (``{"adherence": 1, ...}``).
Label 1 (pass) means the metric is satisfied (e.g. the answer is supported).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from groundtrace.analyzer.cases import parse_case, read_cases
from groundtrace.analyzer.errors import ConfigError, InputError
from groundtrace.collectors.jsonl import read_jsonl

from ._cases import judge_case
from ._records import GoldSummary
from ._types import JudgeCase

__all__ = ["GoldItem", "GoldSet", "RowFilter", "load_cases", "load_gold"]

_TRUE = frozenset({"1", "true", "yes", "pass", "supported", "grounded", "relevant", "correct"})
_FALSE = frozenset(
    {"0", "false", "no", "fail", "unsupported", "hallucinated", "irrelevant", "incorrect"}
)
_ID = ("id", "item_id", "case_id")


@dataclass(frozen=True, slots=True)
class RowFilter:
    """A row filter ``FIELD~TEXT`` (contains, case-insensitive), ``FIELD!~TEXT``,
    ``FIELD=VALUE`` or ``FIELD!=VALUE`` (exact, on the value's string form)."""

    field: str
    op: str
    value: str

    @classmethod
    def parse(cls, spec: str) -> RowFilter:
        """Parse one filter expression."""
        for op in ("!~", "!=", "~", "="):
            name, sep, value = spec.partition(op)
            if sep and name:
                return cls(name.strip(), op, value)
        raise ConfigError(f"bad filter {spec!r}: use FIELD~TEXT, FIELD!~TEXT, FIELD=V or FIELD!=V")

    def matches(self, row: dict[str, Any]) -> bool:
        """Whether ``row`` passes this filter (a missing field never matches ``~``/``=``)."""
        raw = row.get(self.field)
        text = "" if raw is None else (json.dumps(raw) if isinstance(raw, bool) else str(raw))
        if self.op in ("~", "!~"):
            hit = raw is not None and self.value.casefold() in text.casefold()
        else:
            hit = raw is not None and text == self.value
        return hit if not self.op.startswith("!") else not hit

    def __str__(self) -> str:
        return f"{self.field}{self.op}{self.value}"


@dataclass(frozen=True, slots=True)
class GoldItem:
    """One gold item.

    Attributes:
        case: what the judge sees.
        label: adjudicated (or single) label, True = pass.
        annotator_a: first annotator's label (two-annotator layout only).
        annotator_b: second annotator's label (two-annotator layout only).
        line: 1-based line in the gold file.
    """

    case: JudgeCase
    label: bool
    annotator_a: bool | None = None
    annotator_b: bool | None = None
    line: int = 0


@dataclass(frozen=True, slots=True)
class GoldSet:
    """A loaded gold set and how it was selected (all of it goes into the report)."""

    items: tuple[GoldItem, ...]
    path: str
    layout: str
    label_field: str
    dimension: str
    filters: tuple[str, ...] = ()
    rows_read: int = 0
    sample: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> GoldSummary:
        """The set and how it was selected, as recorded in a validation."""
        n_pass = sum(i.label for i in self.items)
        n = len(self.items)
        return GoldSummary(
            self.path, self.layout, self.label_field, self.dimension, self.filters,
            self.rows_read, self.sample or None, n, n_pass, n - n_pass,
        )  # fmt: skip


def _label(value: Any, dimension: str, *, path: str, line: int, name: str) -> bool:
    if isinstance(value, dict):
        if dimension not in value:
            raise InputError(
                f"no label for dimension {dimension!r}", path=path, line=line, field=name
            )
        value = value[dimension]
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().casefold() in _TRUE | _FALSE:
        return value.strip().casefold() in _TRUE
    raise InputError(f"label {value!r} is not binary", path=path, line=line, field=name)


def _case(row: dict[str, Any], *, path: str, line: int) -> JudgeCase:
    item = row["item"] if isinstance(row.get("item"), dict) else row
    if item is not row and all(item.get(k) is None for k in _ID):
        item = {**{k: row[k] for k in _ID if row.get(k) is not None}, **item}
    return judge_case(parse_case(item, path=path, line=line), path=path, line=line)


def load_gold(
    path: str | Path,
    *,
    dimension: str = "adherence",
    label_field: str | None = None,
    filters: tuple[RowFilter, ...] = (),
    sample: int | None = None,
    stratify: bool = False,
    seed: int = 20260709,
) -> GoldSet:
    """Read a gold JSONL file.

    Args:
        path: the JSONL file.
        dimension: the metric the labels grade (selects from per-dimension label objects).
        label_field: column with the single label; None detects the layout (``adjudicated``
            with ``annotator_a``/``annotator_b``, else ``label``).
        filters: row filters, all of which must match.
        sample: keep a seeded random sample of this many rows (after filtering).
        stratify: sample the same number of rows from each class (at most the smaller class).
        seed: seed of the sampling generator (recorded).

    Raises:
        InputError: unreadable file, bad JSON, missing field or non-binary label (with line).
    """
    source = str(path)
    items: list[GoldItem] = []
    layout = "single_label"
    used_field = label_field or "label"
    rows_read = 0
    for number, row in read_jsonl(path, what="gold set"):
        rows_read += 1
        if not all(f.matches(row) for f in filters):
            continue
        a = b = None
        if label_field is None and "adjudicated" in row:
            layout, used_field = "two_annotators", "adjudicated"
            for name in ("annotator_a", "annotator_b"):
                if name not in row:
                    raise InputError(
                        "two-annotator row without both annotators",
                        path=source,
                        line=number,
                        field=name,
                    )
            a = _label(row["annotator_a"], dimension, path=source, line=number, name="annotator_a")
            b = _label(row["annotator_b"], dimension, path=source, line=number, name="annotator_b")
        if used_field not in row:
            raise InputError("no label", path=source, line=number, field=used_field)
        label = _label(row[used_field], dimension, path=source, line=number, name=used_field)
        items.append(GoldItem(_case(row, path=source, line=number), label, a, b, number))
    sample_info: dict[str, Any] = {}
    if sample is not None:
        items, sample_info = _sample(items, sample, stratify, seed)
    return GoldSet(
        items=tuple(items),
        path=source,
        layout=layout,
        label_field=used_field,
        dimension=dimension,
        filters=tuple(str(f) for f in filters),
        rows_read=rows_read,
        sample=sample_info,
    )


def _sample(
    items: list[GoldItem], size: int, stratify: bool, seed: int
) -> tuple[list[GoldItem], dict[str, Any]]:
    if size < 1:
        raise ConfigError(f"sample size must be >= 1, got {size}")
    rng = np.random.default_rng(seed)
    if stratify:
        groups = [[i for i in items if i.label], [i for i in items if not i.label]]
        per_class = min(size // 2, *(len(g) for g in groups))
        chosen = [g[int(k)] for g in groups for k in rng.choice(len(g), per_class, replace=False)]
    else:
        take = min(size, len(items))
        chosen = [items[int(k)] for k in rng.choice(len(items), take, replace=False)]
    chosen.sort(key=lambda i: i.line)
    return chosen, {"size": size, "stratify": stratify, "seed": seed, "drawn": len(chosen)}


def load_cases(path: str | Path) -> list[JudgeCase]:
    """Cases to judge from a case file (judge items: labels not needed)."""
    source = str(path)
    return [judge_case(case, path=source) for case in read_cases(path)]
