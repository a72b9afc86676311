"""The interventions in the one analysis shape: ``Config`` → ``plan`` → ``run`` →
``write_report`` → ``reading``, the same results as the deprecated ``run_interventions``.

The data is an apiary's inspection notes (a domain the repository holds nowhere else): a
small RAG app written here, run in a fresh interpreter with the SDK, its chunk ids the gold.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest

import groundtrace.analyzer.interventions as iv
import groundtrace.sdk as gt
from groundtrace.analyzer import Analysis, get_analysis, load_config, run_analysis
from groundtrace.analyzer._results import encode
from groundtrace.analyzer.errors import ConfigError, InputError
from groundtrace.analyzer.interventions._deprecated import (
    RunConfig,
    estimate_requests,
    plan_run,
    run_interventions,
    run_interventions_async,
)
from groundtrace.analyzer.interventions._engine import PlanSettings, parse_operators
from groundtrace.analyzer.interventions._verdicts import role_verdicts
from groundtrace.analyzer.stats import StatsSettings

ROOT = Path(__file__).resolve().parents[3]
HERE = "tests.analyzer.interventions.test_interventions_shape"

#: id -> note: the apiary's inspection log.
NOTES: dict[str, str] = {
    "ap-1": "Hive four swarmed in May after queen cells were left uncapped.",
    "ap-2": "The north hives are fed sugar syrup at a ratio of two to one in October.",
    "ap-3": "Varroa counts above three mites per hundred bees trigger an oxalic treatment.",
    "ap-4": "Honey supers come off when eighty percent of the frames are capped.",
}

#: (case id, question, gold note id).
QUESTIONS: tuple[tuple[str, str, str], ...] = (
    ("bee-a", "When did hive four swarm?", "ap-1"),
    ("bee-b", "What ratio of sugar syrup are the north hives fed?", "ap-2"),
    ("bee-c", "What varroa count triggers an oxalic treatment?", "ap-3"),
    ("bee-d", "When do honey supers come off?", "ap-4"),
)

_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


@gt.retrieve(retriever="overlap", k=2)
def lookup(query: str) -> list[dict[str, Any]]:
    """The two notes sharing most words with the query."""
    q = _words(query)
    ranked = sorted(NOTES, key=lambda i: (-len(q & _words(NOTES[i])), i))[:2]
    return [{"id": i, "title": i, "content": NOTES[i]} for i in ranked]


@gt.answer(replayable=True)
def reply(question: str, evidence: list[dict[str, Any]]) -> dict[str, Any]:
    """Extractive reader: the evidence note sharing most words with the question."""
    gt.build_prompt(question, evidence)
    if not evidence:
        return {"answer": "unknown", "confidence": 0.2, "used_chunks": []}
    q = _words(question)
    best = max(evidence, key=lambda e: len(q & _words(str(e["content"]))))
    return {"answer": str(best["content"]), "confidence": 0.8, "used_chunks": [best["id"]]}


def reply_down(question: str, evidence: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A replay entry point whose every call fails."""
    raise ConnectionError("the apiary's model is down")


@gt.request(app_name="apiary-notes", app_version="0.1")
def ask(question: str, case_id: str | None = None) -> str:
    """One request: look up, reply."""
    return str(reply(question, lookup(question))["answer"])


def main(out: str) -> None:
    """Ask every question with the SDK writing traces into ``out``; write the case file."""
    folder = Path(out)
    gt.configure(
        service_name="apiary-notes", exporter="file", file_path=folder / "traces",
        capture_content=True,
    )  # fmt: skip
    for case_id, question, _ in QUESTIONS:
        ask(question, case_id=case_id)
    gt.shutdown()
    rows = [
        {"case_id": c, "question": q, "reference_answer": NOTES[g], "support_titles": [g]}
        for c, q, g in QUESTIONS
    ]
    (folder / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.fixture(scope="module")
def apiary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("apiary")
    code = f"from {HERE} import main; main({str(out)!r})"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=120)
    return out


def _config(apiary: Path, out: Path, **changes: Any) -> iv.Config:
    base = iv.Config(
        out=str(out), traces=(str(apiary / "traces"),), cases=str(apiary / "cases.jsonl"),
        operators=("REMOVE", "ZERO", "DUPLICATE"), concurrency=2,
    )  # fmt: skip
    return msgspec.structs.replace(base, **changes)


