"""The one driver (``run_analysis``): run state belongs to the run, one exit-code policy,
resume, budget, estimate and progress for any analysis, and calls from a running loop.

The analysis here is a toy written against the public shape (one model call per unit, at a
real OpenAI-compatible server on loopback); the built-ins are run by the driver in their own
tests.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest

from groundtrace.analyzer import (
    Analysis,
    AnalysisRun,
    Result,
    RunContext,
    get_analysis,
    register_analysis,
    run_analysis,
    run_analysis_async,
    write,
)
from groundtrace.analyzer.errors import BudgetReachedError, ConfigError, RunFolderBusyError
from groundtrace.analyzer.executor import LocalExecutor
from groundtrace.analyzer.llm import Budget, ChatRequest, ChatResponse, ModelClient, UsageLedger
from groundtrace.analyzer.llm import counting as counting_calls
from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest

pytestmark = pytest.mark.timeout(120)


class Config(msgspec.Struct, frozen=True, kw_only=True):
    url: str
    questions: int
    verdict: int = 0


class Answers(Result, frozen=True, kw_only=True):
    answers: tuple[str, ...] = ()


def _request(question: str) -> ChatRequest:
    return ChatRequest(model="m", messages=({"role": "user", "content": question},), max_tokens=4)


def plan(config: Config) -> list[str]:
    return [f"q{i}" for i in range(config.questions)]


async def run(units: Sequence[str], config: Config, context: RunContext) -> Answers:
    client = ModelClient(config.url, concurrency=8, timeout=10.0)

    async def ask(question: str) -> str:
        reply = await client.complete(_request(question))
        return reply.text if isinstance(reply, ChatResponse) else "failed"

    try:
        answers = await context.map(ask, units, keys=list(units), kind=str, phase="ask")
    finally:
        await client.aclose()
    return Answers(answers=tuple(answers))


def write_report(result: Answers, out: Path) -> Path:
    write(out / "answers.json", result)
    return out / "answers.json"


TOY: Analysis[Config, str, Answers] = Analysis(
    name="toy-answers", title="Asks each question once", config=Config, plan=plan, run=run,
    write_report=write_report, reading=lambda r: f"{len(r.answers)} answered",
    nothing_measured=lambda r: None if r.answers else "no question", journal="units.sqlite",
    unit_key=str, estimate=lambda units, config, journal: (
        [_request(u) for u in units if journal is None or journal.get(u, str) is None],
        sum(1 for u in units if journal is not None and journal.get(u, str) is not None),
    ),
)  # fmt: skip


def _reply(request: ServerRequest) -> Reply:
    return Reply(content="yes", prompt_tokens=10, completion_tokens=1)


@pytest.fixture
def server() -> Any:
    with OpenAICompatServer(handler=_reply) as srv:
        yield srv


def _calls(done: AnalysisRun[Any]) -> int:
    return sum(u.calls for u in done.calls.values())


def test_two_runs_side_by_side_in_one_loop_count_only_their_own_calls(
    server: Any, tmp_path: Path
) -> None:
    async def both() -> tuple[AnalysisRun[Answers], AnalysisRun[Answers]]:
        a = run_analysis_async(TOY, Config(url=server.base_url, questions=7), out=tmp_path / "a")
        b = run_analysis_async(TOY, Config(url=server.base_url, questions=3), out=tmp_path / "b")
        return await asyncio.gather(a, b)

    first, second = asyncio.run(both())
    assert (_calls(first), _calls(second)) == (7, 3)
    assert server.request_count == 10
    again = run_analysis(TOY, Config(url=server.base_url, questions=4), out=tmp_path / "c")
    assert _calls(again) == 4  # a later run does not start from the earlier runs' counts


def test_a_budget_is_not_spent_by_another_run_in_the_same_process(server: Any) -> None:
    """Two budgets side by side: before, one process ledger made each count the other's
    calls, so a ceiling of 8 was reached by two runs of 5 calls each."""

    async def one(n: int) -> int:
        executor = LocalExecutor(1)
        executor.budget = Budget(max_calls=8)
        client = ModelClient(server.base_url, concurrency=1, timeout=10.0)

        async def ask(i: int) -> None:
            await client.complete(_request(f"{n}-{i}"))
            await asyncio.sleep(0.01)  # let the other run's calls interleave

        try:
            await executor.map(ask, list(range(5)))
        finally:
            await client.aclose()
        return n

    async def both() -> list[int]:
        return await asyncio.gather(one(1), one(2))

    assert asyncio.run(both()) == [1, 2]  # neither budget was reached


def test_calls_outside_any_run_are_counted_nowhere(server: Any) -> None:
    outer = UsageLedger()

    async def call() -> None:
        client = ModelClient(server.base_url, timeout=10.0)
        try:
            await client.complete(_request("alone"))
        finally:
            await client.aclose()

    asyncio.run(call())
    with counting_calls(outer):
        asyncio.run(call())
    assert outer.calls() == 1


def test_run_analysis_inside_a_running_loop_points_to_the_async_driver(tmp_path: Path) -> None:
    async def inside() -> None:
        run_analysis(TOY, Config(url="http://127.0.0.1:9", questions=1), out=tmp_path)

    with pytest.raises(ConfigError, match="await run_analysis_async"):
        asyncio.run(inside())
    assert not tmp_path.joinpath("answers.json").exists()


def test_the_driver_gives_any_analysis_resume_budget_estimate_and_progress(
    server: Any, tmp_path: Path
) -> None:
    config = Config(url=server.base_url, questions=12)
    out = tmp_path / "run"
    estimate = run_analysis(TOY, config, out=out, estimate=True)
    assert estimate.estimate is not None and estimate.result is None
    assert (estimate.estimate.calls, estimate.estimate.units_done) == (12, 0)
    assert not out.exists()  # an estimate creates nothing
    with pytest.raises(BudgetReachedError, match="--max-calls 5 reached"):
        run_analysis(TOY, config, out=out, budget=Budget(max_calls=5), concurrency=1)
    assert server.request_count == 5
    estimate = run_analysis(TOY, config, out=out, estimate=True)
    assert estimate.estimate is not None
    assert (estimate.estimate.calls, estimate.estimate.units_done) == (7, 5)
    seen: list[tuple[str, int, int | None]] = []
    done = run_analysis(TOY, config, out=out, progress=lambda *p: seen.append(p))
    assert server.request_count == 12 and _calls(done) == 7  # the 5 journaled are not asked
    assert done.result is not None and done.result.answers == ("yes",) * 12
    assert seen[0] == ("ask", 5, 12) and seen[-1] == ("ask", 12, 12)
    assert done.reports == (out / "answers.json",) and done.exit_code == 0
    assert set(done.timings) == {"plan", "run", "report"}


def test_one_exit_code_policy_the_analysis_code_wins_then_6(tmp_path: Path) -> None:
    def verdict(result: Answers) -> int:
        return 30 if not result.answers else 0

    gated = Analysis(**{f: getattr(TOY, f) for f in TOY.__slots__} | {"exit_code": verdict})
    empty = Config(url="http://127.0.0.1:9", questions=0)
    nothing = run_analysis(TOY, empty, out=tmp_path / "a")
    assert (nothing.exit_code, nothing.reason) == (6, "no question")
    assert nothing.reports == (tmp_path / "a" / "answers.json",)  # written all the same
    own = run_analysis(gated, empty, out=tmp_path / "b")
    assert (own.exit_code, own.reason) == (30, "no question")


def test_the_run_folder_is_locked_for_the_whole_run(server: Any, tmp_path: Path) -> None:
    from groundtrace.analyzer._runlock import RunFolderLock

    with RunFolderLock.acquire(tmp_path), pytest.raises(RunFolderBusyError):
        run_analysis(TOY, Config(url=server.base_url, questions=1), out=tmp_path)
    assert server.request_count == 0


def test_an_analysis_in_the_earlier_blocking_form_runs_from_a_running_loop(
    tmp_path: Path,
) -> None:
    def blocking(units: Sequence[str], config: Config, executor: Any) -> Answers:
        async def echo(unit: str) -> str:
            return unit

        return Answers(answers=tuple(asyncio.run(executor.map(echo, list(units)))))

    older = Analysis(**{f: getattr(TOY, f) for f in TOY.__slots__} | {"run": blocking})

    async def inside() -> AnalysisRun[Answers]:
        return await run_analysis_async(older, Config(url="-", questions=2), out=tmp_path)

    done = asyncio.run(inside())
    assert done.result is not None and done.result.answers == ("q0", "q1")


def test_registering_a_taken_name_raises() -> None:
    with pytest.raises(ConfigError, match="'paths' is already registered"):
        register_analysis(
            Analysis(**{f: getattr(TOY, f) for f in TOY.__slots__} | {"name": "paths"})
        )
    register_analysis(TOY)
    try:
        register_analysis(TOY)  # the same record again: nothing to refuse
        other = Analysis(**{f: getattr(TOY, f) for f in TOY.__slots__} | {"title": "another"})
        with pytest.raises(ConfigError, match="already registered"):
            register_analysis(other)
        assert get_analysis("toy-answers") is TOY
    finally:
        from groundtrace.analyzer import _analysis

        _analysis._REGISTERED.pop("toy-answers")


def test_an_estimate_is_refused_where_the_analysis_cannot_give_one(tmp_path: Path) -> None:
    blind = Analysis(
        **{f: getattr(TOY, f) for f in TOY.__slots__} | {"estimate": None, "unit_key": None}
    )
    with pytest.raises(ConfigError, match="toy-answers gives no estimate") as caught:
        run_analysis(blind, Config(url="-", questions=2), out=tmp_path / "o", estimate=True)
    assert caught.value.field == "--estimate" and not (tmp_path / "o").exists()
