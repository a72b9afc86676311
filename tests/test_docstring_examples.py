"""Every public package's usage example runs: the ``::`` blocks of each ``__init__`` docstring.

Each literal block (``Usage::`` and any later ``...::`` block) of the docstring of every public
package of ``sdk/``, ``collectors/`` and ``analyzer/`` is taken from the source, written to a
file and run in a fresh Python process, in its own temporary directory, exactly as written. The
one shell block (the command line's) is run through the installed ``groundtrace`` script; the
run folder it writes (``runs/demo``) is the input the other examples read.

What a block takes as given (an app's own function, a provider, a trace to replay) is defined
by a few lines of prelude, listed per package in :data:`EXAMPLES` with the files each needs;
where an example names a fixed local address, the test points it at a server it started and
says so. The table covers exactly the packages with an example: a new one fails the test until
it is added, and nothing is skipped without a reason written here.
"""

from __future__ import annotations

import ast
import gzip
import json
import os
import shlex
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from groundtrace.collectors.receiver import Receiver
from tests.support.openai_server import OpenAICompatServer

ROOT = Path(__file__).resolve().parents[1]
#: Import package -> folder (pyproject.toml's package-dir).
FOLDERS = {"groundtrace.sdk": "sdk", "groundtrace.collectors": "collectors"}
FOLDERS["groundtrace.analyzer"] = "analyzer"
SCRIPT = Path(sys.executable).with_name("groundtrace")
#: Runs a block as a module's top level; ``await`` at top level runs in an event loop.
RUNNER = """
import ast, asyncio, inspect, sys
path = sys.argv[1]
code = compile(open(path, encoding="utf-8").read(), path, "exec",
               flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
result = eval(code, {"__name__": "__main__"})
if inspect.iscoroutine(result):
    asyncio.run(result)
"""
TIMEOUT_S = 240


def packages() -> dict[str, Path]:
    """Every public package (no ``_`` in its path) and its ``__init__.py``."""
    found = {}
    for package, folder in FOLDERS.items():
        for init in sorted((ROOT / folder).rglob("__init__.py")):
            parts = init.parent.relative_to(ROOT / folder).parts
            if not any(part.startswith("_") for part in parts):
                found[".".join((package, *parts))] = init
    return found


def blocks(init: Path) -> list[str]:
    """The literal blocks (after a line ending in ``::``) of the module docstring."""
    docstring = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")), clean=True)
    lines = (docstring or "").splitlines()
    found: list[str] = []
    i = 0
    while i < len(lines):
        if lines[i].rstrip().endswith("::"):
            indent = len(lines[i]) - len(lines[i].lstrip())
            j = i + 1
            body: list[str] = []
            while j < len(lines) and (
                not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > indent
            ):
                body.append(lines[j])
                j += 1
            found.append(textwrap.dedent("\n".join(body)).strip("\n") + "\n")
            i = j
        else:
            i += 1
    return found


def is_shell(block: str) -> bool:
    return all(line.startswith("groundtrace ") for line in block.splitlines() if line.strip())


@dataclass
class Context:
    """What a package's preparation may use: its folder, the demo's run and local servers."""

    work: Path
    demo: Path  # the folder the command-line example ran in (holds runs/demo)
    model: OpenAICompatServer  # an OpenAI-compatible model server
    receiver: Receiver  # groundtrace's OTLP/HTTP receiver


@dataclass(frozen=True)
class Example:
    """How one package's blocks run.

    Attributes:
        prepare: writes the files the blocks read into the folder; returns the prelude (code
            defining what the blocks take as given).
        replace: (text, new text) substitutions: a fixed local address the test serves.
        marks: pytest marks (an example that needs the real embedded model).
        skip: why a block cannot run here (by block index); shown as the skip reason.
    """

    prepare: Callable[[Context], str] = lambda ctx: ""
    replace: Callable[[Context], dict[str, str]] = lambda ctx: {}
    marks: tuple[pytest.MarkDecorator, ...] = ()
    skip: dict[int, str] = field(default_factory=dict)


def demo_runs(ctx: Context, name: str, of: str = "demo") -> None:
    """Link a run folder of the command-line example into the example's ``runs/``."""
    (ctx.work / "runs").mkdir(exist_ok=True)
    (ctx.work / "runs" / name).symlink_to(ctx.demo / "runs" / of)


def with_demo(ctx: Context) -> str:
    demo_runs(ctx, "demo")
    return ""


def _sdk(ctx: Context) -> str:
    return textwrap.dedent("""
        def call_model(messages):  # the application's own model call
            return '{"answer": "Steven Spielberg", "confidence": 0.9, "used_chunks": ["d1"]}'

        p, text = "docs/jaws.md", "Jaws is a 1975 film directed by Steven Spielberg."
    """)