def _shape_run(config: iv.Config) -> iv.InterventionsResult:
    """The analysis through the driver, its reports beside the run folder."""
    reports = Path(f"{config.out}-reports")
    done = run_analysis(iv.ANALYSIS, config, out=reports, concurrency=config.concurrency)
    assert done.result is not None and done.reports == (reports / "summary.json",)
    return done.result


def _answers(result: iv.InterventionsResult) -> list[tuple[object, ...]]:
    return [
        (r.key, r.status, r.counterfactual.answer if r.counterfactual else None, r.deltas)
        for r in result.rows
    ]


def test_the_record_is_what_get_analysis_returns() -> None:
    record = get_analysis("interventions")
    assert record is iv.ANALYSIS and isinstance(record, Analysis)
    assert (record.name, record.config) == ("interventions", iv.Config)
    assert (record.plan, record.run, record.write_report) == (iv.plan, iv.run, iv.write_report)
    assert (record.reading, record.nothing_measured) == (iv.reading, iv.nothing_measured)
    assert record.verdicts is iv.verdicts


def test_load_config_reads_the_toml(tmp_path: Path) -> None:
    path = tmp_path / "apiary.toml"
    path.write_text(
        'out = "runs/apiary"\ntraces = ["notes/traces"]\ncases = "notes/cases.jsonl"\n'
        'operators = ["REMOVE", "ZERO"]\nlimit = 3\nsimilarity = "hard"\n'
        '[replay_kwargs]\nbudget = "small"\n'
    )
    assert load_config(iv.ANALYSIS, path) == iv.Config(
        out="runs/apiary", traces=("notes/traces",), cases="notes/cases.jsonl",
        operators=("REMOVE", "ZERO"), limit=3, similarity="hard",
        replay_kwargs={"budget": "small"},
    )  # fmt: skip


