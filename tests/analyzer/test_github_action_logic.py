"""The Action's decision logic on crafted gate reports: every error path fails the job.

``tests/analyzer/test_github_action.py`` runs the action's bash step against real gate runs;
here ``gate run`` is replaced by a stub that writes the report files and returns an exit code,
so each way a report can be wrong (unreadable, not a gate report, an exit code that is not the
gate's, no baseline comparison) is one fast test, and so is each cell of the fail-on table.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from groundtrace.analyzer import github_action as action
from groundtrace.analyzer.github_action import COMMENT_MARKER, post_comment, pull_request_number

CODES = {"promote": 0, "manual_review": 10, "block": 20, "not_evaluable": 30}


def report(decision: str, *, new: int = 0, known: int = 0, changes: bool = True) -> dict[str, Any]:
    """A ``report.json`` as the gate writes it (only what the action reads)."""
    body: dict[str, Any] = {"decision": decision, "exit_code": CODES[decision]}
    if changes:
        body["changes"] = {
            "new": [{"case_id": f"n{i}"} for i in range(new)],
            "known": [{"case_id": f"k{i}"} for i in range(known)],
            "fixed": [],
        }
    return body


class Runner:
    """Runs :func:`action.main` with ``gate run`` stubbed and the runner's files in ``tmp``."""

    def __init__(self, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.tmp = tmp
        self.out = tmp / "gate"
        self.monkeypatch = monkeypatch
        for name in ("GITHUB_TOKEN", "GITHUB_EVENT_PATH", "GITHUB_REPOSITORY", "GITHUB_API_URL"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("GITHUB_OUTPUT", str(tmp / "output.txt"))
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp / "step-summary.md"))

    def __call__(
        self, written: dict[str, Any] | str | bytes | None, *args: str, code: int | None = None,
        summary: str | None = "## groundtrace gate\n",
    ) -> int:  # fmt: skip
        """``written``: the report (JSON object, raw text or bytes; None: none written)."""
        exit_code = code
        if exit_code is None:
            exit_code = int(written["exit_code"]) if isinstance(written, dict) else 0

        def fake_gate(args: Any) -> int:
            assert args.out == self.out
            self.out.mkdir(parents=True, exist_ok=True)
            if isinstance(written, dict):
                (self.out / "report.json").write_text(json.dumps(written), encoding="utf-8")
            elif isinstance(written, str):
                (self.out / "report.json").write_text(written, encoding="utf-8")
            elif isinstance(written, bytes):
                (self.out / "report.json").write_bytes(written)
            if summary is not None:
                (self.out / "summary.md").write_text(summary, encoding="utf-8")
            return exit_code

        self.monkeypatch.setattr(action, "_run_gate", fake_gate)
        argv = ["--baseline", "b", "--candidate", "c", "--cases", "cases.jsonl"]
        return action.main([*argv, "--out", str(self.out), *args])

    def outputs(self) -> dict[str, str]:
        path = self.tmp / "output.txt"
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        return dict(line.split("=", 1) for line in text.splitlines())

    def step_summary(self) -> str:
        path = self.tmp / "step-summary.md"
        return path.read_text(encoding="utf-8") if path.exists() else ""


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Runner:
    return Runner(tmp_path, monkeypatch)


# --- the fail-on table of docs/ci.md, every cell -----------------------------------------

TABLE = {  # decision -> exit code of the step per fail-on (block, review, never)
    "promote": (0, 0, 0),
    "manual_review": (0, 1, 0),
    "block": (1, 1, 0),
    "not_evaluable": (1, 1, 0),
}


@pytest.mark.parametrize("decision", sorted(TABLE))
@pytest.mark.parametrize("fail_on", ["block", "review", "never"])
def test_each_decision_fails_the_job_as_fail_on_says(
    run: Runner, capsys: pytest.CaptureFixture[str], decision: str, fail_on: str
) -> None:
    expected = TABLE[decision][("block", "review", "never").index(fail_on)]
    assert run(report(decision, new=1, known=1), "--fail-on", fail_on) == expected
    log = capsys.readouterr().out
    if expected:
        assert f"::error::groundtrace gate: {decision} (fail-on: {fail_on})" in log.splitlines()
    else:
        assert f"groundtrace gate: {decision}" in log.splitlines() and "::error::" not in log
    assert run.outputs()["decision"] == decision
    assert run.outputs()["exit-code"] == str(CODES[decision])


