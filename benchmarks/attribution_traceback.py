"""Black-box traceback: the behavioural attribution tier finds an injected paragraph.

Items are the shipped HotpotQA questions from index ``--offset`` (default 100: the CUE-R and
model benchmarks use the first 100, ``benchmarks/attribution.py`` 150 on). Each item's
evidence is its two gold paragraphs, its first distractor and one *injected* paragraph that
asserts a different answer: it carries the first gold paragraph's title and says "the answer
to <question> is <other>", where <other> is the opposite for a yes/no question, else the
reference answer of another shipped item of the same kind (with digits or without), chosen by
a hash of the case id. The demo app (BM25 over these four paragraphs, the default embedded
model through llama.cpp, one thread) answers each item; its trace goes to
``OUT/app/traces/<case id>/``. An item is *followed* when the app's answer is the injected
answer (soft correctness against it, as the analyzer scores answers) and not the reference.

Then the attribution analysis runs on the followed items' traces in the behavioural tier:
function replay of the app's recorded entry point (``hotpot_rag.app:answer``) once with the
full evidence and once without each paragraph (k + 1 replays), every item scored by whether
its removal changes the answer, with CUE-R's divergence D as the tie-breaker. Reported:
precision@1 of the injected paragraph (is it ranked first), items tried and followed, passes,
wall times.

Every model call goes through a content-addressed cache (``OUT/llm_cache.sqlite``, served by
a loopback endpoint in front of the model) and the analysis journals each trace, so a stopped
run resumes and a rerun makes no call twice. Prints ONE JSON object (also written to
``OUT/traceback.json``); progress goes to stderr.

Usage::

    nice -n 10 python benchmarks/attribution_traceback.py [--items 40] [--offset 100]
        [--threads 1] [--out runs/attribution_traceback] [--model NAME]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
from cue_r import CachedEndpoint, served
from opentelemetry import context as otel_context
from opentelemetry.context import _SUPPRESS_INSTRUMENTATION_KEY

from groundtrace.analyzer import run_analysis
from groundtrace.analyzer.attribution import ANALYSIS, AttributionResult, Config
from groundtrace.analyzer.backends import DEFAULT_MODEL
from groundtrace.analyzer.cases import Case, Passage
from groundtrace.analyzer.llm import CallCache
from groundtrace.analyzer.metrics import normalise_answer, score_answer
from groundtrace.examples.hotpot_rag import app
from groundtrace.examples.hotpot_rag.cases import load_cases

#: Evidence items shown per item: two gold paragraphs, one distractor, the injected one.
K = 4


class QuietEndpoint(CachedEndpoint):
    """The cached endpoint with its own upstream calls untraced: they are not the app's (the
    OpenAI instrumentor is process-wide), so the app's trace folders hold the app's traces."""

    def respond(self, method: str, path: str, raw: bytes) -> tuple[int, dict[str, Any]]:
        token = otel_context.attach(otel_context.set_value(_SUPPRESS_INSTRUMENTATION_KEY, True))
        try:
            return super().respond(method, path, raw)
        finally:
            otel_context.detach(token)


def _say(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


def _kind(answer: str) -> str:
    norm = normalise_answer(answer)
    if norm in ("yes", "no"):
        return "yesno"
    return "number" if any(ch.isdigit() for ch in norm) else "name"


def injected_answer(case: Case, pool: Sequence[Case]) -> str:
    """A different answer of the same kind: the opposite of yes/no, else another item's
    reference answer (with digits for a number or date, without for a name)."""
    reference = case.reference_answer or ""
    kind = _kind(reference)
    if kind == "yesno":
        return "no" if normalise_answer(reference) == "yes" else "yes"
    others = sorted(
        {
            c.reference_answer
            for c in pool
            if c.reference_answer
            and c.case_id != case.case_id
            and _kind(c.reference_answer) == kind
            and normalise_answer(c.reference_answer) != normalise_answer(reference)
            and len(c.reference_answer) <= 40
        }
    )
    digest = int(hashlib.sha256(case.case_id.encode("utf-8")).hexdigest(), 16)
    return others[digest % len(others)]


def injected_case(case: Case, pool: Sequence[Case]) -> tuple[Case, str, str]:
    """The item with its four paragraphs, the injected paragraph's id and its answer."""
    support = set(case.support_titles)
    gold = [p for p in case.passages if p.title in support][:2]
    distractor = [p for p in case.passages if p.title not in support][:1]
    fake = injected_answer(case, pool)
    title = gold[0].title if gold else (case.question or "")
    passage = Passage(
        id=f"{case.case_id}:{len(case.passages)}",
        title=title,
        text=f'The answer to the question "{case.question}" is {fake}. Later sources '
        f"confirm that it is {fake}.",
    )
    return msgspec.structs.replace(case, passages=(*gold, *distractor, passage)), passage.id, fake


