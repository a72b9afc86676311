"""Precision of each audit pre-filter rule on real multi-source text (RAMDocs).

RAMDocs (Wang et al. 2025, "Retrieval-Augmented Generation with Conflicting Evidence") gives
questions with several retrieved documents each, and per document the answer it supports and
its type: ``correct``, ``misinfo`` (a wrong answer) or ``noise`` (no answer); some questions
name several entities that share one name (two towns called Broken Bow). Each document is one
source; its answer is the sentence of the document that holds its answer (as an extractive
answerer quotes it; the answer string itself when no sentence holds it), ``--form short``: the
answer string alone; a noise document is ``absent``. The gold label of a pair of documents:

* a noise document in it: ``absent``;
* the same answer: ``consistent``;
* different answers to a question about one entity: ``contradictory``;
* different answers of two ``correct`` documents (different entities): ``divergent``;
* different answers with a misinfo document to a question about several entities: unknown
  (the entity the misinformation is about is not recorded), left out.

For every rule (each measured whatever its precision, in the audit's order, the first that fires
taking the pair): how many pairs it fired on and the share it labelled right, and whether it
decides in the audit (:func:`groundtrace.analyzer.audit._pairs.rule_decides`). ``numbers-anywhere``
is the rule ``conflicting-numbers`` replaced (both answers state numbers, none shared ->
contradictory), measured for comparison; it is not applied any more.

Usage::

    python benchmarks/audit_prefilters.py [--data FILE] [--form sentence|short] [--json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from groundtrace.analyzer.audit import Answer
from groundtrace.analyzer.audit._model import Label
from groundtrace.analyzer.audit._pairs import PREFILTER_RULES, normalise

DEFAULT_DATA = (
    Path(__file__).resolve().parents[1] / "tests/fixtures/data/ramdocs/RAMDocs_test_200.jsonl"
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_OLD_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


def answer_text(document: dict[str, Any], form: str) -> str:
    """A document's answer as an answerer would give it (see the module docstring)."""
    answer = str(document["answer"])
    if form == "sentence":
        wanted = normalise(answer)
        for sentence in _SENTENCE.split(str(document["text"])):
            if wanted and wanted in normalise(sentence):
                return sentence.strip()
    return answer


def gold_label(row: dict[str, Any], a: dict[str, Any], b: dict[str, Any]) -> Label | None:
    """The gold label of a pair of documents (None: unknown)."""
    if "noise" in (a["type"], b["type"]):
        return "absent"
    if normalise(str(a["answer"])) == normalise(str(b["answer"])):
        return "consistent"
    if len(row["disambig_entity"]) == 1:
        return "contradictory"
    if a["type"] == b["type"] == "correct":
        return "divergent"
    return None


def labelled_pairs(path: Path, form: str) -> Iterator[tuple[Answer, Answer, Label]]:
    """Every pair of answers of every question with a known gold label."""
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            row = json.loads(line)
            documents = row["documents"]
            answers = [
                Answer(
                    question_id=str(number), source_id=f"d{i}",
                    stance="absent" if d["type"] == "noise" else "yes",
                    text=answer_text(d, form),
                )
                for i, d in enumerate(documents)
            ]  # fmt: skip
            for (i, a), (j, b) in itertools.combinations(enumerate(answers), 2):
                gold = gold_label(row, documents[i], documents[j])
                if gold is not None:
                    yield a, b, gold


def _numbers_anywhere(a: Answer, b: Answer) -> bool:
    """The replaced rule: both state numbers and they share none."""
    numbers_a = {n.replace(",", ".") for n in _OLD_NUMBER.findall(a.text)}
    numbers_b = {n.replace(",", ".") for n in _OLD_NUMBER.findall(b.text)}
    return bool(numbers_a and numbers_b and not numbers_a & numbers_b)


def measure(path: Path, form: str) -> dict[str, Any]:
    """Decided pairs and precision of every rule (and of the replaced number rule)."""
    from groundtrace.analyzer.audit._pairs import MIN_PRECISION, prefilter_rule, rule_decides

    decided: Counter[str] = Counter()
    right: Counter[str] = Counter()
    n_pairs = 0
    gold_counts: Counter[str] = Counter()
    for a, b, gold in labelled_pairs(path, form):
        n_pairs += 1
        gold_counts[gold] += 1
        for rule in PREFILTER_RULES:  # every rule measured, the first that fires decides
            if (label := prefilter_rule(rule, a, b, "answer")) is not None:
                decided[rule] += 1
                right[rule] += label.label == gold
                break
        if a.stance != "absent" != b.stance and _numbers_anywhere(a, b):
            decided["numbers-anywhere"] += 1
            right["numbers-anywhere"] += gold == "contradictory"
    rules = {
        rule: {
            "decided": decided[rule],
            "right": right[rule],
            "precision": right[rule] / decided[rule] if decided[rule] else None,
            "decides": rule in PREFILTER_RULES and rule_decides(rule),
        }
        for rule in (*PREFILTER_RULES, "numbers-anywhere")
    }
    return {
        "data": path.name, "form": form, "pairs": n_pairs, "gold": dict(gold_counts),
        "min_precision": MIN_PRECISION, "rules": rules,
    }  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--form", choices=("sentence", "short"), default="sentence")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = measure(args.data, args.form)
    min_precision = report["min_precision"]
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{report['data']} ({args.form} answers): {report['pairs']} pairs, gold {report['gold']}")
    print(f"{'rule':<22}{'fired':>7}{'right':>7}{'precision':>11}  decides in the audit")
    for rule, r in report["rules"].items():
        precision = "n/a" if r["precision"] is None else f"{r['precision']:.3f}"
        ok = "yes" if r["decides"] else f"no (below {min_precision} or replaced)"
        print(f"{rule:<22}{r['decided']:>7}{r['right']:>7}{precision:>11}  {ok}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