def test_fail_on_block_is_the_default(run: Runner) -> None:
    assert run(report("block")) == 1
    assert run(report("manual_review")) == 0


def test_a_not_evaluable_gate_passing_fail_on_never_warns(
    run: Runner, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(report("not_evaluable"), "--fail-on", "never") == 0
    warning = "::warning::groundtrace gate: not_evaluable, the gate could evaluate nothing"
    assert warning in capsys.readouterr().out.splitlines()
    assert run(report("block"), "--fail-on", "never") == 0
    assert "::warning::" not in capsys.readouterr().out


# --- new-failures-only -------------------------------------------------------------------


@pytest.mark.parametrize("decision", ["promote", "manual_review", "block"])
def test_new_failures_only_tolerates_known_failures_whatever_the_decision(
    run: Runner, decision: str
) -> None:
    assert run(report(decision, known=3), "--new-failures-only", "--fail-on", "review") == 0
    assert run.outputs()["new-failures"] == "0" and run.outputs()["known-failures"] == "3"


def test_new_failures_only_fails_on_one_new_failure_naming_it(
    run: Runner, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(report("promote", new=1, known=2), "--new-failures-only") == 1
    assert "::error::groundtrace gate: promote, 1 new failure(s): n0 (new-failures-only)" in (
        capsys.readouterr().out
    )
    assert run.outputs()["new-failures"] == "1"


def test_new_failure_ids_are_listed_up_to_ten(
    run: Runner, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(report("block", new=10), "--new-failures-only") == 1
    assert "n0, n1, n2, n3, n4, n5, n6, n7, n8, n9 (new" in capsys.readouterr().out
    assert run(report("block", new=12), "--new-failures-only") == 1
    log = capsys.readouterr().out
    assert "12 new failure(s): n0, n1" in log and "n9 and 2 more (new-failures-only)" in log
    assert "n10" not in log


def test_new_failures_only_on_a_gate_that_evaluated_nothing_fails(
    run: Runner, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(report("not_evaluable"), "--new-failures-only", "--fail-on", "never") == 1
    assert "::error::groundtrace gate: not_evaluable: the gate could not evaluate" in (
        capsys.readouterr().out
    )
    # nothing was compared: the counts are unknown, not "0 new failures"
    assert run.outputs()["new-failures"] == "unknown"
    assert run.outputs()["known-failures"] == "unknown"


def test_new_failures_only_without_a_baseline_comparison_fails(
    run: Runner, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(report("promote", changes=False), "--new-failures-only") == 1
    log = capsys.readouterr().out
    assert (
        f"::error::cannot read the gate's report in {run.out}: new-failures-only needs the "
        "baseline comparison of result format 1.2 (report.json has no 'changes'): upgrade "
        "groundtrace\n"
    ) in log
    assert run.outputs() == {"decision": "error", "exit-code": "0"}
    assert run(report("promote", changes=False) | {"changes": None}, "--new-failures-only") == 1


def test_counts_are_unknown_without_a_comparison(run: Runner) -> None:
    assert run(report("promote", changes=False)) == 0
    assert run.outputs()["new-failures"] == run.outputs()["known-failures"] == "unknown"
    assert run(report("not_evaluable", new=2), "--fail-on", "never") == 0
    assert run.outputs()["new-failures"] == "unknown"


# --- a report that cannot be trusted fails the job ---------------------------------------


NOT_A_REPORT = "report.json is not a gate report (decision "
MALFORMED = "report.json has a malformed 'changes'\n"


@pytest.mark.parametrize(
    ("written", "message"),
    [
        (None, "::error::the gate did not run to a decision (exit code 0); see the log above"),
        ("{not json", ": Expecting property name"),
        (b"\xff\xfe{}", ": 'utf-8' codec can't decode"),  # not UTF-8
        ("[1, 2]", ": " + NOT_A_REPORT + "None)\n"),  # JSON, not an object
        ('{"exit_code": 0}', ": " + NOT_A_REPORT + "None)\n"),
        ('{"decision": ["promote"], "exit_code": 0}', ": " + NOT_A_REPORT + "['promote'])\n"),
        ('{"decision": "ship it", "exit_code": 0}', ": " + NOT_A_REPORT + "'ship it')\n"),
        ('{"decision": "promote", "exit_code": 0, "changes": [1]}', ": " + MALFORMED),
        ('{"decision": "promote", "exit_code": 0, "changes": {"new": 3}}', ": " + MALFORMED),
        ('{"decision": "promote", "exit_code": 0, "changes": {"known": {}}}', ": " + MALFORMED),
    ],
)
def test_an_unreadable_report_fails_the_job(
    run: Runner, capsys: pytest.CaptureFixture[str], written: str | bytes | None, message: str
) -> None:
    assert run(written, "--fail-on", "never", code=0) == 1
    log = capsys.readouterr().out
    assert message in log
    if written is not None:
        assert f"::error::cannot read the gate's report in {run.out}{message}" in log
    assert run.outputs() == {"decision": "error", "exit-code": "0"}
    assert run.step_summary() == ""


def test_a_report_that_is_a_folder_fails_the_job(run: Runner) -> None:
    (run.out / "report.json").mkdir(parents=True)
    assert run(None, "--fail-on", "never", code=0) == 1
    assert run.outputs()["decision"] == "error"


def test_a_missing_summary_fails_the_job(run: Runner, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(report("promote"), summary=None) == 1
    assert "summary.md" in capsys.readouterr().out
    assert run.outputs()["decision"] == "error"


@pytest.mark.parametrize(
    ("written", "code"),
    [
        (report("promote"), 20),  # the report says 0, the gate exited 20
        (report("block") | {"exit_code": 0}, 0),  # block written with exit code 0
        (report("promote") | {"exit_code": "0"}, 0),
        ({"decision": "promote"}, 0),  # no exit code
    ],
)
def test_a_report_whose_exit_code_is_not_the_gates_fails_the_job(
    run: Runner, capsys: pytest.CaptureFixture[str], written: dict[str, Any], code: int
) -> None:
    assert run(written, "--fail-on", "never", code=code) == 1
    log = capsys.readouterr().out
    decision, recorded = written["decision"], written.get("exit_code")
    assert (
        f"{run.out}: decision {decision} with exit code {recorded} in the report, "
        f"exit code {code} run\n"
    ) in log
    assert run.outputs()["decision"] == "error"


@pytest.mark.parametrize("code", [1, 2, 3, 4, 19, 21, 40, -1])
def test_an_exit_code_without_a_decision_fails_beside_any_report(
    run: Runner, capsys: pytest.CaptureFixture[str], code: int
) -> None:
    assert run(report("promote"), "--fail-on", "never", code=code) == 1
    assert capsys.readouterr().out == (
        f"::error::the gate did not run to a decision (exit code {code}); see the log above\n"
    )
    assert run.outputs() == {"decision": "error", "exit-code": str(code)}


def test_a_good_report_writes_every_output_and_the_summary(run: Runner) -> None:
    assert run(report("manual_review", new=2, known=1), summary="## s\n") == 0
    out = run.out
    assert run.outputs() == {
        "decision": "manual_review", "exit-code": "10", "new-failures": "2",
        "known-failures": "1", "report": str(out / "report.json"),
        "summary": str(out / "summary.md"), "html": str(out / "report.html"),
        "junit": str(out / "junit.xml"),
    }  # fmt: skip
    assert run.step_summary() == "## s\n\n"


# --- the pull-request comment ------------------------------------------------------------


def test_the_comment_is_posted_only_on_a_pull_request_with_a_token(
    run: Runner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    posted: list[dict[str, Any]] = []

    def fake_post(body: str, **kwargs: Any) -> str:
        posted.append({"body": body, **kwargs})
        return "https://github.test/c/1"

    monkeypatch.setattr(action, "post_comment", fake_post)
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}))
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/app")
    assert run(report("promote")) == 0 and posted == []  # no token
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    assert run(report("promote"), "--no-comment") == 0 and posted == []
    assert run(report("block"), summary="## body\n") == 1  # posted, then the job fails
    assert posted == [
        {"body": "## body\n", "api": "https://api.github.com", "repository": "acme/app",
         "number": 7, "token": "t0ken"}
    ]  # fmt: skip
    monkeypatch.setenv("GITHUB_API_URL", "http://127.0.0.1:9")
    assert run(report("promote")) == 0 and posted[-1]["api"] == "http://127.0.0.1:9"


def test_a_comment_that_cannot_be_posted_fails_the_job(
    run: Runner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}))
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    assert run(report("promote"), "--fail-on", "never") == 1  # no GITHUB_REPOSITORY
    assert "::error::PR comment not posted: GITHUB_REPOSITORY is not set" in (
        capsys.readouterr().out.splitlines()
    )

    def refuse(body: str, **kwargs: Any) -> str:
        raise action.ActionError("GitHub API refused")

    monkeypatch.setattr(action, "post_comment", refuse)
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/app")
    assert run(report("promote"), "--fail-on", "never") == 1


@pytest.mark.parametrize(
    ("event", "number"),
    [
        ({"pull_request": {"number": 7}}, 7),
        ({"pull_request": {"number": "7"}}, None),
        ({"pull_request": {"number": True}}, None),
        ({"pull_request": 7}, None),
        ({"push": {}}, None),
        ([1], None),
    ],
)
def test_the_pull_request_number_of_an_event(tmp_path: Path, event: Any, number: int) -> None:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event))
    assert pull_request_number(str(path)) == number


