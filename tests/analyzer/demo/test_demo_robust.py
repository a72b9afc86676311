"""The demo survives what a real model server does: a prompt over its context, a failed call,
and questions holding personal data or secrets (lexical reader, loopback servers only).

* The example app fits its prompt to the model's context window: the lowest-ranked evidence
  is left out until prompt, template margin and reply fit (before: one HotpotQA prompt of
  2,233 tokens against the embedded server's 2,048 failed with HTTP 400).
* A failed model call is that case's failure, counted and shown; the run goes on (before:
  the whole demo exited with "the model call for case ... failed").
* The demo's case file is redacted as its traces are, so its own gate reads it (before: an
  e-mail address in a question made the gate refuse the case file, exit 2).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import openai
import pytest
from typer.testing import CliRunner

from groundtrace.analyzer.backends._lexical_server import handle, json_handler
from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.demo import DemoConfig, run_demo
from groundtrace.collectors import read_traces
from groundtrace.examples.hotpot_rag import app as rag
from groundtrace.examples.hotpot_rag.cases import DEFAULT_DATASET, load_cases

CLI = build_app()


def words(text: str) -> int:
    """The test server's tokenizer: one token per whitespace-separated word."""
    return len(text.split())


class ContextServer:
    """A loopback OpenAI-compatible server with a context window, as llama.cpp's behaves.

    ``/extras/tokenize/count`` counts tokens with its tokenizer (:func:`words`); a chat
    request whose prompt tokens plus ``max_tokens`` exceed ``n_ctx`` is refused with HTTP 400;
    others are answered by the lexical reader. ``fail`` refuses any prompt holding it.
    """

    def __init__(self, n_ctx: int, fail: str | None = None) -> None:
        self.n_ctx, self.fail = n_ctx, fail
        self.prompts: list[int] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), json_handler(self._respond))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def _respond(self, method: str, path: str, body: bytes) -> tuple[int, Any]:
        if method == "POST" and path == "/extras/tokenize/count":
            return 200, {"count": words(json.loads(body)["input"])}
        if method == "POST" and path.endswith("/chat/completions"):
            request = json.loads(body)
            prompt = " ".join(str(m["content"]) for m in request["messages"])
            tokens = words(prompt)
            if self.fail is not None and self.fail in prompt:
                return 500, {"error": {"message": "the model crashed", "type": "server_error"}}
            if tokens + int(request.get("max_tokens") or 0) > self.n_ctx:
                message = f"Requested tokens ({tokens}) exceed context window of {self.n_ctx}"
                return 400, {"error": {"message": message, "type": "invalid_request_error"}}
            self.prompts.append(tokens)
        return handle(method, path, body)

    def __enter__(self) -> ContextServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


@pytest.fixture(scope="module")
def long_case() -> Any:
    """The first shipped question whose full prompt is longer than 450 words."""
    for case in load_cases(DEFAULT_DATASET, limit=60):
        shown = rag.prompt_evidence(rag.retrieve_chunks(case.question, case.passages, 5))
        prompt = rag.chat_request(case.question or "", shown)["messages"][0]["content"]
        if words(prompt) > 450 and len(shown) >= 3:
            return case
    raise AssertionError("no long prompt among the first 60 questions")


@pytest.fixture()
def server() -> Iterator[ContextServer]:
    with ContextServer(n_ctx=450) as srv:
        yield srv


@pytest.mark.timeout(120)
def test_the_app_fits_its_prompt_to_the_context(server: ContextServer, long_case: Any) -> None:
    with pytest.raises(openai.BadRequestError, match="exceed context window of 450"):
        rag.run_case(long_case, model="m", base_url=server.base_url)
    result = rag.run_case(long_case, model="m", base_url=server.base_url, context_tokens=450)
    assert server.prompts and server.prompts[-1] + rag.TEMPLATE_TOKENS + 96 <= 450
    assert result.used_chunks and len(result.retrieved) == 5


@pytest.mark.timeout(60)
def test_fitting_leaves_out_the_lowest_ranked_items_whole(long_case: Any) -> None:
    question = long_case.question or ""
    shown = rag.prompt_evidence(rag.retrieve_chunks(question, long_case.passages, 5))
    full = rag.fit_evidence(question, shown, context_tokens=10_000, count_tokens=words)
    assert full == shown  # nothing left out when everything fits
    fitted = rag.fit_evidence(question, shown, context_tokens=450, count_tokens=words)
    assert 0 < len(fitted) < len(shown) and fitted == shown[: len(fitted)]
    prompt = rag.chat_request(question, fitted)["messages"][0]["content"]
    assert words(prompt) + rag.TEMPLATE_TOKENS + 96 <= 450
    longer = rag.chat_request(question, shown[: len(fitted) + 1])["messages"][0]["content"]
    assert words(longer) + rag.TEMPLATE_TOKENS + 96 > 450  # the next item would not fit
    # by bytes (a server without a tokenizer): never fewer tokens than a byte-level tokenizer
    by_bytes = rag.fit_evidence(question, shown, context_tokens=2048, count_tokens=lambda t: len(
        t.encode()))  # fmt: skip
    assert len(by_bytes) <= len(fitted)
    assert rag.fit_evidence(question, shown, context_tokens=50, count_tokens=words) == []


