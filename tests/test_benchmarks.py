"""Smoke runs of the benchmark scripts at toy sizes: they run, and report what they measured.

No timing is checked here (the machines are noisy; the figures belong in the notes): only
that each script exits 0 and prints its report with every figure measured -- finite and
positive -- and, for the receiver, that no acknowledged batch was lost.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _run(script: str, *args: str, module: bool = False) -> str:
    """Run a benchmark as a script, or as ``python -m benchmarks.NAME`` from the root."""
    command = (
        ["-m", f"benchmarks.{script.removesuffix('.py')}"] if module else [str(BENCHMARKS / script)]
    )
    done = subprocess.run(
        [sys.executable, *command, *args],
        cwd=BENCHMARKS.parent,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value) and value > 0


@pytest.mark.timeout(300)
def test_sdk_overhead_reports_every_ratio() -> None:
    report = json.loads(_run("sdk_overhead.py", "--quick", module=True))
    decorators = report["decorators"]
    by_decorator = decorators["decorator_vs_raw_span_by_decorator"]
    assert set(by_decorator) == {
        "request",
        "retrieve",
        "rerank",
        "select",
        "verify",
        "infer",
        "answer",
        "tool",
    }
    assert all(_positive(v) for v in by_decorator.values())
    assert report["ratios"]["decorator_vs_raw_span"] == by_decorator[decorators["worst"]]
    # a ratio of two added costs: at --quick sizes noise can make either side negative, so the
    # smoke test asks only that it was measured (the figure itself is read from a full run)
    assert math.isfinite(report["ratios"]["openai_vs_openinference"])
    assert math.isfinite(report["disabled_overhead_us"])
    # the attributes the raw span sets were captured from the decorator, not left empty
    retrieve = decorators["attributes_per_span"]["retrieve"]
    assert retrieve["at_start"] > 0 and retrieve["later"] > 0


@pytest.mark.integration  # starts our receiver (loopback) in a subprocess
@pytest.mark.timeout(300)
def test_ingest_reads_every_span_and_loses_no_batch() -> None:
    report = json.loads(
        _run(
            "ingest.py",
            "--traces",
            "50",
            "--repeats",
            "1",
            "--clients",
            "2",
            "--batches",
            "3",
            "--spans-per-batch",
            "20",
        )
    )
    for label in ("read_content_on", "read_content_off"):
        read = report[label]
        assert read["spans"] == 200 and read["traces"] == 50
        for key in ("floor_json_loads_spans_per_cpu_s", "read_spans_per_cpu_s"):
            assert _positive(read[key]), (label, key)
        assert _positive(read["tau_spans_per_cpu_s"])
    receiver = report["receiver"]
    assert receiver["acknowledged"] == 6
    assert receiver["lost"] == 0
    assert receiver["exit_code"] == 0


def test_collectors_read_benchmark_prints_every_stage() -> None:
    out = _run("bench_collectors_read.py", "--traces", "50", "--repeats", "1")
    for stage in ("json.loads pass", "read_spans", "read_traces", "targets:"):
        assert stage in out


#: The commands whose --help cli_startup also times (options from their config record).
RECORD_BACKED = ("paths", "judge", "gate", "interventions", "audit", "attribution")


def test_cli_startup_reports_both_ratios_against_the_sdk() -> None:
    report = json.loads(_run("cli_startup.py", "--rounds", "1"))
    record_backed = {f"{name}_help" for name in RECORD_BACKED}
    assert report["left_out"] == []  # this checkout has every record-backed command
    assert set(report["cpu_s"]) == {"sdk", "help", "traces_summary", *record_backed}
    assert all(_positive(v) for v in report["cpu_s"].values())
    assert set(report["ratios"]) == {"help", "traces_summary", *record_backed}
    for name, ratio in report["ratios"].items():
        assert ratio == pytest.approx(report["cpu_s"][name] / report["cpu_s"]["sdk"], rel=0.01)
    # the record-backed commands' help: reported, not held
    held = ("help", "traces_summary")
    assert report["within_target"] == all(
        report["ratios"][name] <= report["target_ratio"] for name in held
    )


@pytest.mark.timeout(300)
def test_volume_reports_peak_rss_of_both_commands(tmp_path: Path) -> None:
    out = _run("volume.py", "--sizes", "200", "1000", "--cache-dir", str(tmp_path / "cache"))
    report = json.loads(out)
    floor, small, large = report["sizes"]
    assert [s["spans"] for s in report["sizes"]] == [64, 256, 1024]
    for size in report["sizes"]:
        assert size["traces"] == size["spans"] // 4 and _positive(size["bytes"])
        for command in ("convert", "paths"):
            figures = size[command]
            assert all(_positive(figures[k]) for k in ("peak_rss_mb", "wall_s", "spans_per_s"))
        # the evaluation slice (one copy) is validated, every other trace is unmatched
        assert size["paths"]["verdicts"] == 16
        assert size["paths"]["unmatched_traces"] == size["traces"] - 16
    assert report["ratios"]["convert_peak_rss_largest_vs_smallest"] == pytest.approx(
        large["convert"]["peak_rss_mb"] / small["convert"]["peak_rss_mb"], abs=0.001
    )
    assert floor["generated"]["write_spans_per_s"] > 0


@pytest.mark.integration
@pytest.mark.timeout(600)
def test_scale_out_reports_every_configuration_with_identical_results() -> None:
    from tests.support.namespace import require_ray, run_in_private_network

    require_ray()
    command = [sys.executable, "-m", "benchmarks.scale_out", "--calls", "24", "--workers", "1,2"]
    report = run_in_private_network(command, timeout=540)
    assert set(report["runs"]) == {"local", "local_wide", "ray_1", "ray_2"}
    assert report["identical"] and report["all_ok"]
    assert report["server_requests"] == 6 * 24  # each Ray configuration runs a warm map too
    assert all(_positive(run["steady_calls_per_s"]) for run in report["runs"].values())
    assert _positive(report["runs"]["ray_2"]["scaling_efficiency"])
    assert _positive(report["runs"]["ray_2"]["warm"]["scaling_efficiency"])


def test_models_refuses_an_unknown_model_before_serving_any() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "models.py"), "--side-by-side", "1",
         "--models", "no-such-model"],
        cwd=BENCHMARKS.parent, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "unknown model(s) no-such-model" in done.stderr


@pytest.mark.timeout(300)
def test_audit_prefilters_reports_each_rules_precision() -> None:
    report = json.loads(_run("audit_prefilters.py", "--json"))
    assert report["pairs"] > 0 and report["min_precision"] == 0.95
    for rule in report["rules"].values():
        assert rule["decided"] >= rule["right"] >= 0
        if rule["decided"] and rule["decides"] and rule["precision"] is not None:
            assert rule["precision"] >= report["min_precision"]


@pytest.mark.timeout(300)
def test_audit_scale_reports_sizes_and_peak_memory() -> None:
    report = json.loads(_run("audit_scale.py", "--sources", "60", "--group-size", "20", "--json"))
    after = report["after"]
    assert after["sources"] == 60 and after["pairs"] > 0
    assert all(_positive(v) for v in after["bytes"].values())
    assert _positive(after["peak_rss_kb_after_reports"])


@pytest.mark.timeout(300)
def test_new_user_times_every_phase() -> None:
    report = json.loads(_run("new_user.py", "--rounds", "1", module=True))
    assert report["rounds"] == 1 and _positive(report["own_traces_seconds"])
    phases = report["analysis_seconds"]
    assert set(phases) == {
        "traces_summary", "gate_run", "interventions", "judge_run", "paths", "audit_run"
    }  # fmt: skip
    assert all(_positive(v) for v in phases.values())
    assert _positive(report["model_calls"])


def test_monitor_load_reports_throughput_ratio_lag_and_memory() -> None:
    args = "--clients 2 --batches 4 --spans-per-batch 20 --rounds 1 --rate 5 --seconds 3"
    report = json.loads(_run("monitor_load", *args.split(), module=True))
    (round_,) = report["flat_out"]["spans_per_s"]
    assert _positive(round_["on"]) and _positive(round_["off"])
    assert _positive(report["flat_out"]["ratio"])
    steady = report["steady"]
    assert steady["traces_evaluated"] > 0  # the 10 % sample of ~60 traces was judged
    for key in ("lag_p50_s", "lag_p95_s", "rss_mib_first_quarter", "rss_mib_last_quarter"):
        assert _positive(steady[key]), key