def test_no_event_file_is_no_pull_request_and_a_bad_one_an_error(tmp_path: Path) -> None:
    assert pull_request_number(None) is None
    assert pull_request_number("") is None
    assert pull_request_number(str(tmp_path / "missing.json")) is None
    bad = tmp_path / "event.json"
    bad.write_text("{")
    with pytest.raises(action.ActionError, match=r"^cannot read the event file .*: Expecting"):
        pull_request_number(str(bad))


class GitHub:
    """Issue comments served through ``httpx.MockTransport`` (pages of ``per_page``)."""

    def __init__(self, comments: list[dict[str, Any]], status: int = 200) -> None:
        self.comments = comments
        self.status = status
        self.requests: list[httpx.Request] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.status >= 400:
            return httpx.Response(self.status, text="Resource not accessible by integration")
        if request.method == "GET":
            page = int(request.url.params["page"])
            size = int(request.url.params["per_page"])
            return httpx.Response(200, json=self.comments[(page - 1) * size : page * size])
        body = json.loads(request.content)["body"]
        if request.method == "PATCH":
            cid = int(request.url.path.rsplit("/", 1)[-1])
            return httpx.Response(200, json={"id": cid, "body": body, "html_url": f"u{cid}"})
        return httpx.Response(201, json={"id": 0, "body": body, "html_url": "new"})

    def post(self, body: str = "summary") -> str:
        with httpx.Client(transport=httpx.MockTransport(self.handle)) as client:
            return post_comment(
                body, api="https://api.test/", repository="acme/app", number=7, token="tk",
                client=client,
            )  # fmt: skip


