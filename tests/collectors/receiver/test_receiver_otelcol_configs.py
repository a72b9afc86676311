"""The sample OpenTelemetry Collector configs parse and wire their pipelines consistently."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from groundtrace.collectors.readers import JSON_SUFFIXES

CONFIG_DIR = Path(__file__).resolve().parents[3] / "collectors" / "otelcol"
SECTIONS = {"receivers": "receivers", "processors": "processors", "exporters": "exporters"}


def load(name: str) -> dict[str, Any]:
    document = yaml.safe_load((CONFIG_DIR / name).read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


@pytest.mark.parametrize("name", ["file-export.yaml", "fanout.yaml", "monitor.yaml"])
def test_every_pipeline_component_is_defined_and_every_definition_used(name: str) -> None:
    config = load(name)
    pipelines = config["service"]["pipelines"]
    assert "traces" in pipelines
    used: dict[str, set[str]] = {section: set() for section in SECTIONS}
    for pipeline in pipelines.values():
        assert pipeline["receivers"] and pipeline["exporters"]
        for section in SECTIONS:
            for component in pipeline.get(section, []):
                assert component in config[section], f"{name}: {component} not in {section}"
                used[section].add(component)
    for section in SECTIONS:
        assert set(config[section]) == used[section], f"{name}: unused {section}"


@pytest.mark.parametrize("name", ["file-export.yaml", "fanout.yaml", "monitor.yaml"])
def test_otlp_receiver_takes_grpc_and_http_on_loopback_by_default(name: str) -> None:
    protocols = load(name)["receivers"]["otlp"]["protocols"]
    assert set(protocols) == {"grpc", "http"}
    for protocol in protocols.values():
        default = re.fullmatch(r"\$\{env:\w+:-(.+)\}", protocol["endpoint"])
        assert default is not None and default.group(1).startswith("127.0.0.1:")


@pytest.mark.parametrize("name", ["file-export.yaml", "fanout.yaml"])
def test_file_exporter_writes_otlp_json_lines_the_readers_take(name: str) -> None:
    exporters = load(name)["exporters"]
    files = [cfg for component, cfg in exporters.items() if component.split("/")[0] == "file"]
    assert len(files) == 1
    file_cfg = files[0]
    assert file_cfg["format"] == "json"
    assert "compression" not in file_cfg  # the readers take plain or gzip, not zstd
    assert any(file_cfg["path"].endswith(suffix) for suffix in JSON_SUFFIXES)
    assert file_cfg["rotation"]["max_megabytes"] > 0


def test_fanout_sends_to_phoenix_over_http_and_tempo_over_grpc_from_env() -> None:
    config = load("fanout.yaml")
    exporters = config["exporters"]
    types = {component.split("/")[0] for component in exporters}
    assert types == {"file", "otlphttp", "otlp"}
    assert exporters["otlphttp/phoenix"]["endpoint"].startswith("${env:PHOENIX_OTLP_ENDPOINT")
    # no default for Tempo: the natural one would be this Collector's own gRPC receiver
    assert exporters["otlp/tempo"]["endpoint"] == "${env:TEMPO_OTLP_ENDPOINT}"
    for component in ("otlphttp/phoenix", "otlp/tempo"):
        assert exporters[component]["sending_queue"]["enabled"] is True
        assert exporters[component]["retry_on_failure"]["enabled"] is True


def test_the_monitor_config_sends_traces_and_logs_to_the_monitors_receiver() -> None:
    """monitor.yaml: the same traces go to the backend and to ``groundtrace monitor run
    --port 4319`` (log records too: the monitor joins GenAI events to their spans)."""
    config = load("monitor.yaml")
    monitor = config["exporters"]["otlphttp/groundtrace-monitor"]
    assert monitor["endpoint"] == "${env:GROUNDTRACE_MONITOR_ENDPOINT:-http://127.0.0.1:4319}"
    assert monitor["sending_queue"]["enabled"] and monitor["retry_on_failure"]["enabled"]
    pipelines = config["service"]["pipelines"]
    assert set(pipelines["traces"]["exporters"]) == {
        "otlphttp/phoenix",
        "otlphttp/groundtrace-monitor",
    }
    assert pipelines["logs"]["exporters"] == ["otlphttp/groundtrace-monitor"]
