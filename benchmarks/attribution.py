"""Attribution with the default embedded model on shipped HotpotQA items: the scorer's prompt
throughput, the speed-up of KV prefix reuse, and leave-one-out against exact Shapley.

Items are the shipped HotpotQA questions from index ``--offset`` (default 150: the other
benchmarks use the first ones). Each item's prompt is the demo app's own ANSWER request
(``hotpot_rag.app.chat_request``: BM25 top-``--k`` evidence in one user message); its sources
are the evidence blocks (``[id] title`` and text). The fixed answer scored is the item's
reference answer, placed where the app's JSON reply puts it: the reply prefix
``{"answer": "`` is read, not scored, and nothing after the answer (the cited ids) is.

Phases:

1. throughput: the first item's full prompt evaluated from its first token (tokens/s), then
   its leave-one-out ablations evaluated without and with prefix reuse (wall time, tokens
   decoded, speed-up; ``--skip-throughput`` leaves it out);
2. per item (``--items N``, 0 leaves it out): leave-one-out with reuse (timed), exact Shapley
   over all ``2**k`` subsets, Spearman between them, top-1 agreement, the full-vs-empty
   context gap. With ``--app-calls``, side by side per item: first one app call (the demo
   app's ANSWER request generated in this process by the same model and threads, its JSON
   schema and ``max_tokens``), then the item's leave-one-out with prefix reuse and no score
   cache, each timed, and their ratio (``OUT/items_k{k}_timed.jsonl``);
3. with ``--sentence-items N`` (a long run: minutes per item), the item's two gold paragraphs
   and its best BM25 distractors (``--sentence-k`` paragraphs in all, default 3, in the app's
   BM25 order), every sentence a source: hierarchical (items, then sentences, at most 24
   passes) against ContextCite with 32 ablations (seed: the item's index), each judged by its
   top-1 and top-3 log-probability drop and its LDS on 32 held-out random ablations (the same
   for both), with the paired bootstrap interval of the per-item differences and the share of
   items whose answer depends on its context (``OUT/sentences_gold{k}.jsonl``, resumable;
   ``--sentence-start S`` skips the first S items, so that two processes can share the items;
   ``--summary-only`` summarises the rows already in ``OUT``, loading no model);
4. with ``--rescore DIR...``, every item finished in those folders' ``sentences_gold{k}.jsonl``
   measured again by this version's methods into ``OUT/sentences_gold{k}_v3.jsonl``
   (resumable): the scores those folders' caches hold are read from them (read-only, while
   their runs go on), only the missing passes are made, cached in ``OUT``. The summary also
   reports the items looked at while hierarchical's design was chosen, those after them and
   (of those) the items the long runs finished later (:data:`FRESH_ITEMS`), and
   hierarchical's LDS against ContextCite's at the same budget (its first 24 masks, from the
   cache: no new pass).

Scores go through a content-addressed cache (``OUT/scores.sqlite``) and per-item results
into jsonl files: a stopped run resumes, and a finished item is never scored again.
Prints ONE JSON object. Run it with ``nice -n 10`` on a shared machine; wall times there move
with the other work, so the throughput phase also reports CPU seconds of this process.

Usage::

    nice -n 10 python benchmarks/attribution.py [--items 5] [--k 4] [--offset 150]
        [--threads 1] [--app-calls] [--skip-throughput] [--sentence-items 0]
        [--sentence-k 3] [--sentence-start 0] [--summary-only] [--rescore DIR ...]
        [--out runs/attribution]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from groundtrace.analyzer.attribution._cache import ScoreCache
from groundtrace.analyzer.attribution._context import AblationContext
from groundtrace.analyzer.attribution._llama import LlamaScorer
from groundtrace.analyzer.attribution._methods import (
    context_cite,
    exact_shapley,
    hierarchical,
    leave_one_out,
)
from groundtrace.analyzer.attribution._metrics import compare, lds, spearman, top_k_drop
from groundtrace.analyzer.attribution._scorer import ContextScorer
from groundtrace.analyzer.backends import DEFAULT_MODEL, MODELS
from groundtrace.analyzer.backends._models import assemble_model
from groundtrace.analyzer.cases import Case, Passage
from groundtrace.analyzer.stats import StatsSettings
from groundtrace.examples.hotpot_rag import app
from groundtrace.examples.hotpot_rag.cases import load_cases

PREFIX = '{"answer": "'


def gold_passages(case: Case, k: int) -> list[Passage]:
    """The case's gold paragraphs and its ``k - len(gold)`` best BM25 distractors."""
    gold = [p for p in case.passages if p.title in case.support_titles]
    others = [p for p in case.passages if p.title not in case.support_titles]
    ranked = app.retrieve_chunks(case.question or "", others, max(k - len(gold), 0))
    chosen = {str(e["id"]) for e in ranked}
    return gold + [p for p in others if p.id in chosen]