def test_a_new_comment_is_posted_with_the_marker() -> None:
    github = GitHub([{"id": 1, "body": "hello"}])
    assert github.post("summary") == "new"
    get, post = github.requests
    assert (get.method, get.url.path, get.url.params["page"]) == (
        "GET", "/repos/acme/app/issues/7/comments", "1"
    )  # fmt: skip
    assert get.url.params["per_page"] == "100"
    assert (post.method, post.url.path) == ("POST", "/repos/acme/app/issues/7/comments")
    assert json.loads(post.content) == {"body": f"{COMMENT_MARKER}\nsummary"}
    assert post.headers["Authorization"] == "Bearer tk"
    assert post.headers["Accept"] == "application/vnd.github+json"
    assert post.headers["X-GitHub-Api-Version"] == "2022-11-28"


def test_the_previous_comment_is_found_on_a_later_page_and_updated() -> None:
    others = [{"id": i, "body": f"comment {i}"} for i in range(150)]
    github = GitHub([*others, {"id": 999, "body": f"{COMMENT_MARKER}\nold"}])
    assert github.post("fresh") == "u999"
    assert [(r.method, r.url.params.get("page")) for r in github.requests] == [
        ("GET", "1"), ("GET", "2"), ("PATCH", None)
    ]  # fmt: skip
    assert github.requests[-1].url.path == "/repos/acme/app/issues/comments/999"
    assert json.loads(github.requests[-1].content)["body"] == f"{COMMENT_MARKER}\nfresh"


def test_a_marker_in_the_middle_of_a_comment_is_not_ours() -> None:
    github = GitHub([{"id": 3, "body": f"quoting {COMMENT_MARKER}"}])
    assert github.post() == "new"
    assert github.requests[-1].method == "POST"


