"""The GitHub Action's logic (``action.yml``): run the gate, publish its summary, fail closed.

``python -m groundtrace.analyzer.github_action --baseline B --candidate C --cases CASES``

1. runs ``groundtrace gate run`` (report folder ``--out``, JUnit XML beside it);
2. appends the Markdown summary to ``$GITHUB_STEP_SUMMARY`` and writes ``decision``,
   ``exit-code``, ``new-failures``, ``known-failures``, ``report``, ``summary``, ``html`` and
   ``junit`` to ``$GITHUB_OUTPUT``;
3. when ``GITHUB_TOKEN`` is set and ``$GITHUB_EVENT_PATH`` is a pull-request event, posts the
   summary as a PR comment, or updates the comment it posted before (found by a hidden
   marker), through the REST API at ``$GITHUB_API_URL``;
4. exits 1 when the job should fail, otherwise 0. It fails closed: on a decision ``--fail-on``
   names (``block``: block and not evaluable; ``review``: anything but promote; ``never``:
   no decision), or with ``--new-failures-only`` when a case fails that the baseline did not
   evaluate as failing, or the gate could evaluate nothing, or the report has no baseline
   comparison (the decision itself is then not used); and always when the gate did not run
   to a decision, or its ``report.json`` cannot be read or disagrees with its exit code.
   ``new-failures`` and ``known-failures`` are ``unknown`` when nothing was compared.

A PR comment that cannot be posted is an error (exit 1) with GitHub's reason; pass
``--no-comment`` where the token may not write (e.g. pull requests from forks).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

__all__ = ["COMMENT_MARKER", "main", "post_comment", "pull_request_number"]

#: Hidden first line of the PR comment; an existing comment with it is updated, not duplicated.
COMMENT_MARKER = "<!-- groundtrace-gate -->"
#: Decisions that fail the step, per ``--fail-on``.
FAILING = {
    "block": {"block", "not_evaluable"},
    "review": {"block", "manual_review", "not_evaluable"},
    "never": set(),
}
#: The exit code of ``gate run`` for each decision; other exit codes carry no decision.
DECISION_CODES = {"promote": 0, "manual_review": 10, "block": 20, "not_evaluable": 30}
DECIDED = set(DECISION_CODES.values())
#: Case ids spelled out in a failure annotation (the rest are counted).
SHOWN = 10
#: Comment pages read when looking for the previous comment (100 comments each).
MAX_PAGES = 50
TIMEOUT_S = 30.0


class ActionError(Exception):
    """The action cannot complete (reported as a workflow error annotation)."""


def _append(variable: str, text: str) -> None:
    path = os.environ.get(variable)
    if path:
        with Path(path).open("a", encoding="utf-8") as out:
            out.write(text)


def pull_request_number(event_path: str | None) -> int | None:
    """The pull-request number of the event that triggered the workflow, if it is one."""
    if not event_path or not Path(event_path).is_file():
        return None
    try:
        event = json.loads(Path(event_path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ActionError(f"cannot read the event file {event_path}: {exc}") from None
    pr = event.get("pull_request") if isinstance(event, dict) else None
    number = pr.get("number") if isinstance(pr, dict) else None
    return number if isinstance(number, int) and not isinstance(number, bool) else None


def post_comment(
    body: str, *, api: str, repository: str, number: int, token: str,
    client: httpx.Client | None = None,
) -> str:  # fmt: skip
    """Create or update the gate's PR comment; returns its URL.

    Raises:
        ActionError: GitHub refused or could not be reached (its reason is quoted).
    """
    text = f"{COMMENT_MARKER}\n{body}"
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28",
    }
    base = f"{api.rstrip('/')}/repos/{repository}"
    http = client or httpx.Client(timeout=TIMEOUT_S)
    try:
        existing = None
        for page in range(1, MAX_PAGES + 1):  # bounded paging
            listed = _call(http, "GET", f"{base}/issues/{number}/comments", headers,
                           params={"per_page": 100, "page": page})  # fmt: skip
            comments = _json(listed)
            if not isinstance(comments, list):
                raise ActionError(f"GitHub API listed no comments: {listed.text[:300]}")
            existing = next(
                (
                    c
                    for c in comments
                    if isinstance(c, dict) and str(c.get("body", "")).startswith(COMMENT_MARKER)
                ),
                None,
            )
            if existing is not None or len(comments) < 100:
                break
        if existing is not None:
            reply = _call(http, "PATCH", f"{base}/issues/comments/{existing['id']}", headers,
                          json={"body": text})  # fmt: skip
        else:
            reply = _call(http, "POST", f"{base}/issues/{number}/comments", headers,
                          json={"body": text})  # fmt: skip
        created = _json(reply)
        return str(created.get("html_url", "")) if isinstance(created, dict) else ""
    finally:
        if client is None:
            http.close()


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        raise ActionError(f"GitHub API answered no JSON: {response.text[:300]}") from None


def _call(
    http: httpx.Client, method: str, url: str, headers: dict[str, str], **kwargs: Any
) -> httpx.Response:
    try:
        response = http.request(method, url, headers=headers, **kwargs)
    except httpx.HTTPError as exc:
        raise ActionError(f"GitHub API unreachable ({method} {url}): {exc}") from None
    if response.status_code >= 400:
        raise ActionError(
            f"GitHub API refused {method} {url} (HTTP {response.status_code}): "
            f"{response.text[:300]}"
        )
    return response


def _run_gate(args: argparse.Namespace) -> int:
    """``groundtrace gate run`` in this process; returns its exit code."""
    import typer

    from groundtrace.analyzer.cli import build_app

    argv = ["gate", "run", "--cases", str(args.cases), "--out", str(args.out),
            "--profile", args.profile, "--junit", str(args.out / "junit.xml")]  # fmt: skip
    for path in args.baseline:
        argv += ["--baseline", path]
    for path in args.candidate:
        argv += ["--candidate", path]
    command = typer.main.get_command(build_app())
    try:
        code = command.main(argv, prog_name="groundtrace", standalone_mode=False)
    except SystemExit as exc:  # pragma: no cover - click exits on usage errors
        return int(exc.code or 0)
    return int(code or 0)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="groundtrace-gate-action",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--baseline", action="append", required=True)
    parser.add_argument("--candidate", action="append", required=True)
    parser.add_argument("--cases", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=Path("groundtrace-gate"))
    parser.add_argument("--profile", default="balanced_default")
    parser.add_argument("--fail-on", choices=sorted(FAILING), default="block")
    parser.add_argument(
        "--new-failures-only",
        action="store_true",
        help="fail only on a case that fails now and that the baseline did not evaluate as "
        "failing (or when the gate evaluated nothing); --fail-on is then not used",
    )
    parser.add_argument("--comment", action=argparse.BooleanOptionalAction, default=True)
    return parser


def _ids(entries: list[dict[str, Any]]) -> str:
    ids = [str(e.get("case_id")) for e in entries]
    more = f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else ""
    return ", ".join(ids[:SHOWN]) + more


def _failure(report: dict[str, Any], fail_on: str, *, new_failures_only: bool) -> str | None:
    """Why the job fails on this gate report (``report.json`` as JSON), or ``None``.

    Raises:
        ActionError: ``--new-failures-only`` on a report without a baseline comparison.
    """
    decision = str(report["decision"])
    if not new_failures_only:
        return f"{decision} (fail-on: {fail_on})" if decision in FAILING[fail_on] else None
    if decision == "not_evaluable":  # nothing compared: no evidence that nothing broke
        return "not_evaluable: the gate could not evaluate the candidate (new-failures-only)"
    changes = report.get("changes")
    if not isinstance(changes, dict):
        raise ActionError(
            "new-failures-only needs the baseline comparison of result format 1.2 "
            "(report.json has no 'changes'): upgrade groundtrace"
        )
    new: list[dict[str, Any]] = changes.get("new", [])
    if new:
        return f"{decision}, {len(new)} new failure(s): {_ids(new)} (new-failures-only)"
    return None


def _read_report(out: Path, code: int) -> tuple[dict[str, Any], str]:
    """The gate's ``report.json`` (checked against the exit code ``code``) and ``summary.md``.

    Raises:
        ActionError: a file cannot be read, is not a gate report, or its exit code is not the
            one the gate exited with.
    """
    try:
        report = json.loads((out / "report.json").read_text(encoding="utf-8"))
        summary = (out / "summary.md").read_text(encoding="utf-8")
    except (OSError, ValueError) as exc:  # ValueError: JSON or UTF-8 decoding
        raise ActionError(str(exc)) from None
    decision = report.get("decision") if isinstance(report, dict) else None
    if not isinstance(decision, str) or decision not in DECISION_CODES:
        raise ActionError(f"report.json is not a gate report (decision {decision!r})")
    if report.get("exit_code") != code or DECISION_CODES[decision] != code:
        raise ActionError(
            f"decision {decision} with exit code {report.get('exit_code')} in the report, "
            f"exit code {code} run"
        )
    changes = report.get("changes")
    if changes is not None and not (
        isinstance(changes, dict)
        and all(isinstance(changes.get(k, []), list) for k in ("new", "known"))
    ):
        raise ActionError("report.json has a malformed 'changes'")
    return report, summary


def _counts(report: dict[str, Any]) -> tuple[str, str]:
    """The ``new-failures`` and ``known-failures`` outputs.

    ``unknown`` when nothing was compared: the gate could evaluate nothing (``not_evaluable``)
    or the report has no baseline comparison, so no count may read as "0 new failures".
    """
    changes = report.get("changes")
    if report["decision"] == "not_evaluable" or not isinstance(changes, dict):
        return "unknown", "unknown"
    return str(len(changes.get("new", []))), str(len(changes.get("known", [])))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the action; returns the step's exit code."""
    args = _parser().parse_args(argv)
    code = _run_gate(args)
    report_path = args.out / "report.json"
    if code not in DECIDED or not report_path.is_file():
        print(f"::error::the gate did not run to a decision (exit code {code}); see the log above")
        _append("GITHUB_OUTPUT", f"decision=error\nexit-code={code}\n")
        return 1
    try:
        report, summary = _read_report(args.out, code)
        reason = _failure(report, args.fail_on, new_failures_only=args.new_failures_only)
    except ActionError as exc:
        print(f"::error::cannot read the gate's report in {args.out}: {exc}")
        _append("GITHUB_OUTPUT", f"decision=error\nexit-code={code}\n")
        return 1
    decision = str(report["decision"])
    summary_path = args.out / "summary.md"
    new_count, known_count = _counts(report)
    _append("GITHUB_STEP_SUMMARY", summary + "\n")
    _append(
        "GITHUB_OUTPUT",
        f"decision={decision}\nexit-code={code}\n"
        f"new-failures={new_count}\nknown-failures={known_count}\n"
        f"report={report_path}\nsummary={summary_path}\n"
        f"html={args.out / 'report.html'}\njunit={args.out / 'junit.xml'}\n",
    )
    token = os.environ.get("GITHUB_TOKEN", "")
    number = pull_request_number(os.environ.get("GITHUB_EVENT_PATH"))
    if args.comment and token and number is not None:
        try:
            repository = os.environ.get("GITHUB_REPOSITORY")
            if not repository:
                raise ActionError("GITHUB_REPOSITORY is not set")
            url = post_comment(
                summary,
                api=os.environ.get("GITHUB_API_URL", "https://api.github.com"),
                repository=repository,
                number=number,
                token=token,
            )
        except ActionError as exc:
            print(f"::error::PR comment not posted: {exc}")
            return 1
        print(f"PR comment: {url}")
    if reason is not None:
        print(f"::error::groundtrace gate: {reason}")
        return 1
    if decision == "not_evaluable":  # only reached with --fail-on never
        print("::warning::groundtrace gate: not_evaluable, the gate could evaluate nothing")
    print(f"groundtrace gate: {decision}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