def item_evidence(case: Case, k: int, gold: bool) -> list[Mapping[str, Any]]:
    """The evidence the app shows for the item: its BM25 top-``k``, or (``gold``) its gold
    paragraphs and best distractors, in the app's BM25 order."""
    passages = gold_passages(case, k) if gold else case.passages
    return app.prompt_evidence(app.retrieve_chunks(case.question or "", passages, k))


def contexts(
    items: int, k: int, offset: int, *, gold: bool = False
) -> list[tuple[Case, AblationContext]]:
    """The items' prompts with their evidence blocks located, and the reference answers."""
    out = []
    for case in load_cases()[offset : offset + items]:
        evidence = item_evidence(case, k, gold)
        messages = app.chat_request(case.question or "", evidence)["messages"]
        texts = [(str(e["id"]), f"[{e['id']}] {e['title']}\n{e['content']}") for e in evidence]
        answer = str(case.reference_answer or "").strip()
        out.append((case, AblationContext.locate(messages, texts, answer, prefix=PREFIX)))
    return out


def throughput(scorer: LlamaScorer, context: AblationContext) -> dict[str, Any]:
    """Tokens/s from the first token, and leave-one-out without and with reuse."""
    full = context.render((True,) * context.k)
    tokens, _ = scorer.tokens(full, context.answer, context.prefix)
    scorer.reuse = False
    start, cpu = time.perf_counter(), time.process_time()
    scorer.score_many([full], context.answer, context.prefix)
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    masks = [tuple(j != i for j in range(context.k)) for i in range(-1, context.k)]
    prompts = [context.render(m) for m in masks]
    timed: dict[str, Any] = {}
    for reuse in (False, True):
        scorer.reuse = reuse
        scorer.score_many([full], context.answer, context.prefix)  # the KV cache holds `full`
        before, start, cpu = scorer.evaluated, time.perf_counter(), time.process_time()
        scorer.score_many(prompts[1:], context.answer, context.prefix)
        timed["reuse" if reuse else "no_reuse"] = {
            "seconds": round(time.perf_counter() - start, 2),
            "cpu_seconds": round(time.process_time() - cpu, 2),
            "tokens_decoded": scorer.evaluated - before,
        }
    scorer.reuse = True
    return {
        "prompt_tokens": len(tokens),
        "seconds": round(seconds, 2),
        "tokens_per_second": round(len(tokens) / seconds, 1),
        "cpu_seconds": round(cpu_seconds, 2),
        "tokens_per_cpu_second": round(len(tokens) / cpu_seconds, 1),
        "loo_ablations": context.k,
        **timed,
        "reuse_speedup": round(timed["no_reuse"]["seconds"] / timed["reuse"]["seconds"], 2),
        "reuse_speedup_cpu": round(
            timed["no_reuse"]["cpu_seconds"] / timed["reuse"]["cpu_seconds"], 2
        ),
    }


