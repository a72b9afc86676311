"""A real, local, OpenAI-compatible HTTP server for tests.

It speaks enough of the OpenAI wire protocol for the official ``openai`` client (and any
OpenAI-compatible client) to run unmodified against it: chat completions (JSON and SSE
streaming, tool calls, usage), ``GET /v1/models`` and a minimal ``POST /v1/responses``.
Failures are programmable per request: HTTP errors with OpenAI-style error JSON, a delay
(to trigger client timeouts) and a stream whose connection is cut mid-way.

The server binds 127.0.0.1 on a free port, serves from a background thread and is stopped
by leaving the ``with`` block (or :meth:`OpenAICompatServer.stop`).

Usage::

    import openai
    from tests.support.openai_server import OpenAICompatServer, Reply

    with OpenAICompatServer() as srv:  # default: echo the last user message
        client = openai.OpenAI(base_url=srv.base_url, api_key="test", max_retries=0)
        out = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}]
        )
        assert out.choices[0].message.content == "echo: hi"
        assert srv.requests[0].body["model"] == "m"

    # Programmed replies: a handler maps each request to a Reply.
    def handler(req: ServerRequest) -> Reply:
        return Reply(status=429) if req.body.get("model") == "busy" else default_handler(req)

Remember ``max_retries=0`` on the client when testing failures: the ``openai`` client retries
429/5xx and timeouts by default.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final

__all__ = [
    "ERROR_TYPES",
    "OpenAICompatServer",
    "Reply",
    "ServerRequest",
    "ToolCallReply",
    "default_handler",
    "last_user_text",
]

#: OpenAI error ``type`` per HTTP status, as the real API reports them.
ERROR_TYPES: Final[dict[int, str]] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    422: "invalid_request_error",
    429: "rate_limit_exceeded",
    500: "server_error",
    503: "server_error",
}

_CREATED: Final = 1_700_000_000  # fixed timestamp: replies are deterministic


@dataclass(frozen=True)
class ToolCallReply:
    """A tool call the server's reply requests from the client.

    Attributes:
        name: function name (should be one of the request's ``tools``).
        arguments: the JSON arguments string exactly as it will be sent.
        id: tool-call id; ``call_<index>`` when empty.
    """

    name: str
    arguments: str = "{}"
    id: str = ""


@dataclass(frozen=True)
class Reply:
    """What the server answers to one request.

    Attributes:
        content: assistant text (``None`` for a pure tool-call reply).
        tool_calls: tool calls to return (chat completions only).
        finish_reason: ``None`` picks ``tool_calls`` when there are tool calls, else ``stop``.
        model: model name to report; ``None`` echoes the request's model.
        prompt_tokens: reported usage; ``None`` counts whitespace tokens of the request text.
        completion_tokens: reported usage; ``None`` counts whitespace tokens of the reply.
        include_usage: whether non-stream replies carry ``usage`` at all (streams follow
            the request's ``stream_options.include_usage``).
        status: HTTP status; anything but 200 returns an OpenAI-style error body.
        error_message: message of the error body.
        delay: seconds to wait before answering (a client timeout below this fails).
        break_after: streaming only: cut the connection after this many content chunks,
            without the terminating ``[DONE]`` nor the end of the chunked body.
        chunk_size: characters of content per streamed chunk.
        response_id: id to report; a deterministic ``chatcmpl-<n>`` / ``resp_<n>`` if empty.
        retry_after: error replies only: a ``Retry-After`` header (seconds) to send.
        cached_tokens: chat usage: ``prompt_tokens_details.cached_tokens`` (omitted if None).
        reasoning_tokens: chat usage: ``completion_tokens_details.reasoning_tokens`` (omitted
            if None).
        service_tier: chat: the ``service_tier`` of the reply (and of every chunk).
        system_fingerprint: chat: the ``system_fingerprint`` of the reply (and of every chunk).
    """

    content: str | None = "ok"
    tool_calls: tuple[ToolCallReply, ...] = ()
    finish_reason: str | None = None
    model: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    include_usage: bool = True
    status: int = 200
    error_message: str = "simulated failure"
    delay: float = 0.0
    break_after: int | None = None
    chunk_size: int = 4
    response_id: str = ""
    retry_after: float | None = None
    cached_tokens: int | None = None
    reasoning_tokens: int | None = None
    service_tier: str | None = None
    system_fingerprint: str | None = None


def _chat_extras(reply: Reply) -> dict[str, Any]:
    """The optional top-level fields of a chat completion or chunk the reply sets."""
    extras = {"service_tier": reply.service_tier, "system_fingerprint": reply.system_fingerprint}
    return {k: v for k, v in extras.items() if v is not None}


def _usage_details(reply: Reply) -> dict[str, Any]:
    """The optional token details of a chat usage object the reply sets."""
    details: dict[str, Any] = {}
    if reply.cached_tokens is not None:
        details["prompt_tokens_details"] = {"cached_tokens": reply.cached_tokens}
    if reply.reasoning_tokens is not None:
        details["completion_tokens_details"] = {"reasoning_tokens": reply.reasoning_tokens}
    return details


@dataclass
class ServerRequest:
    """One request the server received (recorded in :attr:`OpenAICompatServer.requests`).

    Attributes:
        method: HTTP method.
        path: request path, e.g. ``/v1/chat/completions``.
        headers: request headers (lower-cased names).
        body: the parsed JSON body (empty dict for GET).
        index: 0-based arrival order.
    """

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    index: int = 0

    @property
    def stream(self) -> bool:
        """Whether the client asked for a stream."""
        return bool(self.body.get("stream"))

    @property
    def include_usage(self) -> bool:
        """Whether a stream should end with a usage chunk."""
        opts = self.body.get("stream_options") or {}
        return bool(opts.get("include_usage"))


Handler = Callable[[ServerRequest], Reply]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return " ".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
        )
    return ""


def last_user_text(req: ServerRequest) -> str:
    """Text of the last user message (chat) or of the input (responses)."""
    messages = req.body.get("messages")
    if isinstance(messages, list):
        for msg in reversed(messages):
            if isinstance(msg, dict) and msg.get("role") == "user":
                return _text_of(msg.get("content"))
        return ""
    inp = req.body.get("input")
    if isinstance(inp, str):
        return inp
    if isinstance(inp, list):
        for item in reversed(inp):
            if isinstance(item, dict) and item.get("role") == "user":
                return _text_of(item.get("content"))
    return ""


def default_handler(req: ServerRequest) -> Reply:
    """Deterministic reply: ``"echo: <last user text>"``.

    With ``tools`` in the request and a last user message starting with ``"call:"`` (e.g.
    ``"call:get_weather {\"city\": \"Paris\"}"``) it answers with that tool call instead.
    """
    text = last_user_text(req)
    if req.body.get("tools") and text.startswith("call:"):
        name, _, args = text[len("call:") :].partition(" ")
        return Reply(content=None, tool_calls=(ToolCallReply(name=name, arguments=args or "{}"),))
    return Reply(content=f"echo: {text}")


def _count_tokens(text: str) -> int:
    return len(text.split())


def _request_text(body: dict[str, Any]) -> str:
    parts: list[str] = []
    for msg in body.get("messages") or []:
        if isinstance(msg, dict):
            parts.append(_text_of(msg.get("content")))
    inp = body.get("input")
    if isinstance(inp, str):
        parts.append(inp)
    return " ".join(parts)


def _tool_call_json(tc: ToolCallReply, index: int) -> dict[str, Any]:
    return {
        "id": tc.id or f"call_{index}",
        "type": "function",
        "function": {"name": tc.name, "arguments": tc.arguments},
    }


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, owner: OpenAICompatServer) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _RequestHandler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients dropping connections (timeouts, closed streams) are normal here."""
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError | TimeoutError):
            return
        super().handle_error(request, client_address)


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # headers and body go out in separate writes: without TCP_NODELAY, Nagle's algorithm
    # and the client's delayed ACK add ~40 ms to every keep-alive response
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""

    # -- plumbing -------------------------------------------------------------------------

    def _read_body(self) -> dict[str, Any]:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return {}
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {"_unparsable": raw.decode("utf-8", "replace")}
        return parsed if isinstance(parsed, dict) else {"_body": parsed}

    def _send_json(
        self, status: int, payload: dict[str, Any], extra: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("x-request-id", f"req_{self.server.owner.request_count}")
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_error(self, reply: Reply) -> None:
        err_type = ERROR_TYPES.get(reply.status, "api_error")
        self._send_json(
            reply.status,
            {
                "error": {
                    "message": reply.error_message,
                    "type": err_type,
                    "param": None,
                    "code": err_type if reply.status == 429 else None,
                }
            },
            None if reply.retry_after is None else {"retry-after": f"{reply.retry_after:g}"},
        )

    def _chunk(self, payload: bytes) -> None:
        self.wfile.write(f"{len(payload):X}\r\n".encode() + payload + b"\r\n")
        self.wfile.flush()

    def _start_sse(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("cache-control", "no-cache")
        self.end_headers()

    def _cut(self) -> None:
        """Drop the connection abruptly, mid chunked body."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # -- dispatch -------------------------------------------------------------------------

    def do_GET(self) -> None:
        owner = self.server.owner
        owner.record(ServerRequest("GET", self.path, self._headers(), {}))
        if self.path.rstrip("/") == "/v1/models":
            self._send_json(
                200,
                {
                    "object": "list",
                    "data": [
                        {"id": m, "object": "model", "created": _CREATED, "owned_by": "local"}
                        for m in owner.models
                    ],
                },
            )
            return
        self._send_error(Reply(status=404, error_message=f"unknown path {self.path}"))

    def do_POST(self) -> None:
        owner = self.server.owner
        body = self._read_body()
        req = owner.record(ServerRequest("POST", self.path, self._headers(), body))
        path = self.path.rstrip("/")
        if path not in ("/v1/chat/completions", "/v1/responses"):
            self._send_error(Reply(status=404, error_message=f"unknown path {self.path}"))
            return
        try:
            reply = owner.handler(req)
        except Exception as exc:  # a broken test handler becomes a visible 500
            reply = Reply(status=500, error_message=f"handler raised {exc!r}")
        if reply.delay > 0 and owner.stopping.wait(reply.delay):
            self._cut()
            return
        try:
            if reply.status != 200:
                self._send_error(reply)
            elif path == "/v1/responses":
                self._responses(req, reply)
            elif req.stream:
                self._chat_stream(req, reply)
            else:
                self._send_json(200, self._chat_completion(req, reply))
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (timeout, closed stream): nothing to answer

    def _headers(self) -> dict[str, str]:
        return {k.lower(): v for k, v in self.headers.items()}

    # -- chat completions -----------------------------------------------------------------

    def _ids(self, req: ServerRequest, reply: Reply, prefix: str) -> tuple[str, str]:
        rid = reply.response_id or f"{prefix}{req.index}"
        model = reply.model or str(req.body.get("model") or "local-model")
        return rid, model

    def _usage(self, req: ServerRequest, reply: Reply, text: str) -> tuple[int, int]:
        prompt = (
            reply.prompt_tokens
            if reply.prompt_tokens is not None
            else _count_tokens(_request_text(req.body))
        )
        completion = (
            reply.completion_tokens if reply.completion_tokens is not None else _count_tokens(text)
        )
        return prompt, completion

    def _chat_completion(self, req: ServerRequest, reply: Reply) -> dict[str, Any]:
        rid, model = self._ids(req, reply, "chatcmpl-")
        text = reply.content or ""
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = [_tool_call_json(t, i) for i, t in enumerate(reply.tool_calls)]
        finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
        out: dict[str, Any] = {
            "id": rid,
            "object": "chat.completion",
            "created": _CREATED,
            "model": model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
            ],
            **_chat_extras(reply),
        }
        if reply.include_usage:
            prompt, completion = self._usage(req, reply, text)
            out["usage"] = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                **_usage_details(reply),
            }
        return out

    def _chat_chunks(self, req: ServerRequest, reply: Reply) -> Iterator[dict[str, Any]]:
        rid, model = self._ids(req, reply, "chatcmpl-")
        base = {
            "id": rid,
            "object": "chat.completion.chunk",
            "created": _CREATED,
            "model": model,
            **_chat_extras(reply),
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {
                **base,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }

        yield chunk({"role": "assistant", "content": ""})
        text = reply.content or ""
        size = max(1, reply.chunk_size)
        for start in range(0, len(text), size):
            yield chunk({"content": text[start : start + size]})
        for i, tc in enumerate(reply.tool_calls):
            full = _tool_call_json(tc, i)
            head = {**full, "function": {"name": tc.name, "arguments": ""}}
            yield chunk({"tool_calls": [{"index": i, **head}]})
            args = tc.arguments
            for start in range(0, len(args), size):
                piece = {"index": i, "function": {"arguments": args[start : start + size]}}
                yield chunk({"tool_calls": [piece]})
        yield chunk({}, reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop"))
        if req.include_usage:
            prompt, completion = self._usage(req, reply, text)
            yield {
                **base,
                "choices": [],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                    **_usage_details(reply),
                },
            }

    def _chat_stream(self, req: ServerRequest, reply: Reply) -> None:
        self._start_sse()
        sent = 0
        for payload in self._chat_chunks(req, reply):
            if reply.break_after is not None and sent >= reply.break_after:
                self._cut()
                return
            self._chunk(f"data: {json.dumps(payload)}\n\n".encode())
            sent += 1
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")  # end of the chunked body

    # -- responses (minimal) ----------------------------------------------------------------

    def _response_object(self, req: ServerRequest, reply: Reply) -> dict[str, Any]:
        rid, model = self._ids(req, reply, "resp_")
        text = reply.content or ""
        prompt, completion = self._usage(req, reply, text)
        out: dict[str, Any] = {
            "id": rid,
            "object": "response",
            "created_at": _CREATED,
            "status": "completed",
            "model": model,
            "output": [
                {
                    "type": "message",
                    "id": f"msg_{req.index}",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text, "annotations": []}],
                }
            ],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "temperature": req.body.get("temperature"),
            "top_p": req.body.get("top_p"),
            "max_output_tokens": req.body.get("max_output_tokens"),
            "error": None,
            "incomplete_details": None,
            "instructions": req.body.get("instructions"),
            "metadata": {},
        }
        if reply.include_usage:
            out["usage"] = {
                "input_tokens": prompt,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": completion,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": prompt + completion,
            }
        return out

    def _responses(self, req: ServerRequest, reply: Reply) -> None:
        final = self._response_object(req, reply)
        if not req.stream:
            self._send_json(200, final)
            return
        self._start_sse()
        text = reply.content or ""
        size = max(1, reply.chunk_size)
        events: list[dict[str, Any]] = [
            {
                "type": "response.created",
                "response": {**final, "status": "in_progress", "output": []},
            }
        ]
        for start in range(0, len(text), size):
            events.append(
                {
                    "type": "response.output_text.delta",
                    "item_id": f"msg_{req.index}",
                    "output_index": 0,
                    "content_index": 0,
                    "delta": text[start : start + size],
                }
            )
        events.append({"type": "response.completed", "response": final})
        for seq, event in enumerate(events):
            if reply.break_after is not None and seq >= reply.break_after:
                self._cut()
                return
            event["sequence_number"] = seq
            self._chunk(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
        self._chunk(b"")


@dataclass
class OpenAICompatServer:
    """A threaded OpenAI-compatible server on 127.0.0.1 and a free port.

    Args:
        handler: maps each chat-completions / responses request to a :class:`Reply`
            (default :func:`default_handler`, an echo of the last user message).
        models: ids listed by ``GET /v1/models``.

    Attributes:
        requests: every request received, in arrival order (thread-safe append).
    """

    handler: Handler = default_handler
    models: tuple[str, ...] = ("local-model",)
    requests: list[ServerRequest] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)
    _server: _Server | None = field(default=None, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def request_count(self) -> int:
        """Number of requests received so far."""
        return len(self.requests)

    def record(self, req: ServerRequest) -> ServerRequest:
        """Append ``req`` to :attr:`requests` (giving it its index) and return it."""
        with self._lock:
            req.index = len(self.requests)
            self.requests.append(req)
        return req

    @property
    def port(self) -> int:
        """The bound port (server must be started)."""
        if self._server is None:
            raise RuntimeError("server not started")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """Base URL to give the ``openai`` client, e.g. ``http://127.0.0.1:54321/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> OpenAICompatServer:
        """Bind and start serving in a daemon thread."""
        if self._server is not None:
            return self
        self.stopping.clear()
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="openai-compat-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, abort pending delays and close the socket."""
        server, thread = self._server, self._thread
        if server is None:
            return
        self.stopping.set()
        server.shutdown()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> OpenAICompatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
