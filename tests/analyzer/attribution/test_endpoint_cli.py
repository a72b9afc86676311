"""The endpoint tier's options through the ``attribution`` command: the form, the rate limit
and the refusal of a server with no prompt log-probabilities (exit 3, the URL named, no
report), against the loopback server of ``test_endpoint_scorer``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer.attribution import Config
from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.errors import ConfigError
from tests.analyzer.attribution.test_analysis import _trace
from tests.analyzer.attribution.test_endpoint_scorer import _Server

pytestmark = pytest.mark.timeout(120)

app = build_app()


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    path = tmp_path / "traces.jsonl"
    path.write_text(_trace("t1", "twelve metres", ("p1", "p2")).to_json() + "\n")
    return path


def _url(srv: _Server) -> str:
    return f"http://127.0.0.1:{srv.server_address[1]}/v1"


def test_tgi_form_and_rate_limit_from_the_command_line(
    server: _Server, traces: Path, tmp_path: Path
) -> None:
    server.forms = frozenset({"tgi"})
    res = CliRunner().invoke(app, [
        "attribution", str(traces), "--out", str(tmp_path / "o"), "--endpoint", _url(server),
        "--endpoint-form", "tgi", "--rate-limit", "500", "--timeout", "30",
    ])  # fmt: skip
    assert res.exit_code == 0, res.output
    (row,) = json.loads((tmp_path / "o" / "attribution.json").read_text())["rows"]
    assert row["tier"] == "endpoint" and row["passes"] == 3
    # the forced form asks /generate only, no probe: k + 1 ablations and the empty context
    assert server.events == ["request /generate"] * 4


def test_a_server_without_prompt_logprobs_exits_3_naming_it(
    server: _Server, traces: Path, tmp_path: Path
) -> None:
    server.forms = frozenset({"no-echo"})
    res = CliRunner().invoke(app, ["attribution", str(traces), "--out", str(tmp_path / "o"),
                                   "--endpoint", _url(server)])  # fmt: skip
    assert res.exit_code == 3, res.output
    said = " ".join(res.stderr.split())
    assert f"{_url(server)} returns no prompt log-probabilities in any form" in said
    assert "the prompt was not echoed" in said
    assert not (tmp_path / "o" / "attribution.json").exists()


def test_bad_rate_limit_and_timeout_name_the_field(traces: Path) -> None:
    with pytest.raises(ConfigError, match="rate_limit must be > 0") as bad:
        Config(traces=(str(traces),), endpoint="http://127.0.0.1:1/v1", rate_limit=0)
    assert bad.value.field == "rate_limit"
    with pytest.raises(ConfigError, match="timeout must be > 0"):
        Config(traces=(str(traces),), timeout=-1)