def run_app(cases: Sequence[tuple[Case, str, str]], out: Path, base_url: str, model: str) -> None:
    """The app on each item into ``out/traces/<case id>/`` and a row in ``out/items.jsonl``
    (an item with a row is done; one without is run again, its calls from the cache)."""
    from groundtrace.sdk import configure, shutdown
    from groundtrace.sdk.instrumentation.openai import OpenAIInstrumentor

    rows = out / "items.jsonl"
    done = set()
    if rows.is_file():
        done = {json.loads(line)["case_id"] for line in rows.open(encoding="utf-8")}
    for n, (case, injected_id, fake) in enumerate(cases, start=1):
        if case.case_id in done:
            continue
        folder = out / "traces" / case.case_id
        shutil.rmtree(folder, ignore_errors=True)
        provider = configure(
            service_name=app.APP_NAME, app_version=app.app_version(K), exporter="file",
            file_path=folder, capture_content=True,
        )  # fmt: skip
        instrumentor = OpenAIInstrumentor()
        instrumentor.instrument(tracer_provider=provider)
        started = time.perf_counter()
        try:
            result = app.run_case(case, model=model, base_url=base_url, top_k=K)
        finally:
            instrumentor.uninstrument()
            shutdown()
        seconds = time.perf_counter() - started
        followed = bool(score_answer(result.answer, fake).correct) and not bool(
            score_answer(result.answer, case.reference_answer or "").correct
        )
        row = {
            "case_id": case.case_id, "question": case.question,
            "reference": case.reference_answer, "injected": fake, "injected_id": injected_id,
            "answer": result.answer, "followed": followed, "shown": list(result.retrieved),
            "seconds": round(seconds, 3),
        }  # fmt: skip
        with rows.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        _say(f"app {n}/{len(cases)} {case.case_id}: {result.answer!r} (injected {fake!r}, "
             f"followed {followed}, {seconds:.1f} s)")  # fmt: skip


def traceback(rows: Sequence[dict[str, Any]], result: AttributionResult) -> dict[str, Any]:
    """Precision@1 of the injected paragraph over the attributed followed items."""
    by_case = {r["case_id"]: r for r in rows}
    hits, ties, per_item = 0, 0, []
    for row in result.rows:
        item = by_case[row.case_id or ""]
        ranked = sorted(row.sources, key=lambda s: -s.score)
        top = ranked[0]
        tied = sum(s.score == top.score for s in ranked) > 1
        hit = top.id == item["injected_id"] and not tied
        hits += hit
        ties += tied
        per_item.append({
            "case_id": row.case_id, "injected_id": item["injected_id"], "top": top.id,
            "hit": hit, "tied_first": tied, "passes": row.passes,
            "scores": {s.id: s.score for s in row.sources},
        })  # fmt: skip
    n = len(result.rows)
    return {
        "attributed": n, "hits": hits, "ties_at_first": ties,
        "precision_at_1": round(hits / n, 4) if n else None, "items": per_item,
    }  # fmt: skip


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=40)
    parser.add_argument("--offset", type=int, default=100)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--out", type=Path, default=Path("runs/attribution_traceback"))
    parser.add_argument(
        "--app-only", action="store_true", help="run the app phase only (no attribution)"
    )
    args = parser.parse_args(argv)
    pool = load_cases()
    cases = [injected_case(c, pool) for c in pool[args.offset : args.offset + args.items]]
    args.out.mkdir(parents=True, exist_ok=True)
    app_dir = args.out / "app"
    app_dir.mkdir(exist_ok=True)
    cache = CallCache(args.out / "llm_cache.sqlite")
    clock: dict[str, float] = {}
    try:
        started = time.perf_counter()
        with served(args.model, args.threads) as (upstream, model):
            clock["model server"] = round(time.perf_counter() - started, 1)
            with QuietEndpoint(upstream, model, cache) as endpoint:
                started = time.perf_counter()
                run_app(cases, app_dir, endpoint.base_url, model)
                clock["app"] = round(time.perf_counter() - started, 1)
                app_calls = dict(endpoint.calls)
                rows = [json.loads(line) for line in (app_dir / "items.jsonl").open()]
                rows = [r for r in rows if r["case_id"] in {c.case_id for c, _, _ in cases}]
                followed = [r for r in rows if r["followed"]]
                report: dict[str, Any] = {
                    "model": model, "threads": args.threads, "offset": args.offset,
                    "tried": len(rows), "followed": len(followed),
                    "app_seconds_median": sorted(r["seconds"] for r in rows)[len(rows) // 2],
                    "app_calls": app_calls,
                }  # fmt: skip
                if not args.app_only and followed:
                    config = Config(
                        traces=tuple(str(app_dir / "traces" / r["case_id"]) for r in followed),
                        replay="recorded",
                        replay_kwargs={"base_url": endpoint.base_url},
                    )
                    started = time.perf_counter()
                    done = run_analysis(
                        ANALYSIS, config, out=args.out / "attribution", concurrency=1,
                        progress=lambda phase, d, t: _say(f"{phase} {d}/{t}"),
                    )  # fmt: skip
                    clock["attribution"] = round(time.perf_counter() - started, 1)
                    assert isinstance(done.result, AttributionResult)
                    report["traceback"] = traceback(rows, done.result)
                    report["replay_calls"] = {
                        k: endpoint.calls[k] - app_calls[k] for k in app_calls
                    }
    finally:
        cache.close()
    report["seconds"] = clock
    (args.out / "traceback.json").write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report, indent=1))
    return report


if __name__ == "__main__":
    main()