def test_paging_stops_at_a_full_last_page_bound() -> None:
    github = GitHub([{"id": i, "body": "x"} for i in range(100 * 50 + 5)])
    assert github.post() == "new"
    gets = [r for r in github.requests if r.method == "GET"]
    assert len(gets) == 50 and gets[-1].url.params["page"] == "50"


def test_paging_reads_exactly_up_to_a_short_page() -> None:
    github = GitHub([{"id": i, "body": "x"} for i in range(100)])
    github.post()
    assert [r.url.params.get("page") for r in github.requests] == ["1", "2", None]


@pytest.mark.parametrize("status", [400, 403, 404, 500])
def test_a_refusal_is_an_action_error_quoting_github(status: int) -> None:
    github = GitHub([], status=status)
    url = "https://api.test/repos/acme/app/issues/7/comments"
    reason = f"^GitHub API refused GET {url} \\(HTTP {status}\\): Resource not accessible by"
    with pytest.raises(action.ActionError, match=reason):
        github.post()


def test_a_refusal_quotes_300_characters_of_githubs_answer() -> None:
    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(422, text="x" * 299 + "yz" + "z" * 100)

    with (
        httpx.Client(transport=httpx.MockTransport(reply)) as client,
        pytest.raises(action.ActionError) as refused,
    ):
        post_comment("s", api="https://api.test", repository="a/b", number=1, token="t",
                     client=client)  # fmt: skip
    assert str(refused.value).endswith("(HTTP 422): " + "x" * 299 + "y")


def test_an_unreachable_api_is_an_action_error() -> None:
    def fail(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    with (
        httpx.Client(transport=httpx.MockTransport(fail)) as client,
        pytest.raises(
            action.ActionError,
            match=r"^GitHub API unreachable \(GET https://api\.test/repos/a/b/issues/1/comments\): "
            r"refused$",
        ),
    ):
        post_comment("s", api="https://api.test", repository="a/b", number=1, token="t",
                     client=client)  # fmt: skip


@pytest.mark.parametrize(
    ("listing", "message"),
    [
        ({"message": "x"}, r'^GitHub API listed no comments: \{"message": ?"x"\}$'),
        ("not json", r"^GitHub API answered no JSON: not json$"),
    ],
)
def test_a_listing_that_is_not_a_list_is_an_action_error(listing: Any, message: str) -> None:
    def reply(request: httpx.Request) -> httpx.Response:
        if isinstance(listing, str):
            return httpx.Response(200, text=listing)
        return httpx.Response(200, json=listing)

    with (
        httpx.Client(transport=httpx.MockTransport(reply)) as client,
        pytest.raises(action.ActionError, match=message),
    ):
        post_comment("s", api="https://api.test", repository="a/b", number=1, token="t",
                     client=client)  # fmt: skip


def test_the_parser_defaults_and_choices() -> None:
    args = action._parser().parse_args(["--baseline", "b", "--candidate", "c", "--cases", "k"])
    assert (args.baseline, args.candidate, args.cases) == (["b"], ["c"], Path("k"))
    assert (args.out, args.profile, args.fail_on) == (
        Path("groundtrace-gate"), "balanced_default", "block"
    )  # fmt: skip
    assert args.comment is True and args.new_failures_only is False
    two = action._parser().parse_args(
        ["--baseline", "b1", "--baseline", "b2", "--candidate", "c", "--cases", "k",
         "--no-comment", "--new-failures-only", "--fail-on", "review"]
    )  # fmt: skip
    assert two.baseline == ["b1", "b2"] and two.comment is False and two.new_failures_only
    with pytest.raises(SystemExit):
        action._parser().parse_args(["--baseline", "b", "--candidate", "c", "--cases", "k",
                                     "--fail-on", "sometimes"])  # fmt: skip
    for required in ("--baseline", "--candidate", "--cases"):
        argv = ["--baseline", "b", "--candidate", "c", "--cases", "k"]
        i = argv.index(required)
        with pytest.raises(SystemExit):
            action._parser().parse_args(argv[:i] + argv[i + 2 :])
    assert action._parser().prog == "groundtrace-gate-action"
    help_text = " ".join(action._parser().format_help().split())
    assert (
        "--new-failures-only fail only on a case that fails now and that the baseline did not "
        "evaluate as failing (or when the gate evaluated nothing); --fail-on is then not used"
    ) in help_text
    assert action.FAILING == {
        "block": {"block", "not_evaluable"},
        "review": {"block", "manual_review", "not_evaluable"},
        "never": set(),
    }
    assert action.DECISION_CODES == {
        "promote": 0, "manual_review": 10, "block": 20, "not_evaluable": 30
    }  # fmt: skip
    assert action.DECIDED == {0, 10, 20, 30}


class FakeCommand:
    def __init__(self, result: object) -> None:
        self.result = result
        self.calls: list[tuple[list[str], str, bool]] = []

    def main(self, argv: list[str], prog_name: str, standalone_mode: bool) -> object:
        self.calls.append((argv, prog_name, standalone_mode))
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result


@pytest.mark.parametrize(
    ("result", "code"), [(None, 0), (20, 20), (SystemExit(2), 2), (SystemExit(None), 0)]
)
def test_the_gate_runs_in_process_with_the_actions_arguments(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, result: object, code: int
) -> None:
    import typer.main

    fake = FakeCommand(result)
    monkeypatch.setattr(typer.main, "get_command", lambda app: fake)
    args = action._parser().parse_args(
        ["--baseline", "b1", "--baseline", "b2", "--candidate", "c", "--cases", "k.jsonl",
         "--out", str(tmp_path), "--profile", "decision_grade"]
    )  # fmt: skip
    assert action._run_gate(args) == code
    assert fake.calls == [
        (
            ["gate", "run", "--cases", "k.jsonl", "--out", str(tmp_path),
             "--profile", "decision_grade", "--junit", str(tmp_path / "junit.xml"),
             "--baseline", "b1", "--baseline", "b2", "--candidate", "c"],
            "groundtrace",
            False,
        )
    ]  # fmt: skip


def test_the_comment_client_has_a_timeout_and_is_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[httpx.Client] = []
    github = GitHub([])
    real = httpx.Client

    def client(**kwargs: Any) -> httpx.Client:
        assert kwargs == {"timeout": 30.0}
        made.append(real(transport=httpx.MockTransport(github.handle), **kwargs))
        return made[-1]

    monkeypatch.setattr(action.httpx, "Client", client)
    url = post_comment("s", api="https://api.test", repository="a/b", number=1, token="t")
    assert url == "new" and len(made) == 1 and made[0].is_closed


def test_the_posted_comment_url_is_logged(
    run: Runner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.setattr(action, "post_comment", lambda body, **kw: "https://github.test/c/9")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}))
    for name, value in (("GITHUB_EVENT_PATH", str(event)), ("GITHUB_TOKEN", "t"),
                        ("GITHUB_REPOSITORY", "a/b")):  # fmt: skip
        monkeypatch.setenv(name, value)
    assert run(report("promote")) == 0
    assert "PR comment: https://github.test/c/9\ngroundtrace gate: promote\n" in (
        capsys.readouterr().out
    )