class AppCall:
    """The demo app's ANSWER step in this process: its chat request (JSON-schema reply,
    ``temperature=0``, its ``max_tokens``) generated by the same model with the same threads,
    through llama-cpp-python's chat completion as the app's model server runs it.
    """

    def __init__(self, model_path: str, n_ctx: int, threads: int) -> None:
        import llama_cpp

        self._llm = llama_cpp.Llama(
            model_path=model_path, n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads,
            verbose=False,
        )  # fmt: skip

    def __call__(self, case: Case, evidence: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """One call, timed: seconds, prompt and completion tokens, the reply."""
        request = app.chat_request(case.question or "", evidence)
        start = time.perf_counter()
        reply = self._llm.create_chat_completion(
            messages=request["messages"], temperature=request["temperature"],
            max_tokens=request["max_tokens"], response_format=request["response_format"],
        )  # fmt: skip
        seconds = time.perf_counter() - start
        usage = reply["usage"]
        return {
            "seconds": round(seconds, 2),
            "prompt_tokens": usage["prompt_tokens"],
            "completion_tokens": usage["completion_tokens"],
            "reply": reply["choices"][0]["message"]["content"],
        }

    def close(self) -> None:
        """Free the model."""
        self._llm.close()


def measure_item(
    scorer: LlamaScorer,
    case: Case,
    context: AblationContext,
    cache: ScoreCache,
    call: AppCall | None = None,
    k: int = 4,
) -> dict[str, Any]:
    """Leave-one-out (timed) and exact Shapley for one item; with ``call``, one app call for
    the item and then its leave-one-out with reuse and no cache, each timed, side by side."""
    row: dict[str, Any] = {"case_id": case.case_id}
    if call is not None:
        row["app_call"] = call(case, item_evidence(case, k, gold=False))
        uncached = ContextScorer(scorer, context)
        start = time.perf_counter()
        leave_one_out(uncached, context.k)
        seconds = time.perf_counter() - start
        row["loo_uncached_seconds"] = round(seconds, 2)
        row["loo_uncached_passes"] = uncached.passes
        row["loo_over_app_call"] = round(seconds / row["app_call"]["seconds"], 3)
    score = ContextScorer(scorer, context, cache)
    full = context.render((True,) * context.k)
    loo_tokens, loo_first = scorer.tokens(full, context.answer, context.prefix)
    start = time.perf_counter()
    loo = leave_one_out(score, context.k)
    loo_seconds = time.perf_counter() - start
    loo_passes_made = score.passes
    shapley = exact_shapley(score, context.k)
    empty = score([(False,) * context.k])[0]
    return {
        **row,
        "k": context.k,
        "answer": context.answer,
        "prompt_tokens": loo_first,
        "answer_tokens": len(loo_tokens) - loo_first,
        "loo": [round(s, 4) for s in loo.scores],
        "shapley": [round(s, 4) for s in shapley.scores],
        "spearman": spearman(loo.scores, shapley.scores),
        "top1_agree": loo.ranking()[0] == shapley.ranking()[0],
        "context_gap": round(loo.full - empty, 4),
        "loo_passes": loo.passes,
        "shapley_passes": shapley.passes,
        "loo_seconds": round(loo_seconds, 2) if loo_passes_made else None,
    }


def measure_sentences(
    scorer: LlamaScorer, case_id: str, context: AblationContext, cache: ScoreCache, seed: int
) -> dict[str, Any]:
    """Hierarchical (<= 24 passes) against ContextCite-32 over the evidence's sentences."""
    start, evaluated = time.perf_counter(), scorer.evaluated
    split, groups = context.split()
    score = ContextScorer(scorer, split, cache)
    tokens, first = scorer.tokens(split.render((True,) * split.k), split.answer, split.prefix)
    ours = hierarchical(score, groups, max_passes=24, seed=seed)
    cite = context_cite(score, split.k, n_tokens=len(tokens) - first, n_ablations=32, seed=seed)
    row: dict[str, Any] = {
        "case_id": case_id, "index": seed, "sentences": split.k, "items": len(groups),
        "prompt_tokens": first, "answer": split.answer, "answer_tokens": len(tokens) - first,
    }  # fmt: skip
    for name, attribution in (("hierarchical", ours), ("contextcite", cite)):
        row[name] = {
            "passes": attribution.passes,
            "top1_drop": top_k_drop(score, attribution, 1),
            "top3_drop": top_k_drop(score, attribution, 3),
            "lds": lds(score, attribution, n_masks=32, seed=10_000 + seed),
            "scores": [round(s, 4) for s in attribution.scores],
        }
    same = context_cite(score, split.k, n_tokens=len(tokens) - first, n_ablations=24, seed=seed)
    row["contextcite_24_lds"] = lds(score, same, n_masks=32, seed=10_000 + seed)  # no new pass
    empty = score([(False,) * split.k])[0]
    row["full"] = ours.full
    row["context_gap"] = ours.full - empty
    row["groups"] = groups
    row["model_passes"] = score.passes
    row["tokens_decoded"] = scorer.evaluated - evaluated
    row["seconds"] = round(time.perf_counter() - start, 2)
    return row


def _resumed(path: Path) -> dict[str, dict[str, Any]]:
    if not path.exists():
        return {}
    rows = (json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return {row["case_id"]: row for row in rows}


class LayeredCache(ScoreCache):
    """This run's score cache, falling back to other runs' caches opened read-only (a
    rescoring reads what the long runs measured, while they run, and writes only here)."""

    def __init__(self, path: Path, others: Sequence[Path]) -> None:
        super().__init__(path)
        self._others = [
            sqlite3.connect(f"file:{o}?mode=ro", uri=True, timeout=30.0, check_same_thread=False)
            for o in others
            if o.exists()
        ]

    def get(self, key: str) -> list[float] | None:
        found = super().get(key)
        for other in self._others:
            if found is not None:
                break
            row = other.execute("SELECT logprobs FROM scores WHERE key = ?", (key,)).fetchone()
            found = None if row is None else [float(x) for x in json.loads(row[0])]
        return found


def _paired(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per metric: each method's mean and hierarchical minus ContextCite with its paired 95 %
    bootstrap interval (an item whose LDS is undefined counts for neither)."""
    out: dict[str, Any] = {"n": len(rows)}
    for metric in ("top1_drop", "top3_drop", "lds"):
        ours = [r["hierarchical"][metric] for r in rows]
        theirs = [r["contextcite"][metric] for r in rows]
        diff = compare(metric, ours, theirs, StatsSettings(seed=42))
        both = [(a, b) for a, b in zip(ours, theirs, strict=True) if a == a and b == b]
        out[metric] = {
            "hierarchical": statistics.mean(a for a, _ in both),
            "contextcite": statistics.mean(b for _, b in both),
            "difference": diff.mean, "ci_low": diff.ci_low, "ci_high": diff.ci_high,
            "items": len(both),
        }  # fmt: skip
    return out


#: The items (indices) whose rows were looked at while hierarchical's design was chosen.
DESIGN_ITEMS = frozenset([*range(18), 34])

#: The items the long runs finished after the design (none of their rows was looked at).
FRESH_ITEMS = frozenset([*range(27, 34), *range(44, 50)])

#: The name of this version's rescoring (``OUT/sentences_gold{k}_{RESCORED}.jsonl``).
RESCORED = "v3"


def sentences_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The paired comparison over every item and over the items whose answer depends on its
    context (full vs empty gap > 1 nat), the passes, and that share; rows with an ``index``
    (rescored) also over the items after :data:`DESIGN_ITEMS`."""
    dependent = [r for r in rows if r["context_gap"] > 1.0]
    out = _paired(rows)
    out["passes"] = {
        "hierarchical": statistics.mean(r["hierarchical"]["passes"] for r in rows),
        "hierarchical_max": max(r["hierarchical"]["passes"] for r in rows),
        "contextcite": statistics.mean(r["contextcite"]["passes"] for r in rows),
    }
    out["context_dependent_share"] = len(dependent) / len(rows)
    same = [r for r in rows if "contextcite_24_lds" in r]
    if len(same) >= 2:  # ContextCite at hierarchical's budget: its first 24 masks
        theirs = [r["contextcite_24_lds"] for r in same]
        diff = compare(
            "lds", [r["hierarchical"]["lds"] for r in same], theirs, StatsSettings(seed=42)
        )
        out["lds_vs_contextcite_24"] = {
            "contextcite_24": statistics.mean(v for v in theirs if v == v),
            "difference": diff.mean, "ci_low": diff.ci_low, "ci_high": diff.ci_high,
            "items": len(same),
        }  # fmt: skip
    if len(dependent) >= 2:
        out["context_dependent"] = _paired(dependent)
    later = [r for r in rows if r.get("index", -1) >= 0 and r["index"] not in DESIGN_ITEMS]
    if len(later) >= 2:
        out["after_design_items"] = _paired(later)
        out["after_design_items"]["indices"] = sorted(r["index"] for r in later)
    design = [r for r in rows if r.get("index", -1) in DESIGN_ITEMS]
    if len(design) >= 2:
        out["design_items"] = _paired(design)
    fresh = [r for r in later if r["index"] in FRESH_ITEMS]
    if len(fresh) >= 2:
        out["fresh_items"] = _paired(fresh)
        out["fresh_items"]["indices"] = sorted(r["index"] for r in fresh)
    return out


def items_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Leave-one-out against exact Shapley, and (timed rows) its wall time over an app call's."""
    rhos = [r["spearman"] for r in rows if r["spearman"] == r["spearman"]]
    timed = [r["loo_seconds"] for r in rows if r["loo_seconds"] is not None]
    out: dict[str, Any] = {
        "n": len(rows),
        # k = 4 Spearman values are exact fractions (0.8 comes out 0.7999999999999999)
        "median_spearman_loo_vs_shapley": round(statistics.median(rhos), 9) if rhos else None,
        "spearman_defined": len(rhos),
        "top1_agreement": sum(r["top1_agree"] for r in rows) / len(rows),
        "context_dependent_share": sum(r["context_gap"] > 1.0 for r in rows) / len(rows),
        "loo_seconds_mean": round(statistics.mean(timed), 2) if timed else None,
        "passes_per_item": {"loo": rows[0]["loo_passes"], "shapley": rows[0]["shapley_passes"]},
    }
    side = [r for r in rows if "loo_over_app_call" in r]
    if side:
        ratios = [r["loo_over_app_call"] for r in side]
        out["loo_vs_app_call"] = {
            "n": len(side),
            "ratio_median": statistics.median(ratios),
            "ratio_min": min(ratios),
            "ratio_max": max(ratios),
            "items_within_2x": sum(x <= 2.0 for x in ratios),
            "app_call_seconds_median": statistics.median(r["app_call"]["seconds"] for r in side),
            "loo_seconds_median": statistics.median(r["loo_uncached_seconds"] for r in side),
            "app_completion_tokens_median": statistics.median(
                r["app_call"]["completion_tokens"] for r in side
            ),
        }
    return out


def _run_items(
    args: argparse.Namespace,
    scorer: LlamaScorer,
    items: list[tuple[Case, AblationContext]],
    cache: ScoreCache,
) -> dict[str, Any]:
    call = AppCall(str(args.model_path), 4096, args.threads) if args.app_calls else None
    done_path = args.out / (f"items_k{args.k}_timed.jsonl" if call else f"items_k{args.k}.jsonl")
    done = _resumed(done_path)
    rows = []
    for case, context in items:
        row = done.get(case.case_id)
        if row is None:
            row = measure_item(scorer, case, context, cache, call, args.k)
            with done_path.open("a") as handle:
                handle.write(json.dumps(row) + "\n")
        rows.append(row)
    if call is not None:
        call.close()
    return items_summary(rows)


def _run_sentences(
    args: argparse.Namespace, scorer: LlamaScorer, cache: ScoreCache
) -> dict[str, Any]:
    path = args.out / f"sentences_gold{args.sentence_k}.jsonl"
    return _measured_rows(args, scorer, cache, path, lambda index, _: index >= args.sentence_start)


def _measured_rows(
    args: argparse.Namespace,
    scorer: LlamaScorer,
    cache: ScoreCache,
    path: Path,
    wanted: Callable[[int, str], bool],
) -> dict[str, Any]:
    """The sentence items ``wanted(index, case_id)`` keeps, each measured once into ``path``
    (a row already there is read back: resumable), summarised."""
    done = _resumed(path)
    rows = []
    chosen = contexts(args.sentence_items, args.sentence_k, args.offset, gold=True)
    for index, (case, context) in enumerate(chosen):
        if not wanted(index, case.case_id):
            continue
        row = done.get(case.case_id)
        if row is None:
            row = measure_sentences(scorer, case.case_id, context, cache, seed=index)
            row["load"] = os.getloadavg()[0]
            with path.open("a") as handle:
                handle.write(json.dumps(row) + "\n")
        rows.append(row)
    return sentences_summary(rows)


def _rescore(args: argparse.Namespace, scorer: LlamaScorer) -> dict[str, Any]:
    """Every item finished in the ``--rescore`` folders measured again (this version's
    methods) into ``OUT/sentences_gold{k}_{RESCORED}.jsonl``: their scores are read from those
    folders' caches, only the passes they lack are made (cached in ``OUT``); resumable."""
    name = f"sentences_gold{args.sentence_k}.jsonl"
    finished = {cid for folder in args.rescore for cid in _resumed(folder / name)}
    cache = LayeredCache(args.out / "scores.sqlite", [f / "scores.sqlite" for f in args.rescore])
    path = args.out / f"sentences_gold{args.sentence_k}_{RESCORED}.jsonl"
    return _measured_rows(args, scorer, cache, path, lambda _, case_id: case_id in finished)


def summary_only(out: Path, k: int, sentence_k: int) -> dict[str, Any]:
    """The summaries of every row already in ``out``'s jsonl files, without a model (for
    rows that several processes measured; a file with no rows is left out)."""
    report: dict[str, Any] = {}
    rescored = sorted(out.glob(f"sentences_gold{sentence_k}_v*.jsonl"))
    for name, path, summarise in (
        ("items", out / f"items_k{k}_timed.jsonl", items_summary),
        ("sentences", out / f"sentences_gold{sentence_k}.jsonl", sentences_summary),
        *((f"sentences_{p.stem.rsplit('_', 1)[1]}", p, sentences_summary) for p in rescored),
    ):
        rows = list(_resumed(path).values())
        if rows:
            report[name] = summarise(rows)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=5)
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--offset", type=int, default=150)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--app-calls", action="store_true")
    parser.add_argument("--sentence-items", type=int, default=0)
    parser.add_argument("--sentence-k", type=int, default=3)
    parser.add_argument("--sentence-start", type=int, default=0)
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--summary-only", action="store_true")
    parser.add_argument("--rescore", type=Path, nargs="+", default=[])
    parser.add_argument("--out", type=Path, default=Path("runs/attribution"))
    args = parser.parse_args()
    if args.summary_only:
        print(json.dumps(summary_only(args.out, args.k, args.sentence_k), indent=2))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    spec = MODELS[DEFAULT_MODEL]
    args.model_path = assemble_model(spec)
    scorer = LlamaScorer(
        args.model_path, model=f"{spec.name}@{spec.sha256[:16]}", n_ctx=4096,
        n_threads=args.threads,
    )  # fmt: skip
    items = contexts(args.items, args.k, args.offset)
    report: dict[str, Any] = {
        "model": spec.name, "threads": args.threads, "k": args.k, "offset": args.offset,
        "load_before": os.getloadavg()[0],
    }  # fmt: skip
    start = time.perf_counter()
    if items and not args.skip_throughput:
        report["throughput"] = throughput(scorer, items[0][1])
    cache = ScoreCache(args.out / "scores.sqlite")
    if items:
        report["items"] = _run_items(args, scorer, items, cache)
    if args.rescore:
        report[f"sentences_{RESCORED}"] = _rescore(args, scorer)
    elif args.sentence_items:
        report["sentences"] = _run_sentences(args, scorer, cache)
    report["wall_seconds"] = round(time.perf_counter() - start, 1)
    report["load_after"] = os.getloadavg()[0]
    print(json.dumps(report, indent=2))
    scorer.close()


if __name__ == "__main__":
    main()
