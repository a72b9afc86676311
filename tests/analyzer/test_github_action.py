"""The GitHub Action run locally: action.yml's gate step in bash with a simulated runner.

The runner's files (GITHUB_STEP_SUMMARY, GITHUB_OUTPUT, GITHUB_EVENT_PATH) are temp files, and
the GitHub REST API is a loopback server that keeps the PR's comments, so creating and then
updating the comment is observable. The gate runs between two demo runs of the test app.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from groundtrace.analyzer.github_action import COMMENT_MARKER
from tests.analyzer.gate.test_gate_changes import make_partial_baseline, make_runs

REPO = Path(__file__).resolve().parents[2]


class FakeGitHub:
    """Issue comments of one repository: GET (paged), POST and PATCH, on 127.0.0.1."""

    def __init__(self) -> None:
        self.comments: dict[int, dict[str, Any]] = {}
        self.calls: list[tuple[str, str, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _reply(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _body(self) -> dict[str, Any]:
                size = int(self.headers.get("Content-Length", "0"))
                return json.loads(self.rfile.read(size)) if size else {}

            def _record(self) -> None:
                outer.calls.append((self.command, self.path, self.headers["Authorization"]))

            def do_GET(self) -> None:
                self._record()
                self._reply(200, list(outer.comments.values()))

            def do_POST(self) -> None:
                self._record()
                match = re.fullmatch(r"/repos/acme/app/issues/(\d+)/comments", self.path)
                if not match:
                    return self._reply(404, {"message": "Not Found"})
                cid = len(outer.comments) + 1
                outer.comments[cid] = {
                    "id": cid, "body": self._body()["body"],
                    "html_url": f"https://github.test/acme/app/pull/{match[1]}#c{cid}",
                }  # fmt: skip
                return self._reply(201, outer.comments[cid])

            def do_PATCH(self) -> None:
                self._record()
                cid = int(self.path.rsplit("/", 1)[-1])
                outer.comments[cid]["body"] = self._body()["body"]
                self._reply(200, outer.comments[cid])

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub()
    fake.thread.start()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()
    fake.thread.join(timeout=10)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_runs(tmp_path_factory.mktemp("action"))


def gate_step() -> dict[str, Any]:
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    step: dict[str, Any] = next(s for s in action["runs"]["steps"] if s.get("id") == "gate")
    return step


def run_action(runs: Path, tmp: Path, api: str, **inputs: str) -> tuple[int, str, Path]:
    """Run the gate step's bash script as the runner would, with ``inputs`` substituted."""
    step = gate_step()
    defaults = yaml.safe_load((REPO / "action.yml").read_text())["inputs"]
    values = {k: str(v.get("default", "")) for k, v in defaults.items()}
    values.update(
        baseline=str(runs / "baseline"), candidate=str(runs / "candidate"),
        cases=str(runs / "cases.jsonl"), out=str(tmp / "gate"),
    )  # fmt: skip
    values.update(inputs)
    values["github-token"] = inputs.get("github-token", "t0ken")
    env = {
        k: re.sub(r"\$\{\{ inputs\.([a-z-]+) \}\}", lambda m: values[m[1]], str(v))
        for k, v in step["env"].items()
    }
    event = tmp / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}))
    for name in ("summary.md", "output.txt"):
        (tmp / name).touch()
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        GITHUB_STEP_SUMMARY=str(tmp / "summary.md"), GITHUB_OUTPUT=str(tmp / "output.txt"),
        GITHUB_EVENT_PATH=str(event), GITHUB_REPOSITORY="acme/app", GITHUB_API_URL=api,
        HOME=os.environ.get("HOME", str(tmp)),
    )  # fmt: skip
    proc = subprocess.run(
        ["bash", "-e", "-c", step["run"]], env=env, capture_output=True, text=True,
        timeout=600, cwd=tmp, check=False,
    )  # fmt: skip
    return proc.returncode, proc.stdout + proc.stderr, tmp


