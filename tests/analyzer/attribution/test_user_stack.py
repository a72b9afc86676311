"""The attribution analysis on a user's own stack, written from the docs alone
(``tests/support/tax_desk``: a freelancers' tax help desk, ids as gold).

* the SDK-instrumented RAG app (quick start layout), its model the quick start's
  ``LexicalServer``, run as a script: scored by the endpoint tier (a loopback server in vLLM's
  exact shapes), by the behavioural tier (``--replay recorded`` with the model URL replaced)
  and, marked ``llm``, in-process by the default embedded model; ``analyze attribution
  --config`` gives the same reports and exit code;
* the agent with tools instrumented only with OpenInference attributes on the OpenTelemetry
  SDK, exporting to ``groundtrace collect serve``: endpoint and behavioural
  (``--replay module:qualname``) tiers, an agent that searched twice, a question answered
  without retrieval and a run that hid its inputs;
* what goes wrong on a user's data: one evidence item, a trace recorded without content,
  ``--max-calls`` reached.

Each answer of these apps follows its evidence, so in every tier the top source of a row
is the item whose text holds the answer.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from groundtrace.analyzer.backends import LexicalServer
from groundtrace.analyzer.cli import build_app
from tests.analyzer.attribution.conftest import loopback
from tests.analyzer.attribution.test_endpoint_forms import _VLLM, _Server
from tests.support.tax_desk.agent import DEFAULT_QUESTIONS
from tests.support.tax_desk.rules import QUESTIONS, RULES

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

REPO = Path(__file__).resolve().parents[3]
app = build_app()


def _run(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def _rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads((out / "attribution.json").read_text())["rows"]
    return rows


def _follows_its_evidence(row: dict[str, Any]) -> bool:
    """The top source holds the answer (the apps' answers are spans of their evidence)."""
    top = max(row["sources"], key=lambda s: s["score"])
    return row["answer"].rstrip(".") in RULES[top["id"]][1]


@pytest.fixture(scope="module")
def lexical() -> Iterator[str]:
    server = LexicalServer()
    server.start()
    yield server.base_url
    server.stop()


@pytest.fixture(scope="module")
def vllm() -> Iterator[_Server]:
    with loopback(_Server, _VLLM) as srv:
        yield srv


def _endpoint(srv: _Server) -> str:
    return f"http://127.0.0.1:{srv.server_address[1]}/v1"


def _app(out: Path, model: str, *extra: str) -> Path:
    """The RAG app run as a user runs it: one process, traces to ``out``."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.tax_desk.rag_app", str(out), "--model-url", model,
         *extra], cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory, lexical: str) -> Path:
    return _app(tmp_path_factory.mktemp("rag") / "traces.jsonl", lexical)


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The agent's traces as ``groundtrace collect serve`` stored them: the default questions
    (one answered without retrieval), one asked by an agent that searches twice, one with its
    inputs hidden."""
    store = tmp_path_factory.mktemp("store")
    cli = "from groundtrace.analyzer.cli import main; main()"
    receiver = subprocess.Popen(
        [sys.executable, "-c", cli, "collect", "serve", "--port", "0", "--out", str(store)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        assert receiver.stdout is not None
        first = receiver.stdout.readline()
        assert first.startswith("listening on "), first
        url = first.split()[2].rstrip(",").removesuffix("/v1/traces")
        agent = [sys.executable, "-m", "tests.support.tax_desk.agent", "--endpoint", url]
        for extra in (
            [],
            ["--search-twice", "How long must I keep receipts and invoices?"],
            ["--hide-inputs", "When is the annual return of a freelancer due?"],
        ):
            done = subprocess.run([*agent, *extra], cwd=REPO, capture_output=True, text=True,
                                  timeout=300, check=False)  # fmt: skip
            assert done.returncode == 0, done.stderr
    finally:
        receiver.terminate()
        receiver.wait(60)
    return store


def test_the_rag_app_by_endpoint_and_config_file_alike(
    rag: Path, vllm: _Server, tmp_path: Path
) -> None:
    url = _endpoint(vllm)
    res = _run("attribution", str(rag), "--out", str(tmp_path / "cmd"), "--endpoint", url)
    assert res.exit_code == 0, res.output
    rows = _rows(tmp_path / "cmd")
    assert sorted(r["case_id"] for r in rows) == sorted(QUESTIONS)
    for row in rows:
        assert row["tier"] == "endpoint" and row["endpoint_form"] == "vllm-chat"
        assert len(row["sources"]) == 3 and row["passes"] == 4 and _follows_its_evidence(row)
    config = tmp_path / "attr.toml"
    config.write_text(f'traces = ["{rag}"]\nendpoint = "{url}"\n')
    again = _run("analyze", "attribution", "--config", str(config), "--out", str(tmp_path / "a"))
    assert again.exit_code == 0, again.output
    for name in ("attribution.json", "attribution.md", "attribution.html"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "cmd" / name).read_bytes()


def test_the_rag_app_replayed_without_each_item(rag: Path, lexical: str, tmp_path: Path) -> None:
    """``--replay recorded``: the app's own ``respond``, its recorded model URL replaced."""
    res = _run("attribution", str(rag), "--out", str(tmp_path / "b"), "--replay", "recorded",
               "--replay-kwarg", f"base_url={lexical}")  # fmt: skip
    assert res.exit_code == 0, res.output
    rows = _rows(tmp_path / "b")
    assert len(rows) == len(QUESTIONS)
    for row in rows:
        assert row["tier"] == "behavioural" and row["passes"] == 4
        assert _follows_its_evidence(row) and max(s["score"] for s in row["sources"]) >= 1.0


@pytest.mark.llm
def test_the_rag_app_in_process_by_the_default_model(rag: Path, tmp_path: Path) -> None:
    """Two traces, k = 3, the default embedded model on one thread."""
    from groundtrace.analyzer.backends import DEFAULT_MODEL, MODELS

    try:
        MODELS[DEFAULT_MODEL].path()
    except Exception as exc:  # any reason the model cannot be assembled
        pytest.skip(f"the default model is not available: {exc}")
    res = _run("attribution", str(rag), "--out", str(tmp_path / "m"), "--limit", "2")
    assert res.exit_code == 0, res.output
    rows = _rows(tmp_path / "m")
    assert len(rows) == 2
    for row in rows:
        assert row["tier"] == "in-process" and row["context_gap"] > 1.0
        assert _follows_its_evidence(row)


def test_the_openinference_agent_by_endpoint_and_by_replay(
    agent: Path, vllm: _Server, tmp_path: Path
) -> None:
    """By the endpoint tier twice: through vLLM's chat form (the server renders the agent's
    tool calls with its own template) and through a server that takes ``prompt_logprobs``
    on completions only."""
    res = _run("attribution", str(agent), "--out", str(tmp_path / "c"),
               "--endpoint", _endpoint(vllm))  # fmt: skip
    assert res.exit_code == 0, res.output
    by_chat = _rows(tmp_path / "c")
    assert {r["endpoint_form"] for r in by_chat} == {"vllm-chat"}
    vllm.mode, vllm.chat = "no-echo", False
    try:
        res = _run("attribution", str(agent), "--out", str(tmp_path / "e"),
                   "--endpoint", _endpoint(vllm))  # fmt: skip
    finally:
        vllm.mode, vllm.chat = "v1", True
    assert res.exit_code == 0, res.output
    result = json.loads((tmp_path / "e" / "attribution.json").read_text())
    rows = result["rows"]
    assert len(rows) == len(by_chat) == 4  # three questions searched, one searched twice
    for row, chat_row in zip(rows, by_chat, strict=True):
        assert row["endpoint_form"] == "prompt-logprobs" and row["context_gap"] > 1.0
        assert chat_row["context_gap"] > 1.0 and _follows_its_evidence(chat_row) == (
            _follows_its_evidence(row)
        )
    searched = [r for r in rows if r["answer"] != "50.40 crowns"]  # the calculator's answer
    assert len(searched) == 3 and all(_follows_its_evidence(r) for r in searched)
    left = " ".join(result["not_usable"].values())
    assert "records no retrieved evidence (no retrieval step)" in left  # "Hello, who are you?"
    assert "message 0 of the answer call has no captured text" in left  # --hide-inputs
    replay = "tests.support.tax_desk.agent:answer_with"
    res = _run("attribution", str(agent), "--out", str(tmp_path / "r"), "--replay", replay)
    assert res.exit_code == 0, res.output
    replayed = json.loads((tmp_path / "r" / "attribution.json").read_text())
    rows = replayed["rows"]
    assert len(rows) == 4 and all(r["tier"] == "behavioural" for r in rows)
    assert all(max(s["score"] for s in r["sources"]) >= 1.0 for r in rows)
    assert replayed["not_usable"].keys() == result["not_usable"].keys()
    asked = len(DEFAULT_QUESTIONS) + 2
    assert len(rows) + len(replayed["not_usable"]) == asked


def test_one_item_no_content_and_a_call_ceiling(
    lexical: str, vllm: _Server, rag: Path, tmp_path: Path
) -> None:
    url = _endpoint(vllm)
    one = _app(tmp_path / "k1.jsonl", lexical, "--k", "1")
    res = _run("attribution", str(one), "--out", str(tmp_path / "one"), "--endpoint", url)
    assert res.exit_code == 0, res.output
    for row in _rows(tmp_path / "one"):
        assert len(row["sources"]) == 1 and row["passes"] == 2
        assert row["context_gap"] > 1.0
        assert row["sources"][0]["score"] == pytest.approx(row["context_gap"])
    blind = _app(tmp_path / "blind.jsonl", lexical, "--no-content")
    res = _run("attribution", str(blind), "--out", str(tmp_path / "blind"), "--endpoint", url)
    assert res.exit_code == 6
    assert "has no answer to attribute (was content capture on?)" in " ".join(res.stderr.split())
    res = _run("attribution", str(rag), "--out", str(tmp_path / "c"), "--endpoint", url,
               "--max-calls", "5")  # fmt: skip
    assert res.exit_code == 5 and "--max-calls 5 reached" in res.stderr
    res = _run("attribution", str(rag), "--out", str(tmp_path / "c"), "--endpoint", url)
    assert res.exit_code == 0 and len(_rows(tmp_path / "c")) == len(QUESTIONS)  # resumed
