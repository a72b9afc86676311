"""The CUE-R protocol on the shipped HotpotQA questions with the default embedded model.

1. The demo app (BM25 top-5, the default embedded model served by llama.cpp) answers the
   first N questions; its traces and case file go to ``OUT/app/`` (skipped once
   ``OUT/app/cases.jsonl`` exists; an app run interrupted before that starts again in a new
   ``--out``).
2. Each trace's evidence is perturbed by REMOVE, REPLACE and DUPLICATE (the evidence the
   model says it used is the target) and the recorded prompt replayed against the same model
   through the endpoint (``OUT/interventions/``: every call in the content-addressed cache and
   every unit in the journal, so an interrupted run resumes with zero repeated calls).
3. Prints ONE JSON object: per operator the soft correctness before and after, the mean
   change with its 95% CI, p and n, and the trace divergence D, next to the CUE-R paper's
   reference run (Qwen-3 8B).

Usage::

    nice -n 5 python benchmarks/cue_r.py [--items 100] [--out runs/cue_r] [--model NAME]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from groundtrace.analyzer.backends import DEFAULT_MODEL, LlamaServer
from groundtrace.analyzer.demo import DemoConfig, run_demo
from groundtrace.analyzer.interventions import PlanSettings, RunConfig, run_interventions
from groundtrace.examples.hotpot_rag.cases import DEFAULT_DATASET

OPERATORS = ("REMOVE", "REPLACE", "DUPLICATE")
#: The CUE-R paper's HotpotQA run with Qwen-3 8B: correctness and D per operator.
PAPER = {
    "model": "Qwen-3 8B",
    "correctness_original": 0.585,
    "correctness": {"REMOVE": 0.285, "REPLACE": 0.270, "DUPLICATE": 0.585},
    "divergence": {"DUPLICATE": 0.074},
}


def _axis(effect: Any) -> dict[str, Any]:
    return {
        "original": effect.original_mean,
        "intervened": effect.intervened_mean,
        "delta": effect.mean_delta,
        "ci95": [effect.ci_low, effect.ci_high],
        "p": effect.p_value,
        "n": effect.n,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--out", type=Path, default=Path("runs/cue_r"))
    args = parser.parse_args()
    app_dir = args.out / "app"
    with LlamaServer(args.model) as server:
        traces = app_dir / "traces"
        if not (app_dir / "cases.jsonl").is_file():
            run_demo(DemoConfig(model=server.base_url, questions=args.items, out=app_dir))
        result = run_interventions(
            [traces],
            RunConfig(
                out_dir=args.out / "interventions",
                replay=None,
                endpoint=server.base_url,
                model=server.model,
                plan=PlanSettings(operators=OPERATORS),
                concurrency=1,
                timeout=900.0,
            ),
            cases_path=app_dir / "cases.jsonl",
            pool_dataset=DEFAULT_DATASET,
        )
    summary = result.summary
    table = {
        op: {
            "correctness": _axis(summary.operators[op].axes["correctness"]),
            "grounding": _axis(summary.operators[op].axes["grounding"]),
            "divergence": _axis(summary.operators[op].axes["divergence"]),
        }
        for op in OPERATORS
        if op in summary.operators
    }
    print(
        json.dumps(
            {
                "model": args.model,
                "items": summary.items,
                "operators": table,
                "failed_units": summary.failed_units,
                "calls": {
                    "made": summary.calls.model_calls_made,
                    "from_cache": summary.calls.served_from_cache,
                    "from_journal": summary.calls.from_journal,
                },
                "paper": PAPER,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
