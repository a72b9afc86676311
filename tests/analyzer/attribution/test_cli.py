"""``groundtrace attribution`` and ``groundtrace analyze attribution --config`` are one run.

The friendly command's options make the same ``attribution.Config`` a config file gives, and
both go through the one driver: on the same traces they write identical reports and exit with
the same code -- attributed (0), nothing measured (6, the reason named), bad input (2, the
field named, no report). Scored by the endpoint tier against the loopback toy server of
``test_endpoint_scorer``.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
import typer
from typer.testing import CliRunner, Result

from groundtrace.analyzer.cli import build_app
from tests.analyzer.attribution.test_analysis import _trace

pytestmark = pytest.mark.timeout(120)

REPORTS = ("attribution.json", "attribution.md", "attribution.html")
app = build_app()


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    """Traces with answers, and traces of which none can be attributed."""
    good = [_trace("t1", "twelve metres", ("p1", "p2", "p3")), _trace("t2", "south quay barge",
            ("p3", "p1")), _trace("t3", None, ("p1",))]  # fmt: skip
    (tmp_path / "traces.jsonl").write_text("".join(t.to_json() + "\n" for t in good))
    (tmp_path / "none.jsonl").write_text(_trace("t9", None, ("p1",)).to_json() + "\n")
    return tmp_path


def _friendly(inputs: Path, traces: str, out: Path, *extra: str) -> Result:
    return CliRunner().invoke(app, ["attribution", str(inputs / traces), "--out", str(out), *extra])


def _analyze(inputs: Path, traces: str, out: Path, *extra: str, **fields: object) -> Result:
    config = inputs / f"{traces}.{out.name}.json"
    config.write_text(json.dumps({"traces": [str(inputs / traces)], **fields}))
    return CliRunner().invoke(
        app, ["analyze", "attribution", "--config", str(config), "--out", str(out), *extra]
    )


def _same_reports(a: Path, b: Path) -> None:
    for name in REPORTS:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


@pytest.mark.parametrize(("traces", "code"), [("traces.jsonl", 0), ("none.jsonl", 6)])
def test_both_commands_write_the_same_reports_and_exit_alike(
    inputs: Path, url: str, traces: str, code: int
) -> None:
    friendly = _friendly(inputs, traces, inputs / "f", "--endpoint", url, "--method", "shapley")
    analyzed = _analyze(inputs, traces, inputs / "a", endpoint=url, method="shapley")
    assert (friendly.exit_code, analyzed.exit_code) == (code, code), friendly.output
    _same_reports(inputs / "f", inputs / "a")
    if code == 6:
        for res in (friendly, analyzed):
            said = "nothing measured: no trace could be attributed (t9: [answer]: trace t9 has no"
            assert said in res.stderr
    else:
        rows = json.loads((inputs / "f" / "attribution.json").read_text())["rows"]
        assert [(r["trace_id"], r["method"], r["passes"]) for r in rows] == [
            ("t1", "shapley", 8), ("t2", "shapley", 4)
        ]  # fmt: skip


def test_both_commands_refuse_bad_input_naming_the_field(inputs: Path, url: str) -> None:
    both = ("--model-path", str(inputs / "traces.jsonl"), "--endpoint", url)
    friendly = _friendly(inputs, "traces.jsonl", inputs / "f", *both)
    analyzed = _analyze(inputs, "traces.jsonl", inputs / "a", model_path="x", endpoint=url)
    assert (friendly.exit_code, analyzed.exit_code) == (2, 2)
    assert "at most one of model_path and endpoint" in friendly.stderr
    assert "[--endpoint]" in friendly.stderr
    assert "at most one of model_path and endpoint" in analyzed.stderr
    missing = inputs / "no-such.gguf"
    friendly = _friendly(inputs, "traces.jsonl", inputs / "f", "--model-path", str(missing))
    analyzed = _analyze(inputs, "traces.jsonl", inputs / "a", model_path=str(missing))
    assert (friendly.exit_code, analyzed.exit_code) == (2, 2)
    for res in (friendly, analyzed):
        assert f"{missing}" in res.stderr and "no such model file" in res.stderr
    friendly = _friendly(inputs, "traces.jsonl", inputs / "f", "--endpoint", url,
                         "--max-passes", "0")  # fmt: skip
    assert friendly.exit_code == 2 and "[--max-passes]" in friendly.stderr
    analyzed = _analyze(inputs, "traces.jsonl", inputs / "a", endpoint=url, method="nope")
    assert analyzed.exit_code == 2 and "method" in analyzed.stderr
    # a misspelt field is refused, naming the file and the field (it ran leave-one-out)
    analyzed = _analyze(inputs, "traces.jsonl", inputs / "a", endpoint=url, methd="shapley")
    assert analyzed.exit_code == 2, analyzed.output
    said = " ".join(analyzed.stderr.split())
    assert "traces.jsonl.a.json" in said and "methd" in said
    assert not any((inputs / d / n).exists() for d in ("f", "a") for n in REPORTS)


def test_the_help_names_the_default_embedded_model() -> None:
    from groundtrace.analyzer.backends import DEFAULT_MODEL

    group = typer.main.get_command(app)
    command = group.get_command(click.Context(group), "attribution")  # type: ignore[attr-defined]
    (option,) = [p for p in command.params if p.name == "model_path"]
    assert f"the default embedded model ({DEFAULT_MODEL}," in option.help


def test_json_prints_the_result_record(inputs: Path, url: str) -> None:
    res = _friendly(inputs, "traces.jsonl", inputs / "j", "--endpoint", url, "--json")
    assert res.exit_code == 0, res.output
    printed = json.loads(res.stdout)
    assert printed == json.loads((inputs / "j" / "attribution.json").read_text())
    assert [r["trace_id"] for r in printed["rows"]] == ["t1", "t2"]
