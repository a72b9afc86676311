"""Interventions, a judge run, an audit and path checks on a real local Ray cluster, against
local runs.

Run inside a private network namespace (only a loopback exists there; some Ray services bind
every interface)::

    unshare -n sh -c 'ip link set lo up && python -m tests.integration.ray_scenario'

It starts a Ray head and one more worker node (``ray start --block``, 127.0.0.1, no
dashboard, 100 MB object stores, stopped by their process groups), a counting
OpenAI-compatible server, and measures: Ray results identical to the local executor's for
each analysis; a shared rate limit and a 429's pause holding across workers, and
--max-calls counted across them; a worker SIGKILLed mid-run (units done, calls made,
duplicate results); the driver (the ``groundtrace audit run`` command) SIGKILLed and
SIGTERMed mid-run, then resumed (calls repeated). It prints one JSON line.
"""

from __future__ import annotations

import asyncio
import importlib
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec

from groundtrace.analyzer import run_analysis
from groundtrace.analyzer.audit import ANALYSIS, AuditResult
from groundtrace.analyzer.executor import Executor, LocalExecutor, RayExecutor, UnitJournal
from groundtrace.analyzer.judge import JudgeCase, judge_all
from groundtrace.analyzer.judge._gold import load_cases
from groundtrace.analyzer.judge._llm_judge import LLMJudge
from groundtrace.analyzer.llm import CallCache, ModelClient, RetryPolicy, WorkerCalls
from groundtrace.examples.license_audit.audit import licence_config
from tests.analyzer.audit.test_audit_models import _cli, _reply
from tests.support.data import DATA, HOTPOT
from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest, last_user_text