def test_the_action_publishes_the_summary_comments_once_and_fails_on_block(
    runs: Path, tmp_path: Path, github: FakeGitHub
) -> None:
    code, log, tmp = run_action(runs, tmp_path, github.url)
    assert code == 1, log
    assert "::error::groundtrace gate: block (fail-on: block)" in log
    summary = (tmp / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("## groundtrace gate: ⛔ block")
    assert "### New failures (passed in the baseline): 1" in summary
    outputs = dict(line.split("=", 1) for line in (tmp / "output.txt").read_text().splitlines())
    assert outputs["decision"] == "block" and outputs["exit-code"] == "20"
    assert Path(outputs["report"]).is_file()
    assert (tmp / "gate" / "junit.xml").is_file()
    (comment,) = github.comments.values()
    assert comment["body"] == f"{COMMENT_MARKER}\n{summary.rstrip(chr(10))}\n"
    assert [c[0] for c in github.calls] == ["GET", "POST"]
    assert all(c[2] == "Bearer t0ken" for c in github.calls)

    # a second push: the same comment is updated, none added
    code, log, _ = run_action(runs, tmp_path, github.url)
    assert code == 1, log
    assert len(github.comments) == 1
    assert [c[0] for c in github.calls] == ["GET", "POST", "GET", "PATCH"]


def test_fail_on_never_and_no_comment(runs: Path, tmp_path: Path, github: FakeGitHub) -> None:
    code, log, tmp = run_action(
        runs, tmp_path, github.url, **{"fail-on": "never", "comment": "false"}
    )
    assert code == 0, log
    assert "groundtrace gate: block" in log
    assert github.calls == []
    assert "decision=block" in (tmp / "output.txt").read_text()


def test_a_refused_comment_fails_the_step_with_the_reason(runs: Path, tmp_path: Path) -> None:
    code, log, _ = run_action(runs, tmp_path, "http://127.0.0.1:9", **{"fail-on": "never"})
    assert code == 1
    assert "::error::PR comment not posted: GitHub API unreachable" in log


def test_a_gate_that_evaluated_nothing_fails_the_job(
    runs: Path, tmp_path: Path, github: FakeGitHub
) -> None:
    # case ids that match no trace: the gate decides not_evaluable (exit 30)
    cases = tmp_path / "unmatched.jsonl"
    lines = (runs / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    cases.write_text("".join(re.sub(r'"case_id": "q', '"case_id": "zz', x) + "\n" for x in lines))
    code, log, tmp = run_action(runs, tmp_path, github.url, cases=str(cases))
    assert code == 1, log
    assert "::error::groundtrace gate: not_evaluable (fail-on: block)" in log
    assert "decision=not_evaluable\nexit-code=30" in (tmp / "output.txt").read_text()
    # new-failures-only has no new failure to find either: it fails closed too
    code, log, _ = run_action(
        runs, tmp_path, github.url, cases=str(cases), **{"new-failures-only": "true"}
    )
    assert code == 1, log
    assert "::error::groundtrace gate: not_evaluable: the gate could not evaluate" in log
    # it compared nothing: its counts are unknown, not "16 known, 0 new"
    assert "new-failures=unknown\nknown-failures=unknown\n" in (tmp / "output.txt").read_text()
    # only an explicit fail-on never lets it through, with a warning
    code, log, _ = run_action(runs, tmp_path, github.url, cases=str(cases), **{"fail-on": "never"})
    assert code == 0, log
    assert "::warning::groundtrace gate: not_evaluable" in log


def test_new_failures_only_passes_known_failures_and_fails_a_new_one(
    runs: Path, tmp_path: Path, github: FakeGitHub
) -> None:
    # a PR that changes nothing: q2 and q3 block in both runs, nothing new -> block
    code, log, tmp = run_action(
        runs, tmp_path, github.url, baseline=str(runs / "candidate"),
        **{"new-failures-only": "true"},
    )  # fmt: skip
    assert code == 0, log
    outputs = (tmp / "output.txt").read_text()
    assert "decision=block\n" in outputs and "new-failures=0\nknown-failures=2\n" in outputs
    assert "groundtrace gate: block" in log and "::error::" not in log
    # the same PR with the default fail-on: block fails the job
    code, log, _ = run_action(runs, tmp_path, github.url, baseline=str(runs / "candidate"))
    assert code == 1 and "::error::groundtrace gate: block (fail-on: block)" in log
    # the real candidate breaks q2, which passed in the baseline
    code, log, _ = run_action(runs, tmp_path, github.url, **{"new-failures-only": "true"})
    assert code == 1, log
    assert "::error::groundtrace gate: block, 1 new failure(s): q2 (new-failures-only)" in log
    # every run posted or updated the one comment
    assert len(github.comments) == 1


def test_new_failures_only_fails_on_cases_the_baseline_has_no_trace_for(
    runs: Path, tmp_path: Path, github: FakeGitHub
) -> None:
    # the baseline artifact holds q1's trace only (a partial artifact, or a PR adding cases)
    partial = make_partial_baseline(runs, {"q1"})
    code, log, tmp = run_action(
        runs, tmp_path, github.url, baseline=str(partial), **{"new-failures-only": "true"}
    )
    assert code == 1, log
    assert "::error::groundtrace gate: block, 2 new failure(s): q2, q3 (new-failures-only)" in log
    assert "new-failures=2\nknown-failures=0\n" in (tmp / "output.txt").read_text()


@pytest.mark.parametrize("name", ["new-failures-only", "comment"])
def test_a_boolean_input_that_is_not_true_or_false_fails(
    runs: Path, tmp_path: Path, github: FakeGitHub, name: str
) -> None:
    code, log, _ = run_action(runs, tmp_path, github.url, **{name: "yes"})
    assert code == 1
    assert f"::error::{name} must be true or false, not 'yes'" in log
    assert github.calls == []


def test_a_gate_that_did_not_run_fails_even_beside_an_old_report(
    runs: Path, tmp_path: Path, github: FakeGitHub
) -> None:
    code, log, tmp = run_action(runs, tmp_path, github.url, **{"fail-on": "never"})
    assert code == 0, log
    (tmp / "output.txt").write_text("")
    # a missing case file: gate run exits 2 and the report of the previous run is still there
    code, log, _ = run_action(
        runs, tmp_path, github.url, cases=str(tmp / "missing.jsonl"), **{"fail-on": "never"}
    )
    assert code == 1, log
    assert "::error::the gate did not run to a decision (exit code 2)" in log
    assert (tmp / "output.txt").read_text() == "decision=error\nexit-code=2\n"


def test_the_action_on_a_gate_between_two_demo_runs(tmp_path: Path, github: FakeGitHub) -> None:
    from groundtrace.analyzer.demo import DemoConfig, run_demo

    runs = tmp_path / "demo"
    for name, top_k in (("baseline", 5), ("candidate", 1)):
        run_demo(DemoConfig(model="lexical", questions=6, out=runs / name, top_k=top_k))
    (runs / "cases.jsonl").write_bytes((runs / "baseline" / "cases.jsonl").read_bytes())
    for name in ("baseline", "candidate"):
        (runs / name / "cases.jsonl").unlink()
    code, log, tmp = run_action(runs, tmp_path, github.url, **{"fail-on": "review"})
    report = json.loads((tmp / "gate" / "report.json").read_text(encoding="utf-8"))
    assert code == (0 if report["decision"] == "promote" else 1), log
    failing = {c["case_id"] for c in report["cases"] if c["decision"] != "promote"}
    changes = report["changes"]
    assert {c["case_id"] for c in changes["new"] + changes["known"]} == failing
    assert all(c["baseline"] != "promote" for c in changes["known"] + changes["fixed"])
    summary = (tmp / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("## groundtrace gate: ")
    for key, title in (("known", "Failing in the baseline too"), ("fixed", "Fixed")):
        assert (f"{title}" in summary) == bool(changes[key])
    (comment,) = github.comments.values()
    assert comment["body"].startswith(COMMENT_MARKER)
    outputs = (tmp / "output.txt").read_text()
    assert f"decision={report['decision']}" in outputs


def test_the_install_step_pins_groundtrace_with_plots_and_constraints(tmp_path: Path) -> None:
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    step = next(s for s in action["runs"]["steps"] if s.get("name") == "Install groundtrace")
    fake = tmp_path / "bin" / "python"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\necho "$@"\n')
    fake.chmod(0o755)
    path = f"{fake.parent}{os.pathsep}{os.environ['PATH']}"
    pin = ["--constraint", f"{REPO}/constraints.txt"]
    for install, constraints, expected in (
        ("", "", [*pin, f"{REPO}[plots]"]),
        ("groundtrace[plots]==0.1.0", "", [*pin, "groundtrace[plots]==0.1.0"]),
        (
            "groundtrace[plots]==0.1.0",
            "c.txt",
            ["--constraint", "c.txt", "groundtrace[plots]==0.1.0"],
        ),
        ("", "none", [f"{REPO}[plots]"]),
    ):
        proc = subprocess.run(
            ["bash", "-e", "-c", step["run"]], capture_output=True, text=True, check=True,
            env={"PATH": path, "GT_INSTALL": install, "GT_CONSTRAINTS": constraints,
                 "GITHUB_ACTION_PATH": str(REPO)},
        )  # fmt: skip
        assert proc.stdout.split() == ["-m", "pip", "install", "--quiet", *expected]
    assert (REPO / "constraints.txt").is_file()


#: The first major of each action that runs on a Node runtime GitHub still supports (node24).
NODE24_MAJORS = {"actions/setup-python": 6, "actions/upload-artifact": 6}


def test_the_actions_used_run_on_a_supported_node_runtime() -> None:
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    used = [s["uses"] for s in action["runs"]["steps"] if "uses" in s]
    assert {u.split("@")[0] for u in used} == set(NODE24_MAJORS)
    for uses in used:
        name, _, ref = uses.partition("@")
        assert int(ref.removeprefix("v").split(".")[0]) >= NODE24_MAJORS[name], uses


def test_the_upload_step_uploads_the_html_report_and_the_junit_file(
    runs: Path, tmp_path: Path, github: FakeGitHub
) -> None:
    code, log, tmp = run_action(runs, tmp_path, github.url, **{"fail-on": "never"})
    assert code == 0, log
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    upload = next(s for s in action["runs"]["steps"] if "upload-artifact" in s.get("uses", ""))
    # runs after a failing gate step too, whenever the gate wrote a report
    assert (
        upload["if"].startswith("${{ always() &&") and "steps.gate.outputs.report" in upload["if"]
    )
    assert upload["with"]["if-no-files-found"] == "error"
    out = str(tmp / "gate")
    paths = [
        Path(line.replace("${{ inputs.out }}", out))
        for line in upload["with"]["path"].splitlines()
        if line.strip()
    ]
    assert {p.name for p in paths} >= {"report.html", "junit.xml", "report.json"}
    assert all(p.exists() for p in paths), [p for p in paths if not p.exists()]
    assert (
        (tmp / "gate" / "report.html")
        .read_text(encoding="utf-8")
        .lower()
        .startswith("<!doctype html>")
    )
    outputs = dict(line.split("=", 1) for line in (tmp / "output.txt").read_text().splitlines())
    assert Path(outputs["html"]) == tmp / "gate" / "report.html"
    assert Path(outputs["junit"]) == tmp / "gate" / "junit.xml"
    assert (outputs["new-failures"], outputs["known-failures"]) == ("1", "1")
