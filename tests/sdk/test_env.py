"""Environment readers: parse what is valid, warn (naming the variable) on what is not."""

from __future__ import annotations

import logging

import pytest

from groundtrace.sdk import _env as env


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("true", True), ("1", True), (" YES ", True), ("on", True), ("false", False), ("0", False)],
)
def test_env_bool(monkeypatch: pytest.MonkeyPatch, raw: str, expected: bool) -> None:
    monkeypatch.setenv("GROUNDTRACE_X", raw)
    assert env.env_bool("GROUNDTRACE_X") is expected


def test_unset_and_blank_are_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GROUNDTRACE_X", raising=False)
    assert env.env_bool("GROUNDTRACE_X") is None
    monkeypatch.setenv("GROUNDTRACE_X", "   ")
    assert env.env_int("GROUNDTRACE_X") is None
    assert env.env_list("GROUNDTRACE_X") is None


@pytest.mark.parametrize(
    ("reader", "raw"),
    [
        (lambda: env.env_bool("GROUNDTRACE_X", True), "maybe"),
        (lambda: env.env_int("GROUNDTRACE_X", 5, minimum=1), "0"),
        (lambda: env.env_int("GROUNDTRACE_X", 5), "5.5"),
        (lambda: env.env_float("GROUNDTRACE_X", 1.0, maximum=1.0), "2"),
        (lambda: env.env_float("GROUNDTRACE_X", 1.0), "nan"),
    ],
)
def test_bad_values_warn_and_read_as_unset(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, reader: object, raw: str
) -> None:
    monkeypatch.setenv("GROUNDTRACE_X", raw)
    with caplog.at_level(logging.WARNING, logger="groundtrace.sdk"):
        assert callable(reader) and reader() is None
    assert "GROUNDTRACE_X" in caplog.text
    assert repr(raw) in caplog.text
    assert "using the default" in caplog.text


def test_numbers_and_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROUNDTRACE_X", "42")
    assert env.env_int("GROUNDTRACE_X") == 42
    monkeypatch.setenv("GROUNDTRACE_X", "0.25")
    assert env.env_float("GROUNDTRACE_X", maximum=1.0) == 0.25
    monkeypatch.setenv("GROUNDTRACE_X", " file, otlp_http ,,console ")
    assert env.env_list("GROUNDTRACE_X") == ["file", "otlp_http", "console"]
