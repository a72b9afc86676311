"""The GitHub Action's logic (``action.yml``): run the gate, publish its summary, fail on block.

``python -m groundtrace.analyzer.github_action --baseline B --candidate C --cases CASES``

1. runs ``groundtrace gate run`` (report folder ``--out``, JUnit XML beside it);
2. appends the Markdown summary to ``$GITHUB_STEP_SUMMARY`` and writes ``decision``,
   ``exit-code``, ``report`` and ``summary`` to ``$GITHUB_OUTPUT``;
3. when ``GITHUB_TOKEN`` is set and ``$GITHUB_EVENT_PATH`` is a pull-request event, posts the
   summary as a PR comment, or updates the comment it posted before (found by a hidden
   marker), through the REST API at ``$GITHUB_API_URL``;
4. exits 1 when the decision is one ``--fail-on`` names (``block``: block only; ``review``:
   anything but promote; ``never``), or when the gate could not run; otherwise 0.

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
    "block": {"block"},
    "review": {"block", "manual_review", "not_evaluable"},
    "never": set(),
}
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
    return number if isinstance(number, int) else None


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
            comments: list[dict[str, Any]] = listed.json()
            existing = next(
                (c for c in comments if str(c.get("body", "")).startswith(COMMENT_MARKER)), None
            )
            if existing is not None or len(comments) < 100:
                break
        if existing is not None:
            reply = _call(http, "PATCH", f"{base}/issues/comments/{existing['id']}", headers,
                          json={"body": text})  # fmt: skip
        else:
            reply = _call(http, "POST", f"{base}/issues/{number}/comments", headers,
                          json={"body": text})  # fmt: skip
        return str(reply.json().get("html_url", ""))
    finally:
        if client is None:
            http.close()


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
    parser = argparse.ArgumentParser(prog="groundtrace-gate-action", description=__doc__)
    parser.add_argument("--baseline", action="append", required=True)
    parser.add_argument("--candidate", action="append", required=True)
    parser.add_argument("--cases", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=Path("groundtrace-gate"))
    parser.add_argument("--profile", default="balanced_default")
    parser.add_argument("--fail-on", choices=sorted(FAILING), default="block")
    parser.add_argument("--comment", action=argparse.BooleanOptionalAction, default=True)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the action; returns the step's exit code."""
    args = _parser().parse_args(argv)
    code = _run_gate(args)
    report_path = args.out / "report.json"
    if not report_path.is_file():
        print(f"::error::the gate did not run (exit code {code}); see the log above")
        _append("GITHUB_OUTPUT", f"decision=error\nexit-code={code}\n")
        return 1
    report = json.loads(report_path.read_text(encoding="utf-8"))
    summary_path = args.out / "summary.md"
    summary = summary_path.read_text(encoding="utf-8")
    decision = str(report["decision"])
    _append("GITHUB_STEP_SUMMARY", summary + "\n")
    _append(
        "GITHUB_OUTPUT",
        f"decision={decision}\nexit-code={code}\nreport={report_path}\nsummary={summary_path}\n",
    )
    failed = decision in FAILING[args.fail_on]
    if code not in {0, 10, 20, 30}:  # the decision was made but a later step failed
        print(f"::error::groundtrace gate exited {code} after deciding {decision}")
        failed = True
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
    if failed:
        print(f"::error::groundtrace gate: {decision} (fail-on: {args.fail_on})")
        return 1
    print(f"groundtrace gate: {decision}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
