"""Turning replay results into per-replay-unit rows and the run's statistics (SPEC 4.2.1-4.2.4)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import msgspec

from groundtrace.analyzer.metrics import score_answer
from groundtrace.analyzer.replay import ReplayUnit, UnitResult
from groundtrace.analyzer.stats import StatsSettings, summarise_deltas, summarise_paired

from ._axes import (
    DELTA_AXES,
    REPORTED_AXES,
    AxisSettings,
    Comparison,
    Gold,
    Outcome,
    as_vector,
    compare,
    divergence_sensitivity,
    summarise_operators,
)
from ._engine import ALL_OPERATORS, JOINT, ORIGINAL, ItemPlan
from ._joint import JointItem, shapley_values, summarise_joint
from ._records import (
    AxisEffect,
    CounterfactualAnswer,
    DivergenceParts,
    Estimate,
    InterventionStatistics,
    JointResult,
    OperatorResult,
    OriginalAnswer,
    ReplayFailure,
    ReplayRow,
    RolesResult,
    RoleVerdict,
    ShapleyItem,
    ShapleyResult,
    Shift,
)
from ._roles import (
    ItemInterventions,
    ItemRoles,
    RoleThresholds,
    aggregate_roles,
    assign_roles,
)

__all__ = ["Analysis", "analyse", "counterfactual_outcome", "original_outcome"]

_GOLD_AXES = ("correctness", "exact_match", "f1", "fact_correctness", "calibration_error")


def _fallback_all(plan: ItemPlan) -> bool:
    """Whether the app's U was 'every chunk shown' because the answer cited none."""
    t = plan.trace
    shown = {c.id for c in plan.evidence}
    return not t.cited_ids and bool(shown) and set(t.selected_ids or ()) == shown


def _gold(plan: ItemPlan) -> Gold:
    g = plan.gold
    if g is None:
        return Gold(None, frozenset())
    return Gold(g.reference_answer, frozenset(g.support_titles))


def counterfactual_outcome(plan: ItemPlan, result: UnitResult, shown: Sequence[str]) -> Outcome:
    """τ̃ as an :class:`Outcome`: Ũ = the cited ids, or every chunk shown when the original
    trace shows the app falls back to that when the answer cites none."""
    used: set[str] = set(result.cited_ids)
    if not used and _fallback_all(plan):
        used = set(shown)
    titles = plan.titles
    return Outcome(
        result.answer or "", result.confidence, frozenset(u for u in used if u in titles), titles
    )


def original_outcome(plan: ItemPlan, recomputed: UnitResult | None = None) -> Outcome:
    """τ as an :class:`Outcome` (from the trace, or from the ORIGINAL replay when recomputed)."""
    if recomputed is not None:
        return counterfactual_outcome(plan, recomputed, [c.id for c in plan.evidence])
    t = plan.trace
    titles = plan.titles
    used = t.selected_ids if t.selected_ids is not None else t.cited_ids
    return Outcome(t.answer or "", t.confidence, frozenset(u for u in used if u in titles), titles)


@dataclass(slots=True)
class Analysis:
    """Everything the reports show: one row per unit, the run's statistics, per-item roles."""

    rows: list[ReplayRow] = field(default_factory=list)
    statistics: InterventionStatistics | None = None
    roles: list[tuple[ItemPlan, ItemRoles]] = field(default_factory=list)


def _f1(answer: str, reference: str) -> float:
    return score_answer(answer, reference).f1


