"""Every HTML report, generated from real (small) runs, read in a real headless Chromium.

The runs: two demo runs of the HotpotQA app on the built-in lexical reader (top-5 with the
evidence interventions and the licence audit, and top-2), the gate between them, and the
document agent's command paths. Each ``report.html`` is loaded at 1280x800 in Chromium (the
system package, driven through Playwright), and the test fails on a console error or an
uncaught page error, a request for anything outside the file (the page must be
self-contained), horizontal overflow (``scrollWidth > innerWidth``), a table wider than its
own box (its right part hidden behind a scrollbar at the table's end), an image that did not
decode, or raw Markdown in the visible text; the audit page must stay a page a person can
read (at most ``MAX_AUDIT_HEIGHT`` px tall: the per-question pairs are collapsed). A
full-page screenshot of each report is saved into the pytest temporary directory
(``<basetemp>/screenshots0/<report>.png``; the path is printed with ``-s`` and recorded as the
test's ``screenshot`` property).
"""

from __future__ import annotations

import functools
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

#: Text that only unrendered Markdown shows.
RAW_MARKDOWN = ("|---", "**", "## ", "```", "<details>", "</summary>")
VIEWPORT = {"width": 1280, "height": 800}
REPORTS = ("gate", "interventions", "paths", "audit")
#: Height of the default (12-source) audit page at 1280 px: 26,753 px before the pairs were
#: grouped per question in collapsed <details> and long tables capped; about 3,300 px now.
MAX_AUDIT_HEIGHT = 6000


def _chromium() -> str:
    found = os.environ.get("GROUNDTRACE_CHROMIUM") or shutil.which("chromium")
    if not found:
        pytest.skip(
            "Chromium is not installed (Debian package `chromium`; .ci/run installs it as "
            "root, or point GROUNDTRACE_CHROMIUM at a Chromium binary)"
        )
    return found


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from groundtrace.analyzer.cli import build_app
    from groundtrace.analyzer.demo import DemoConfig, run_demo
    from groundtrace.examples.agent_docs.app import EXAMPLE_DIR, run

    _chromium()  # skip before the runs when there is no browser to read them
    # (the runs first: Playwright's sync API then holds the event loop of this thread)
    root = tmp_path_factory.mktemp("runs")
    top5 = run_demo(
        DemoConfig(model="lexical", questions=8, out=root / "top5", top_k=5,
                   interventions=6, audit_sources=12)
    )  # fmt: skip
    top2 = run_demo(DemoConfig(model="lexical", questions=8, out=root / "top2", top_k=2))
    app = build_app()
    gate = CliRunner().invoke(
        app,
        ["gate", "run", "--baseline", str(top5.traces_dir), "--candidate", str(top2.traces_dir),
         "--cases", str(top5.cases_path), "--out", str(root / "gate")],
    )  # fmt: skip
    assert gate.exit_code in (0, 10, 20, 30), gate.output
    run(root / "agent")
    paths = CliRunner().invoke(
        app,
        ["paths", str(root / "agent" / "traces"), "--cases", str(EXAMPLE_DIR / "cases.jsonl"),
         "--tools-config", str(EXAMPLE_DIR / "tools.toml"), "--out", str(root / "paths"),
         "--resamples", "500"],
    )  # fmt: skip
    assert paths.exit_code == 0, paths.output
    found = {
        "gate": root / "gate" / "report.html",
        "interventions": root / "top5" / "interventions" / "report.html",
        "paths": root / "paths" / "report.html",
        "audit": root / "top5" / "audit" / "report.html",
    }
    for name, path in found.items():
        assert path.is_file(), f"{name}: no report at {path}"
    return found


@pytest.fixture(scope="module")
def browser() -> Any:
    from playwright.sync_api import sync_playwright

    executable = _chromium()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, timeout=120_000)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("screenshots")


_CHECK = """() => ({
  scrollWidth: document.documentElement.scrollWidth,
  innerWidth: window.innerWidth,
  text: document.body.innerText,
  height: document.body.scrollHeight,
  wideTables: Array.from(document.querySelectorAll("table"))
    .filter(t => t.scrollWidth > t.clientWidth)
    .map(t => `${t.rows[0].innerText.slice(0, 40)}: ${t.scrollWidth} > ${t.clientWidth}`),
  verbatim: Array.from(document.querySelectorAll("[data-verbatim]")).map(e => e.innerText),
  images: Array.from(document.images).map(i => ({alt: i.alt, ok: i.complete && i.naturalWidth > 0,
                                                   right: i.getBoundingClientRect().right})),
})"""


