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
   decoded, speed-up);
2. per item: leave-one-out with reuse (timed), exact Shapley over all ``2**k`` subsets,
   Spearman between them, top-1 agreement, the full-vs-empty context gap;
3. with ``--sentence-items N`` (a long run: minutes per item), every sentence of the evidence
   a source: hierarchical (items, then sentences, at most 24 passes) against ContextCite with
   32 ablations, each judged by its top-1 and top-3 log-probability drop and its LDS on 32
   held-out random ablations (the same for both), with the paired bootstrap interval of the
   per-item differences (``OUT/sentences.jsonl``, resumable).

Scores go through a content-addressed cache (``OUT/scores.sqlite``) and per-item results
into ``OUT/items.jsonl``: a stopped run resumes, and a finished item is never scored again.
Prints ONE JSON object. Run it with ``nice -n 10`` on a shared machine; wall times there move
with the other work, so the throughput phase also reports CPU seconds of this process.

Usage::

    nice -n 10 python benchmarks/attribution.py [--items 5] [--k 4] [--offset 150]
        [--threads 1] [--sentence-items 0] [--out runs/attribution]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
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
from groundtrace.analyzer.stats import StatsSettings
from groundtrace.examples.hotpot_rag import app
from groundtrace.examples.hotpot_rag.cases import load_cases

PREFIX = '{"answer": "'


def contexts(items: int, k: int, offset: int) -> list[tuple[str, AblationContext]]:
    """The items' prompts with their evidence blocks located, and the reference answers."""
    out = []
    for case in load_cases()[offset : offset + items]:
        question = case.question or ""
        evidence = app.prompt_evidence(app.retrieve_chunks(question, case.passages, k))
        messages = app.chat_request(question, evidence)["messages"]
        texts = [(str(e["id"]), f"[{e['id']}] {e['title']}\n{e['content']}") for e in evidence]
        answer = str(case.reference_answer or "").strip()
        out.append((case.case_id, AblationContext.locate(messages, texts, answer, prefix=PREFIX)))
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


def measure_item(
    scorer: LlamaScorer, case_id: str, context: AblationContext, cache: ScoreCache
) -> dict[str, Any]:
    """Leave-one-out (timed) and exact Shapley for one item."""
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
        "case_id": case_id,
        "k": context.k,
        "answer": context.answer,
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
    split, groups = context.split()
    score = ContextScorer(scorer, split, cache)
    tokens, first = scorer.tokens(split.render((True,) * split.k), split.answer, split.prefix)
    ours = hierarchical(score, groups, max_passes=24)
    cite = context_cite(score, split.k, n_tokens=len(tokens) - first, n_ablations=32, seed=seed)
    row: dict[str, Any] = {"case_id": case_id, "sentences": split.k, "items": len(groups)}
    for name, attribution in (("hierarchical", ours), ("contextcite", cite)):
        row[name] = {
            "passes": attribution.passes,
            "top1_drop": top_k_drop(score, attribution, 1),
            "top3_drop": top_k_drop(score, attribution, 3),
            "lds": lds(score, attribution, n_masks=32, seed=10_000 + seed),
        }
    empty = score([(False,) * split.k])[0]
    row["context_gap"] = ours.full - empty
    return row


def _resumed(path: Path) -> dict[str, dict[str, Any]]:
    if not path.exists():
        return {}
    rows = (json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return {row["case_id"]: row for row in rows}


def sentences_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Means per method and the paired interval of hierarchical minus ContextCite."""
    out: dict[str, Any] = {"n": len(rows)}
    for metric in ("top1_drop", "top3_drop", "lds"):
        ours = [r["hierarchical"][metric] for r in rows]
        theirs = [r["contextcite"][metric] for r in rows]
        diff = compare(metric, ours, theirs, StatsSettings(seed=42))
        out[metric] = {
            "hierarchical": statistics.mean(ours), "contextcite": statistics.mean(theirs),
            "difference": diff.mean, "ci_low": diff.ci_low, "ci_high": diff.ci_high,
        }  # fmt: skip
    out["passes"] = {
        "hierarchical": statistics.mean(r["hierarchical"]["passes"] for r in rows),
        "contextcite": statistics.mean(r["contextcite"]["passes"] for r in rows),
    }
    out["context_dependent_share"] = sum(r["context_gap"] > 1.0 for r in rows) / len(rows)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=5)
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--offset", type=int, default=150)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--sentence-items", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/attribution"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    spec = MODELS[DEFAULT_MODEL]
    scorer = LlamaScorer(
        assemble_model(spec), model=f"{spec.name}@{spec.sha256[:16]}", n_ctx=4096,
        n_threads=args.threads,
    )  # fmt: skip
    items = contexts(args.items, args.k, args.offset)
    report: dict[str, Any] = {
        "model": spec.name, "threads": args.threads, "k": args.k, "offset": args.offset,
        "load_before": os.getloadavg()[0],
    }  # fmt: skip
    report["throughput"] = throughput(scorer, items[0][1])
    cache = ScoreCache(args.out / "scores.sqlite")
    done_path = args.out / f"items_k{args.k}.jsonl"
    done = _resumed(done_path)
    rows = []
    for case_id, context in items:
        row = done.get(case_id)
        if row is None:
            row = measure_item(scorer, case_id, context, cache)
            with done_path.open("a") as handle:
                handle.write(json.dumps(row) + "\n")
        rows.append(row)
    rhos = [r["spearman"] for r in rows if r["spearman"] == r["spearman"]]
    timed = [r["loo_seconds"] for r in rows if r["loo_seconds"] is not None]
    report["items"] = {
        "n": len(rows),
        "median_spearman_loo_vs_shapley": statistics.median(rhos) if rhos else None,
        "spearman_defined": len(rhos),
        "top1_agreement": sum(r["top1_agree"] for r in rows) / len(rows),
        "context_dependent_share": sum(r["context_gap"] > 1.0 for r in rows) / len(rows),
        "loo_seconds_mean": round(statistics.mean(timed), 2) if timed else None,
        "passes_per_item": {"loo": rows[0]["loo_passes"], "shapley": rows[0]["shapley_passes"]},
    }
    if args.sentence_items:
        sentence_path = args.out / f"sentences_k{args.k}.jsonl"
        finished = _resumed(sentence_path)
        sentence_rows = []
        chosen = contexts(args.sentence_items, args.k, args.offset)
        for index, (case_id, context) in enumerate(chosen):
            row = finished.get(case_id)
            if row is None:
                row = measure_sentences(scorer, case_id, context, cache, seed=index)
                with sentence_path.open("a") as handle:
                    handle.write(json.dumps(row) + "\n")
            sentence_rows.append(row)
        report["sentences"] = sentences_summary(sentence_rows)
    report["load_after"] = os.getloadavg()[0]
    print(json.dumps(report, indent=2))
    scorer.close()


if __name__ == "__main__":
    main()
