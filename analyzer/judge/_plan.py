"""The judge analysis's units: the cases it will judge, read from the config's inputs."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from groundtrace.analyzer._analysis import Plan
from groundtrace.analyzer._unreadable import refuse_unreadable
from groundtrace.analyzer.errors import ConfigError, InputError

from ._cases import cases_from_traces
from ._config import Config, acceptance, endpoint_settings, metric_of
from ._gold import GoldSet, RowFilter, load_cases, load_gold
from ._records import NotJudgeable
from ._types import JudgeCase

__all__ = ["JudgePlan", "plan", "plan_of"]


@dataclass(frozen=True, slots=True)
class JudgePlan(Plan[JudgeCase]):
    """The cases a judge run will score (a sequence of them), and what it read to find them.

    Attributes:
        cases: the cases, in input order (traces first, then the case file; or the gold set).
        not_judgeable: traces that cannot be judged, and what each lacks.
        read_errors: unreadable trace lines, skipped.
        gold: the gold set of a validation (its items are ``cases``), else None.
        not_applicable: traces whose answer nothing can ground (no document retrieved, no
            tool called).
    """

    cases: tuple[JudgeCase, ...]
    not_judgeable: tuple[NotJudgeable, ...] = ()
    read_errors: tuple[str, ...] = ()
    gold: GoldSet | None = None
    not_applicable: tuple[NotJudgeable, ...] = ()

    @property
    def units(self) -> tuple[JudgeCase, ...]:
        """The cases to score."""
        return self.cases


def _check_settings(config: Config) -> None:
    """Refuse a config whose judge or gold settings are bad, before any input is read."""
    acceptance(config)
    endpoint_settings(config)
    if config.gold is None:
        given = [name for name in ("label_field", "filters", "sample") if getattr(config, name)]
        if given:
            raise ConfigError(f"{given[0]} selects gold rows: it needs gold", field=given[0])
        return
    metric_of(config)
    if config.traces or config.cases is not None:
        field = "traces" if config.traces else "cases"
        raise ConfigError(
            "a validation judges the gold set's items: give gold, or traces and/or cases",
            field=field,
        )


def plan(config: Config) -> JudgePlan:
    """The cases ``config`` names: its gold set's items, else its traces' and case file's.

    Raises:
        ConfigError: bad judge, profile or gold settings; neither traces, cases nor gold.
        InputError: an unreadable or invalid case file or gold set (naming file, line and
            field), or a gold set with no item left after filtering.
        TraceReadError: ``strict`` and a trace line cannot be read.
    """
    _check_settings(config)
    if config.gold is not None:
        gold = load_gold(
            config.gold,
            dimension=metric_of(config).value,
            label_field=config.label_field,
            filters=tuple(RowFilter.parse(f) for f in config.filters),
            sample=config.sample,
            stratify=config.stratify,
            seed=config.sample_seed,
        )
        if not gold.items:
            raise InputError("no gold items left after filtering", path=config.gold)
        return JudgePlan(tuple(item.case for item in gold.items), gold=gold)
    if not config.traces and config.cases is None:
        raise ConfigError("give trace paths and/or --cases", field="traces")
    cases: list[JudgeCase] = []
    skipped: tuple[NotJudgeable, ...] = ()
    inapplicable: tuple[NotJudgeable, ...] = ()
    read_errors: tuple[str, ...] = ()
    if config.traces:
        from groundtrace.collectors.readers import ReadReport, read_traces

        report = ReadReport()
        found, unjudgeable = cases_from_traces(read_traces(config.traces, report=report))
        cases.extend(found)
        listed = [
            (u.applicable, NotJudgeable(u.case_id, u.missing, u.trace_id)) for u in unjudgeable
        ]
        skipped = tuple(entry for applies, entry in listed if applies)
        inapplicable = tuple(entry for applies, entry in listed if not applies)
        read_errors = tuple(str(e) for e in report.errors)
        if config.strict:
            refuse_unreadable(report.errors)
    if config.cases is not None:
        cases.extend(load_cases(config.cases))
    return JudgePlan(tuple(cases), skipped, read_errors, not_applicable=inapplicable)


def plan_of(units: Sequence[JudgeCase], config: Config) -> JudgePlan:
    """``units`` as a plan: itself when it is one; else the cases given, with the rest of
    ``config``'s plan (traces not judgeable or not applicable, read errors; the gold set cut
    to those cases).

    Raises:
        ConfigError: a validation's unit that is not an item of its gold set.
    """
    if isinstance(units, JudgePlan):
        return units
    full = plan(config)
    cases = tuple(units)
    if full.gold is None:
        return JudgePlan(
            cases, full.not_judgeable, full.read_errors, not_applicable=full.not_applicable
        )
    items = {item.case.case_id: item for item in full.gold.items}
    missing = [c.case_id for c in cases if c.case_id not in items]
    if missing:
        raise ConfigError(
            f"{len(missing)} unit(s) are not items of the gold set, first {missing[0]!r}",
            field="gold",
        )
    gold = dataclasses.replace(full.gold, items=tuple(items[c.case_id] for c in cases))
    return JudgePlan(cases, gold=gold)
