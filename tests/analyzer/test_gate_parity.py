"""The gate has one way in: ``groundtrace gate run`` and ``groundtrace analyze gate --config``
build the same config and go through the one driver, so on the same inputs they write the same
report files (byte for byte) and exit alike: promote 0, block 20, not evaluable 30; a blocking
curation finding and ``--strict`` refuse alike (exit 2, the same message, no report written);
a call ceiling is accepted alike (the gate calls no model: it is never reached) and
``--estimate`` refused alike. From inside a running event loop the gate runs through
``run_analysis_async``, every layer (checks, guardrails, judge, command paths) included.

The inputs are the ferry desk's RAG runs (``test_gate_shape``) and the loan desk's agent
runs (``test_gate_paths``).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result as CliResult
from typer.testing import CliRunner

from groundtrace.analyzer import gate, run_analysis, run_analysis_async
from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.errors import ConfigError
from tests.analyzer.gate.test_gate_paths import desk
from tests.analyzer.gate.test_gate_shape import ferry

__all__ = ["desk", "ferry"]  # the module fixtures, imported to be shared

pytestmark = pytest.mark.timeout(300)

app = build_app()

#: option -> config field of the settings both commands take here.
_FIELDS = {"--baseline": "baseline", "--candidate": "candidate", "--cases": "cases",
           "--profile": "profile", "--judge": "judge", "--tools-config": "tools_config",
           "--junit": "junit"}  # fmt: skip


def _both(tmp_path: Path, name: str, options: dict[str, Any], *more: str,
          strict: bool = False) -> tuple[CliResult, CliResult, Path, Path]:  # fmt: skip
    """``gate run`` and ``analyze gate --config`` on the same settings, into ``a/`` and ``b/``
    (a ``--junit`` file is written into each run's own folder)."""
    a, b = tmp_path / f"{name}-a", tmp_path / f"{name}-b"
    args: list[str] = []
    config: dict[str, Any] = {"strict": strict}
    for option, value in options.items():
        field = _FIELDS[option]
        for one in value if isinstance(value, list) else [value]:
            args += [option, str(a / one) if option == "--junit" else str(one)]
        given = str(b / value) if option == "--junit" else value
        config[field] = [str(v) for v in given] if isinstance(given, list) else str(given)
    friendly = CliRunner().invoke(
        app, ["gate", "run", *args, "--out", str(a), *(["--strict"] if strict else []), *more]
    )
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    analyzed = CliRunner().invoke(
        app, ["analyze", "gate", "--config", str(path), "--out", str(b), *more]
    )
    return friendly, analyzed, a, b


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}  # fmt: skip


def _runs(root: Path, candidate: str) -> dict[str, Any]:
    return {"--baseline": [root / "v1"], "--candidate": [root / candidate],
            "--cases": root / "cases.jsonl"}  # fmt: skip


@pytest.mark.parametrize(
    ("candidate", "extra", "code"),
    [("v1", {}, 0), ("v2", {"--junit": "junit.xml", "--judge": "lexical"}, 20), ("empty", {}, 30)],
    ids=["promote", "block", "not evaluable"],
)
def test_gate_run_and_analyze_gate_write_the_same_reports_and_exit_alike(
    ferry: Path, tmp_path: Path, candidate: str, extra: dict[str, Any], code: int
) -> None:
    friendly, analyzed, a, b = _both(tmp_path, candidate, {**_runs(ferry, candidate), **extra})
    assert (friendly.exit_code, analyzed.exit_code) == (code, code), (
        friendly.output + analyzed.output
    )
    written = _files(a)
    assert {"report.json", "summary.md", "report.html"} <= set(written)
    assert written == _files(b)
    assert ("junit.xml" in written) == ("--junit" in extra)
    report = json.loads(written["report.json"])
    assert report["exit_code"] == code
    assert f"report: {a / 'report.json'}  (exit code {code})" in friendly.stdout