WORKERS = 2
PER_WORKER = 2
#: Ray's environment for the cluster and every driver: no usage report, no token file in the
#: home folder (the cluster is reachable from this private namespace only).
RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
QUESTIONS = ("patent-grant", "same-licence")
SOURCES = 6
#: The shared rate limit (calls/s), a 429's Retry-After (s) and the --max-calls ceiling.
RATE = 8.0
RETRY_AFTER = 1.0
MAX_CALLS = 6


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ray_start(*args: str) -> subprocess.Popen[bytes]:
    ray = [sys.executable, "-m", "ray.scripts.scripts"]  # the `ray` command of this Python
    common = ["--block", "--node-ip-address=127.0.0.1", "--num-cpus=1",
              "--object-store-memory=100000000", "--disable-usage-stats"]  # fmt: skip
    return subprocess.Popen(
        [*ray, "start", *common, *args], env={**os.environ, **RAY_ENV},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip


def _stop(proc: subprocess.Popen[bytes]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
            proc.wait(timeout=30)
            return
        except subprocess.TimeoutExpired:
            continue
        except ProcessLookupError:
            return


@contextmanager
def ray_cluster(temp: Path, nodes: int = 2) -> Iterator[str]:
    """A head and ``nodes - 1`` more nodes on 127.0.0.1; yields the address, stops all on exit.

    The head's temp folder is ``temp`` (where ``ray start`` writes ``ray_current_cluster``).
    """
    port = _free_port()
    address = f"127.0.0.1:{port}"
    head = _ray_start("--head", f"--port={port}", "--include-dashboard=false",
                      f"--temp-dir={temp}")  # fmt: skip
    procs = [head]
    try:
        _wait_for_port(port, head)
        procs.extend(_ray_start(f"--address={address}") for _ in range(nodes - 1))
        _wait_for_nodes(address, nodes)
        yield address
    finally:
        import ray

        if ray.is_initialized():
            ray.shutdown()
        for proc in reversed(procs):
            _stop(proc)


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], limit: float = 240.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"ray start exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise RuntimeError("the Ray head did not come up")


def _wait_for_nodes(address: str, n: int, limit: float = 240.0) -> None:
    import ray

    ray.init(address=address, log_to_driver=False)
    deadline = time.monotonic() + limit
    while sum(node["Alive"] for node in ray.nodes()) < n and time.monotonic() < deadline:
        time.sleep(0.5)
    if sum(node["Alive"] for node in ray.nodes()) < n:
        raise RuntimeError("the second Ray node did not join")


def _judge_reply(req: ServerRequest) -> Reply:
    """Triad scores chosen by a hash of the prompt (so every case has its own)."""
    h = zlib.crc32(last_user_text(req).encode())
    body = {"context_relevance": (h % 11) / 10, "adherence": (h // 11 % 11) / 10,
            "answer_relevance": (h // 121 % 11) / 10, "rationale": f"r{h % 97}"}  # fmt: skip
    return Reply(content=json.dumps(body), delay=0.02)


def _replying(req: ServerRequest) -> Reply:
    """Judge or audit replies, each after 0.1 s (so a kill finds calls in flight)."""
    judged = "context_relevance" in json.dumps(req.body)
    return Reply(content=(_judge_reply(req) if judged else _reply(req)).content, delay=0.1)


_OPEN: list[RayExecutor] = []


def _ray(address: str, workers: int = WORKERS, concurrency: int = 4) -> RayExecutor:
    """A Ray executor that carries its workers' model calls back (as the driver's does); the
    one made before it is closed first (its workers stopped)."""
    while _OPEN:
        _OPEN.pop().close()
    _OPEN.append(
        RayExecutor(address=address, workers=workers, concurrency=concurrency, carry=WorkerCalls())
    )
    return _OPEN[-1]


def _client(url: str, out: Path) -> ModelClient:
    return ModelClient(url, cache=CallCache(out / "llm_cache.sqlite"), concurrency=PER_WORKER,
                       timeout=60.0, retry=RetryPolicy(seed=1))  # fmt: skip


def _audit(
    url: str, out: Path, executor: Executor, progress: Callable[..., None] | None = None
) -> AuditResult:
    """The licence audit's subset (its files shared by every run of ``out``'s folder, so the
    runs read one corpus) answered and judged by the model at ``url``, on ``executor``."""
    config = msgspec.structs.replace(
        licence_config(out, questions=QUESTIONS, max_sources=SOURCES, subset=out.parent / "corpus"),
        answerer=url, model="m", judge=url, judge_model="m", concurrency=PER_WORKER, timeout=60.0,
    )  # fmt: skip
    done = run_analysis(ANALYSIS, config, out=out, executor=executor, progress=progress)
    assert done.result is not None
    return done.result


def _audit_records(run: AuditResult) -> dict[str, Any]:
    """The run without what differs by nature between two runs (trace ids, timing)."""
    answers = [msgspec.structs.replace(a, trace_id=None) for a in run.answers]
    data = msgspec.to_builtins(msgspec.structs.replace(run, answers=tuple(answers)))
    for key in ("wall_seconds", "model_calls"):
        data.pop(key)
    return data


def _calls(run: AuditResult) -> dict[str, int]:
    counts = next(iter((run.model_calls or {}).values()))
    return {"requests": counts.requests, "api_calls": counts.api_calls,
            "cache_hits": counts.cache_hits}  # fmt: skip


def audit_same(url: str, work: Path, address: str) -> tuple[dict[str, Any], AuditResult]:
    local = _audit(url, work / "audit-local", LocalExecutor(WORKERS * PER_WORKER))
    ray_run = _audit(url, work / "audit-ray", _ray(address, concurrency=PER_WORKER))  # fmt: skip
    traces = sorted(p.name for p in (work / "audit-ray" / "traces").glob("*.jsonl"))
    return {
        "identical": _audit_records(local) == _audit_records(ray_run),
        "answers": len(ray_run.answers), "pairs": len(ray_run.pairs) + len(ray_run.review),
        "calls_local": _calls(local), "calls_ray": _calls(ray_run),
        "trace_files_ray": len(traces),
        "traced_answers_ray": _count_lines(work / "audit-ray" / "traces"),
        "traced_answers_local": _count_lines(work / "audit-local" / "traces"),
    }, local  # fmt: skip


def _count_lines(folder: Path) -> int:
    """REQUEST roots in an OTLP-JSON lines folder (one per answer)."""
    from groundtrace.collectors import read_traces

    return sum(1 for _ in read_traces([str(folder)]))


def judge_same(url: str, work: Path, address: str) -> dict[str, Any]:
    cases: list[JudgeCase] = load_cases(DATA / "groundedness" / "halueval_ragbench_dev.jsonl")[:24]

    def run(executor: Executor, out: Path) -> list[dict[str, Any]]:
        judge = LLMJudge(_client(url, out), "judge", seed=3)
        results = asyncio.run(judge_all(judge, cases, executor=executor))
        return [msgspec.to_builtins(r) for r in results]

    local = run(LocalExecutor(WORKERS * PER_WORKER), work / "judge-local")
    ray_run = run(_ray(address, concurrency=PER_WORKER),
                  work / "judge-ray")  # fmt: skip
    return {"identical": local == ray_run, "cases": len(ray_run)}


def interventions_same(work: Path, address: str) -> dict[str, Any]:
    from groundtrace.analyzer import run_analysis
    from groundtrace.analyzer.demo import DemoConfig, run_demo
    from groundtrace.analyzer.interventions import ANALYSIS, Config

    demo = work / "demo"
    run_demo(DemoConfig(model="lexical", questions=3, out=demo, dataset=HOTPOT))

    def run(executor: Executor, out: Path) -> list[dict[str, Any]]:
        config = Config(
            out=str(out), traces=(str(demo / "traces"),), cases=str(demo / "cases.jsonl"),
            pool_dataset=str(HOTPOT), operators=("REMOVE", "ZERO", "DUPLICATE"),
            concurrency=PER_WORKER,
        )  # fmt: skip
        done = run_analysis(ANALYSIS, config, out=out, executor=executor)
        assert done.result is not None
        rows = [msgspec.to_builtins(r) for r in done.result.rows]
        for row in rows:  # the counterfactual's trace id is random by nature
            row["counterfactual"].pop("trace_id")
        return rows

    local = run(LocalExecutor(WORKERS * PER_WORKER), work / "iv-local")
    ray_run = run(_ray(address, concurrency=PER_WORKER),
                  work / "iv-ray")  # fmt: skip
    return {
        "identical": local == ray_run, "units": len(ray_run),
        "counterfactuals_ray": _count_lines(work / "iv-ray" / "counterfactual_traces"),
    }  # fmt: skip


def paths_same(address: str) -> dict[str, Any]:
    from groundtrace.analyzer.paths import validate_traces_async
    from groundtrace.analyzer.paths._tau import tau_bench_cases
    from groundtrace.analyzer.stats import StatsSettings
    from groundtrace.collectors.transcripts import read_transcripts

    source = DATA / "agent_tools" / "tau_bench_traces" / "gpt-4o-airline_dev_40.jsonl"
    cases = list(tau_bench_cases(source))
    traces = list(read_transcripts([source]))
    settings = StatsSettings(n_resamples=500)
    local = asyncio.run(validate_traces_async(traces, cases, settings=settings))
    ray_run = asyncio.run(validate_traces_async(traces, cases, settings=settings,
                                                executor=_ray(address)))  # fmt: skip
    return {"identical": local == ray_run, "verdicts": len(ray_run.verdicts)}


def gate_same(work: Path, address: str) -> dict[str, Any]:
    """Gate layers 1-2 on Ray against the local run, on the demo's traces (run before)."""
    from groundtrace.analyzer.cases import read_cases
    from groundtrace.analyzer.gate import load_profile
    from groundtrace.analyzer.gate._run import evaluate, outcomes_from_traces

    demo = work / "demo"
    cases = list(read_cases(demo / "cases.jsonl"))
    outcomes, _ = outcomes_from_traces([str(demo / "traces")])
    profile = load_profile("balanced_default")
    local = asyncio.run(evaluate(cases, outcomes, outcomes, profile)).report
    ray_run = asyncio.run(evaluate(cases, outcomes, outcomes, profile,
                                   executor=_ray(address))).report  # fmt: skip
    return {"identical": local == ray_run, "cases": len(ray_run.cases)}


async def _refuse(unit: int) -> int:
    from groundtrace.analyzer.errors import ReplayError

    if unit == 3:
        raise ReplayError(f"unit {unit} cannot be set up")
    return unit


def errors_reach_the_driver(address: str) -> dict[str, Any]:
    """An error the work raises on a worker is raised, as it is, by the driver's map."""
    try:
        asyncio.run(_ray(address).map(_refuse, list(range(6))))
    except Exception as exc:  # the test asserts which one
        return {"raised": type(exc).__name__, "message": str(exc)}
    return {"raised": None}


def kill_a_worker(url: str, work: Path, address: str, server: OpenAICompatServer,
                  reference: AuditResult) -> dict[str, Any]:  # fmt: skip
    executor = _ray(address, concurrency=PER_WORKER)
    killed: list[int] = []

    def progress(phase: str, done: int, total: int) -> None:
        if phase == "answers" and done == 4 and not killed:
            import ray

            pid = ray.get(executor.actors[0].pid.remote(), timeout=30)
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    before = len(server.requests)
    run = _audit(url, work / "audit-kill-worker", executor, progress)
    bodies = [json.dumps(r.body, sort_keys=True) for r in server.requests[before:]]
    keys = [(a.question_id, a.source_id) for a in run.answers]
    return {
        "killed_pid": killed[0] if killed else None,
        "units": len(run.answers) + len(run.pairs) + len(run.review) + len(run.pair_errors),
        "calls_made": len(bodies), "calls_sent_twice": len(bodies) - len(set(bodies)),
        "duplicate_results": len(keys) - len(set(keys)),
        "identical_to_local": _audit_records(run) == _audit_records(reference),
    }  # fmt: skip


def rate_and_budget(work: Path, address: str) -> dict[str, Any]:
    """A shared --rate-limit and a 429's pause across workers; --max-calls counted across them."""
    from groundtrace.analyzer.errors import BudgetReachedError
    from groundtrace.analyzer.llm import Budget

    cases = load_cases(DATA / "groundedness" / "halueval_ragbench_dev.jsonl")[:16]
    stamps: list[float] = []
    limited: list[float] = []

    def handler(req: ServerRequest) -> Reply:
        stamps.append(time.monotonic())
        if req.index == 3:  # one 429: every worker must wait out its Retry-After
            limited.append(stamps[-1])
            return Reply(status=429, retry_after=RETRY_AFTER)
        return _judge_reply(req)

    def judge(url: str, out: Path) -> LLMJudge:
        client = ModelClient(url, cache=CallCache(out / "llm_cache.sqlite"), concurrency=PER_WORKER,
                             timeout=60.0, retry=RetryPolicy(seed=1), rate_limit=RATE)  # fmt: skip
        return LLMJudge(client, "judge", seed=3)

    with OpenAICompatServer(handler=handler) as server:
        executor = _ray(address, concurrency=PER_WORKER)
        asyncio.run(judge_all(judge(server.base_url, work / "rate"), cases, executor=executor))
        after = [t for t in stamps if t > limited[0]]
        gaps = sorted(b - a for a, b in itertools.pairwise(stamps))
        rate = {
            "limit": RATE, "calls": len(stamps), "retry_after": RETRY_AFTER,
            "observed_per_s": (len(stamps) - 1) / (stamps[-1] - stamps[0]),
            "first_after_429_s": min(after) - limited[0], "min_gap_s": gaps[0],
        }  # fmt: skip
    with OpenAICompatServer(handler=_judge_reply) as server:
        executor = _ray(address, concurrency=PER_WORKER)
        executor.budget = Budget(max_calls=MAX_CALLS)
        try:
            asyncio.run(judge_all(judge(server.base_url, work / "budget"), cases,
                                  executor=executor))  # fmt: skip
            stopped: dict[str, Any] = {"raised": None}
        except BudgetReachedError as exc:
            stopped = {"raised": type(exc).__name__, "done": exc.done, "exit_code": exc.exit_code}
        stopped |= {"max_calls": MAX_CALLS, "calls": server.request_count,
                    "bound": MAX_CALLS - 1 + WORKERS * PER_WORKER}  # fmt: skip
    return {"rate": rate, "budget": stopped}


def _driver(out: Path, url: str, address: str) -> list[str]:
    return [*_cli(out, url), "--executor", "ray", "--ray-address", address,
            "--ray-workers", str(WORKERS)]  # fmt: skip


def kill_the_driver(url: str, work: Path, address: str, server: OpenAICompatServer,
                    sig: signal.Signals) -> dict[str, Any]:  # fmt: skip
    out = work / f"audit-driver-{sig.name}"
    env = {**os.environ, **RAY_ENV, "PYTHONUNBUFFERED": "1"}
    before = len(server.requests)
    proc = subprocess.Popen(_driver(out, url, address), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 300
    while len(server.requests) - before < 12 and time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=300)
    time.sleep(1.0)  # calls of workers that outlived a killed driver arrive now, if any
    first = [json.dumps(r.body, sort_keys=True) for r in server.requests[before:]]
    resumed = subprocess.run(_driver(out, url, address), env=env, capture_output=True,
                             text=True, timeout=600, check=False)  # fmt: skip
    second = [json.dumps(r.body, sort_keys=True) for r in server.requests[before + len(first) :]]
    journal = UnitJournal(out / "units.sqlite")
    units = len(journal)
    journal.close()
    return {
        "signal": sig.name, "exit_code": proc.returncode, "stderr_tail": stderr[-300:],
        "resume_exit_code": resumed.returncode, "resume_stderr": resumed.stderr[-300:],
        "calls_before_stop": len(first), "calls_after_resume": len(second),
        "units_journaled": units,
        # a call sent before the stop and again by the resumed run
        "calls_repeated": len(set(first) & set(second)),
        "in_flight_bound": WORKERS * PER_WORKER,
    }  # fmt: skip


def run_scenario(prefix: str, measure: Callable[[Path, dict[str, Any]], None]) -> None:
    """``measure(folder, out)`` in Ray's environment with a scratch folder; prints ``out``
    (``ok`` true when it finished, else the ``error``) as one JSON line."""
    temp = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    out: dict[str, Any] = {"ok": False}
    os.environ.update(RAY_ENV)
    try:
        measure(temp, out)
        out["ok"] = True
    except Exception as exc:  # reported to the test, which prints it
        out["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        subprocess.run(["rm", "-rf", str(temp)], check=False)
    print(json.dumps(out))


#: Seconds the drivers of :func:`run_drivers` wait for each other (bounded: the test fails,
#: never hangs).
DRIVER_WAIT = 300.0
#: The drivers :func:`run_drivers` starts, by name.
DRIVERS = ("d0", "d1")


async def _up(_: int) -> int:
    return os.getpid()


def driver_ready(executor: RayExecutor, folder: Path, name: str) -> None:
    """In the driver ``name``: warm its worker up, say it is ready, wait for ``go``."""
    asyncio.run(executor.map(_up, [0]))  # the worker is up before the clock starts
    (folder / f"ready-{name}").touch()
    deadline = time.monotonic() + DRIVER_WAIT
    while not (folder / "go").exists() and time.monotonic() < deadline:
        time.sleep(0.02)


def run_drivers(
    module: str, address: str, url: str, folder: Path
) -> tuple[list[int], list[tuple[str, str]]]:
    """Run ``python -m module --drive ADDRESS URL NAME FOLDER`` for each of :data:`DRIVERS`,
    say ``go`` once every one is ready (or one has ended), and wait for them: their exit codes
    and (stdout, stderr)."""
    env = {**os.environ, **RAY_ENV}
    command = [sys.executable, "-m", module, "--drive", address, url]
    procs = [
        subprocess.Popen([*command, name, str(folder)], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name in DRIVERS
    ]  # fmt: skip
    deadline = time.monotonic() + DRIVER_WAIT
    ready = [folder / f"ready-{name}" for name in DRIVERS]
    while not all(p.exists() for p in ready) and time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            break
        time.sleep(0.1)
    (folder / "go").touch()
    outputs = [p.communicate(timeout=DRIVER_WAIT) for p in procs]
    return [p.returncode for p in procs], outputs


def scenario_main(
    module: str, prefix: str, measure: Callable[[Path, dict[str, Any]], None]
) -> None:
    """A driver scenario's command line: ``--drive ADDRESS URL NAME FOLDER`` runs the driver
    (``module``'s ``drive``, imported by its module name: the workers import the functions it
    sends them from there, not from ``__main__``), else :func:`run_scenario`."""
    if sys.argv[1:2] == ["--drive"]:
        drive = importlib.import_module(module).drive
        drive(sys.argv[2], sys.argv[3], sys.argv[4], Path(sys.argv[5]))
    else:
        run_scenario(prefix, measure)


def _measure(temp: Path, out: dict[str, Any]) -> None:
    with OpenAICompatServer(handler=_replying) as server, ray_cluster(temp) as address:
        url = server.base_url
        out["audit"], local = audit_same(url, temp, address)
        out["judge"] = judge_same(url, temp, address)
        out["interventions"] = interventions_same(temp, address)
        out["paths"] = paths_same(address)
        out["gate"] = gate_same(temp, address)
        out["errors"] = errors_reach_the_driver(address)
        out["limits"] = rate_and_budget(temp, address)
        out["kill_worker"] = kill_a_worker(url, temp, address, server, local)
        for sig in (signal.SIGKILL, signal.SIGTERM):
            out[f"driver_{sig.name}"] = kill_the_driver(url, temp, address, server, sig)


def main() -> None:
    run_scenario("gtray", _measure)


if __name__ == "__main__":
    main()
