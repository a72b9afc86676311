"""Tier 1: the embedded model scores a fixed answer in-process, reusing the KV cache.

One model load per scorer (n_threads=1, a 3-source prompt of about 100 tokens): the scores
with prefix reuse agree with a full re-evaluation of every prompt from its first token, the
reuse evaluates fewer tokens, the answer's evidence matters, and a rerun through the
content-addressed cache makes no pass.

Measured tolerance (qwen2.5-coder-0.5b Q4_K_M, 2026-12-06, 8 ablations of this prompt):
per answer token the median |difference| is 0 and the largest 0.063 nats with n_batch=512
(0.085 with n_batch=64), always at the first answer tokens after a re-evaluated batch of a
different size: llama.cpp's CPU kernels accumulate in a batch-size-dependent order (two full
evaluations of the same prompt are identical; a kept prefix of 43 tokens gave exactly the
same scores, one of 86 did not). Per answer the total differs by at most 0.055 nats, against
a drop of about 3 nats when the answer's source is removed. The test bounds the median per
token by 1e-3 and the per-answer total by 0.2 nats.
"""

from __future__ import annotations

import importlib.util
import itertools
import statistics
from collections.abc import Iterator
from pathlib import Path

import pytest

from groundtrace.analyzer.attribution._cache import ScoreCache
from groundtrace.analyzer.attribution._context import AblationContext
from groundtrace.analyzer.attribution._llama import LlamaScorer
from groundtrace.analyzer.attribution._scorer import ContextScorer
from groundtrace.analyzer.backends import DEFAULT_MODEL, MODELS
from groundtrace.analyzer.backends._models import model_cache_dir

pytestmark = [pytest.mark.llm, pytest.mark.timeout(300)]

DOCS = [
    ("d1", "The Eiffel Tower is in Paris. It was built in 1889."),
    ("d2", "Mount Fuji is the tallest mountain in Japan."),
    ("d3", "The Louvre houses the Mona Lisa."),
]
MESSAGES = [
    {
        "role": "user",
        "content": "Evidence:\n"
        + "\n".join(f"[{i}] {t}" for i, t in DOCS)
        + "\nQuestion: When was the Eiffel Tower built?",
    }
]
ANSWER = "It was built in 1889."
MASKS = list(itertools.product([True, False], repeat=3))
PER_TOKEN_MEDIAN = 1e-3
PER_ANSWER = 0.2


def _model_path() -> Path:
    spec = MODELS[DEFAULT_MODEL]
    path = model_cache_dir() / spec.filename
    if importlib.util.find_spec("llama_cpp") is None or not path.is_file():
        pytest.skip("the embedded model is not assembled (groundtrace demo assembles it)")
    return path


@pytest.fixture(scope="module")
def scorers() -> Iterator[tuple[LlamaScorer, LlamaScorer]]:
    path = _model_path()
    reusing = LlamaScorer(path, n_ctx=512, n_batch=512, n_threads=1)
    fresh = LlamaScorer(path, n_ctx=512, n_batch=512, n_threads=1, reuse=False)
    yield reusing, fresh
    reusing.close()
    fresh.close()


def test_prefix_reuse_agrees_with_full_reevaluation(
    scorers: tuple[LlamaScorer, LlamaScorer],
) -> None:
    reusing, fresh = scorers
    context = AblationContext.locate(MESSAGES, DOCS, ANSWER)
    prompts = [context.render(m) for m in MASKS]
    with_reuse = reusing.score_many(prompts, ANSWER)
    reference = fresh.score_many(prompts, ANSWER)
    per_token = [abs(a - b) for u, v in zip(with_reuse, reference) for a, b in zip(u, v)]
    per_answer = [abs(sum(u) - sum(v)) for u, v in zip(with_reuse, reference)]
    print(
        f"per-token |diff| median {statistics.median(per_token):.2e} max {max(per_token):.3f};"
        f" per-answer max {max(per_answer):.3f} nats; evaluated {reusing.evaluated}"
        f" of {reusing.total} tokens with reuse, {fresh.evaluated} without"
    )
    assert len(per_token) == len(MASKS) * len(with_reuse[0])
    assert statistics.median(per_token) < PER_TOKEN_MEDIAN
    assert max(per_answer) < PER_ANSWER
    assert fresh.evaluated == fresh.total
    assert reusing.evaluated < 0.7 * reusing.total
    # the source that holds the answer matters more than any reuse error
    full, without_d1 = sum(reference[0]), sum(reference[MASKS.index((False, True, True))])
    assert full - without_d1 > 10 * PER_ANSWER


def test_only_the_answer_tokens_are_scored(scorers: tuple[LlamaScorer, LlamaScorer]) -> None:
    reusing, _ = scorers
    tokens, first = reusing.tokens(MESSAGES, ANSWER)
    (scores,) = reusing.score_many([MESSAGES], ANSWER)
    assert len(scores) == len(tokens) - first
    assert reusing.prompt_text(MESSAGES).endswith("<|im_start|>assistant\n")
    assert all(s <= 0.0 for s in scores)
    # a reply prefix (an app answering in JSON) is read, not scored
    with_prefix, start = reusing.tokens(MESSAGES, ANSWER, '{"answer": "')
    assert len(with_prefix) - start == len(scores) and start > first


def test_rerun_through_the_cache_makes_no_pass(
    scorers: tuple[LlamaScorer, LlamaScorer], tmp_path: Path
) -> None:
    reusing, _ = scorers
    context = AblationContext.locate(MESSAGES, DOCS, ANSWER)
    masks = [(True, True, True), (False, True, True), (True, True, True)]
    first = ContextScorer(reusing, context, ScoreCache(tmp_path / "scores.sqlite"))
    before = reusing.total
    scores = first(masks)
    made = reusing.total - before
    assert first.passes == 2 and scores[0] == scores[2]
    again = ContextScorer(reusing, context, ScoreCache(tmp_path / "scores.sqlite"))
    assert again(masks) == scores
    assert again.passes == 0
    assert reusing.total - before == made  # the model was not asked again


def test_the_analysis_attributes_a_trace_in_process_with_the_default_model(tmp_path: Path) -> None:
    from groundtrace.analyzer import run_analysis
    from groundtrace.analyzer.attribution import ANALYSIS, Config
    from groundtrace.collectors import Trace
    from groundtrace.collectors.model import Evidence, LLMCall, Message, Request

    trace = Trace(
        request=Request(trace_id="t1"),
        evidence=tuple(Evidence(i, "s1", "RETRIEVE", content=t) for i, t in DOCS),
        answer=ANSWER,
        llm_calls=(LLMCall("s2", messages=(Message("user", MESSAGES[0]["content"]),)),),
    )
    path = tmp_path / "traces.jsonl"
    path.write_text(trace.to_json() + "\n", encoding="utf-8")
    _model_path()  # skips where the default model is not assembled
    config = Config(traces=(str(path),), n_ctx=512)  # neither: the default embedded model
    result = run_analysis(ANALYSIS, config, out=tmp_path / "out").result
    assert result is not None
    (row,) = result.rows
    assert row.tier == "in-process" and row.passes == 4
    assert max(row.sources, key=lambda s: s.score).id == "d1"
    assert row.context_gap > 1.0