def _row(plan: ItemPlan, unit: ReplayUnit, result: UnitResult | None,
         comparison: Comparison | None, original: Outcome) -> ReplayRow:  # fmt: skip
    t = None if comparison is None else comparison.terms
    return ReplayRow(
        key=unit.key, trace_id=unit.trace_id, case_id=unit.case_id, operator=unit.operator,
        target_id=unit.target_id, replacement_id=unit.replacement_id, seed=unit.seed,
        evidence_ids=tuple(c.id for c in unit.evidence),
        status="not_run" if result is None else result.status,
        original=OriginalAnswer(
            plan.trace.trace_id, original.answer, original.confidence,
            tuple(sorted(original.used_ids)),
        ),
        reference_answer=None if plan.gold is None else plan.gold.reference_answer,
        counterfactual=None if result is None else CounterfactualAnswer(
            result.counterfactual_trace_id, result.answer, result.confidence,
            tuple(result.cited_ids), result.parse_error, result.cached,
        ),
        error=None if result is None or result.ok else ReplayFailure(
            result.error_kind, result.error_message
        ),
        deltas=None if comparison is None else dict(comparison.deltas),
        divergence=None if comparison is None else comparison.divergence,
        divergence_terms=None if t is None else DivergenceParts(t.used, t.answer, t.confidence),
    )  # fmt: skip


def analyse(
    plans: Sequence[ItemPlan],
    results: Mapping[str, UnitResult],
    *,
    axes: AxisSettings,
    stats: StatsSettings,
    thresholds: RoleThresholds,
) -> Analysis:
    """Per-unit rows and the statistics of the run (failed units excluded and counted)."""
    out = Analysis()
    comparisons: dict[str, list[Comparison]] = {}
    with_s: dict[str, list[Comparison]] = {}
    confidences: dict[str, list[tuple[float | None, float | None]]] = {}
    failed: Counter[str] = Counter()
    failure_kinds: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    role_items: list[ItemInterventions] = []
    joint_items: list[JointItem] = []
    shapley_rows: list[ShapleyItem] = []
    measured = 0  # units compared with their original
    for plan in plans:
        gold = _gold(plan)
        recomputed = next((results.get(u.key) for u in plan.units if u.operator == ORIGINAL), None)
        if recomputed is not None and not recomputed.ok:
            recomputed = None
        original = original_outcome(plan, recomputed)
        outcomes: dict[str, Outcome] = {}
        joint_f1: dict[str, float] = {}
        skipped.update(plan.skipped.keys())
        for unit in plan.units:
            result = results.get(unit.key)
            comparison = None
            if result is not None and not result.ok:
                failed[unit.operator] += 1
                failure_kinds[str(result.error_kind)] += 1
            elif result is not None and unit.operator != ORIGINAL:
                measured += 1
                cf = counterfactual_outcome(plan, result, [c.id for c in unit.evidence])
                comparison = compare(original, cf, gold, axes)
                if unit.operator == JOINT:
                    if gold.reference is not None and unit.target_id is not None:
                        joint_f1[unit.target_id] = _f1(cf.answer, gold.reference)
                else:
                    outcomes[unit.operator] = cf
                    comparisons.setdefault(unit.operator, []).append(comparison)
                    pair = (original.confidence, cf.confidence)
                    confidences.setdefault(unit.operator, []).append(pair)
                    if gold.support_titles:
                        with_s.setdefault(unit.operator, []).append(comparison)
            out.rows.append(_row(plan, unit, result, comparison, original))
        if any(op in outcomes for op in ("REMOVE", "REPLACE", "DUPLICATE")):
            role_items.append(
                ItemInterventions(
                    gold,
                    original,
                    outcomes.get("REMOVE"),
                    outcomes.get("REPLACE"),
                    outcomes.get("DUPLICATE"),
                    outcomes.get("ZERO"),
                )
            )
            out.roles.append((plan, assign_roles(role_items[-1], thresholds, axes)))
        if plan.pair is not None and gold.reference is not None:
            s1, s2 = plan.pair
            full = _f1(original.answer, gold.reference)
            keys = (s1, s2, f"{s1}+{s2}")
            if all(k in joint_f1 for k in keys):
                joint_items.append(JointItem(full, *(joint_f1[k] for k in keys)))
            if plan.players:
                players = plan.players
                values: dict[frozenset[str], float] = {frozenset(players): full}
                for removed, f1 in joint_f1.items():
                    values[frozenset(players) - frozenset(removed.split("+"))] = f1
                if len(values) == 2 ** len(players):
                    phi = shapley_values(players, values)
                    shapley_rows.append(
                        ShapleyItem(plan.key, tuple(players), phi, full, values[frozenset()])
                    )
    statistics = _statistics(
        plans, comparisons, with_s, confidences, role_items, [r for _, r in out.roles],
        joint_items, shapley_rows, failed, failure_kinds, skipped, axes, stats, thresholds,
    )  # fmt: skip
    out.statistics = msgspec.structs.replace(
        statistics,
        not_run=_not_run(plans),
        findings=tuple(f for p in plans for f in p.findings),
        nothing_measured=_nothing_measured(plans, results, measured),
    )
    return out


