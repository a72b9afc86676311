"""Planning an intervention run: the traces read, the cases joined, every item's replay units.

:func:`plan` (the analysis's ``plan``) checks the config, reads the traces (unreadable lines
skipped and counted, or refused when strict), joins the cases by case id (a trace of another
instrumentation that records none, by its question) and plans each item (:func:`plan_item`);
nothing is written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec

from groundtrace.analyzer._analysis import Plan
from groundtrace.analyzer._foreign import analysable, case_by_question, question_index
from groundtrace.analyzer._unreadable import refuse_unreadable
from groundtrace.analyzer.cases import Case, read_cases
from groundtrace.analyzer.errors import InputError
from groundtrace.collectors import ReadReport, Trace, read_traces

from ._config import Config
from ._engine import ItemPlan, PlanSettings, plan_item
from ._records import InputCounts
from ._tuning import plan_settings

__all__ = ["Items", "plan"]


@dataclass(frozen=True, slots=True)
class Items(Plan[ItemPlan]):
    """The items a run plans (one :class:`ItemPlan` per usable trace, each with its replay
    units), and the counts of what was read to find them (the summary's ``input``).

    The driver's units of this analysis are the items (an item is journaled and resumed by
    its replay units).

    Attributes:
        plans: the item plans, in run order.
        input: traces read, counterfactual traces ignored, unreadable lines, traces not usable.
    """

    plans: tuple[ItemPlan, ...]
    input: InputCounts

    @property
    def units(self) -> tuple[ItemPlan, ...]:
        """The item plans (each carries its replay units): the driver's units."""
        return self.plans

    @classmethod
    def of(cls, plans: Sequence[ItemPlan]) -> Items:
        """``plans`` as :class:`Items`: their own counts when they are, else counts of them
        alone (one trace read per plan, nothing left out)."""
        if isinstance(plans, Items):
            return plans
        return cls(tuple(plans), InputCounts(len(plans), 0, (), {}, 0))


def _load(
    config: Config, settings: PlanSettings, cases: Mapping[str, Case]
) -> tuple[list[ItemPlan], InputCounts]:
    paths = config.traces
    report = ReadReport()
    traces: list[Trace] = list(read_traces([str(p) for p in paths], report=report))
    if config.strict:
        refuse_unreadable(report.errors)
    if not traces:
        errors = "; ".join(str(e) for e in report.errors[:3])
        raise InputError(
            f"no traces read from {list(map(str, paths))}" + (f": {errors}" if errors else "")
        )
    # traces that name their case first: --limit takes items with gold before the others
    originals = sorted(
        (t for t in traces if t.replay is None),
        key=lambda t: (t.request.case_id is None, t.request.case_id or "", t.trace_id),
    )
    not_usable: dict[str, str] = {}
    without_case = 0
    plans: list[ItemPlan] = []
    by_question = question_index(cases.values()) if cases else {}
    for original in originals:
        trace = analysable(original)
        if config.limit is not None and len(plans) >= config.limit:
            break
        gold = cases.get(trace.request.case_id or "") if cases else None
        if gold is None and trace.request.case_id is None and by_question:
            gold = case_by_question(trace, by_question)  # a trace of another instrumentation
            if gold is not None:
                request = msgspec.structs.replace(trace.request, case_id=gold.case_id)
                trace = msgspec.structs.replace(trace, request=request)
        if cases and gold is None:
            without_case += 1
        incomplete = trace.incomplete
        if incomplete is not None:  # lost evidence is never measured
            case = trace.request.case_id or "no case id"
            not_usable[trace.trace_id] = f"case {case}: incomplete trace: {incomplete.message}"
            continue
        plan = plan_item(trace, gold, settings)
        if isinstance(plan, str):
            not_usable[trace.trace_id] = plan
        else:
            plans.append(plan)
    info = InputCounts(
        len(traces), len(traces) - len(originals), tuple(str(e) for e in report.errors),
        not_usable, without_case,
    )  # fmt: skip
    return plans, info


def _cases(cases_path: str | Path | None, pool_dataset: str | Path | None) -> dict[str, Case]:
    """Cases by id: gold from the case file; candidates from it, else from the pool dataset."""
    cases = {c.case_id: c for c in read_cases(cases_path)} if cases_path is not None else {}
    for pool in read_cases(pool_dataset) if pool_dataset is not None else ():
        base = cases.get(pool.case_id, Case(pool.case_id))
        if not base.passages:
            cases[pool.case_id] = msgspec.structs.replace(base, passages=pool.passages)
    return cases


def plan(config: Config) -> Items:
    """The items the run makes (each with its replay units), read from the config's inputs.

    The config is checked first (:func:`plan_settings`); its case file is joined by case id
    (gold labels), its pool dataset supplies replacement candidates, ``strict`` refuses
    unreadable trace lines (else they are skipped and counted) and ``limit`` caps the items.
    Nothing is written.

    Raises:
        ConfigError: a bad setting.
        TraceReadError: ``strict`` and a trace line cannot be read.
        InputError: no trace read; an unreadable case file or pool dataset.
    """
    settings = plan_settings(config)
    cases = _cases(config.cases, config.pool_dataset)
    joined = cases if config.cases is not None or config.pool_dataset else {}
    plans, info = _load(config, settings, joined)
    if config.cases is None:
        for item in plans:  # candidates only: no gold labels
            if item.gold is not None:
                item.gold = Case(item.gold.case_id, passages=item.gold.passages)
    return Items(tuple(plans), info)