@pytest.mark.parametrize("created", [[], {"id": 1}])
def test_a_created_comment_without_a_url_returns_empty(created: Any) -> None:
    def reply(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json=[])
        return httpx.Response(201, json=created)

    with httpx.Client(transport=httpx.MockTransport(reply)) as client:
        assert post_comment("s", api="https://api.test", repository="a/b", number=1, token="t",
                            client=client) == ""  # fmt: skip


def test_the_marker_is_the_one_earlier_comments_carry() -> None:
    # changing it would add a second comment to every open pull request
    assert COMMENT_MARKER == "<!-- groundtrace-gate -->"


def test_the_module_runs_as_the_actions_command() -> None:
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "groundtrace.analyzer.github_action", "--help"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: groundtrace-gate-action")


@pytest.mark.parametrize(
    ("reply", "head"),
    [
        (httpx.Response(200, text="{" + "x" * 400), "GitHub API answered no JSON: "),
        (httpx.Response(200, json={"x": "y" * 400}), "GitHub API listed no comments: "),
    ],
)
def test_an_unexpected_answer_is_quoted_to_300_characters(reply: httpx.Response, head: str) -> None:
    with (
        httpx.Client(transport=httpx.MockTransport(lambda request: reply)) as client,
        pytest.raises(action.ActionError) as failed,
    ):
        post_comment("s", api="https://api.test", repository="a/b", number=1, token="t",
                     client=client)  # fmt: skip
    assert str(failed.value) == head + reply.text[:300]