def _not_run(plans: Sequence[ItemPlan]) -> dict[str, str]:
    """Operators asked for that no item could run, each with why (and the fix)."""
    planned = {u.operator for p in plans for u in p.units}
    reasons: dict[str, Counter[str]] = {}
    for plan in plans:
        for op, why in plan.skipped.items():
            reasons.setdefault(op, Counter())[why] += 1
    out: dict[str, str] = {}
    for op, counts in reasons.items():
        if op in planned or op == "SHAPLEY":
            continue
        parts = [f"{reason} ({n} of {len(plans)} item(s))" for reason, n in counts.most_common()]
        out[op] = "not run: " + "; ".join(parts)
    return dict(sorted(out.items()))


def _nothing_measured(
    plans: Sequence[ItemPlan], results: Mapping[str, UnitResult], measured: int
) -> str | None:
    """Why the run measured nothing (no item, no unit, every unit failed), else ``None``."""
    if measured:
        return None
    if not plans:
        return "no trace gave a usable item"
    units = [u for p in plans for u in p.units if u.operator != ORIGINAL]
    if not units:
        return f"no replay unit could be planned for the {len(plans)} item(s)"
    ran = [results[u.key] for u in units if u.key in results]
    failed = [r for r in ran if not r.ok]
    if ran and len(failed) == len(ran):
        kinds = Counter(str(r.error_kind) for r in failed)
        first = next((r.error_message for r in failed if r.error_message), None)
        detail = ", ".join(f"{k} {n}" for k, n in kinds.most_common())
        return f"every replay unit failed ({len(failed)} of {len(units)}: {detail})" + (
            f"; first error: {first}" if first else ""
        )
    return f"no replay unit produced a result ({len(ran)} of {len(units)} ran)"


def _operators(
    comparisons: Mapping[str, Sequence[Comparison]],
    with_s: Mapping[str, Sequence[Comparison]],
    confidences: Mapping[str, Sequence[tuple[float | None, float | None]]],
    has_reference: bool,
    stats: StatsSettings,
    failed: Counter[str],
    skipped: Counter[str],
) -> tuple[dict[str, OperatorResult], dict[str, str]]:
    skipped_axes: dict[str, str] = {}
    if not has_reference:
        for axis in _GOLD_AXES:
            skipped_axes[axis] = "no reference answer joined (pass --cases with reference_answer)"
    if not any(with_s.values()):
        skipped_axes["grounding"] = "no gold support titles joined (pass --cases)"
    ordered = {op: comparisons[op] for op in ALL_OPERATORS if comparisons.get(op)}
    main = summarise_operators(ordered, stats)
    grounded = summarise_operators({k: v for k, v in with_s.items() if v}, stats)
    changed = {op: [float(c.terms.answer) for c in items] for op, items in ordered.items()}
    conf_o = {op: as_vector([a for a, _ in confidences[op]]) for op in ordered}
    conf_c = {op: as_vector([b for _, b in confidences[op]]) for op in ordered}
    shift = summarise_paired(conf_o, conf_c, stats)
    table: dict[str, OperatorResult] = {}
    answer_changed = summarise_deltas(changed, stats)
    for op, summary in main.items():
        axes_out: dict[str, AxisEffect] = {}
        for axis in (*DELTA_AXES, *REPORTED_AXES):
            if axis in skipped_axes:
                continue
            paired = grounded[op].axes[axis] if axis == "grounding" else summary.axes[axis]
            d = paired.delta
            axes_out[axis] = AxisEffect(
                paired.mean_original, paired.mean_counterfactual, d.mean, d.ci_low, d.ci_high,
                d.p_value, d.wilcoxon_p, d.n,
            )  # fmt: skip
        d = summary.divergence
        axes_out["divergence"] = AxisEffect(
            0.0, d.mean, d.mean, d.ci_low, d.ci_high, d.p_value, d.wilcoxon_p, d.n,
            test="one-sided (D > 0)",
        )  # fmt: skip
        s = shift[op]
        table[op] = OperatorResult(
            n_items=summary.n_items,
            axes=axes_out,
            answer_changed_rate=Estimate.of(answer_changed[op]),
            confidence_shift=Shift.of(s.delta, s.mean_original, s.mean_counterfactual),
            n_failed=failed.get(op, 0),
            n_not_planned=skipped.get(op, 0),
        )  # fmt: skip
    return table, skipped_axes


