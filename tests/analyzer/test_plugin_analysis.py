"""A sixth analysis written against the public shape only, added without touching groundtrace.

The toy analysis ``cited`` (does each answer cite at least one evidence item it was given?)
lives in a module this test writes into a temporary folder, next to a ``.dist-info`` that
names it in the ``groundtrace.analyses`` entry-point group, exactly as an installed plugin
distribution would. It imports public names only. Put on ``PYTHONPATH``, it is then run by
``groundtrace analyze`` (its config read from TOML), its verdicts written back over real
OTLP to the project's receiver running as its own process, listed by ``--list``, and run by
``groundtrace demo`` through the demo's hook, all without a line of groundtrace changed:
the files it touches are this one. Its ``run`` is ``async`` and gets the run context; it
names a journal and a unit key, so the driver gives it resume, ``--max-calls``,
``--estimate`` and progress as it gives them to the built-ins (its optional model call, to a
real server on loopback, is what the budget counts).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from groundtrace.analyzer.writeback import root_spans
from groundtrace.collectors import ReadReport, read_traces
from tests.collectors.receiver.test_receiver_process import ServeProcess
from tests.support.harbour_rag import CASES, write_run
from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest

pytestmark = pytest.mark.timeout(600)

CLI = [sys.executable, "-c", "from groundtrace.analyzer.cli import main; main()"]

TOY = textwrap.dedent(
    '''
    """cited: does each answer cite at least one evidence item it was given?"""

    from __future__ import annotations

    from collections.abc import Sequence
    from pathlib import Path

    import msgspec

    from groundtrace.analyzer import Analysis, DemoInputs, Result, RunContext, write
    from groundtrace.analyzer.llm import ChatRequest, ModelClient
    from groundtrace.analyzer.writeback import Linked, Verdict, root_spans
    from groundtrace.collectors import ReadReport, Trace, read_traces


    class Config(msgspec.Struct, frozen=True, kw_only=True):
        traces: tuple[str, ...]
        min_citations: int = 1
        model_url: str | None = None  # also ask a model about each answer


    class Row(msgspec.Struct, frozen=True):
        trace_id: str
        case_id: str | None
        citations: int
        cited: bool


    class Cited(Result, frozen=True, kw_only=True):
        rows: tuple[Row, ...] = ()
        cited: int = 0


    def plan(config: Config) -> Sequence[Trace]:
        return [t for t in read_traces(list(config.traces), report=ReadReport()) if t.answer]


    async def run(units: Sequence[Trace], config: Config, context: RunContext) -> Cited:
        client = None if config.model_url is None else ModelClient(config.model_url)

        async def check(trace: Trace) -> Row:
            shown = {e.id for e in trace.evidence}
            n = sum(1 for i in trace.cited_ids if i in shown)
            if client is not None:
                ask = f"Does this answer cite its evidence? {trace.answer}"
                await client.complete(ChatRequest(model="toy", messages=(
                    {"role": "user", "content": ask},), max_tokens=2))
            return Row(trace.trace_id, trace.request.case_id, n, n >= config.min_citations)

        try:
            rows = await context.map(check, units, keys=[t.trace_id for t in units], kind=Row,
                                     phase="cited")
        finally:
            if client is not None:
                await client.aclose()
        return Cited(rows=tuple(rows), cited=sum(r.cited for r in rows))


    def write_report(result: Cited, out: Path) -> Path:
        write(out / "cited.json", result)
        return out / "cited.json"


    def reading(result: Cited) -> str:
        return f"{result.cited} of {len(result.rows)} answer(s) cite the evidence they were given."


    def nothing_measured(result: Cited) -> str | None:
        return None if result.rows else "no trace has an answer"


    def verdicts(result: Cited, config: Config) -> Linked:
        roots = root_spans(read_traces(list(config.traces), report=ReadReport()))
        return Linked.collect(
            Verdict(r.trace_id, roots[r.trace_id], "groundtrace.toy.cited", case_id=r.case_id,
                    label="cited" if r.cited else "uncited", score=float(r.citations))
            for r in result.rows
        )


    def demo(inputs: DemoInputs) -> Config:
        return Config(traces=(str(inputs.traces),))


    ANALYSIS = Analysis(
        name="cited", title="Does each answer cite the evidence it was given?", config=Config,
        plan=plan, run=run, write_report=write_report, reading=reading,
        nothing_measured=nothing_measured, verdicts=verdicts, demo=demo,
        journal="cited.sqlite", unit_key=lambda trace: trace.trace_id,
    )
    '''
)


@pytest.fixture
def plugin(tmp_path: Path) -> dict[str, str]:
    """The toy analysis installed as a plugin distribution: the environment that sees it."""
    site = tmp_path / "site"
    info = site / "toy_cited-0.1.dist-info"
    info.mkdir(parents=True)
    (site / "toy_cited.py").write_text(TOY, encoding="utf-8")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-cited\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[groundtrace.analyses]\ncited = toy_cited:ANALYSIS\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GROUNDTRACE_", "OTEL_"))}
    root = Path(__file__).resolve().parents[2]
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(root)])
    return env


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, timeout=300, check=False, env=env
    )


def test_the_plugin_is_listed_next_to_the_built_in_analyses(plugin: dict[str, str]) -> None:
    listed = cli(plugin, "analyze", "--list")
    assert listed.returncode == 0, listed.stderr
    names = [line.split()[0] for line in listed.stdout.splitlines()]
    assert names == ["attribution", "audit", "cited", "gate", "interventions", "judge", "paths"]
    assert "Does each answer cite" in listed.stdout


def test_analyze_runs_the_plugin_and_writes_its_verdicts_back(
    plugin: dict[str, str], tmp_path: Path
) -> None:
    run = write_run(tmp_path / "harbour")
    config = tmp_path / "cited.toml"
    config.write_text(f'traces = ["{run / "traces"}"]\n', encoding="utf-8")
    store = tmp_path / "store"
    receiver = ServeProcess(store)
    try:
        done = cli(
            plugin, "analyze", "cited", "--config", str(config), "--out", str(tmp_path / "out"),
            "--write-back", "otlp", "--otlp-endpoint", receiver.endpoint.removesuffix("/v1/traces"),
        )  # fmt: skip
    finally:
        receiver.stop(signal.SIGTERM)
        receiver.kill_if_running()
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "out" / "cited.json").read_text())
    assert len(result["rows"]) == len(CASES)
    cited = result["cited"]
    assert f"{cited} of {len(CASES)} answer(s) cite" in done.stdout
    assert "write-back: " in done.stderr
    # the verdicts reached the receiver as gen_ai.evaluation.result records on the root spans
    report = ReadReport()
    joined = read_traces([str(run / "traces"), str(store)], report=report)
    back = [e for t in joined for e in t.evaluations]
    assert sorted((e.name, e.score_label) for e in back) == sorted(
        ("groundtrace.toy.cited", "cited" if r["cited"] else "uncited") for r in result["rows"]
    )
    roots = root_spans(read_traces([str(run / "traces")]))
    assert {e.span_id for e in back} <= set(roots.values())


def _yes(request: ServerRequest) -> Reply:
    return Reply(content="yes", prompt_tokens=20, completion_tokens=1)


def test_the_driver_gives_the_plugin_resume_budget_estimate_and_progress(
    plugin: dict[str, str], tmp_path: Path
) -> None:
    """Nothing in the toy resumes, counts calls or reports progress: the driver does."""
    run = write_run(tmp_path / "harbour")
    out = tmp_path / "out"
    with OpenAICompatServer(handler=_yes) as server:
        config = tmp_path / "cited.toml"
        config.write_text(
            f'traces = ["{run / "traces"}"]\nmodel_url = "{server.base_url}"\n', encoding="utf-8"
        )
        args = ["analyze", "cited", "--config", str(config), "--out", str(out)]
        estimate = cli(plugin, *args, "--estimate")
        assert estimate.returncode == 0, estimate.stderr
        assert "units already done" not in estimate.stdout and not out.exists()
        stopped = cli(plugin, *args, "--max-calls", "2", "--concurrency", "1")
        assert stopped.returncode == 5, stopped.stderr  # the ceiling stops the plugin too
        assert "--max-calls 2 reached" in stopped.stderr
        assert server.request_count == 2
        estimate = cli(plugin, *args, "--estimate", "--json")
        assert json.loads(estimate.stdout)["units_done"] == 2  # the journal holds two
        done = cli(plugin, *args, "--concurrency", "1")
        assert done.returncode == 0, done.stderr
        assert server.request_count == len(CASES)  # resumed: the two done are not asked again
    assert f"cited: {len(CASES)}/{len(CASES)}" in done.stderr  # progress, by the driver
    assert len(json.loads((out / "cited.json").read_text())["rows"]) == len(CASES)


def test_nothing_measured_exits_6_with_the_plugins_reason(
    plugin: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "empty").mkdir()
    config = tmp_path / "cited.toml"
    config.write_text(f'traces = ["{tmp_path / "empty"}"]\n', encoding="utf-8")
    done = cli(plugin, "analyze", "cited", "--config", str(config), "--out", str(tmp_path / "o"))
    assert done.returncode == 6, done.stderr
    assert "nothing measured: no trace has an answer" in done.stderr
    assert (tmp_path / "o" / "cited.json").is_file()  # the report is written all the same


def test_a_bad_config_names_the_file_and_the_field(plugin: dict[str, str], tmp_path: Path) -> None:
    config = tmp_path / "cited.toml"
    config.write_text('traces = ["x"]\nmin_citations = "two"\n', encoding="utf-8")
    done = cli(plugin, "analyze", "cited", "--config", str(config), "--out", str(tmp_path / "o"))
    assert done.returncode == 2
    assert str(config) in done.stderr and "min_citations" in done.stderr
    assert not (tmp_path / "o").exists()  # refused before anything ran
    unknown = cli(plugin, "analyze", "nosuch", "--config", str(config), "--out", "o")
    assert unknown.returncode == 2 and "no analysis 'nosuch'" in unknown.stderr


def test_the_demo_runs_the_plugin_through_its_hook(plugin: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "demo"
    done = cli(
        plugin, "demo", "--model", "lexical", "--questions", "3", "--interventions", "0",
        "--gate-top-k", "0", "--no-paths", "--audit-sources", "0", "--out", str(out), "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    extra = summary["analyses"]["cited"]
    result = json.loads((out / "cited" / "cited.json").read_text())
    assert len(result["rows"]) == 3
    assert (
        extra["reading"] == f"{result['cited']} of 3 answer(s) cite the evidence they were given."
    )
    assert extra["nothing_measured"] is None