@pytest.mark.parametrize(
    ("text", "field", "says"),
    [
        ('out = "r"\ntraces = ["t"]\nlimit = "ten"\n', "limit", "Expected `int | null`"),
        ('out = "r"\ntraces = ["t"]\nsimilarity = "extreme"\n', "similarity", "Invalid enum"),
        ('out = "r"\ntraces = "t"\n', "traces", "Expected `array`"),
    ],
)
def test_a_bad_config_names_the_file_and_the_field(
    tmp_path: Path, text: str, field: str, says: str
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        load_config(iv.ANALYSIS, path)
    assert (caught.value.path, caught.value.field) == (str(path), field)
    assert says in str(caught.value) and str(path) in str(caught.value)


def test_an_unknown_or_missing_field_is_named(tmp_path: Path) -> None:
    unknown = tmp_path / "unknown.toml"
    unknown.write_text('out = "r"\ntraces = ["t"]\noperatorz = ["REMOVE"]\n')
    with pytest.raises(InputError, match="unknown field `operatorz`") as caught:
        load_config(iv.ANALYSIS, unknown)
    assert caught.value.path == str(unknown)
    missing = tmp_path / "missing.toml"
    missing.write_text('traces = ["t"]\n')
    with pytest.raises(InputError, match="missing required field `out`"):
        load_config(iv.ANALYSIS, missing)


def test_plan_refuses_bad_settings_naming_the_field(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        iv.plan(iv.Config(out=str(tmp_path / "r"), traces=()))
    assert caught.value.field == "traces"
    with pytest.raises(ConfigError, match="unknown operator 'SHUFFLE'"):
        iv.plan(iv.Config(out=str(tmp_path / "r"), traces=("t",), operators=("SHUFFLE",)))
    with pytest.raises(ConfigError, match="choose exactly one"):
        iv.plan(iv.Config(out="r", traces=("t",), replay="recorded", endpoint="http://x"))
    with pytest.raises(ConfigError) as low:  # the record's own check, as it is made
        iv.Config(out="r", traces=("t",), concurrency=0)
    assert low.value.field == "concurrency"
    assert not (tmp_path / "r").exists()


def test_every_operator_the_refusal_names_as_known_is_accepted() -> None:
    """The refusal listed ``REMOVE@random`` as known, and then refused it (the name was
    upper-cased before it was looked up among the labels)."""
    with pytest.raises(ConfigError) as caught:
        parse_operators(["SHUFFLE"])
    known = str(caught.value).split("(known: ")[1].rstrip(")").split(", ")
    assert "REMOVE@random" in known
    for name in known:
        assert parse_operators([name])
        assert parse_operators([name.lower()]) == parse_operators([name])
    assert parse_operators(["remove@random,JOINT_REMOVE"]) == ("REMOVE@random", "JOINT_REMOVE")


def test_the_shape_gives_what_the_deprecated_run_interventions_gives(
    apiary: Path, tmp_path: Path
) -> None:
    config = _config(apiary, tmp_path / "shape")
    items = iv.plan(config)
    assert [p.key for p in items] == [c for c, _, _ in QUESTIONS]
    assert items.input.traces_read == len(QUESTIONS)
    result = _shape_run(config)
    assert not (tmp_path / "shape" / "summary.json").exists()  # run writes no report
    main = iv.write_report(result, tmp_path / "report")
    assert main == tmp_path / "report" / "summary.json"

    settings = RunConfig(
        out_dir=tmp_path / "entry", concurrency=2,
        plan=PlanSettings(operators=parse_operators(["REMOVE,ZERO,DUPLICATE"])),
    )  # fmt: skip
    with pytest.warns(DeprecationWarning, match=r"run_interventions is deprecated .* use "
                      r"groundtrace\.analyzer\.run_analysis"):  # fmt: skip
        entry = run_interventions([apiary / "traces"], settings, cases_path=apiary / "cases.jsonl")
    assert result.summary.items == len(QUESTIONS)
    assert result.summary.calls.run_now == result.summary.calls.units_total > len(QUESTIONS)
    assert encode(result.summary) == encode(entry.summary)
    assert _answers(result) == _answers(entry)
    for name in ("summary.json", "summary.md"):
        shape_text = (tmp_path / "report" / name).read_text()
        assert shape_text == (tmp_path / "entry" / name).read_text()
    assert len((tmp_path / "report" / "results.jsonl").read_text().splitlines()) == len(result.rows)
    assert (tmp_path / "report" / "report.html").exists()
    assert iv.reading(result) == iv.reading(entry.summary)
    assert "The evidence interventions replayed 4 item(s)" in iv.reading(result)
    assert iv.nothing_measured(result) is None
    assert iv.verdicts(result, config) == role_verdicts(entry)

    again = _shape_run(config)  # the journal holds every unit: nothing runs again
    assert again.summary.calls.from_journal == again.summary.calls.units_total
    assert again.summary.calls.run_now == 0
    assert again.summary.operators == result.summary.operators


def test_the_other_deprecated_ways_in_still_work_and_warn(apiary: Path, tmp_path: Path) -> None:
    """``run_interventions_async``, ``plan_run`` and ``estimate_requests`` give what the shape
    gives, each warning with what replaces it."""
    config = _config(apiary, tmp_path / "shape", operators=("REMOVE", "ZERO"))
    settings = RunConfig(out_dir=tmp_path / "async", plan=PlanSettings(("REMOVE", "ZERO")))
    traces, cases = [apiary / "traces"], apiary / "cases.jsonl"

    with pytest.warns(DeprecationWarning, match=r"run_interventions_async is deprecated .* "
                      r"use groundtrace\.analyzer\.run_analysis_async"):  # fmt: skip
        entry = asyncio.run(run_interventions_async(traces, settings, cases_path=cases))
    assert encode(entry.summary) == encode(_shape_run(config).summary)

    with pytest.warns(DeprecationWarning, match=r"plan_run is deprecated .* use groundtrace\."
                      r"analyzer\.interventions\.plan\(Config\)"):  # fmt: skip
        planned = plan_run(traces, settings, cases_path=cases)
    assert [(p.key, p.units) for p in planned] == [(p.key, p.units) for p in iv.plan(config)]

    endpoint = msgspec.structs.replace(
        config, out=str(tmp_path / "estimate"), endpoint="http://127.0.0.1:9/v1", model="m"
    )
    with pytest.warns(DeprecationWarning, match=r"estimate_requests is deprecated .* "
                      r"estimate=True"):  # fmt: skip
        requests, done = estimate_requests(
            traces, RunConfig(out_dir=Path(endpoint.out), replay=None, endpoint=endpoint.endpoint,
                              model="m", plan=settings.plan), cases_path=cases,
        )  # fmt: skip
    assert done == 0  # the apiary app calls no model: nothing to send
    assert iv.ANALYSIS.estimate is not None
    assert (requests, done) == iv.ANALYSIS.estimate(iv.plan(endpoint), endpoint, None)


def test_a_run_config_s_settings_no_option_sets_still_reach_the_run(
    apiary: Path, tmp_path: Path
) -> None:
    """The deprecated ``RunConfig`` runs as a ``Config``, its settings that no option sets
    (the draw seeds, the statistics) kept."""
    settings = RunConfig(
        out_dir=tmp_path / "tuned", concurrency=2,
        plan=PlanSettings(("REMOVE", "ZERO"), random_target_seed=5, replacement_seed=6),
        stats=StatsSettings(n_resamples=300, seed=7, permutation_seed=8),
    )  # fmt: skip
    with pytest.warns(DeprecationWarning):
        entry = run_interventions([apiary / "traces"], settings, cases_path=apiary / "cases.jsonl")
    seeds = entry.summary.seeds
    assert (seeds.random_target_seed, seeds.replacement_seed) == (5, 6)
    assert (seeds.bootstrap_seed, seeds.permutation_seed, seeds.n_resamples) == (7, 8, 300)
    assert entry.summary.stats_settings == settings.stats  # what the statistics ran with
    assert entry.summary.replay.mode == "function"
    with pytest.raises(ConfigError, match="choose exactly one"), pytest.warns(DeprecationWarning):
        run_interventions([apiary / "traces"], RunConfig(out_dir=tmp_path / "none", replay=None))
    with pytest.raises(ConfigError) as low, pytest.warns(DeprecationWarning):
        run_interventions([apiary / "traces"], RunConfig(out_dir=tmp_path / "low", concurrency=0))
    assert low.value.field == "concurrency"  # checked where a Config's values are


def test_nothing_measured_names_why(apiary: Path, tmp_path: Path) -> None:
    config = _config(apiary, tmp_path / "down", replay=f"{HERE}:reply_down", operators=("ZERO",))
    result = _shape_run(config)
    why = iv.nothing_measured(result)
    assert why is not None and why.startswith("every replay unit failed (4 of 4")
    assert "the apiary's model is down" in why
    assert iv.reading(result).startswith("Nothing was measured: every replay unit failed")
    assert iv.write_report(result, tmp_path / "down").exists()


def test_write_reports_is_the_deprecated_name_of_write_report() -> None:
    with pytest.warns(
        DeprecationWarning,
        match=r"write_reports is deprecated since groundtrace 0.2.0 and is removed in 0.3.0: "
        r"use .*\.write_report$",
    ):
        old = iv.write_reports
    assert old is iv.write_report
    assert "write_reports" not in iv.__all__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError):
            iv.no_such_name


def test_analyze_interventions_runs_the_config_and_prints_its_result(
    apiary: Path, tmp_path: Path
) -> None:
    """``groundtrace analyze interventions --json``: the run from a TOML file, its summary in
    the JSON (the run folder's path as text) and on disk."""
    import json

    from typer.testing import CliRunner

    from groundtrace.analyzer.cli import build_app

    path = tmp_path / "iv.toml"
    path.write_text(
        f'out = "{tmp_path / "run"}"\ntraces = ["{apiary / "traces"}"]\n'
        f'cases = "{apiary / "cases.jsonl"}"\noperators = ["REMOVE"]\n',
        encoding="utf-8",
    )
    done = CliRunner().invoke(
        build_app(),
        ["analyze", "interventions", "--config", str(path), "--out", str(tmp_path / "o"), "--json"],
    )
    assert done.exit_code == 0, done.output
    printed = json.loads(done.stdout)
    assert printed["out_dir"] == str(tmp_path / "run")
    written = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert printed["summary"] == written and written["items"] == len(QUESTIONS)
