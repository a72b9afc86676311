"""The public surface of each package is pinned: a change to an ``__all__`` is a reviewed change.

``tests/fixtures/public_surface.txt`` lists every public module and the sorted names of its
``__all__``. When a change to the surface is intended, rewrite the snapshot with::

    python -m tests.test_public_surface --update

and commit it with the change, so the diff shows what users gain or lose.
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

from tests.support.surface import render_surface

SNAPSHOT = Path(__file__).resolve().parent / "fixtures" / "public_surface.txt"
UPDATE = "python -m tests.test_public_surface --update"  # from the checkout's root


def test_the_public_surface_matches_the_snapshot() -> None:
    expected = SNAPSHOT.read_text(encoding="utf-8")
    actual = render_surface()
    diff = "".join(
        difflib.unified_diff(
            expected.splitlines(keepends=True),
            actual.splitlines(keepends=True),
            fromfile=f"{SNAPSHOT.name} (snapshot)",
            tofile="__all__ (now)",
        )
    )
    assert not diff, (
        f"the public surface changed (- snapshot, + now):\n{diff}\n"
        f"if intended, run `{UPDATE}` and commit {SNAPSHOT}"
    )


def test_the_analyzer_exports_at_most_250_names() -> None:
    """What a newcomer reads: each analysis's shape, records and extension points, not its
    internals (0.1 exported 499; the dropped names warn for one release)."""
    counted = 0
    inside = False
    for line in render_surface().splitlines():
        if not line.startswith(" "):
            inside = line.split()[0].startswith("groundtrace.analyzer")
        elif inside:
            counted += 1
    assert counted <= 250


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        raise SystemExit(f"usage: {UPDATE}")
    SNAPSHOT.write_text(render_surface(), encoding="utf-8")
    print(f"wrote {SNAPSHOT}")