def _statistics(
    plans: Sequence[ItemPlan],
    comparisons: Mapping[str, Sequence[Comparison]],
    with_s: Mapping[str, Sequence[Comparison]],
    confidences: Mapping[str, Sequence[tuple[float | None, float | None]]],
    role_items: Sequence[ItemInterventions],
    item_roles: Sequence[ItemRoles],
    joint_items: Sequence[JointItem],
    shapley_rows: Sequence[ShapleyItem],
    failed: Counter[str],
    failure_kinds: Counter[str],
    skipped: Counter[str],
    axes: AxisSettings,
    stats: StatsSettings,
    thresholds: RoleThresholds,
) -> InterventionStatistics:
    has_reference = any(p.gold is not None and p.gold.reference_answer is not None for p in plans)
    table, skipped_axes = _operators(
        comparisons, with_s, confidences, has_reference, stats, failed, skipped
    )
    ordered = {op: comparisons[op] for op in ALL_OPERATORS if comparisons.get(op)}
    roles = RolesResult(len(role_items))
    if role_items:
        counts: Counter[str] = Counter()
        not_eval: Counter[str] = Counter()
        for r in item_roles:
            counts.update(str(x) for x in r.roles)
            not_eval.update(str(x) for x in r.not_evaluable)
        agg = aggregate_roles(role_items, thresholds, axes, stats)
        roles = RolesResult(
            len(role_items),
            dict(sorted(counts.items())),
            dict(sorted(not_eval.items())),
            {
                str(role): RoleVerdict(a.asserted, Estimate.of(a.rate), a.rule)
                for role, a in agg.items()
            },
        )
    joint = JointResult(len(joint_items))
    if joint_items:
        js = summarise_joint(joint_items, stats)
        joint = JointResult(
            len(joint_items),
            mean_drop_first=Estimate.of(js.mean_drop_first),
            mean_drop_second=Estimate.of(js.mean_drop_second),
            mean_drop_joint=Estimate.of(js.mean_drop_joint),
            mean_synergy=Estimate.of(js.mean_synergy),
            positive_synergy_rate=Estimate.of(js.positive_synergy_rate),
            strong_complementarity_rate=Estimate.of(js.strong_complementarity_rate),
        )
    if shapley_rows:
        firsts = [r.shapley[r.players[0]] for r in shapley_rows]
        seconds = [r.shapley[r.players[1]] for r in shapley_rows if len(r.players) > 1]
        sums = [sum(r.shapley.values()) for r in shapley_rows]
        s = summarise_deltas({"first": firsts, "second": seconds, "total": sums}, stats)
        shapley = ShapleyResult(
            len(shapley_rows),
            Estimate.of(s["first"]),
            Estimate.of(s["second"]),
            Estimate.of(s["total"]),
            tuple(shapley_rows),
        )
        joint = msgspec.structs.replace(joint, shapley=shapley)
    return InterventionStatistics(
        operators=table,
        skipped_axes=skipped_axes,
        divergence_weights=axes.divergence_weights,
        weight_sensitivity=tuple(divergence_sensitivity(ordered, None, stats)),
        roles=roles,
        joint_ablation=joint,
        failed_units=dict(sorted(failed.items())),
        failure_kinds=dict(sorted(failure_kinds.items())),
        not_planned=dict(sorted(skipped.items())),
        stats_settings=stats,
    )
