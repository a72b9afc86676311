"""The monitor on stored and followed traces: rules, sampling, completion, exactly once, windows.

The traces come from ``tests.support.bike_shop``, a bicycle workshop's agent written from the
docs (its tool reads one manual; its case file declares the manual each request must read and
the value it must state), run in a subprocess as any user's app would run. Request ``i``
is broken when ``i % 4 == 0`` (it reads the wrong manual), so its command path fails. The rules
run two built-in analyses through the one driver: ``paths`` on the case file and the lexical
``judge`` (adherence only).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from groundtrace.analyzer.errors import ConfigError
from groundtrace.analyzer.executor import UnitJournal
from groundtrace.analyzer.monitor import Monitor, Outcome, load_rules
from groundtrace.analyzer.monitor._assemble import Assembler, FolderTail
from groundtrace.analyzer.monitor._rules import MonitorSettings, sampled
from groundtrace.analyzer.monitor._windows import RuleWindow
from tests.support.bike_shop import case_id, write_cases

pytestmark = pytest.mark.timeout(600)

COUNT = 48
BROKEN_EVERY = 4


def _app(out: Path, *args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "tests.support.bike_shop", "--out", str(out), *args],
        check=True, timeout=300, cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip


def _rules(folder: Path, *, sample: float = 0.5, extra: str = "") -> Path:
    path = folder / "rules.toml"
    path.write_text(
        f"""
[monitor]
complete_after = 0.2
batch_size = 8
window = 10
baseline = 20
{extra}

[[rule]]
name = "path"
analysis = "paths"
sample = {sample}
[rule.config]
cases = "{folder / "cases.jsonl"}"

[[rule]]
name = "grounded"
analysis = "judge"
sample = {sample}
checks = ["adherence"]
[rule.config]
judge = "lexical"
""",
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the shop's case file and the traces of requests 0..COUNT-1."""
    folder = tmp_path_factory.mktemp("shop")
    write_cases(folder / "cases.jsonl", 400)
    _app(folder / "traces" / "run.jsonl", "--count", str(COUNT), "--broken-every", "4")
    return folder


def _outcomes(state: Path) -> dict[tuple[str, str], Outcome]:
    journal = UnitJournal(state / "journal.sqlite", lock=False)
    try:
        return {(o.rule, o.case_id or ""): o for o in journal.completed(Outcome)}
    finally:
        journal.close()


def _backfill(rules: Path, state: Path, paths: list[Path]) -> dict[str, object]:
    async def main() -> dict[str, object]:
        with Monitor(load_rules(rules), state) as monitor:
            return await monitor.backfill(paths)

    return asyncio.run(main())


# -- rules ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('[[rule]]\nname = "a"\nanalysis = "judge"\nsample = 1.5\n', "rule[0].sample"),
        ('[[rule]]\nname = "a"\nanalysis = "judge"\nsampel = 0.5\n', "rule[0].sampel"),
        ('[[rule]]\nname = "a"\nanalysis = "nope"\n', "rule[0].analysis"),
        ('[[rule]]\nname = "a"\nanalysis = "gate"\n', "rule[0].analysis"),  # reads no `traces`
        ('[[rule]]\nname = "a"\nanalysis = "judge"\n[rule.config]\njudge = 3\n',
         "rule[0].config.judge"),
        ('[[rule]]\nname = "a"\nanalysis = "judge"\n[rule.config]\ntraces = ["x"]\n',
         "rule[0].config.traces"),
        ('[[rule]]\nname = "a"\n', "rule[0].analysis"),  # a missing field is named
        ('[[rule]]\nname = "a"\nanalysis = "judge"\n[rule.config]\nnope = 1\n',
         "rule[0].config.nope"),  # so is an unknown field of the analysis's config
        ('[[rule]]\nname = "a"\nanalysis = "judge"\n[[rule]]\nname = "a"\nanalysis = "judge"\n',
         "rule[1].name"),
        ('[monitor]\nwindow = 0\n[[rule]]\nname = "a"\nanalysis = "judge"\n', "monitor.window"),
        ("[monitor]\n", "rule"),
    ],
)  # fmt: skip
def test_a_bad_rules_file_is_refused_naming_file_and_field(
    tmp_path: Path, text: str, field: str
) -> None:
    path = tmp_path / "rules.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_rules(path)
    assert raised.value.path == str(path)
    assert raised.value.field == field