@pytest.mark.timeout(300)
def test_a_failed_model_call_is_that_cases_failure(tmp_path: Path) -> None:
    cases = load_cases(DEFAULT_DATASET, limit=3)
    marker = (cases[1].question or "")[:40]
    out = tmp_path / "demo"
    with ContextServer(n_ctx=100_000, fail=marker) as srv:
        args = ["demo", "--model", srv.base_url, "--questions", "3", "--interventions", "0",
                "--gate-top-k", "0", "--no-paths", "--audit-sources", "0",
                "--out", str(out)]  # fmt: skip
        result = CliRunner().invoke(CLI, args, env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    screen = " ".join(result.output.split())
    assert "model calls failed (counted wrong) │ 1" in screen
    assert f"1 model call(s) failed (each its case's failure): - {cases[1].case_id}: " in screen
    assert "the model crashed" in screen
    assert re.search(r"answers correct \(EM or F1>=0\.8\) │ \d/3 │", screen)
    traces = {t.request.case_id: t for t in read_traces([out / "traces"])}
    assert set(traces) == {c.case_id for c in cases}  # the failed case's trace is kept
    assert traces[cases[1].case_id].answer is None


@pytest.mark.timeout(300)
def test_the_failed_calls_are_in_the_report(tmp_path: Path) -> None:
    cases = load_cases(DEFAULT_DATASET, limit=2)
    marker = (cases[0].question or "")[:40]
    with ContextServer(n_ctx=100_000, fail=marker) as srv:
        report = run_demo(DemoConfig(model=srv.base_url, questions=2, out=tmp_path / "d")).report
    assert report.failed == 1 and report.answered == 1
    (line,) = report.failed_calls
    assert line.startswith(f"{cases[0].case_id}: ") and "the model crashed" in line
    assert report.accuracy == report.correct / 2  # the failed case counts as a wrong answer


SECRETS = ("ada.lovelace@example.org", "AKIAIOSFODNN7EXAMPLE", "ghp_" + "a1B2" * 9)


@pytest.mark.timeout(300)
def test_the_demos_case_file_is_redacted_like_its_traces(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in DEFAULT_DATASET.read_text("utf-8").splitlines()[:3]]
    for row, secret in zip(rows, SECRETS, strict=True):
        row["question"] = f"{row['question']} (asked by {secret})"
    dataset = tmp_path / "questions.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "demo"
    args = ["demo", "--model", "lexical", "--dataset", str(dataset), "--questions", "3",
            "--interventions", "0", "--gate-top-k", "2", "--no-paths", "--audit-sources", "0",
            "--out", str(out)]  # fmt: skip
    result = CliRunner().invoke(CLI, args, env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    written = (out / "cases.jsonl").read_text(encoding="utf-8")
    assert not any(secret in written for secret in SECRETS)
    assert "[REDACTED:email]" in written and "[REDACTED:aws_access_key]" in written
    queries = {t.request.case_id: t.request.query for t in read_traces([out / "traces"])}
    for line in written.splitlines():
        row = json.loads(line)
        assert row["question"] == queries[row["case_id"]]  # masked exactly as the trace is
    assert (out / "gate" / "report.json").is_file()  # the gate read the case file
    assert "unredacted" not in result.output


@pytest.mark.timeout(300)
def test_the_paths_headline_and_its_reading_count_the_same_cases(tmp_path: Path) -> None:
    args = ["demo", "--model", "lexical", "--questions", "1", "--interventions", "0",
            "--gate-top-k", "0", "--paths", "--audit-sources", "0",
            "--out", str(tmp_path / "o")]  # fmt: skip
    result = CliRunner().invoke(CLI, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    screen = " ".join(result.output.split())
    head = re.search(r"path pass rate [\d.]+ \((\d+) of (\d+) checked\) over (\d+) cases", screen)
    assert head is not None, screen
    passed, checked, cases = (int(g) for g in head.groups())
    assert f"Command paths were checked on {checked} of {cases} case(s)" in screen
    assert f"The path passes in {passed} of {checked} " in screen
    assert checked < cases  # the shipped agent has a case without a strict path
