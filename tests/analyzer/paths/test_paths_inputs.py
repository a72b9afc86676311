"""Case files, tools configs, quotes and metric statistics of command-path validation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer.cases import read_cases
from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.errors import ConfigError, InputError
from groundtrace.analyzer.paths import CaseVerdict, PathStatus, load_tools_config
from groundtrace.analyzer.paths._metrics import compute_metrics
from groundtrace.analyzer.paths._quotes import best_quote_match
from groundtrace.analyzer.stats import StatsSettings

app = build_app()


def write(path: Path, *rows: object) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"question": "q"}, "id"),
        ({"id": "a", "require_path": "yes"}, "require_path"),
        ({"id": "a", "required_reads": "docs/a.md"}, "required_reads"),
        ({"id": "a", "required_calls": [{"arguments": {}}]}, "required_calls[0].name"),
        ({"id": "a", "required_calls": [{"name": "f", "arguments": {"x": 1}}]},
         "required_calls[0].arguments.x"),
        ({"id": "a", "requried_reads": []}, "requried_reads"),
    ],
)  # fmt: skip
def test_bad_case_file_names_file_line_field(tmp_path: Path, row: object, field: str) -> None:
    path = write(tmp_path / "cases.jsonl", {"id": "ok"}, row)
    with pytest.raises(InputError) as info:
        list(read_cases(path))
    assert info.value.path == str(path)
    assert info.value.line == 2
    assert info.value.field == field
    assert f"{path}:2 [{field}]" in str(info.value)


def test_duplicate_ids_and_bad_json(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="duplicate case id 'a'"):
        list(read_cases(write(tmp_path / "d.jsonl", {"id": "a"}, {"id": "a"})))
    with pytest.raises(InputError, match="invalid JSON") as info:
        list(read_cases(write(tmp_path / "j.jsonl", {"id": "a"}, "{nope")))
    assert info.value.line == 2


def test_case_defaults_and_path_normalisation(tmp_path: Path) -> None:
    path = write(tmp_path / "c.jsonl", "# comment", {"id": 7, "required_reads": ["./docs//a.md"]})
    (case,) = read_cases(path)
    assert case.case_id == "7" and case.require_path is True
    assert case.required_reads == ("docs/a.md",)


def test_tools_config_toml_json_and_errors(tmp_path: Path) -> None:
    toml = tmp_path / "t.toml"
    toml.write_text('[tools.read_document]\nreads = ["path"]\n')
    config = load_tools_config(toml)
    assert config.resources("read_document", {"path": "./a/b.md"}) == ["a/b.md"]
    assert config.resources("read_document", {"path": ["x/1.md", "x/2.md"]}) == ["x/1.md", "x/2.md"]
    assert not config.declares("search")
    js = tmp_path / "t.json"
    js.write_text(json.dumps({"tools": {"cat": {"reads": ["file"]}}}))
    assert load_tools_config(js).reads == {"cat": ("file",)}
    bad = tmp_path / "bad.toml"
    bad.write_text('[tools.read_document]\nreads = "path"\n')
    with pytest.raises(ConfigError) as info:
        load_tools_config(bad)
    assert info.value.field == "tools.read_document.reads"
    with pytest.raises(ConfigError):
        load_tools_config(tmp_path / "missing.toml")


def test_quote_threshold_is_the_boundary() -> None:
    content = "The warranty lasts 24 months from the date of delivery."
    exact = best_quote_match("warranty LASTS 24 months", [("w.md", content)])
    assert exact is not None and exact.ratio == 1.0
    near = best_quote_match("the warranty last 24 months", [("w.md", content)])
    assert near is not None and 0.9 <= near.ratio < 1.0
    far = best_quote_match("the guarantee runs for two years", [("w.md", content)])
    assert far is not None and far.ratio < 0.9
    assert best_quote_match("anything", []) is None


def _verdict(case_id: str, ok: bool, correct: bool | None) -> CaseVerdict:
    return CaseVerdict(
        case_id=case_id,
        trace_id=None,
        status=PathStatus.PASS if ok else PathStatus.MISSING_COMMAND,
        text_correct=correct,
        cited=("a", "b"),
        cited_read=("a",) if ok else (),
    )


def test_metrics_are_seeded_and_missing_is_not_zero() -> None:
    verdicts = [_verdict(str(i), i % 3 != 0, i % 2 == 0) for i in range(30)]
    a = compute_metrics(verdicts, StatsSettings(n_resamples=400, seed=1))
    b = compute_metrics(verdicts, StatsSettings(n_resamples=400, seed=1))
    c = compute_metrics(verdicts, StatsSettings(n_resamples=400, seed=2))
    assert a.path_pass_rate == b.path_pass_rate
    assert (a.path_pass_rate.ci_low, a.path_pass_rate.ci_high) != (
        c.path_pass_rate.ci_low,
        c.path_pass_rate.ci_high,
    )
    assert a.citation_precision.value == pytest.approx(20 / 60)
    # nothing to measure: None with a note, never 0
    assert a.citation_recall.value is None and a.citation_recall.note
    no_text = compute_metrics([_verdict("x", True, None)], StatsSettings(n_resamples=50))
    assert no_text.conditional_text_score.value is None
    assert no_text.masked_failures == ()


def test_cli_bad_case_file_exits_2_without_traceback(tmp_path: Path) -> None:
    cases = write(tmp_path / "c.jsonl", {"id": "a", "ordered": 1})
    traces = tmp_path / "t.jsonl"
    traces.write_text("")
    result = CliRunner().invoke(
        app, ["paths", str(traces), "--cases", str(cases), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    # the message names file and line (the shared error printer renders the "[field]" part
    # as rich markup, so the field name itself is not asserted here)
    assert "c.jsonl:1" in result.output and "Expected `bool`, got `int`" in result.output
    assert "Traceback" not in result.output
