"""Size and peak memory of an audit's reports at 3,000 sources, before/after side by side.

The workload: ``--sources`` sources (default 3,000), each a copy of one of the 47 shipped
licences (``<spdx>-<n>``), in groups of ``--group-size`` (default 50); each group is asked one
of the ten licence questions (scoped to the group, the questions taken in turn), and each
source answers with its licence's gold answer (absent when the licence has none). Every pair
is labelled by the audit's own pre-filters and baseline labeller and the run is summarised by
:func:`summarise`, as ``groundtrace audit run`` does; then :func:`write_report` writes
``run.json``, ``report.md`` and ``report.html``. Measured in a child process per interpreter
(so ``--before /tmp/old/.venv/bin/python`` runs the same workload on another checkout): the
size of each report file, the peak RSS (``resource.getrusage``, kilobytes on Linux) after the
run is built and after the reports are written, and the reports' wall time.

Usage::

    python benchmarks/audit_scale.py [--sources 3000] [--before PYTHON] [--json]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def build_run(n_sources: int, group_size: int) -> Any:
    """The workload's audit run (see the module docstring)."""
    from groundtrace.analyzer.audit import (
        Answer,
        AuditResult,
        AuditSettings,
        PairLabel,
        Question,
        Source,
    )
    from groundtrace.analyzer.audit._pairs import answer_pairs, baseline_label
    from groundtrace.analyzer.audit._records import SourceInfo
    from groundtrace.analyzer.audit._summary import summarise
    from groundtrace.examples.license_audit.corpus import load_corpus

    licences = load_corpus()
    gold = {(a.question_id, a.source_id): a for a in licences.gold}
    sources: list[Source] = []
    questions: list[Question] = []
    answers: list[Answer] = []
    pairs: list[PairLabel] = []
    for start in range(0, n_sources, group_size):
        group = f"g{start // group_size:03d}"
        base = licences.questions[(start // group_size) % len(licences.questions)]
        question = Question(id=f"{base.id}@{group}", text=base.text, scope=group,
                            topics=base.topics)  # fmt: skip
        questions.append(question)
        mine = []
        for n in range(start, min(start + group_size, n_sources)):
            licence = licences.sources[n % len(licences.sources)]
            source = Source(id=f"{licence.id}-{n:04d}", group=group, title=licence.title,
                            text="", metadata=licence.metadata)  # fmt: skip
            sources.append(source)
            known = gold.get((base.id, licence.id))
            answer = Answer(question_id=question.id, source_id=source.id, stance="absent",
                            text="Not addressed.")  # fmt: skip
            if known is not None:
                answer = Answer(question_id=question.id, source_id=source.id,
                                stance=known.stance, points=known.points, text=known.text,
                                quote=known.quote)  # fmt: skip
            mine.append(answer)
        answers.extend(mine)
        pairs.extend(baseline_label(a, b, question.topics[0]) for a, b in answer_pairs(mine))
    topics = {q.id: q.topics[0] for q in questions}
    return AuditResult(
        corpus="licences-x", settings=AuditSettings(), questions=tuple(questions),
        sources=tuple(SourceInfo(id=s.id, group=s.group, title=s.title) for s in sources),
        answers=tuple(answers), pairs=tuple(sorted(pairs, key=lambda p: p.key)),
        pair_errors=(), review=(), summary=summarise(answers, pairs, sources, topics),
        validation=None, wall_seconds=0.0,
    )  # fmt: skip


def _child(n_sources: int, group_size: int) -> dict[str, Any]:
    import groundtrace.analyzer.audit as audit

    run = build_run(n_sources, group_size)
    built_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        if hasattr(audit, "write_report"):
            audit.write_report(run, Path(folder))
        else:  # a checkout from before write_report (--before)
            audit.write_reports(folder, run)
        seconds = time.perf_counter() - started
        files = {"json": "run.json", "markdown": "report.md", "html": "report.html"}
        sizes = {kind: (Path(folder) / name).stat().st_size for kind, name in files.items()}
    return {
        "sources": len(run.sources), "questions": len(run.questions),
        "answers": len(run.answers), "pairs": len(run.pairs), "bytes": sizes,
        "report_seconds": round(seconds, 3),
        "peak_rss_kb_run_built": built_kb,
        "peak_rss_kb_after_reports": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }  # fmt: skip


def _measure(python: str, n_sources: int, group_size: int) -> dict[str, Any]:
    done = subprocess.run(
        [python, __file__, "--child", "--sources", str(n_sources), "--group-size",
         str(group_size)],
        capture_output=True, text=True, timeout=3600, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"{python} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sources", type=int, default=3000)
    parser.add_argument("--group-size", type=int, default=50)
    parser.add_argument("--before", help="interpreter of the version to compare with")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(args.sources, args.group_size)))
        return 0
    report: dict[str, Any] = {"after": _measure(sys.executable, args.sources, args.group_size)}
    if args.before:
        report["before"] = _measure(args.before, args.sources, args.group_size)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    first = report["after"]
    print(f"{first['sources']} sources, {first['questions']} questions, {first['answers']} "
          f"answers, {first['pairs']} pairs")  # fmt: skip
    for side in ("before", "after"):
        if side in report:
            r = report[side]
            mb = {k: round(v / 1e6, 2) for k, v in r["bytes"].items()}
            built, after = r["peak_rss_kb_run_built"], r["peak_rss_kb_after_reports"]
            print(f"{side:>6}: report MB {mb}; peak RSS MB run built {built / 1e3:.0f}, "
                  f"after reports {after / 1e3:.0f}; reports {r['report_seconds']} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