PROVIDER = "from opentelemetry.sdk.trace import TracerProvider\nprovider = TracerProvider()\n"


def _bm25(ctx: Context) -> str:
    corpus = ["jaws was directed by steven spielberg", "the beatles were a band", "paris"]
    return PROVIDER + f"corpus = {corpus!r}\n"


def _readers(ctx: Context) -> str:
    traces = ctx.demo / "runs/demo"
    shutil.copytree(traces / "traces", ctx.work / "traces")
    candidate = next((traces / "candidate/traces").glob("*.jsonl")).read_bytes()
    (ctx.work / "more.jsonl.gz").write_bytes(gzip.compress(candidate))
    return ""


def _analyzer(ctx: Context) -> str:
    (ctx.work / "out/paths").mkdir(parents=True)
    shutil.copy(ctx.demo / "runs/demo/paths/report.json", ctx.work / "out/paths")
    return ""


def _lines(path: Path, rows: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def _audit(ctx: Context) -> str:
    glass = "Glass bottles and jars are {} in the blue cart."
    _lines(
        ctx.work / "sources.jsonl",
        [
            {"id": "oakridge", "text": glass.format("accepted")},
            {"id": "pinehill", "text": glass.format("not accepted")},
            {"id": "rivertown", "text": glass.format("accepted") + " Rinse them first."},
        ],
    )
    cues = {"no": ["glass.*not accepted"], "yes": ["glass.*accepted"]}
    question = {"id": "glass", "text": "Is glass accepted in the blue cart?", "cues": cues}
    _lines(ctx.work / "questions.jsonl", [question])
    _lines(
        ctx.work / "answers.jsonl",
        [
            {"question_id": "glass", "source_id": "oakridge", "answer": "Yes."},
            {"question_id": "glass", "source_id": "pinehill", "answer": "No."},
            {"question_id": "glass", "source_id": "rivertown", "answer": "Yes, rinsed."},
        ],
    )
    return ""


def _cases(ctx: Context) -> str:
    shutil.copy(ctx.demo / "runs/demo/cases.jsonl", ctx.work)
    return ""


def _judge(ctx: Context) -> str:
    """40 labelled HaluEval rows of the shipped groundedness sample, in the judge's gold layout."""
    sample = ROOT / "tests/fixtures/data/groundedness/halueval_ragbench_dev.jsonl"
    rows = [json.loads(line) for line in sample.read_text(encoding="utf-8").splitlines()[:40]]
    gold = [
        {
            "id": row["id"],
            "item": {k: row[k] for k in ("question", "context", "answer")},
            "label": row["supported"],
        }
        for row in rows
    ]
    _lines(ctx.work / "gold.jsonl", gold)
    return ""


def _normalize(ctx: Context) -> str:
    shutil.copytree(ctx.demo / "runs/demo/traces", ctx.work / "traces")
    return textwrap.dedent("""
        from groundtrace.collectors.readers import read_spans  # what the readers stream

        span_records = read_spans(["traces/"])
    """)


def _paths(ctx: Context) -> str:
    demo_runs(ctx, "agent", of="demo/agent")  # the document agent's traces
    for name in ("cases.jsonl", "tools.toml"):
        shutil.copy(ROOT / "examples/agent_docs" / name, ctx.work)
    return ""


def _monitor(ctx: Context) -> str:
    """The demo app's traces, and a rules file judging all of them with the lexical judge."""
    demo_runs(ctx, "demo")
    shutil.copytree(ctx.work / "runs/demo/traces", ctx.work / "traces")
    (ctx.work / "rules.toml").write_text(
        '[[rule]]\nname = "grounded"\nanalysis = "judge"\n[rule.config]\njudge = "lexical"\n',
        encoding="utf-8",
    )
    return ""


def _replay(ctx: Context) -> str:
    demo_runs(ctx, "demo")
    return textwrap.dedent("""
        from groundtrace.collectors import read_traces  # a trace of the replayable demo app

        trace = next(read_traces(["runs/demo/traces"]))
    """)


def _writeback(ctx: Context) -> str:
    demo_runs(ctx, "demo")
    return textwrap.dedent("""
        from groundtrace.collectors import read_traces  # the span a verdict is attached to

        trace = next(read_traces(["runs/demo/traces"]))
        trace_id, span_id = trace.trace_id, trace.steps[0].span_id
    """)


def _model_url(ctx: Context) -> dict[str, str]:
    return {"http://127.0.0.1:8080/v1": ctx.model.base_url}


def _receiver_url(ctx: Context) -> dict[str, str]:
    return {"http://127.0.0.1:4318": ctx.receiver.endpoint.removesuffix("/v1/traces")}


EXAMPLES: dict[str, Example] = {
    "groundtrace.analyzer": Example(_analyzer),
    "groundtrace.analyzer.audit": Example(_audit),
    "groundtrace.analyzer.attribution": Example(),
    "groundtrace.analyzer.backends": Example(
        marks=(pytest.mark.integration, pytest.mark.llm)  # starts the real embedded model
    ),
    "groundtrace.analyzer.cases": Example(_cases),
    "groundtrace.analyzer.cli": Example(),  # the demo run itself (the `demo` fixture)
    "groundtrace.analyzer.demo": Example(),
    "groundtrace.analyzer.executor": Example(),
    "groundtrace.analyzer.gate": Example(),
    "groundtrace.analyzer.interventions": Example(with_demo),
    "groundtrace.analyzer.judge": Example(_judge),
    "groundtrace.analyzer.llm": Example(replace=_model_url),
    "groundtrace.analyzer.metrics": Example(),
    "groundtrace.analyzer.monitor": Example(_monitor),
    "groundtrace.analyzer.paths": Example(_paths),
    "groundtrace.analyzer.replay": Example(_replay),
    "groundtrace.analyzer.stats": Example(),
    "groundtrace.analyzer.writeback": Example(
        _writeback,
        _receiver_url,
        skip={
            1: "annotate_phoenix needs a real Arize Phoenix, which the tests start only in a "
            "private network namespace (tests/integration/test_phoenix_writeback.py writes "
            "the same annotations there)"
        },
    ),
    "groundtrace.collectors": Example(with_demo),
    "groundtrace.collectors.normalize": Example(_normalize),
    "groundtrace.collectors.readers": Example(_readers),
    # the example's fixed port 4318 may be taken on a shared machine: a free one instead
    "groundtrace.collectors.receiver": Example(replace=lambda ctx: {"4318,": "0,"}),
    "groundtrace.sdk": Example(_sdk),
    "groundtrace.sdk.instrumentation": Example(),
    "groundtrace.sdk.instrumentation.openai": Example(lambda ctx: PROVIDER, _model_url),
    "groundtrace.sdk.instrumentation.rank_bm25": Example(_bm25),
}

CLI = "groundtrace.analyzer.cli"
CASES = [
    pytest.param(package, index, id=f"{package}[{index}]", marks=EXAMPLES[package].marks)
    for package, init in packages().items()
    if package in EXAMPLES
    for index, _block in enumerate(blocks(init))
]


def _env() -> dict[str, str]:
    """The test's environment without SDK or OpenTelemetry settings of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GROUNDTRACE_", "OTEL_"))}
    env["PYTHONPATH"] = str(ROOT)
    return env


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The command-line example run (its shell block, line by line): folder and failures."""
    folder = tmp_path_factory.mktemp("cli-example")
    (block,) = blocks(packages()[CLI])
    failures = []
    for line in block.splitlines():
        args = shlex.split(line)
        done = _run([str(SCRIPT), *args[1:]], folder)
        if done.returncode != 0:
            failures.append(f"{line!r} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return folder, failures


@pytest.fixture(scope="module")
def model() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer() as server:
        yield server


@pytest.fixture(scope="module")
def receiver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Receiver]:
    with Receiver("127.0.0.1", 0, tmp_path_factory.mktemp("received")) as server:
        yield server


def test_every_package_with_an_example_is_in_the_table() -> None:
    with_examples = {package for package, init in packages().items() if blocks(init)}
    assert with_examples == set(EXAMPLES)
    without = sorted(set(packages()) - with_examples)
    assert not without, f"public packages without a usage example: {without}"
    assert all(blocks(init) for init in packages().values())


@pytest.mark.timeout(600)
@pytest.mark.parametrize(("package", "index"), CASES)
def test_usage_example_runs(
    package: str,
    index: int,
    demo: tuple[Path, list[str]],
    model: OpenAICompatServer,
    receiver: Receiver,
    tmp_path: Path,
) -> None:
    folder, failures = demo
    if package == CLI:
        assert not failures, "\n".join(failures)
        return
    assert not failures, "the command-line example failed: its run folder is missing"
    example = EXAMPLES[package]
    if index in example.skip:
        pytest.skip(example.skip[index])
    block = blocks(packages()[package])[index]
    assert not is_shell(block), f"{package}: only the command line's example is shell"
    ctx = Context(tmp_path, folder, model, receiver)
    prelude = example.prepare(ctx)
    for text, new in example.replace(ctx).items():
        assert text in block, f"{package}: the example no longer contains {text!r}"
        block = block.replace(text, new)
    script = tmp_path / "example.py"
    script.write_text(prelude + "\n" + block, encoding="utf-8")
    done = _run([sys.executable, "-c", RUNNER, str(script)], tmp_path)
    assert done.returncode == 0, (
        f"{package} usage example [{index}] failed:\n{block}\n--- stderr:\n{done.stderr[-4000:]}"
    )
