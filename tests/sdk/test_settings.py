"""The settings record: one table of fields (keyword, variables, default, meaning), read by
``Settings.from_env`` and ``configure()``, and one capture decision point."""

from __future__ import annotations

import ast
import inspect
import logging
from pathlib import Path

import pytest

import groundtrace.sdk as gt
from groundtrace.sdk import _config, _runtime
from groundtrace.sdk import _env as env
from groundtrace.sdk._settings import CONTENT_FIELDS, Content, Settings

pytestmark = pytest.mark.usefixtures("clean_config")

SDK = Path(gt.__file__).resolve().parent
OPTIONS = {option.name: option for option in Settings.options()}


def test_every_configure_keyword_is_one_documented_field() -> None:
    keywords = set(inspect.signature(_config.configure).parameters)
    arguments = {o.argument for o in OPTIONS.values() if o.argument is not None}
    assert keywords == arguments | {"maskers"}  # maskers join the redact field
    doc = _config.configure.__doc__ or ""
    for option in OPTIONS.values():
        assert option.doc.strip(), option.name
        if option.argument is not None:
            assert f"    {option.argument}: " in doc, option.argument
    flat = " ".join(doc.split())
    for variable in {v for o in OPTIONS.values() for v in o.env}:
        assert variable in flat, variable


def test_every_groundtrace_variable_belongs_to_a_field() -> None:
    variables = {getattr(env, name) for name in env.__all__ if name.startswith("ENV_")}
    in_table = {v for o in OPTIONS.values() for v in o.env}
    assert variables <= in_table, sorted(variables - in_table)
    assert gt.Settings is Settings and gt.Content is Content


def test_bare_settings_hold_the_documented_defaults() -> None:
    bare = Settings()
    for name in ("enabled", "max_attribute_length", "max_evidence_items", "file_backup_count"):
        assert OPTIONS[name].default == f"``{getattr(bare, name)!r}``"
    assert bare.capture == frozenset()
    assert bare.exporter == ("otlp_http",)
    assert bare.max_queue_size == 2048
    assert (bare.max_export_batch_size, bare.schedule_delay_ms) == (512, 5000)


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("max_attribute_length", "2048", 2048),
        ("max_evidence_items", "7", 7),
        ("file_max_bytes", "1000", 1000),
        ("file_backup_count", "2", 2),
        ("max_queue_size", "16", 16),
        ("max_export_batch_size", "64", 64),
        ("schedule_delay_ms", "250", 250),
        ("shutdown_timeout", "0.5", 0.5),
        ("propagate_threads", "false", False),
    ],
)
def test_each_field_reads_its_variables(
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    name: str,
    value: str,
    expected: object,
) -> None:
    default = getattr(Settings.from_env(), name)
    for variable in OPTIONS[name].env:  # each of the field's variables, alone
        monkeypatch.setenv(variable, value)
        assert getattr(Settings.from_env(), name) == expected, variable
        monkeypatch.setenv(variable, "not-a-value")
        with caplog.at_level(logging.WARNING, logger="groundtrace.sdk"):
            assert getattr(Settings.from_env(), name) == default, variable
        assert variable in caplog.text
        caplog.clear()
        monkeypatch.delenv(variable)


def test_enabled_reads_both_of_its_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    assert OPTIONS["enabled"].env == ("GROUNDTRACE_ENABLED", "OTEL_SDK_DISABLED")
    monkeypatch.setenv("GROUNDTRACE_ENABLED", "false")
    assert Settings.from_env().enabled is False
    monkeypatch.delenv("GROUNDTRACE_ENABLED")
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")  # the standard variable says "disabled"
    assert Settings.from_env().enabled is False
    assert Settings.from_env(enabled=True).enabled is True


def test_precedence_keyword_then_groundtrace_then_otel(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings.from_env().service_name is None
    monkeypatch.setenv("OTEL_SERVICE_NAME", "otel")
    assert Settings.from_env().service_name == "otel"
    monkeypatch.setenv("GROUNDTRACE_SERVICE_NAME", "gt")
    assert Settings.from_env().service_name == "gt"
    assert Settings.from_env(service_name="kw").service_name == "kw"
    monkeypatch.setenv("OTEL_BSP_MAX_QUEUE_SIZE", "10")
    monkeypatch.setenv("GROUNDTRACE_MAX_QUEUE_SIZE", "20")
    assert Settings.from_env().max_queue_size == 20
    assert Settings.from_env(max_queue_size=30).max_queue_size == 30
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    assert Settings.from_env().capture == CONTENT_FIELDS
    monkeypatch.setenv("GROUNDTRACE_CAPTURE_CONTENT", "query")
    assert Settings.from_env().capture == {Content.QUERY}
    assert Settings.from_env(capture_content=False).capture == frozenset()


def test_from_env_refuses_an_unknown_keyword() -> None:
    with pytest.raises(TypeError, match="capture_contents"):
        Settings.from_env(capture_contents=True)


def test_configure_installs_the_record_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "64")
    configure_kw = {"exporter": "none", "capture_content": ["answer", "io"], "redact": False}
    _config.configure(**configure_kw)  # type: ignore[arg-type]
    installed = _runtime.settings()
    assert installed == Settings.from_env(**configure_kw)
    assert installed.max_export_batch_size == 64
    assert installed.capture == {Content.ANSWER, Content.IO}


def test_one_capture_decision_point() -> None:
    some = Settings(capture=frozenset({Content.IO, Content.QUERY}))
    assert some.captures(Content.IO) and some.captures("query")
    assert not some.captures(Content.EVIDENCE)
    assert not some.captures(Content.EXCEPTIONS) and not Settings().captures(Content.EXCEPTIONS)
    assert all(Settings(capture=CONTENT_FIELDS).captures(kind) for kind in Content)


def _capture_reads(path: Path) -> set[str]:
    """Places deciding on capture other than through ``Settings.captures(Content.X)``: a
    content kind's string tested with ``in`` or passed to ``captures``, or
    ``<settings>.capture`` read directly."""
    found = set()
    kinds = {kind.value for kind in Content}
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "captures":
            if any(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args):
                found.add(f"{path.name}:{node.lineno}")
        if isinstance(node, ast.Compare) and any(
            isinstance(op, ast.In | ast.NotIn) for op in node.ops
        ):
            if isinstance(node.left, ast.Constant) and node.left.value in kinds:
                found.add(f"{path.name}:{node.lineno}")
        if isinstance(node, ast.Attribute) and node.attr == "capture":
            owner = node.value
            named = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
            if named in ("settings", "current"):
                found.add(f"{path.name}:{node.lineno}")
    return found


def test_no_module_reads_the_capture_setting_by_itself() -> None:
    sources = [p for p in SDK.rglob("*.py") if p.name != "_settings.py"]
    assert len(sources) > 20
    found = sorted(hit for path in sources for hit in _capture_reads(path))
    assert found == []
