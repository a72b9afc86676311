"""The real local LLM: an embedded GGUF model behind llama-cpp-python's OpenAI server.

The model file comes from the registry (:mod:`._models`: assembled once into a user cache
directory, sha256-verified). :class:`LlamaServer` runs llama-cpp-python's server (through a small
launcher, see ``_llama_launch``) as a subprocess bound to 127.0.0.1 on a free port, waits
(bounded) until ``/v1/models`` answers, and stops the process on exit (terminate, then kill).

Threads: llama.cpp's worker threads wait for each other at every operation, so on a machine
whose cores are busy with other work one descheduled thread stalls the rest; the default is
one thread per CPU that other work leaves idle, at least one (measured on a 2-core machine at
load average 4-5: 16-17 s per demo question with one thread, 48-88 s with two).
The same count evaluates prompts (``n_threads_batch``).

Logits: only the last prompt token's are computed (``--logits_all False``; the server's default
computes and keeps them for every position, ``n_ctx`` x vocabulary x 4 bytes -- 1.2 GB for
the default model -- and copies them into every prompt-cache entry). Nothing here asks for
``logprobs``, which need them.

Prompt cache (``prompt_cache_bytes``): llama-cpp-python keeps the state after each call in
RAM and restarts a later prompt from the saved state that shares its longest prefix, so a
prompt that extends or shortens an earlier one (the same evidence followed by a duplicate,
the first two of the same five chunks) evaluates only what differs. Each saved state also
holds ``n_batch`` rows of logits (``n_batch`` x vocabulary x 4 bytes, not counted in the
cache size), hence the small default ``n_batch``.
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

from ._models import DEFAULT_MODEL, ModelSpec, assemble_model, model_spec

__all__ = ["LlamaServer"]

_PR_SET_PDEATHSIG: Final = 1
_ALTERNATIVE: Final = "use `--model lexical` (the built-in extractive reader) instead"


def _die_with_parent() -> None:
    """Linux: have the kernel send SIGTERM to the server if this process dies unexpectedly."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        return


#: How long :func:`idle_cpus` watches the CPUs (Linux): the load average lags by minutes.
BUSY_WINDOW_SECONDS = 0.5


def _cpu_jiffies() -> tuple[int, int] | None:
    """(busy, total) CPU time of the machine so far (``/proc/stat``), None where there is none."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(v) for v in stat.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def busy_cpus() -> float:
    """How many CPUs other work keeps busy now.

    On Linux: the busy share of the machine's CPU time over :data:`BUSY_WINDOW_SECONDS` (this
    process sleeps meanwhile) times the CPU count; elsewhere the 1-minute load average. The
    load average lags: just after a build on every core it still reads about the core count
    on a machine that is by then idle.
    """
    cpus = os.cpu_count() or 1
    before = _cpu_jiffies()
    if before is not None:
        time.sleep(BUSY_WINDOW_SECONDS)
        after = _cpu_jiffies()
        if after is not None and after[1] > before[1]:
            return cpus * (after[0] - before[0]) / (after[1] - before[1])
    return os.getloadavg()[0]


def idle_cpus() -> int:
    """CPUs this process may use that other work leaves idle (at least 1).

    A CPU counts as busy from half of it on (:func:`busy_cpus` rounded half up).
    """
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, (cpus or 1) - int(busy_cpus() + 0.5))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class LlamaServer:
    """llama-cpp-python's OpenAI-compatible server as a context manager.

    Usage::

        with LlamaServer("qwen2.5-coder-0.5b") as server:
            client = openai.OpenAI(base_url=server.base_url, api_key="local")
            client.chat.completions.create(model=server.model, messages=[...])

    Args:
        model: the embedded model (a registry name or :class:`ModelSpec`); its file is
            assembled and verified on start, and it gives the alias and chat format.
        model_path: serve this GGUF file instead of the registry's (tests).
        n_ctx: context window in tokens.
        n_threads: CPU threads for prompt evaluation and generation (default:
            :func:`idle_cpus` when the server starts).
        n_batch: prompt tokens evaluated per step (64: as fast as llama.cpp's 512 here, and
            an eighth of the logits each prompt-cache entry keeps).
        prompt_cache_bytes: keep the state after each call in a RAM prompt cache of this
            many bytes of model state (``None``: no cache; see the module docstring for the
            logits each entry adds).
        startup_timeout: seconds to wait for ``/v1/models`` before giving up.
        log_path: where the server's output goes; default a temporary file.
        extra_buffer_types: let llama.cpp repack weights for CPU extensions (AMX...). Off by
            default: a CPU that advertises AMX without the OS enabling it crashes the server
            with SIGILL (see ``_llama_launch``).
    """

    def __init__(
        self,
        model: str | ModelSpec = DEFAULT_MODEL,
        *,
        model_path: Path | None = None,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        n_batch: int = 64,
        prompt_cache_bytes: int | None = None,
        startup_timeout: float = 120.0,
        log_path: Path | None = None,
        extra_buffer_types: bool = False,
    ) -> None:
        self._extra_buffer_types = extra_buffer_types
        self.spec = model_spec(model) if isinstance(model, str) else model
        self._model_path = model_path
        #: The name the server answers to; pass it as ``model=`` to the client.
        self.model = self.spec.alias
        self._chat_format = self.spec.chat_format
        self._n_ctx = n_ctx
        self._n_threads = n_threads
        self._n_batch = n_batch
        self._prompt_cache_bytes = prompt_cache_bytes
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
        if self._n_threads is None:
            self._n_threads = idle_cpus()
        threads = self._n_threads
        cmd = [
            sys.executable, "-m", "groundtrace.analyzer.backends._llama_launch",
            "--model", str(model_path),
            "--model_alias", self.model,
            "--host", "127.0.0.1",
            "--port", str(port),
            "--chat_format", self._chat_format,
            "--n_ctx", str(self._n_ctx),
            "--n_batch", str(self._n_batch),
            "--n_ubatch", str(self._n_batch),
            "--n_threads", str(threads),
            "--n_threads_batch", str(threads),
            "--logits_all", "False",
            "--verbose", "False",
        ]  # fmt: skip
        if self._prompt_cache_bytes is not None:
            cmd += ["--cache", "True", "--cache_type", "ram",
                    "--cache_size", str(self._prompt_cache_bytes)]  # fmt: skip
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
        model_path = self._model_path or assemble_model(self.spec)
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
