"""Two versions of the SDK measured side by side by one benchmark; prints one JSON object.

Each round runs ``python -m benchmarks.<name> [args]`` from this checkout once with each of two
interpreters (each imports its own ``groundtrace``: an older checkout's virtualenv runs this
checkout's benchmark script against that checkout's SDK), the old one first in even rounds and
the new one first in odd ones, so that neither always runs on the busier side of the machine's
drifting load. Every positive number both reports hold at the same place (``ratios.x``,
``cases.y.redaction_on_ms``...) is paired per round: reported is the median over rounds of
new / old, and each side's median (``method`` and ``targets`` are left out).

Usage, from the repository root::

    python -m benchmarks.compare --old ../base/.venv/bin/python redaction -- --quick
    python -m benchmarks.compare --old ../base/.venv/bin/python --rounds 3 sdk_overhead
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SKIPPED = ("method", "targets")


def _numbers(report: Any, path: str = "") -> dict[str, float]:
    """Every positive number of a report, by its dotted path."""
    if isinstance(report, dict):
        found: dict[str, float] = {}
        for key, value in report.items():
            if not path and key in SKIPPED:
                continue
            found.update(_numbers(value, f"{path}.{key}" if path else str(key)))
        return found
    if isinstance(report, int | float) and not isinstance(report, bool) and report > 0:
        return {path: float(report)}
    return {}


def _digits(value: float) -> float:
    """``value`` to 4 significant digits (a tiny positive figure stays positive)."""
    return float(f"{value:.4g}")


def _run(python: str, benchmark: str, args: list[str], timeout: float) -> dict[str, float]:
    done = subprocess.run(
        [python, "-m", f"benchmarks.{benchmark}", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{python} -m benchmarks.{benchmark} failed:\n{done.stderr[-3000:]}")
    return _numbers(json.loads(done.stdout))


def compare(
    old: str, new: str, benchmark: str, args: list[str], rounds: int, timeout: float
) -> dict[str, Any]:
    """Alternate the two interpreters for ``rounds`` rounds; pair every figure per round."""
    runs: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    for index in range(rounds):
        order = ("old", "new") if index % 2 == 0 else ("new", "old")
        for side in order:
            runs[side].append(_run(old if side == "old" else new, benchmark, args, timeout))
    shared = set.intersection(*(set(r) for r in runs["old"] + runs["new"]))
    pairs = list(zip(runs["old"], runs["new"], strict=True))
    figures = {
        path: {
            "new_over_old": _digits(statistics.median(n[path] / o[path] for o, n in pairs)),
            "old": _digits(statistics.median(o[path] for o, _ in pairs)),
            "new": _digits(statistics.median(n[path] for _, n in pairs)),
        }
        for path in sorted(shared)
    }
    return {
        "benchmark": benchmark,
        "args": args,
        "figures": figures,
        "method": {
            "rounds": rounds,
            "old": old,
            "new": new,
            "statistic": "median over rounds of new / old, the two runs of a round back to "
            "back (order reversed every other round)",
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", required=True, help="interpreter of the old version")
    parser.add_argument("--new", default=sys.executable, help="interpreter of the new version")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds per run")
    parser.add_argument("benchmark", help="a module of benchmarks/, e.g. redaction")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its arguments, after --")
    options = parser.parse_args()
    args = options.args[1:] if options.args[:1] == ["--"] else options.args
    report = compare(
        options.old, options.new, options.benchmark, args, options.rounds, options.timeout
    )
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
