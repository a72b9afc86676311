"""Planning the replay units of one trace: evidence set, targets, replacement, joint subsets.

For a trace with query q, evidence R (the chunks shown to the model: the recorded evidence
block's ids, else the retrieved list) and the case's gold:

* ``REMOVE`` / ``REPLACE`` / ``DUPLICATE`` act on the target chosen by the SPEC priority
  (:func:`select_target`); ``REPLACE`` swaps in a pool candidate of the requested hardness
  (:func:`build_replacement_pool`, :func:`choose_replacement`); ``DUPLICATE`` appends a copy;
* ``ZERO``: no evidence at all;
* random-target controls ``REMOVE@random``, ``REPLACE@random``, ``DUPLICATE@random``: the same
  operators on a target drawn uniformly from R (:func:`random_target`, seeded);
* ``JOINT_REMOVE``: for items with at least two gold supporting chunks in R, every non-empty
  subset of the support chunks (k <= 5) removed -- the singles and the pair give the joint
  ablation, all subsets the exact Shapley values.

What cannot be planned for an item is recorded per operator with the reason (no pool, no
gold...), never silently dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations

from groundtrace.analyzer._evidence_match import GoldSupport, unmatched_note
from groundtrace.analyzer._foreign import lacks
from groundtrace.analyzer.cases import Case
from groundtrace.analyzer.errors import ConfigError
from groundtrace.analyzer.replay import ReplayChunk, ReplayUnit
from groundtrace.collectors import Trace

from ._joint import MAX_SHAPLEY_PLAYERS, joint_support_pair
from ._pool import Hardness, PoolCandidate, build_replacement_pool, choose_replacement
from ._targets import TargetChoice, by_rank, random_target, select_target

__all__ = [
    "ALL_OPERATORS",
    "OPERATOR_GROUPS",
    "ItemPlan",
    "PlanSettings",
    "evidence_set",
    "parse_operators",
    "plan_item",
]

#: Operators on the priority target, in report order.
MAIN_OPERATORS: tuple[str, ...] = ("REMOVE", "REPLACE", "DUPLICATE", "ZERO")
RANDOM_SUFFIX = "@random"
JOINT = "JOINT_REMOVE"
ORIGINAL = "ORIGINAL"
#: Every operator label a run can produce.
ALL_OPERATORS: tuple[str, ...] = (
    *MAIN_OPERATORS,
    *(f"{op}{RANDOM_SUFFIX}" for op in ("REMOVE", "REPLACE", "DUPLICATE")),
    JOINT,
)
#: ``--operators`` names -> the operator labels they switch on.
OPERATOR_GROUPS: dict[str, tuple[str, ...]] = {
    "REMOVE": ("REMOVE",),
    "REPLACE": ("REPLACE",),
    "DUPLICATE": ("DUPLICATE",),
    "ZERO": ("ZERO",),
    "RANDOM": tuple(f"{op}{RANDOM_SUFFIX}" for op in ("REMOVE", "REPLACE", "DUPLICATE")),
    "JOINT": (JOINT,),
}

#: Upper-cased operator labels -> the labels (names are read in any case).
_LABELS = {op.upper(): op for op in ALL_OPERATORS}


def parse_operators(names: Sequence[str] | None) -> tuple[str, ...]:
    """Operator labels for ``--operators`` names (comma lists allowed; default: all).

    Raises:
        ConfigError: an unknown name.
    """
    if not names:
        return ALL_OPERATORS
    wanted: list[str] = []
    for raw in names:
        for name in (n.strip().upper() for n in raw.split(",")):
            if not name:
                continue
            if name in OPERATOR_GROUPS:
                wanted.extend(OPERATOR_GROUPS[name])
            elif name in _LABELS:
                wanted.append(_LABELS[name])
            else:
                known = ", ".join([*OPERATOR_GROUPS, *ALL_OPERATORS[4:]])
                raise ConfigError(
                    f"unknown operator {name!r} (known: {known})", field="--operators"
                )
    return tuple(op for op in ALL_OPERATORS if op in wanted)


@dataclass(frozen=True, slots=True)
class PlanSettings:
    """What to plan and the seeds of every draw (all recorded in the run summary).

    Attributes:
        operators: operator labels to run.
        model_seed: seed sent to the model with every replay.
        random_target_seed: seed of the random-target control.
        replacement_seed: seed of the replacement draw within the hardness cell.
        similarity: hardness on similarity to the target (``None`` = any level).
        relevance: hardness on relevance to the query (``None`` = any level).
        recompute_original: also replay the unperturbed evidence and use that as the original.
    """

    operators: tuple[str, ...] = ALL_OPERATORS
    model_seed: int = 0
    random_target_seed: int = 42
    replacement_seed: int = 42
    similarity: Hardness | None = None
    relevance: Hardness | None = None
    recompute_original: bool = False


@dataclass(slots=True)
class ItemPlan:
    """Everything planned for one trace: an *item* (its target evidence and the perturbations
    planned on it), and the replay units that run them (one replay each).

    Attributes:
        trace: the original trace.
        key: stable item key (case id, else trace id).
        gold: the joined case, ``None`` when there is none.
        evidence: R in prompt order.
        target: the priority target.
        random: the random-target draw.
        replacement: the REPLACE candidate for the priority target.
        random_replacement: the REPLACE candidate for the random target.
        players: support chunk ids for joint ablation / Shapley (rank order).
        pair: (s1, s2) of the joint ablation.
        units: the replay units to run (one replay each).
        skipped: operator -> why it was not planned for this item.
        pool_sizes: target id -> number of usable pool candidates.
        findings: what the plan found wrong with the item's data (a gold support that
            matches no chunk of R by id or title...), shown with the results.
    """

    trace: Trace
    key: str
    gold: Case | None
    evidence: tuple[ReplayChunk, ...]
    target: TargetChoice | None = None
    random: TargetChoice | None = None
    replacement: PoolCandidate | None = None
    random_replacement: PoolCandidate | None = None
    players: tuple[str, ...] = ()
    pair: tuple[str, str] | None = None
    units: list[ReplayUnit] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    pool_sizes: dict[str, int] = field(default_factory=dict)
    findings: list[str] = field(default_factory=list)

    @property
    def titles(self) -> dict[str, str]:
        """Chunk id -> title for R and the replacements."""
        out = {c.id: c.title for c in self.evidence}
        for cand in (self.replacement, self.random_replacement):
            if cand is not None:
                out[cand.chunk.id] = cand.chunk.title
        return out


def evidence_set(trace: Trace) -> tuple[ReplayChunk, ...] | str:
    """R: the chunks shown to the model, with contents; or why it cannot be rebuilt."""
    by_id: dict[str, ReplayChunk] = {}
    ordered: list[ReplayChunk] = []
    for ev in trace.evidence:
        if ev.id is None:
            continue
        if ev.content is None:
            return f"evidence {ev.id} has no captured content (capture evidence content)"
        chunk = ReplayChunk(ev.id, ev.title or "", ev.content, ev.rank, ev.score)
        if ev.id not in by_id:
            ordered.append(chunk)
        by_id[ev.id] = chunk
    if trace.prompt_evidence:
        ids = trace.prompt_evidence[-1].ids
        missing = [i for i in ids if i not in by_id]
        if missing:
            return f"prompt evidence ids {missing} are not in the recorded evidence"
        return tuple(by_id[i] for i in ids)
    return tuple(ordered)


def _unit(
    plan: ItemPlan,
    op: str,
    target: str | None,
    repl: str | None,
    seed: int,
    evidence: Sequence[ReplayChunk],
) -> None:
    trace = plan.trace
    plan.units.append(
        ReplayUnit(
            trace.trace_id,
            trace.request.case_id,
            trace.request.query or "",
            op,
            target,
            repl,
            seed,
            tuple(evidence),
        )
    )


#: Why REPLACE is not planned for an item whose case has no candidates, with the fix.
NO_CANDIDATES = (
    "no replacement candidates: give the case `distractors` (or `candidates`) passages in "
    "--cases, or pass --pool-dataset FILE (HotpotQA layout)"
)


def _replacement(
    plan: ItemPlan, target: ReplayChunk, settings: PlanSettings
) -> PoolCandidate | str:
    if plan.gold is None or not plan.gold.passages:
        return NO_CANDIDATES
    pool = build_replacement_pool(
        target,
        plan.trace.request.query or "",
        tuple(ReplayChunk(p.id, p.title, p.text) for p in plan.gold.passages),
        plan.evidence,
        plan.gold.support_titles,
    )
    plan.pool_sizes[target.id] = len(pool.candidates)
    if not pool.candidates:
        return "replacement pool is empty after exclusions"
    choice = choose_replacement(
        pool,
        settings.similarity,
        settings.relevance,
        settings.replacement_seed,
        f"{plan.key}|{target.id}",
    )
    if choice is None:
        return "no pool candidate at the requested hardness levels"
    return choice


def _operate(
    plan: ItemPlan, suffix: str, target: ReplayChunk, settings: PlanSettings
) -> PoolCandidate | None:
    ev = plan.evidence
    seed = settings.model_seed
    ops = settings.operators
    if f"REMOVE{suffix}" in ops:
        _unit(plan, f"REMOVE{suffix}", target.id, None, seed, [c for c in ev if c.id != target.id])
    chosen: PoolCandidate | None = None
    if f"REPLACE{suffix}" in ops:
        found = _replacement(plan, target, settings)
        if isinstance(found, str):
            plan.skipped[f"REPLACE{suffix}"] = found
        else:
            chosen = found
            swapped = [found.chunk if c.id == target.id else c for c in ev]
            _unit(plan, f"REPLACE{suffix}", target.id, found.chunk.id, seed, swapped)
    if f"DUPLICATE{suffix}" in ops:
        _unit(plan, f"DUPLICATE{suffix}", target.id, None, seed, [*ev, target])
    return chosen


def _joint(plan: ItemPlan, settings: PlanSettings) -> None:
    gold = plan.gold
    if gold is None or gold.reference_answer is None or not gold.support_titles:
        plan.skipped[JOINT] = "needs a reference answer and gold support titles (--cases)"
        return
    pair = joint_support_pair(plan.evidence, gold.support_titles)
    if pair is None:
        plan.skipped[JOINT] = "fewer than two gold supporting chunks in R"
        return
    plan.pair = (pair[0].id, pair[1].id)
    support = GoldSupport(gold.support_titles)
    seen: set[str] = set()
    players: list[str] = []
    for c in by_rank(plan.evidence):
        entry = support.match(c.id, c.title)
        if entry is not None and entry not in seen:
            seen.add(entry)
            players.append(c.id)
    subsets: list[tuple[str, ...]]
    if len(players) <= MAX_SHAPLEY_PLAYERS:
        plan.players = tuple(players)
        subsets = [s for r in range(1, len(players) + 1) for s in combinations(players, r)]
    else:
        plan.skipped["SHAPLEY"] = f"{len(players)} support chunks > {MAX_SHAPLEY_PLAYERS}"
        subsets = [(plan.pair[0],), (plan.pair[1],), plan.pair]
    for removed in subsets:
        kept = [c for c in plan.evidence if c.id not in removed]
        _unit(plan, JOINT, "+".join(removed), None, settings.model_seed, kept)


def plan_item(trace: Trace, gold: Case | None, settings: PlanSettings) -> ItemPlan | str:
    """Plan the item of one trace (its replay units), or say why the trace cannot be used at
    all."""
    if not trace.request.query:
        return lacks(trace, "query")
    if trace.answer is None and not settings.recompute_original:
        return f"{lacks(trace, 'answer')}: use --recompute-original"
    evidence = evidence_set(trace)
    if isinstance(evidence, str):
        return evidence
    key = trace.request.case_id or trace.trace_id
    plan = ItemPlan(trace, key, gold, evidence)
    seed = settings.model_seed
    if settings.recompute_original:
        _unit(plan, ORIGINAL, None, None, seed, evidence)
    if "ZERO" in settings.operators:
        _unit(plan, "ZERO", None, None, seed, [])
    if not evidence:
        for op in settings.operators:
            if op != "ZERO":
                plan.skipped[op] = "the evidence set R is empty"
        return plan
    used = set(trace.selected_ids or ())
    support = gold.support_titles if gold is not None else ()
    matcher = GoldSupport(support)
    if matcher and not matcher.matched((c.id, c.title) for c in evidence):
        plan.findings.append(unmatched_note(key, matcher, len(evidence)))
    plan.target = select_target(evidence, used, support)
    plan.replacement = _operate(plan, "", plan.target.chunk, settings)
    if any(op.endswith(RANDOM_SUFFIX) for op in settings.operators):
        plan.random = random_target(evidence, settings.random_target_seed, key)
        plan.random_replacement = _operate(plan, RANDOM_SUFFIX, plan.random.chunk, settings)
    if JOINT in settings.operators:
        _joint(plan, settings)
    return plan
