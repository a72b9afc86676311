"""Figures the docs state that a deterministic run produces, checked against a fresh run.

A figure is marked in the Markdown by an HTML comment right before it (invisible once rendered)::

    Absence <!-- figure: audit.absence -->47.4% [30.3%, 64.6%] of ...

and a command's printed output by a comment on the line before its fenced block
(``<!-- output: agent.judge -->``): every line of the block must be a line the command prints,
except the command itself (``$ ...``), ``...`` and lines eliding a random id with ``…``.

:data:`FIGURES` (and :data:`OUTPUTS`) say how each named figure is computed from a fresh run and
formatted as written; each run (a *source*: the offline licence audit, its flat-retrieval twin,
their comparison, the document agent judged, ...) is made once per session, by the same commands
the docs give. A run that moves a figure fails here, naming the file, the line and the new
value, until the text is updated. Measurements a test cannot reproduce (wall times,
embedded-model runs, data that does not ship) are not marked: the text says they are
measurements, with the command and the date.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from groundtrace.analyzer.audit._model import LABELS
from groundtrace.analyzer.audit._pairs import gold_pair_labels
from groundtrace.analyzer.audit._validate import multiclass_kappa_batch
from groundtrace.analyzer.stats import bootstrap_counts, bootstrap_indices, percentile_interval
from groundtrace.examples.license_audit.corpus import load_corpus
from tests.analyzer.audit.test_audit_clause_recall import _recall as clause_recall
from tests.conftest import SHARED_DATA

ROOT = Path(__file__).resolve().parents[1]
#: Where figures may be marked.
DOCS = sorted(
    [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "examples").glob("*/README.md")]
)
MARK = re.compile(r"<!-- figure: ([\w.-]+) -->")
BLOCK = re.compile(r"<!-- output: ([\w.-]+) -->")
_NUM = r"[-+]?\d(?:[\d,]|\.(?=\d))*%?"
#: What a figure looks like in the text: a number, optionally followed by its interval.
WRITTEN = re.compile(rf"{_NUM}(?: \[{_NUM}, {_NUM}\])?")
CLI = [sys.executable, "-c", "from groundtrace.analyzer.cli import main; main()"]
CLI_TIMEOUT_S = 300
#: The 600 HotpotQA questions of the optional shared data (the 200 shipped ones without it).
HOTPOTQA_600 = SHARED_DATA / "hotpotqa" / "hotpotqa_dev_distractor_600.jsonl"


def marks(path: Path) -> list[tuple[int, str, str]]:
    """``(line, figure name, figure as written)`` of every mark in one Markdown file."""
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        for mark in MARK.finditer(line):
            written = WRITTEN.match(line, mark.end())
            found.append((number, mark.group(1), written.group(0) if written else ""))
    return found


def blocks(path: Path) -> list[tuple[int, str, list[tuple[int, str]]]]:
    """``(line, output name, [(line, text)])`` of every marked output block: the lines checked."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for number, line in enumerate(lines, 1):
        if not (mark := BLOCK.fullmatch(line.strip())):
            continue
        assert lines[number].startswith("```"), f"{path}:{number}: no fenced block after the mark"
        end = lines.index("```", number + 1)
        checked = [
            (i + 1, lines[i])
            for i in range(number + 1, end)
            if not lines[i].startswith("$ ") and lines[i].strip() != "..." and "…" not in lines[i]
        ]
        found.append((number, mark.group(1), checked))
    return found


