"""The lexical reader behind an OpenAI-compatible API: in-process transport and real HTTP server.

One request handler (:func:`handle`) serves both forms:

* :func:`lexical_transport` -- an httpx ``MockTransport`` for
  ``openai.OpenAI(http_client=Client(transport=...))`` (built on the httpx flavour the
  installed openai uses): no socket at all;
* :class:`LexicalServer` -- a threaded HTTP server on 127.0.0.1 (free port) for tools that need
  a URL (replay in another process, curl).

Endpoints: ``GET /v1/models`` and ``POST /v1/chat/completions`` (non-streaming). The answer is
the JSON object ``{"answer", "confidence", "used_chunks"}`` as message content. Token usage
counts whitespace-separated words of the prompt and of the reply.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Final, Self

from ._lexical_prompt import parse_prompt, prompt_text
from ._lexical_reader import read

__all__ = [
    "LEXICAL_MODEL",
    "LexicalServer",
    "handle",
    "json_handler",
    "lexical_client",
    "lexical_transport",
]

#: Model name the lexical backend reports.
LEXICAL_MODEL: Final = "groundtrace-lexical-reader-1"
_CREATED: Final = 1_700_000_000


def _error(status: int, message: str, kind: str = "invalid_request_error") -> tuple[int, Any]:
    return status, {"error": {"message": message, "type": kind, "param": None, "code": None}}


def _completion(body: Any) -> tuple[int, Any]:
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return _error(400, "request body must be a JSON object with a 'messages' list")
    if body.get("stream"):
        return _error(400, "streaming is not supported by the lexical reader")
    text = prompt_text(m for m in body["messages"] if isinstance(m, dict))
    question, chunks = parse_prompt(text)
    result = read(question, chunks)
    content = json.dumps(
        {
            "answer": result.answer,
            "confidence": result.confidence,
            "used_chunks": list(result.used_chunks),
        },
        ensure_ascii=False,
    )
    prompt_tokens = len(text.split())
    completion_tokens = len(content.split())
    return 200, {
        "id": "chatcmpl-lexical-" + hashlib.sha256(text.encode()).hexdigest()[:16],
        "object": "chat.completion",
        "created": _CREATED,
        "model": str(body.get("model") or LEXICAL_MODEL),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def handle(method: str, path: str, raw_body: bytes) -> tuple[int, Any]:
    """Serve one OpenAI-style request.

    Args:
        method: HTTP method.
        path: URL path (``/v1/...``).
        raw_body: the request body.

    Returns:
        HTTP status and the JSON response body.
    """
    route = path.split("?", 1)[0].rstrip("/")
    if method == "GET" and route.endswith("/models"):
        return 200, {
            "object": "list",
            "data": [
                {
                    "id": LEXICAL_MODEL,
                    "object": "model",
                    "created": _CREATED,
                    "owned_by": "groundtrace",
                }
            ],
        }
    if method == "POST" and route.endswith("/chat/completions"):
        try:
            body = json.loads(raw_body or b"null")
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _error(400, "request body is not valid JSON")
        return _completion(body)
    return _error(404, f"no route for {method} {route}", "not_found_error")


def _openai_httpx() -> Any:
    """The httpx flavour the installed ``openai`` client is built on.

    openai >= 3 ships on ``httpx2`` (same API, different classes); earlier versions on ``httpx``.
    """
    import openai._base_client as base

    return getattr(base, "httpx2", None) or getattr(base, "httpx")  # noqa: B009


def lexical_transport() -> Any:
    """A mock transport answering OpenAI requests with the lexical reader, in-process.

    Returns:
        ``MockTransport`` of the httpx flavour the installed ``openai`` uses (``httpx`` or
        ``httpx2``), to pass as ``http_client=Client(transport=...)``.
    """
    mod = _openai_httpx()

    def _handler(request: Any) -> Any:
        status, payload = handle(request.method, request.url.path, request.read())
        return mod.Response(status, json=payload)

    return mod.MockTransport(_handler)


def lexical_client(**kwargs: Any) -> Any:
    """An ``openai.OpenAI`` client wired to the in-process lexical reader.

    Args:
        **kwargs: extra arguments for ``openai.OpenAI`` (e.g. ``max_retries``).
    """
    import openai

    kwargs.setdefault("max_retries", 0)
    return openai.OpenAI(
        base_url="http://lexical.invalid/v1",
        api_key="local",
        http_client=_openai_httpx().Client(transport=lexical_transport()),
        **kwargs,
    )


def json_handler(
    respond: Callable[[str, str, bytes], tuple[int, Any]],
) -> type[BaseHTTPRequestHandler]:
    """A quiet ``http.server`` handler answering GET and POST with ``respond``'s JSON.

    Args:
        respond: ``(method, path, body) -> (status, JSON body)``, e.g. :func:`handle`.
    """

    class _Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _respond(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            status, payload = respond(self.command, self.path, raw)
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._respond()

        def do_POST(self) -> None:
            self._respond()

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

    return _Handler


class LexicalServer:
    """The lexical reader as a real local HTTP server (127.0.0.1, free port).

    Usage::

        with LexicalServer() as server:
            client = openai.OpenAI(base_url=server.base_url, api_key="local")
    """

    def __init__(self, port: int = 0) -> None:
        self._requested_port = port
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:P/v1``."""
        if self._server is None:
            raise RuntimeError("LexicalServer is not running")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> None:
        """Bind and serve in a daemon thread."""
        if self._server is not None:
            return
        server = ThreadingHTTPServer(("127.0.0.1", self._requested_port), json_handler(handle))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Shut the server down and join its thread. Idempotent."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

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
