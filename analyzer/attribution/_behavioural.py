"""The behavioural tier: no log-probabilities anywhere, the CUE-R replay outcomes are the score.

For a trace whose evidence items ``e_1 .. e_k`` were shown to the model, the app is replayed
k + 1 times through the replay engine the interventions use
(:class:`~groundtrace.analyzer.replay.FunctionReplayer`: the app's recorded entry point, or a
``module:qualname``, called with an edited evidence list): once with every item (``ORIGINAL``,
the full-context answer y) and once without each item (``REMOVE`` of ``e_i``, answer ỹ_i). The
score of item i is

    score_i = 1[normalise(ỹ_i) != normalise(y)] + D_i

where D_i is CUE-R's trace divergence between the full replay and the replay without ``e_i``
(``0.5 d_J(U, Ũ_i) + 0.3 1[y != ỹ_i] + 0.2 |c - c̃_i|``, U the cited ids, c the reported
confidence; when a confidence is missing its term is left out and the two others weighted
5/8 and 3/8). As D is at most 0.7 when the answer is unchanged and at least 0.3 when it
changed, every item whose removal changes the answer ranks above every item whose removal
does not, and D orders the items inside each group: first how much the evidence the answer
cites moves, then the confidence. Answers are compared after the analyzer's one normalisation
(:func:`~groundtrace.analyzer.metrics.normalise_answer`), as the interventions compare them.
There is no gold here, so CUE-R's grounding axis (which needs the gold supporting titles)
does not enter the score.

Replaying the full context rather than reading the recorded answer compares answers of the same
app, model and seed; the recorded answer is kept on the row when the replay differs from it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from groundtrace.analyzer.errors import InputError
from groundtrace.analyzer.llm import Usage
from groundtrace.analyzer.metrics import DivergenceWeights, divergence_terms, normalise_answer
from groundtrace.analyzer.replay import (
    CounterfactualRecorder,
    FunctionReplayer,
    ReplayChunk,
    ReplayUnit,
    UnitResult,
    keep_traces,
)
from groundtrace.collectors import Trace

from ._context import AblationContext
from ._shape import AttributionResult, Config, SourceScore, TraceAttribution, Unit, Units

if TYPE_CHECKING:
    from groundtrace.analyzer._driver import RunContext

__all__ = [
    "BEHAVIOURAL",
    "COUNTERFACTUALS",
    "behavioural_score",
    "replay_evidence",
    "replay_units",
    "run_behavioural",
    "score_replays",
]

#: The tier's name on every row it produced.
BEHAVIOURAL = "behavioural"
#: The run folder's counterfactual traces of the replays.
COUNTERFACTUALS = "attribution_counterfactual_traces"
#: D's weights when a confidence is missing: the default 0.5 / 0.3 renormalised.
_NO_CONFIDENCE = DivergenceWeights(used=0.625, answer=0.375, confidence=0.0)
_RECORDED = "recorded"


def replay_evidence(trace: Trace, context: AblationContext) -> tuple[ReplayChunk, ...]:
    """The evidence the app was shown, as the replay passes it back: one chunk per source of
    ``context``, in prompt order, with the recorded item's title, rank and score.

    Raises:
        InputError: a source has no evidence id, or two sources share one (replay shows the
            app its items by id, so they could not be removed one at a time).
    """
    by_id = {e.id: e for e in trace.evidence if e.id}
    chunks: list[ReplayChunk] = []
    counts = Counter(source.id for source in context.sources)
    repeated = sorted(i for i, n in counts.items() if n > 1)
    if repeated:
        twice = repeated[0]
        raise InputError(
            f"trace {trace.trace_id}: evidence id {twice!r} names {counts[twice]} different "
            "texts in the prompt; replay shows the app its items by id, so they cannot be "
            "removed one at a time (give each chunk its own id)",
            field="evidence.id",
        )
    for index, source in enumerate(context.sources):
        item = by_id.get(source.id)
        if item is None:
            raise InputError(
                f"trace {trace.trace_id}: evidence {source.id!r} has no id to replay it by",
                field="evidence.id",
            )
        chunks.append(
            ReplayChunk(
                item.id or source.id, item.title or "", item.content or context.text(index),
                item.rank, item.score,
            )
        )  # fmt: skip
    return tuple(chunks)


def replay_units(trace: Trace, evidence: Sequence[ReplayChunk], seed: int = 0) -> list[ReplayUnit]:
    """The k + 1 replays of one trace: ``ORIGINAL`` (every item), then ``REMOVE`` of each."""
    query = trace.request.query or ""
    case = trace.request.case_id
    units = [ReplayUnit(trace.trace_id, case, query, "ORIGINAL", None, None, seed, tuple(evidence))]
    for chunk in evidence:
        kept = tuple(c for c in evidence if c.id != chunk.id)
        units.append(ReplayUnit(trace.trace_id, case, query, "REMOVE", chunk.id, None, seed, kept))
    return units


def behavioural_score(full: UnitResult, removed: UnitResult) -> float:
    """``1[answer changed] + D`` of one removal (see the module docstring)."""
    terms = divergence_terms(
        full.cited_ids, removed.cited_ids, full.answer or "", removed.answer or "",
        full.confidence, removed.confidence,
    )  # fmt: skip
    d = terms.weighted()
    if d is None:
        d = terms.weighted(_NO_CONFIDENCE)
    assert d is not None  # the confidence term has weight 0
    return terms.answer + d


def score_replays(
    unit: Unit, evidence: Sequence[ReplayChunk], results: Sequence[UnitResult]
) -> TraceAttribution:
    """The row of one trace from its k + 1 replay results (full first, then each removal);
    a failed replay gives a row with ``error`` set (a re-run replays that trace again)."""
    failed = [
        f"{r.error_kind}: {r.error_message}" for r in results if not r.ok
    ]  # the replay raised, or the model call failed
    full, removed = results[0], results[1:]
    sources = tuple(
        SourceScore(
            chunk.id,
            round(behavioural_score(full, r), 6) if not failed else 0.0,
            chunk.content[:160],
            answer_without=r.answer,
        )
        for chunk, r in zip(evidence, removed, strict=True)
    )
    return TraceAttribution(
        trace_id=unit.trace_id, case_id=unit.case_id, answer=full.answer or "",
        tier=BEHAVIOURAL, method="leave-one-out", passes=len(results), full=None,
        context_gap=None, sources=sources,
        recorded_answer=unit.context.answer
        if normalise_answer(unit.context.answer) != normalise_answer(full.answer or "")
        else None,
        replays=tuple(r.counterfactual_trace_id or "" for r in results),
        error="; ".join(failed) if failed else None,
    )  # fmt: skip


def _name(config: Config, trace: Trace) -> str:
    """What the ledger counts the replays under: ``replay <entry point>``."""
    entry = config.replay if config.replay not in (None, _RECORDED) else None
    recorded = trace.entrypoint.entrypoint if trace.entrypoint is not None else "?"
    return f"replay {entry or recorded}"


def _replayer(config: Config, out_dir: str) -> FunctionReplayer:
    entry = None if config.replay in (None, _RECORDED) else config.replay
    return FunctionReplayer(
        CounterfactualRecorder(out_dir), entrypoint=entry,
        kwarg_overrides=dict(config.replay_kwargs), concurrency=1,
    )  # fmt: skip


async def run_behavioural(
    units: Sequence[Unit], config: Config, context: RunContext
) -> AttributionResult:
    """Replay every unit k + 1 times and score its items (journaled per trace; a re-run
    resumes, keeping only the counterfactual traces of the traces it journaled).

    Raises:
        ReplayError: the entry point cannot be imported.
    """
    folder = context.out / COUNTERFACTUALS
    done: set[str] = set()
    if context.journal is not None:
        for row in context.journal.completed(TraceAttribution):
            done.update(t for t in row.replays if t)
    keep_traces(folder, done)
    replayer = _replayer(config, str(folder))
    left: dict[str, str] = dict(units.not_usable) if isinstance(units, Units) else {}
    usable: list[tuple[Unit, tuple[ReplayChunk, ...]]] = []
    for unit in units:
        why: str | None = "no trace to replay (a unit made without its trace)"
        if unit.trace is not None and (why := replayer.check(unit.trace)) is None:
            try:
                usable.append((unit, replay_evidence(unit.trace, unit.context)))
                continue
            except InputError as exc:
                why = str(exc)
        left[unit.trace_id] = str(why)
    by_key = {u.trace_id: (u, ev) for u, ev in usable}
    replayer.recorder.start()

    ledgers = [context.ledger] + ([] if context.budget is None else [context.budget.ledger])

    async def work(key: str) -> TraceAttribution:
        unit, evidence = by_key[key]
        assert unit.trace is not None
        results = []
        for replay in replay_units(unit.trace, evidence, config.seed):
            result = await replayer.run(replay, unit.trace)
            for ledger in ledgers:  # each replay is one call of the app: --max-calls counts them
                ledger.add(_name(config, unit.trace), Usage(calls=result.model_calls))
            results.append(result)
        return score_replays(unit, evidence, results)

    try:
        rows = await context.map(
            work, list(by_key), keys=list(by_key), kind=TraceAttribution,
            keep=lambda row: row.error is None, phase="attributions",
        )  # fmt: skip
    finally:
        replayer.recorder.close()
    kept = []
    for row in rows:
        if row.error is None:
            kept.append(row)
        else:
            left[row.trace_id] = f"a replay failed ({row.error})"
    return AttributionResult(rows=tuple(kept), not_usable=left)