class Fresh:
    """The sources, each run once (on first use) into one temporary folder."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _run(self, *command: str) -> str:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=CLI_TIMEOUT_S, check=False
        )
        assert done.returncode == 0, f"{' '.join(command)}:\n{done.stderr[-3000:]}"
        return done.stdout

    def _cli(self, *args: str) -> str:
        return self._run(*CLI, *args)

    @functools.cached_property
    def audit(self) -> dict[str, Any]:
        """``groundtrace audit run --out runs/audit`` (offline: extractive answers)."""
        self._cli("audit", "run", "--out", str(self.root / "audit"))
        return dict(json.loads((self.root / "audit" / "run.json").read_text()))

    @functools.cached_property
    def audit_flat(self) -> dict[str, Any]:
        """``groundtrace audit run --retrieval flat --out runs/audit-flat``."""
        self._cli("audit", "run", "--retrieval", "flat", "--out", str(self.root / "audit-flat"))
        return dict(json.loads((self.root / "audit-flat" / "run.json").read_text()))

    @functools.cached_property
    def compare(self) -> dict[str, Any]:
        """``groundtrace audit compare runs/audit-flat runs/audit --out runs/audit-cmp``."""
        runs = [str(self.root / x) for x in ("audit-flat", "audit")]
        assert self.audit and self.audit_flat
        self._cli("audit", "compare", *runs, "--out", str(self.root / "audit-cmp"))
        return dict(json.loads((self.root / "audit-cmp" / "comparison.json").read_text()))

    @functools.cached_property
    def agent_judge(self) -> str:
        """``python -m groundtrace.examples.agent_docs --out runs/agent``, then
        ``groundtrace judge run runs/agent/traces --out runs/agent/judge`` (its output)."""
        agent = self.root / "agent"
        self._run(sys.executable, "-m", "groundtrace.examples.agent_docs", "--out", str(agent))
        return self._cli("judge", "run", str(agent / "traces"), "--out", str(agent / "judge"))

    @functools.cached_property
    def prefilters(self) -> dict[str, Any]:
        """``python benchmarks/audit_prefilters.py --json`` (the shipped RAMDocs sample)."""
        script = str(ROOT / "benchmarks" / "audit_prefilters.py")
        return dict(json.loads(self._run(sys.executable, script, "--json"))["rules"])

    @functools.cached_property
    def correctness(self) -> dict[str, Any]:
        """``python benchmarks/correctness_rule.py`` (with the shared 600 questions if present)."""
        script = str(ROOT / "benchmarks" / "correctness_rule.py")
        data = ["--hotpotqa", str(HOTPOTQA_600)] if HOTPOTQA_600.is_file() else []
        return dict(json.loads(self._run(sys.executable, script, *data)))

    @functools.cached_property
    def clause(self) -> dict[str, tuple[int, int]]:
        """Clause recall of each retrieval mode on the clause-level gold (found, gold clauses)."""
        return {mode: clause_recall(mode) for mode in ("auto", "flat")}

    @functools.cached_property
    def naive(self) -> dict[str, tuple[float, float]]:
        """The intervals the audit would give if it resampled pairs and answers, not questions."""
        corpus = load_corpus()
        topics = {q.id: q.topics[0] for q in corpus.questions}
        gold = {p.key: p.label for p in gold_pair_labels(corpus.gold, topics)}
        pairs = self.audit["pairs"]
        index = {label: i for i, label in enumerate(LABELS)}
        ref = np.asarray(
            [index[gold[(p["question_id"], p["source_a"], p["source_b"])]] for p in pairs]
        )
        pred = np.asarray([index[p["label"]] for p in pairs])
        kappa = self.audit["validation"]["kappa"]
        drawn = bootstrap_indices(len(pairs), kappa["n_resamples"], kappa["seed"])
        values, defined = multiclass_kappa_batch(ref[drawn], pred[drawn])
        absent = np.asarray([a["stance"] == "absent" for a in self.audit["answers"]], dtype=float)
        summary = self.audit["summary"]
        counts = bootstrap_counts(absent.size, summary["n_resamples"], summary["seed"])
        rates = counts @ absent / absent.size
        return {
            "kappa": percentile_interval(values[defined]),
            "absence": percentile_interval(np.asarray(rates, dtype=np.float64)),
        }


def _int(value: float) -> str:
    return f"{value:,.0f}"


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _ci(point: str, low: str, high: str) -> str:
    return f"{point} [{low}, {high}]"


def _stat(stat: dict[str, Any]) -> str:
    """A validation statistic: ``0.653 [0.520, 0.722]``."""
    return _ci(*(f"{stat[k]:.3f}" for k in ("value", "ci_low", "ci_high")))


def _rate(stat: dict[str, Any], value: str = "rate") -> str:
    """A pooled rate: ``47.4% [30.3%, 64.6%]``."""
    return _ci(*(_pct(stat[k]) for k in (value, "ci_low", "ci_high")))


def _change(stat: dict[str, Any]) -> str:
    """A paired change of ``audit compare``: ``-0.003 [-0.016, 0.000]``."""
    return _ci(f"{stat['delta']:+.3f}", f"{stat['ci_low']:.3f}", f"{stat['ci_high']:.3f}")


def _words(pick: Callable[[list[tuple[int, str]]], tuple[int, str]]) -> str:
    return _int(pick(sorted((len(s.text.split()), s.id) for s in load_corpus().sources))[0])


def _group(run: dict[str, Any], group: str) -> str:
    return str(Counter(s["group"] for s in run["sources"])[group])


def _rule(f: Fresh, pairs: str, *keys: str) -> str:
    """A count of ``correctness_rule.py``; the HotpotQA ones need the shared 600 questions."""
    if pairs == "hotpotqa" and not HOTPOTQA_600.is_file():
        pytest.skip(f"a figure of the optional shared data's 600 questions ({HOTPOTQA_600})")
    value: Any = f.correctness[pairs]
    for key in keys:
        value = value[key]
    return str(value)


#: How each marked figure is computed from a fresh run and written.
FIGURES: dict[str, Callable[[Fresh], str]] = {
    "corpus.sources": lambda f: str(len(f.audit["sources"])),
    "corpus.questions": lambda f: str(len(f.audit["questions"])),
    "corpus.copyleft": lambda f: _group(f.audit, "copyleft"),
    "corpus.public_domain": lambda f: _group(f.audit, "public-domain"),
    "corpus.permissive": lambda f: _group(f.audit, "permissive"),
    "corpus.fewest_words": lambda f: _words(lambda w: w[0]),
    "corpus.most_words": lambda f: _words(lambda w: w[-1]),
    "audit.answers": lambda f: str(f.audit["summary"]["n_answers"]),
    "audit.pairs": lambda f: _int(f.audit["summary"]["n_pairs"]),
    "audit.prefiltered": lambda f: _int(f.audit["summary"]["n_prefiltered"]),
    "audit.prefilter_share": lambda f: _pct(f.audit["summary"]["prefilter_share"]),
    "audit.protocol_errors": lambda f: str(len(f.audit["pair_errors"])),
    "audit.absence": lambda f: _rate(f.audit["summary"]["absence"]),
    "audit.absence_by_answer": lambda f: _ci(
        _pct(f.audit["summary"]["absence"]["rate"]), *(_pct(x) for x in f.naive["absence"])
    ),
    "audit.prevalence": lambda f: _rate(f.audit["summary"]["overall"], "prevalence"),
    "audit.present_pairs": lambda f: _int(f.audit["summary"]["overall"]["n_present"]),
    "audit.agreement": lambda f: _stat(f.audit["validation"]["agreement"]),
    "audit.kappa": lambda f: _stat(f.audit["validation"]["kappa"]),
    "audit.kappa_value": lambda f: f"{f.audit['validation']['kappa']['value']:.3f}",
    "audit.kappa_by_pair": lambda f: _ci(
        f"{f.audit['validation']['kappa']['value']:.3f}", *(f"{x:.3f}" for x in f.naive["kappa"])
    ),
    "audit.disagreement_kappa": lambda f: _stat(f.audit["validation"]["disagreement_kappa"]),
    "audit.disagreement_mcc": lambda f: _stat(f.audit["validation"]["disagreement_mcc"]),
    "audit.consistent_read_absent": lambda f: _int(
        f.audit["validation"]["confusion"]["consistent"]["absent"]
    ),
    "flat.absence": lambda f: f"{f.compare['absence']['value_a']:.3f}",
    "hierarchical.absence": lambda f: f"{f.compare['absence']['value_b']:.3f}",
    "compare.absence": lambda f: _change(f.compare["absence"]),
    "flat.prevalence": lambda f: f"{f.compare['prevalence']['value_a']:.3f}",
    "hierarchical.prevalence": lambda f: f"{f.compare['prevalence']['value_b']:.3f}",
    "compare.prevalence": lambda f: _change(f.compare["prevalence"]),
    "flat.intensity": lambda f: _pct(f.compare["intensity_a"]),
    "hierarchical.intensity": lambda f: _pct(f.compare["intensity_b"]),
    "flat.kappa": lambda f: f"{f.audit_flat['validation']['kappa']['value']:.3f}",
    "compare.flipped": lambda f: str(len(f.compare["flipped"])),
    "clause.flat": lambda f: str(f.clause["flat"][0]),
    "clause.hierarchical": lambda f: str(f.clause["auto"][0]),
    "clause.pairs": lambda f: str(f.clause["auto"][1]),
    "prefilters.conflicting_numbers": lambda f: (
        f"{f.prefilters['conflicting-numbers']['precision']:.2f}"
    ),
    "prefilters.numbers_anywhere": lambda f: f"{f.prefilters['numbers-anywhere']['precision']:.2f}",
    "correctness.sentences_changed": lambda f: _rule(
        f, "sentences", "fact_correctness", "different"
    ),
    "correctness.sentences_fact_pass": lambda f: _rule(
        f, "sentences", "fact_correctness", "false_pass"
    ),
    "correctness.sentences_f1_pass": lambda f: _rule(
        f, "sentences", "soft_correctness", "false_pass"
    ),
    "correctness.hotpot_pairs": lambda f: _rule(f, "hotpotqa", "pairs"),
    "correctness.hotpot_wrong": lambda f: _rule(f, "hotpotqa", "fact_correctness", "different"),
    "correctness.hotpot_fact_pass": lambda f: _rule(
        f, "hotpotqa", "fact_correctness", "false_pass"
    ),
    "correctness.hotpot_f1_pass": lambda f: _rule(f, "hotpotqa", "soft_correctness", "false_pass"),
    "correctness.hotpot_right": lambda f: _rule(f, "hotpotqa", "fact_correctness", "same"),
    "correctness.hotpot_fact_fail": lambda f: _rule(
        f, "hotpotqa", "fact_correctness", "false_fail"
    ),
    "correctness.hotpot_f1_fail": lambda f: _rule(f, "hotpotqa", "soft_correctness", "false_fail"),
}
#: How each marked output block is printed by a fresh run.
OUTPUTS: dict[str, Callable[[Fresh], str]] = {"agent.judge": lambda f: f.agent_judge}

MARKS = [(path, *mark) for path in DOCS for mark in marks(path)]
BLOCKS = [(path, *block) for path in DOCS for block in blocks(path)]


@pytest.fixture(scope="session")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Fresh:
    return Fresh(tmp_path_factory.mktemp("doc-figures"))


@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    ("path", "line", "name", "written"),
    MARKS,
    ids=[f"{p.relative_to(ROOT)}:{line}:{name}" for p, line, name, _ in MARKS],
)
def test_marked_figure_equals_a_fresh_run(
    fresh: Fresh, path: Path, line: int, name: str, written: str
) -> None:
    where = f"{path.relative_to(ROOT)}:{line}"
    assert name in FIGURES, f"{where}: no figure named {name!r} (known: {sorted(FIGURES)})"
    value = FIGURES[name](fresh)
    assert written == value, f"{where}: figure {name} is now {value!r}; the text says {written!r}"


@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    ("path", "line", "name", "checked"),
    BLOCKS,
    ids=[f"{p.relative_to(ROOT)}:{line}:{name}" for p, line, name, _ in BLOCKS],
)
def test_marked_output_is_printed_by_a_fresh_run(
    fresh: Fresh, path: Path, line: int, name: str, checked: list[tuple[int, str]]
) -> None:
    where = path.relative_to(ROOT)
    assert name in OUTPUTS, f"{where}:{line}: no output named {name!r} (known: {sorted(OUTPUTS)})"
    assert checked, f"{where}:{line}: the block of {name} holds no line to check"
    output = OUTPUTS[name](fresh)
    printed = {x.rstrip() for x in output.splitlines()}
    stale = [f"{where}:{n}: {text!r}" for n, text in checked if text.rstrip() not in printed]
    assert not stale, "\n".join([f"{name} no longer prints:", *stale, "fresh output:", output])


def test_every_figure_is_marked_and_marks_are_read() -> None:
    marked = {name for _, _, name, _ in MARKS}
    assert not set(FIGURES) - marked, f"figures no text marks: {sorted(set(FIGURES) - marked)}"
    blocked = {name for _, _, name, _ in BLOCKS}
    assert not set(OUTPUTS) - blocked, f"outputs no text marks: {sorted(set(OUTPUTS) - blocked)}"
    text = "\n".join(p.read_text(encoding="utf-8") for p in DOCS)
    assert len(MARKS) == text.count("<!-- figure:"), "a figure mark is malformed"
    assert len(BLOCKS) == text.count("<!-- output:"), "an output mark is malformed"


def test_a_mark_reads_the_figure_as_written_and_a_stale_one_differs(tmp_path: Path) -> None:
    doc = tmp_path / "README.md"
    doc.write_text("Absence <!-- figure: audit.absence -->49.0% [31.7%, 66.1%] of 2,719.\n")
    [(line, name, written)] = marks(doc)
    assert (line, name, written) == (1, "audit.absence", "49.0% [31.7%, 66.1%]")
    stale = {"summary": {"absence": {"rate": 0.4744, "ci_low": 0.303, "ci_high": 0.6459}}}
    fake = Fresh(tmp_path)
    fake.__dict__["audit"] = stale  # the cached run, as a fresh run would have left it
    assert FIGURES[name](fake) == "47.4% [30.3%, 64.6%]" != written


def test_an_output_mark_checks_the_printed_lines_only(tmp_path: Path) -> None:
    doc = tmp_path / "judge.md"
    text = "<!-- output: agent.judge -->\n```console\n$ groundtrace judge run x\n14 cases\n"
    doc.write_text(text + "  not applicable: case hello (trace c75fa93b…)\n...\n```\n")
    assert blocks(doc) == [(1, "agent.judge", [(4, "14 cases")])]