def test_the_path_layer_blocks_alike(desk: Path, tmp_path: Path) -> None:
    options = {**_runs(desk, "v2"), "--tools-config": desk / "tools.toml"}
    friendly, analyzed, a, b = _both(tmp_path, "desk", options)
    assert (friendly.exit_code, analyzed.exit_code) == (20, 20), friendly.output + analyzed.output
    assert _files(a) == _files(b)
    assert "paths.command_path" in (a / "summary.md").read_text(encoding="utf-8")


def test_a_blocking_curation_finding_is_refused_alike_naming_it(
    ferry: Path, tmp_path: Path
) -> None:
    leaky = tmp_path / "leaky.jsonl"
    leaky.write_text(json.dumps({"case_id": "x", "question": "mail skipper@example.com"}) + "\n")
    options = {**_runs(ferry, "v2"), "--cases": leaky}
    friendly, analyzed, a, b = _both(tmp_path, "leaky", options)
    assert (friendly.exit_code, analyzed.exit_code) == (2, 2)
    for result in (friendly, analyzed):
        assert "1 blocking curation finding(s)" in result.output
        assert "unredacted email" in result.output  # the finding itself, named by both
    assert not (a / "report.json").exists() and not (b / "report.json").exists()


def test_strict_refuses_an_unreadable_line_alike_before_any_report(
    ferry: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json\n")
    options = {**_runs(ferry, "v2"), "--candidate": [ferry / "v2", broken]}
    friendly, analyzed, a, b = _both(tmp_path, "strict", options, strict=True)
    assert (friendly.exit_code, analyzed.exit_code) == (2, 2)
    said = f"1 unreadable trace line(s) (--strict); first: {broken}:1"
    assert said in friendly.output and said in analyzed.output
    assert not _files(a).keys() & {"report.json", "summary.md"}
    assert not _files(b).keys() & {"report.json", "summary.md"}
    # without --strict the line is skipped and noted, alike
    friendly, analyzed, a, b = _both(tmp_path, "lenient", options)
    assert (friendly.exit_code, analyzed.exit_code) == (20, 20)
    assert _files(a) == _files(b)
    assert "1 unreadable trace line(s) skipped" in friendly.output


def test_a_call_ceiling_is_accepted_alike_and_an_estimate_refused_alike(
    ferry: Path, tmp_path: Path
) -> None:
    options = {**_runs(ferry, "v2"), "--judge": "lexical"}
    # the gate's judge is the offline lexical judge: no model call, so no ceiling is reached
    friendly, analyzed, a, b = _both(tmp_path, "ceiling", options, "--max-calls", "1")
    assert (friendly.exit_code, analyzed.exit_code) == (20, 20), friendly.output + analyzed.output
    assert _files(a) == _files(b)
    friendly, analyzed, a, b = _both(tmp_path, "estimate", options, "--estimate")
    assert (friendly.exit_code, analyzed.exit_code) == (2, 2)
    assert "gate gives no estimate" in friendly.output
    assert "gate gives no estimate" in analyzed.output
    assert not a.exists() and not b.exists()


def test_the_gate_runs_inside_a_running_event_loop(desk: Path, tmp_path: Path) -> None:
    config = gate.Config(baseline=(str(desk / "v1"),), candidate=(str(desk / "v2"),),
                         cases=str(desk / "cases.jsonl"), judge="lexical",
                         tools_config=str(desk / "tools.toml"))  # fmt: skip

    async def notebook() -> Any:
        with pytest.raises(ConfigError, match="inside a running event loop"):
            run_analysis(gate.ANALYSIS, config, out=tmp_path / "refused")
        return await run_analysis_async(gate.ANALYSIS, config, out=tmp_path / "inside")

    done = asyncio.run(notebook())
    # the judge's review-only adherence failures route the path regression to manual review
    assert done.exit_code == 10 and done.reports == (tmp_path / "inside" / "report.json",)
    layers = {r.layer for c in done.result.report.cases for r in c.results}
    assert layers == {"deterministic", "guardrail", "judge", "paths"}
    outside = run_analysis(gate.ANALYSIS, config, out=tmp_path / "outside")
    assert _files(tmp_path / "inside") == _files(tmp_path / "outside")
    assert outside.exit_code == 10