def test_sampling_is_a_hash_of_the_trace_id_and_nests() -> None:
    ids = [f"{i:032x}" for i in range(20_000)]
    tenth = [t for t in ids if sampled(t, 0.1)]
    half = {t for t in ids if sampled(t, 0.5)}
    assert 1800 < len(tenth) < 2200  # 10 % +- 10 % of it
    assert set(tenth) <= half  # a larger rate keeps every trace a smaller one took
    assert tenth == [t for t in ids if sampled(t.upper(), 0.1)]  # the same everywhere
    assert not any(sampled(t, 0.0) for t in ids) and all(sampled(t, 1.0) for t in ids)


# -- completion ----------------------------------------------------------------------------------


def _line(trace: str, span: str, parent: str | None, service: str = "s") -> bytes:
    item = {"traceId": trace, "spanId": span, "name": span}
    if parent is not None:
        item["parentSpanId"] = parent
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]}
    return orjson.dumps(
        {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": [item]}]}]}
    )


def test_a_trace_is_complete_after_its_root_and_a_quiet_period() -> None:
    now = [0.0]
    assembler = Assembler(lambda _: True, complete_after=5, give_up_after=60, clock=lambda: now[0])
    assembler.add_line("f", _line("a" * 32, "c1", "r1"))
    assembler.add_line("f", _line("b" * 32, "c2", "r2"))  # its root never comes
    now[0] = 10.0
    assert assembler.ripe() == ([], [])  # a child alone is not complete
    assembler.add_line("f", _line("a" * 32, "r1", None))
    now[0] = 14.0
    assert assembler.ripe() == ([], [])  # 4 s of quiet after the root: not yet
    now[0] = 15.0
    done, lost = assembler.ripe()
    assert [t.trace_id for t in done] == ["a" * 32] and len(done[0].export_lines()) == 1
    assert not lost
    now[0] = 61.0
    done, lost = assembler.ripe()
    assert not done and [t.trace_id for t in lost] == ["b" * 32]  # given up: incomplete
    assembler.add_line("f", b"{not json")
    assert assembler.bad_lines == {"f": 1}


def test_the_tail_reads_whole_lines_only_and_each_once(tmp_path: Path) -> None:
    path = tmp_path / "traces-1.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b"')
    tail = FolderTail(tmp_path)
    assert [line for _, line in tail.read()] == [b'{"a": 1}']
    with path.open("ab") as f:
        f.write(b": 2}\n")
    assert [line for _, line in tail.read()] == [b'{"b": 2}']
    assert list(tail.read()) == []


# -- windows -------------------------------------------------------------------------------------


def _feed(window: RuleWindow, outcomes: list[tuple[str, bool]]) -> list[tuple[int, str, str]]:
    changes = []
    for i, (version, failed) in enumerate(outcomes):
        change = window.add(f"t{i}", version, failed)
        if change is not None:
            changes.append((change.position, change.state, next(iter(change.versions))))
    return changes


def test_a_regression_opens_one_incident_naming_its_version_and_recovers() -> None:
    settings = MonitorSettings(window=20, baseline=40)
    steady = [("v1", i % 10 == 0) for i in range(100)]  # 10 % failures, evenly spread
    regression = [("v2", i % 2 == 0) for i in range(40)]  # 50 %
    rollback = [("v1", i % 10 == 0) for i in range(100)]
    changes = _feed(RuleWindow("r", settings), steady + regression + rollback)
    assert [c[1] for c in changes] == ["incident", "recovered"]
    opened, _, version = changes[0]
    assert version == "v2" and 100 < opened <= 100 + 20  # stated: within 20 v2 outcomes
    assert changes[1][0] > 140  # recovers only after the rollback
    # the control: the same traffic without the regression opens nothing
    assert _feed(RuleWindow("r", settings), steady + rollback) == []
    # and the same outcomes decide the same (seeded draws)
    again = _feed(RuleWindow("r", settings), steady + regression + rollback)
    assert again == changes


def test_a_rule_that_may_not_alert_keeps_its_windows_and_opens_nothing() -> None:
    window = RuleWindow("r", MonitorSettings(window=10, baseline=10), may_alert=False)
    assert _feed(window, [("v1", False)] * 20 + [("v2", True)] * 20) == []
    assert window.snapshot()["window"].failed == 10  # type: ignore[attr-defined]


# -- backfill, exactly once ----------------------------------------------------------------------


def test_backfill_evaluates_each_sampled_trace_once_and_a_second_costs_nothing(
    shop: Path, tmp_path: Path
) -> None:
    rules = _rules(shop, sample=0.5)
    state = tmp_path / "state"
    first = _backfill(rules, state, [shop / "traces"])
    outcomes = _outcomes(state)
    sampled_cases = {o.case_id for (rule, _), o in outcomes.items() if rule == "path"}
    assert 10 <= len(sampled_cases) <= COUNT - 10  # about half, by trace id
    for (rule, case), outcome in outcomes.items():
        i = int(case.removeprefix("bk-"))
        if rule == "path":  # a broken request reads the wrong manual: its path fails
            assert outcome.outcome == ("fail" if i % BROKEN_EVERY == 0 else "pass"), case
        else:  # every answer is the sentence of the manual it read: adherent
            assert outcome.outcome == "pass", case
        assert outcome.source == "backfill" and outcome.version == "v1"
    counts = first["rules"]["path"]["counts"]  # type: ignore[index]
    assert counts == {"evaluated_backfill": len(sampled_cases)}
    runs = sorted((state / "runs").rglob("*"))
    second = _backfill(rules, state, [shop / "traces"])
    counts = second["rules"]["path"]["counts"]  # type: ignore[index]
    assert counts["already_evaluated"] == len(sampled_cases)
    assert counts["evaluated_backfill"] == len(sampled_cases)  # the journal's, not new ones
    assert _outcomes(state) == outcomes
    assert sorted((state / "runs").rglob("*")) == runs  # no analysis ran again


def test_a_rules_units_in_flight_are_its_records_concurrency(
    shop: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judge's record says its work in flight (its default 2, or ``concurrency``); paths,
    which has no such field, runs 4 at a time (was ``concurrency`` read raw, else 4)."""
    from groundtrace.analyzer.monitor import _monitor

    seen: dict[str, list[int | None]] = {}
    run = _monitor.run_analysis_async

    async def spy(analysis: Any, config: Any, **given: Any) -> Any:
        seen.setdefault(analysis.name, []).append(given["concurrency"])
        return await run(analysis, config, **given)

    monkeypatch.setattr(_monitor, "run_analysis_async", spy)
    _backfill(_rules(shop, sample=0.3), tmp_path / "state", [shop / "traces"])
    assert set(seen["judge"]) == {2} and set(seen["paths"]) == {4}
    seen.clear()
    rules = _rules(shop, sample=0.3, extra="").read_text(encoding="utf-8")
    (tmp_path / "three.toml").write_text(rules + "concurrency = 3\n", encoding="utf-8")
    _backfill(tmp_path / "three.toml", tmp_path / "again", [shop / "traces"])
    assert set(seen["judge"]) == {3}


def test_a_changed_case_file_is_another_fingerprint_and_re_evaluates(
    shop: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "shop"
    folder.mkdir()
    write_cases(folder / "cases.jsonl", 400)
    rules = _rules(folder, sample=0.25)
    state = tmp_path / "state"
    _backfill(rules, state, [shop / "traces"])
    before = {k: o for k, o in _outcomes(state).items() if k[0] == "path"}
    with (folder / "cases.jsonl").open("a", encoding="utf-8") as f:
        f.write('{"case_id": "extra", "question": "q?"}\n')
    status = _backfill(rules, state, [shop / "traces"])
    counts = status["rules"]["path"]["counts"]  # type: ignore[index]
    assert counts.get("already_evaluated", 0) == 0 and counts["evaluated_backfill"] == len(before)


def test_evaluation_traffic_is_never_sampled_nor_counted(shop: Path, tmp_path: Path) -> None:
    replays = tmp_path / "replays.jsonl"
    _app(replays, "--count", "24", "--start", "100", "--broken-every", "1",
         "--origin", "evaluation")  # fmt: skip
    state = tmp_path / "state"
    status = _backfill(_rules(shop, sample=1.0), state, [replays])
    for rule in ("path", "grounded"):
        counts = status["rules"][rule]["counts"]  # type: ignore[index]
        assert counts == {"skipped_evaluation_traffic": 24}
        assert status["rules"][rule]["evaluated"] == 0  # type: ignore[index]
    assert _outcomes(state) == {}


def test_online_and_backfill_give_the_same_outcomes(shop: Path, tmp_path: Path) -> None:
    """The monitor follows a folder a writer appends to; a backfill of the same files into
    another state folder gives each trace the same outcome."""
    rules = _rules(shop, sample=0.5)
    live = tmp_path / "live"
    lines = (shop / "traces" / "run.jsonl").read_bytes().splitlines(keepends=True)
    _backfill(rules, tmp_path / "backfill", [shop / "traces"])
    expected = len(_outcomes(tmp_path / "backfill"))

    async def follow() -> None:
        stop = asyncio.Event()
        with Monitor(load_rules(rules), tmp_path / "online") as monitor:
            task = asyncio.create_task(monitor.follow(live, stop=stop, poll=0.05))
            live.mkdir()
            with (live / "traces-1.jsonl").open("ab") as f:
                for line in lines:  # the receiver's appends, a line at a time
                    f.write(line)
                    f.flush()
                    await asyncio.sleep(0.01)
            for _ in range(600):  # until every sampled trace is evaluated (60 s at most)
                counts = [r["counts"] for r in monitor.status()["rules"].values()]
                if sum(c.get("evaluated_online", 0) for c in counts) >= expected:
                    break
                await asyncio.sleep(0.1)
            stop.set()
            await task

    asyncio.run(follow())
    online = _outcomes(tmp_path / "online")
    stored = _outcomes(tmp_path / "backfill")
    assert online and set(online) == set(stored)
    for key, o in online.items():
        assert o.source == "online" and stored[key].source == "backfill"
        assert (o.outcome, o.verdicts) == (stored[key].outcome, stored[key].verdicts)
    assert {case_id(i) for i in range(COUNT)} >= {c for _, c in online}


def test_a_file_renamed_by_rotation_is_read_on_where_it_was(tmp_path: Path) -> None:
    """The Collector's file exporter renames ``traces.jsonl`` to ``traces-<time>.jsonl`` when
    it rotates and starts a new ``traces.jsonl``: no line is read twice, none is missed."""
    current = tmp_path / "traces.jsonl"
    current.write_bytes(b"1\n2\n")
    tail = FolderTail(tmp_path)
    assert [line for _, line in tail.read()] == [b"1", b"2"]
    with current.open("ab") as f:
        f.write(b"3\n")
    current.rename(tmp_path / "traces-2026-12-06T10-00-00.jsonl")
    current.write_bytes(b"4\n")
    assert sorted(line for _, line in tail.read()) == [b"3", b"4"]


def test_a_model_judge_is_called_once_per_sampled_trace_then_never_again(
    shop: Path, tmp_path: Path
) -> None:
    """An endpoint judge (a real OpenAI-compatible server on loopback): the backfill makes one
    call per sampled trace; a second backfill over the same traces makes none."""
    from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest

    scores = '{"context_relevance": 1, "adherence": 0.9, "answer_relevance": 1, "rationale": "ok"}'

    def reply(_: ServerRequest) -> Reply:
        return Reply(content=scores)

    rules = tmp_path / "rules.toml"
    with OpenAICompatServer(handler=reply) as server:
        rules.write_text(
            f'[[rule]]\nname = "grounded"\nanalysis = "judge"\nsample = 0.5\n'
            f'[rule.config]\njudge = "{server.base_url}"\nmodel = "judge-model"\n',
            encoding="utf-8",
        )
        state = tmp_path / "state"
        _backfill(rules, state, [shop / "traces"])
        calls = len(server.requests)
        judged = {o.trace_id for o in _outcomes(state).values() if o.outcome == "pass"}
        second = _backfill(rules, state, [shop / "traces"])
        assert len(server.requests) == calls  # nothing asked again
    assert calls == len(judged) and 10 <= calls <= COUNT - 10
    counts = second["rules"]["grounded"]["counts"]  # type: ignore[index]
    assert counts["already_evaluated"] == len(judged)


def test_backfill_writes_the_verdicts_back_onto_the_evaluated_spans(
    shop: Path, tmp_path: Path
) -> None:
    """``monitor backfill --write-back otlp``: one gen_ai.evaluation.result log record per
    verdict, on the trace it evaluates, received by the project's receiver."""
    from groundtrace.collectors import LogRecord
    from groundtrace.collectors.readers import read_records
    from groundtrace.collectors.receiver import Receiver

    rules = _rules(shop, sample=0.5)
    with Receiver("127.0.0.1", 0, tmp_path / "sink") as sink:
        done = subprocess.run(
            [sys.executable, "-c", "from groundtrace.analyzer.cli import main; main()",
             "monitor", "backfill", str(shop / "traces"), "--rules", str(rules), "--state",
             str(tmp_path / "state"), "--write-back", "otlp", "--otlp-endpoint",
             sink.endpoint.removesuffix("/v1/traces")],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    records = [r for r in read_records([tmp_path / "sink"]) if isinstance(r, LogRecord)]
    outcomes = _outcomes(tmp_path / "state")
    expected = sum(len(o.verdicts) for o in outcomes.values())
    assert len(records) == expected > 0
    traces = {o.trace_id for o in outcomes.values()}
    assert {r.trace_id for r in records} == traces
    assert {r.event_name for r in records} == {"gen_ai.evaluation.result"}


def test_backfill_of_a_pulled_project_gives_the_same_outcomes(shop: Path, tmp_path: Path) -> None:
    """Traces pulled from a store as τ lines (what ``collect phoenix --out`` writes, here
    made by ``traces convert`` from the same spans) are backfilled like the stored OTLP files:
    the same traces sampled, the same outcome for each."""
    tau = tmp_path / "pulled.jsonl"
    done = subprocess.run(
        [sys.executable, "-c", "from groundtrace.analyzer.cli import main; main()",
         "traces", "convert", str(shop / "traces"), "--out", str(tau)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rules = _rules(shop, sample=0.5)
    _backfill(rules, tmp_path / "otlp", [shop / "traces"])
    _backfill(rules, tmp_path / "tau", [tau])
    from_otlp, from_tau = _outcomes(tmp_path / "otlp"), _outcomes(tmp_path / "tau")
    assert from_otlp and set(from_otlp) == set(from_tau)
    for key, o in from_otlp.items():
        assert (o.trace_id, o.outcome, o.verdicts) == (
            from_tau[key].trace_id,
            from_tau[key].outcome,
            from_tau[key].verdicts,
        ), key


def test_a_rule_holds_to_its_calls_per_minute_and_leaves_the_rest_queued(
    shop: Path, tmp_path: Path
) -> None:
    """``calls_per_minute = 3`` with an endpoint judge, one call in flight: the batch's run
    stops at the ceiling (the driver's budget), the rule pauses, nothing beyond is called and
    the traces not judged stay queued (a later run judges them), never journaled as judged."""
    from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest

    scores = '{"context_relevance": 1, "adherence": 1, "answer_relevance": 1, "rationale": "ok"}'

    def reply(_: ServerRequest) -> Reply:
        return Reply(content=scores)

    rules = tmp_path / "rules.toml"
    said: list[str] = []
    with OpenAICompatServer(handler=reply) as server:
        rules.write_text(
            f'[[rule]]\nname = "grounded"\nanalysis = "judge"\ncalls_per_minute = 3\n'
            f'[rule.config]\njudge = "{server.base_url}"\nmodel = "m"\nconcurrency = 1\n',
            encoding="utf-8",
        )

        async def main() -> dict[str, object]:
            with Monitor(load_rules(rules), tmp_path / "state", say=said.append) as monitor:
                return await monitor.backfill([shop / "traces"])

        status = asyncio.run(main())
        calls = len(server.requests)
    rule = status["rules"]["grounded"]  # type: ignore[index]
    assert 3 <= calls <= 4  # the ceiling, and at most the one call in flight when it was hit
    assert rule["queued"] >= COUNT - calls  # the rest wait for the next minute
    assert len(_outcomes(tmp_path / "state")) <= calls
    assert any("paused" in line for line in said), said


def test_a_dead_judge_endpoint_is_loud_and_measures_nothing(shop: Path, tmp_path: Path) -> None:
    """Every call refused: no outcome journaled as judged (a later run retries them), the
    batch line says why, and ``monitor backfill`` exits 6."""
    rules = tmp_path / "rules.toml"
    rules.write_text(
        '[[rule]]\nname = "g"\nanalysis = "judge"\nsample = 0.3\n[rule.config]\n'
        'judge = "http://127.0.0.1:9/v1"\nmodel = "m"\ntimeout = 2.0\n',
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-c", "from groundtrace.analyzer.cli import main; main()",
         "monitor", "backfill", str(shop / "traces"), "--rules", str(rules), "--state",
         str(tmp_path / "state")],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 6, done.stdout + done.stderr
    assert "error (every judgment" in done.stdout
    assert "no sampled trace was evaluated" in done.stderr
    assert _outcomes(tmp_path / "state") == {}