def _read_in_chromium(browser: Any, path: Path, shot: Path) -> tuple[list[str], str, int]:
    """Load ``path`` at 1280x800, save a full-page screenshot; return (problems, text, height)."""
    page = browser.new_page(viewport=VIEWPORT)
    problems: list[str] = []
    page.on(
        "console",
        lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None,
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))

    def only_the_file(route: Any) -> None:
        url = route.request.url
        if url.startswith(("file://", "data:")):
            route.continue_()
        else:
            problems.append(f"request outside the file: {url}")
            route.abort()

    page.route("**/*", only_the_file)
    try:
        page.goto(path.as_uri(), wait_until="load", timeout=120_000)
        facts = page.evaluate(_CHECK)
        page.screenshot(path=str(shot), full_page=True, timeout=120_000)
    finally:
        page.close()
    if facts["scrollWidth"] > facts["innerWidth"]:
        problems.append(
            f"horizontal overflow: scrollWidth {facts['scrollWidth']} > {facts['innerWidth']}"
        )
    problems += [f"table wider than its box: {t}" for t in facts["wideTables"]]
    for image in facts["images"]:
        if not image["ok"]:
            problems.append(f"image {image['alt']!r} did not decode")
        if image["right"] > facts["innerWidth"]:
            problems.append(f"image {image['alt']!r} ends at {image['right']:.0f}px")
    text: str = facts["text"]
    # quoted source text (marked data-verbatim) may hold any characters: it is not rendering
    ours = functools.reduce(lambda t, quoted: t.replace(quoted, "", 1), facts["verbatim"], text)
    problems += [f"raw Markdown {marker!r} in the visible text" for marker in RAW_MARKDOWN
                 if marker in ours]  # fmt: skip
    return problems, text, int(facts["height"])


@pytest.mark.parametrize("name", REPORTS)
def test_report_reads_cleanly_in_chromium(
    name: str,
    reports: dict[str, Path],
    browser: Any,
    screenshots: Path,
    record_property: Any,
) -> None:
    shot = screenshots / f"{name}.png"
    problems, text, height = _read_in_chromium(browser, reports[name], shot)
    record_property("screenshot", str(shot))
    record_property("height", height)
    print(f"{name}: screenshot {shot}, {height} px tall")
    assert not problems, f"{name} ({reports[name]}): " + "; ".join(problems)
    if name == "audit":
        assert height <= MAX_AUDIT_HEIGHT, f"the audit page is {height} px tall"
    assert "Reading." in text, "the page carries no reading"
    assert shot.stat().st_size > 10_000, "the screenshot is blank"


def test_the_check_catches_each_defect(
    reports: dict[str, Path], browser: Any, tmp_path: Path
) -> None:
    """A page with every defect the check looks for: each one is reported.

    (``reports`` first, in any test order: the runs cannot start once the browser holds the
    event loop.)
    """
    bad = tmp_path / "bad.html"
    bad.write_text(
        "<!doctype html><html><body><pre>| a |\n|---|\n**bold** ## heading</pre>"
        "<div style='width:1900px'>wide</div><img alt='remote' src='http://192.0.2.1/x.png'>"
        "<table style='display:block;overflow-x:auto;max-width:600px'><tr><td>"
        + "x"
        * 300
        + "</td></tr></table>"
        "<script>console.error('broken'); undefined_function();</script></body></html>",
        encoding="utf-8",
    )
    problems, _, _ = _read_in_chromium(browser, bad, tmp_path / "bad.png")
    found = " | ".join(problems)
    expected_problems = (
        "console error: broken", "page error", "request outside the file",
        "horizontal overflow", "table wider than its box", "did not decode", "'|---'", "'**'",
        "'## '",
    )  # fmt: skip
    for expected in expected_problems:
        assert expected in found, f"{expected!r} not reported: {found}"
    # a source's own words, marked verbatim, are not rendering: "***" there is no defect
    quoted = tmp_path / "quoted.html"
    quoted.write_text(
        "<!doctype html><html><body><p>Reading. ok</p>"
        "<small data-verbatim>***As is, ## without warranty***</small></body></html>",
        encoding="utf-8",
    )
    problems, text, _ = _read_in_chromium(browser, quoted, tmp_path / "quoted.png")
    assert "***As is" in text and not problems, problems
