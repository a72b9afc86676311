"""Headless-Chromium screenshots of the Phoenix UI after a write-back (run inside the namespace).

:mod:`tests.integration.phoenix_writeback_scenario` calls :func:`take` when
``GROUNDTRACE_PHOENIX_SCREENSHOTS=DIR`` is set; it writes two PNGs into DIR:

* ``trace.png``: the trace page (Phoenix's redirect for a trace id), its trace annotation
  scores panel with the gate decision and the three judge metrics;
* ``retrieval.png``: the retrieval span selected (the redirect for a span id), its retrieved
  documents, each with the Document Annotations box holding its evidence role.

Reproduce (Chromium from Debian's ``chromium`` package)::

    GROUNDTRACE_PHOENIX_SCREENSHOTS=/tmp/phoenix-shots timeout 1500 .venv/bin/python -m pytest \
        -q -p no:randomly tests/integration/test_phoenix_writeback.py
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

#: Flags: no sandbox (root in a namespace), nothing fetched from outside, no first-run steps.
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
    "--virtual-time-budget=30000",
)  # fmt: skip
TIMEOUT_S = 180


def shot(url: str, png: Path, height: int = 1300) -> None:
    """One screenshot of ``url`` into ``png`` (the page rendered for 30 s of virtual time)."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        raise RuntimeError("chromium is not installed (apt-get install -y chromium)")
    png.parent.mkdir(parents=True, exist_ok=True)
    profile = png.parent / ".chromium-profile"
    subprocess.run(
        [browser, *FLAGS, f"--window-size=1600,{height}", f"--user-data-dir={profile}",
         f"--screenshot={png}", url],
        capture_output=True, timeout=TIMEOUT_S, check=True,
    )  # fmt: skip
    if not png.is_file():
        raise RuntimeError(f"chromium wrote no screenshot of {url}")


def take(url: str, out: Path, *, trace_id: str, retrieval_span: str) -> list[str]:
    """The trace page and the retrieval span's page (tall: every document); the PNGs written."""
    pages = {
        "trace.png": (f"{url}/redirects/traces/{trace_id}", 1300),
        "retrieval.png": (f"{url}/redirects/spans/{retrieval_span}", 4200),
    }
    for name, (page, height) in pages.items():
        shot(page, out / name, height)
    shutil.rmtree(out / ".chromium-profile", ignore_errors=True)
    return [str(out / name) for name in pages]
