"""The embedded OTLP/HTTP receiver: ``POST /v1/traces`` and ``POST /v1/logs`` to durable
OTLP-JSON lines (log records: the GenAI events sent as logs, joined to their spans on read)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
import ipaddress
import itertools
import json
import signal
import ssl
import threading
import warnings
import zlib
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import h11
from google.rpc import status_pb2  # type: ignore[import-untyped]

from groundtrace.collectors.errors import InputError

from ._budget import EXPANSION, DecodeBudget
from ._http import BodyTooLarge, HttpConnection, IdleTimeout, Reply, header
from ._otlp_json import TRACES, BodyDecodeError
from ._otlp_logs import LOGS
from ._store import BatchStore, StoreStats

__all__ = [
    "LOGS_PATH",
    "TRACES_PATH",
    "ExposedReceiverWarning",
    "Receiver",
    "ReceiverLimits",
    "ReceiverStats",
    "exposure_warning",
]

#: The path of trace exports.
TRACES_PATH: Final = "/v1/traces"
#: The path of log exports (GenAI events sent as log records).
LOGS_PATH: Final = "/v1/logs"
_PATHS: Final = (TRACES_PATH, LOGS_PATH)
_PROTOBUF: Final = "application/x-protobuf"
_JSON: Final = "application/json"
_MIB: Final = 1024 * 1024
#: gRPC status codes carried in the google.rpc.Status error bodies (OTLP/HTTP spec).
_GRPC_CODE: Final = {400: 3, 401: 16, 408: 4, 413: 3, 429: 8, 503: 14}
#: Longest reason quoted back in the answer to a malformed request head.
_REASON_CHARS: Final = 200
#: Threads that decompress and decode request bodies, off the event loop. Decoding holds the
#: GIL most of the time, so more threads would not decode faster; these let small requests
#: be decoded beside a large one (the memory budget keeps large ones few).
_DECODE_THREADS: Final = 4


@dataclass(frozen=True, slots=True)
class ReceiverLimits:
    """Bounds that keep the receiver's memory and latency in check.

    Attributes:
        max_body_bytes: largest request body, compressed and again after gunzip (413 above).
        max_inflight_requests: requests being read, decoded or committed at once (429 above).
        max_inflight_bytes: sum of their body sizes (429 above), as sent and again once
            decompressed (a gzip body that would take the sum beyond it is answered 429 after
            it is read); a chunked body without ``Content-Length`` reserves ``max_body_bytes``.
        max_decode_bytes: estimated memory of the requests being decoded at once: a
            request's estimate is its decompressed body times the expansion of its encoding
            (6x protobuf, 7x JSON: what decoding it and holding its line until it is durable
            cost on the densest batches). A request that does not fit waits until the decodes
            ahead of it finish (one estimated beyond the whole budget is decoded alone); the
            wait is bounded by ``max_inflight_bytes``, which bounds the bodies that wait. The
            default decodes one request of ``max_body_bytes`` at a time, small ones beside it.
        max_connections: open connections. A new one beyond it sheds the connection that
            has waited longest for a request head (idle keep-alive or a head still trickling
            in); only when every connection is busy with a request is it answered 503.
        max_connections_per_client: open connections from one client address. A new one
            beyond it sheds that address's longest-waiting connection the same way, so one
            address cannot take every connection from the others, and is closed at once
            only when all of that address's connections are busy with requests.
        retry_after_seconds: ``Retry-After`` sent with 429 and 503.
        idle_timeout_seconds: a keep-alive connection idle this long is closed.
        head_timeout_seconds: a request head (request line and headers) not complete this
            long after its first byte is cut off, however slowly it trickles in.
        read_timeout_seconds: a body that stalls this long is answered 408.
        body_timeout_seconds: a body not whole this long after its head is answered 408
            (or, when its request was refused unread, the connection closed), however it
            trickles in: a slow body holds an in-flight slot and a busy connection, which
            are never shed, so without this bound a few trickling clients could hold them
            all (the default admits a 16 MiB body sent at 280 KB/s).
        shutdown_grace_seconds: on stop, busy requests get this long to finish.
        rotate_bytes: size at which the output file is rotated.
    """

    max_body_bytes: int = 16 * _MIB
    max_inflight_requests: int = 64
    max_inflight_bytes: int = 64 * _MIB
    max_decode_bytes: int = 128 * _MIB
    max_connections: int = 256
    max_connections_per_client: int = 32
    retry_after_seconds: int = 1
    idle_timeout_seconds: float = 60.0
    head_timeout_seconds: float = 10.0
    read_timeout_seconds: float = 30.0
    body_timeout_seconds: float = 60.0
    shutdown_grace_seconds: float = 30.0
    rotate_bytes: int = 64 * _MIB


@dataclass(slots=True)
class ReceiverStats:
    """What the receiver did: accepted batches, spans and log records, answers by status code,
    connections closed unanswered because their client's share was all busy (refused), and
    connections waiting for a request head that were closed to admit a newer one (shed)."""

    batches: int = 0
    spans: int = 0
    log_records: int = 0
    body_bytes: int = 0
    refused_connections: int = 0
    shed_connections: int = 0
    by_status: dict[int, int] = field(default_factory=dict)

    def count(self, status: int) -> None:
        """Record one answer with ``status``."""
        self.by_status[status] = self.by_status.get(status, 0) + 1


@dataclass(slots=True)
class _Conn:
    http: HttpConnection
    client: str
    #: when it began waiting for its current request head (a tick of ``Receiver._ticks``)
    waiting_since: int
    busy: bool = False


class ExposedReceiverWarning(UserWarning):
    """The receiver listens beyond loopback and accepts traces from anyone (no token)."""


def exposure_warning(host: str, token: str | None) -> str | None:
    """Why serving on ``host`` without a token is exposed, or ``None`` when it is not.

    Only loopback is safe without a token: ``localhost``, ``127.0.0.0/8`` and ``::1``. Any
    other address, a wildcard (``0.0.0.0``, ``::``, ``""``) or a host name that may resolve
    to another interface lets every host that can reach it write traces.
    """
    if token:
        return None
    name = host.strip("[]")
    if name == "localhost":
        return None
    try:
        if ipaddress.ip_address(name).is_loopback:
            return None
    except ValueError:
        pass  # a host name (or ""): not provably loopback
    return (
        f"the receiver binds {host or 'every interface'!r}, beyond loopback, without a token: "
        "any host that can reach it can write traces; require a bearer token or bind 127.0.0.1"
    )


def _tls_context(cert: str | Path | None, key: str | Path | None) -> ssl.SSLContext | None:
    """A server TLS context from PEM files, or ``None`` (plain HTTP) without a certificate."""
    if cert is None:
        if key is not None:
            raise InputError("a TLS key needs its certificate (tls_cert)", field="tls_cert")
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as exc:
        raise InputError(f"cannot load the TLS certificate/key: {exc}", path=str(cert)) from None
    return context


def _client_address(writer: asyncio.StreamWriter) -> str:
    """The peer's address (without its port): the unit of the per-client connection limit."""
    peer = writer.get_extra_info("peername")
    return str(peer[0]) if isinstance(peer, tuple) and peer else str(peer)


class _Refused(Exception):
    def __init__(self, reply: Reply) -> None:
        super().__init__(reply.status)
        self.reply = reply


def _text(status: int, message: str, *, close: bool = False) -> Reply:
    return Reply(status, (message + "\n").encode("utf-8"), close=close)


def _status_reply(status: int, media: str, message: str, *, close: bool = False) -> Reply:
    """An error answer whose body is a ``google.rpc.Status`` in the request's encoding."""
    code = _GRPC_CODE.get(status, 2)
    if media == _PROTOBUF:
        body = status_pb2.Status(code=code, message=message).SerializeToString()
    else:
        body = json.dumps({"code": code, "message": message}).encode("utf-8")
    return Reply(status, body, content_type=media, close=close)


def _gunzip(body: bytes, limit: int, media: str) -> bytes:
    out: list[bytes] = []
    size = 0
    data = body
    while data:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            chunk = inflater.decompress(data, limit - size + 1)
        except zlib.error as exc:
            raise _Refused(_status_reply(400, media, f"invalid gzip body: {exc}")) from exc
        size += len(chunk)
        if size > limit or inflater.unconsumed_tail:
            raise _Refused(
                _status_reply(413, media, f"decompressed body exceeds {limit} bytes", close=True)
            )
        if not inflater.eof:
            raise _Refused(_status_reply(400, media, "invalid gzip body: truncated stream"))
        out.append(chunk)
        data = inflater.unused_data  # a gzip file may hold several members
    return b"".join(out)


class Receiver:
    """OTLP/HTTP receiver that persists every accepted batch before answering 200.

    Each accepted ``ExportTraceServiceRequest`` becomes one OTLP-JSON line (the OpenTelemetry
    Collector file exporter's format) in size-rotated files under ``out_dir``, written and
    fsync'd before the response; concurrent batches share fsyncs (group commit). Beyond the
    in-flight bounds it answers 429 with ``Retry-After`` instead of buffering.

    Args:
        host: interface to bind (loopback by default in the CLI).
        port: TCP port; ``0`` picks a free one (read it back from :attr:`port`).
        out_dir: directory of the OTLP-JSON lines files.
        token: if set, requests must carry ``Authorization: Bearer <token>`` (else 401).
            Without one, a ``host`` beyond loopback (see :func:`exposure_warning`) is
            refused unless ``allow_unauthenticated`` is set.
        allow_unauthenticated: serve a ``host`` beyond loopback without a token anyway;
            the exposure is then reported as an :class:`ExposedReceiverWarning`.
        limits: the bounds; see :class:`ReceiverLimits`.
        tls_cert: PEM certificate (chain) file: serve HTTPS instead of HTTP.
        tls_key: PEM private key of ``tls_cert`` (may be omitted when ``tls_cert`` holds it).

    Raises:
        InputError: ``host`` is beyond loopback without a token (and
            ``allow_unauthenticated`` is not set), the TLS files cannot be loaded,
            ``tls_key`` comes without ``tls_cert``, or ``max_decode_bytes`` is not positive.

    Usage::

        with Receiver("127.0.0.1", 0, "traces/") as receiver:
            exporter = OTLPSpanExporter(endpoint=receiver.endpoint)
            ...
    """

    def __init__(
        self,
        host: str,
        port: int,
        out_dir: str | Path,
        *,
        token: str | None = None,
        limits: ReceiverLimits | None = None,
        tls_cert: str | Path | None = None,
        tls_key: str | Path | None = None,
        allow_unauthenticated: bool = False,
    ) -> None:
        self.host = host
        exposure = exposure_warning(host, token)
        if exposure is not None:
            if not allow_unauthenticated:
                raise InputError(
                    f"refused: {exposure} (or allow it explicitly: --allow-unauthenticated)",
                    field="host",
                )
            warnings.warn(exposure, ExposedReceiverWarning, stacklevel=2)
        self._tls = _tls_context(tls_cert, tls_key)
        self._requested_port = port
        self.out_dir = Path(out_dir)
        self.token = token or None
        self.limits = limits or ReceiverLimits()
        if self.limits.max_decode_bytes <= 0:  # a budget of nothing would bound nothing
            raise InputError("max_decode_bytes must be positive", field="max_decode_bytes")
        self.stats = ReceiverStats()
        self._store = BatchStore(self.out_dir, rotate_bytes=self.limits.rotate_bytes)
        self._port: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_event: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._startup_error: BaseException | None = None
        self._stopping = False
        self._inflight_requests = 0
        self._inflight_bytes = 0
        self._budget = DecodeBudget(self.limits.max_decode_bytes)
        self._decoder: ThreadPoolExecutor | None = None
        self._connections: dict[asyncio.Task[None], _Conn] = {}
        self._per_client: Counter[str] = Counter()
        self._ticks = itertools.count()

    # -- public surface ----------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port (after start)."""
        if self._port is None:
            raise RuntimeError("the receiver is not running")
        return self._port

    @property
    def endpoint(self) -> str:
        """The full URL of the traces endpoint, e.g. ``http://127.0.0.1:4318/v1/traces``
        (``https`` with TLS)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        scheme = "http" if self._tls is None else "https"
        return f"{scheme}://{host}:{self.port}{TRACES_PATH}"

    @property
    def store_stats(self) -> StoreStats:
        """Counters of the file store (lines, bytes, fsyncs, files, repaired bytes)."""
        return self._store.stats

    def start(self, timeout: float = 10.0) -> Receiver:
        """Serve in a background thread; return once the socket is bound.

        Raises:
            InputError: the address cannot be bound or the directory cannot be used.
        """
        ready = threading.Event()
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self._main(ready.set)),
            name="groundtrace-receiver",
            daemon=True,
        )
        self._thread.start()
        if not ready.wait(timeout):
            raise InputError(f"receiver did not start within {timeout} s")
        if self._startup_error is not None:
            self._thread.join()
            raise self._startup_error
        return self

    def stop(self) -> None:
        """Stop accepting, finish in-flight requests, fsync and close (idempotent)."""
        loop, event, thread = self._loop, self._stop_event, self._thread
        if loop is not None and event is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop may already have finished
                loop.call_soon_threadsafe(event.set)
        if thread is not None:
            thread.join()
            self._thread = None

    def serve_forever(self, on_ready: Callable[[Receiver], None] | None = None) -> None:
        """Serve in the calling (main) thread until SIGTERM or SIGINT, then shut down cleanly.

        Raises:
            InputError: the address cannot be bound or the directory cannot be used.
        """

        def ready() -> None:
            assert self._loop is not None and self._stop_event is not None
            for signum in (signal.SIGTERM, signal.SIGINT):
                self._loop.add_signal_handler(signum, self._stop_event.set)
            if on_ready is not None:
                on_ready(self)

        asyncio.run(self._main(ready))
        if self._startup_error is not None:
            raise self._startup_error

    def __enter__(self) -> Receiver:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- lifecycle ---------------------------------------------------------------------------

    async def _main(self, ready: Callable[[], None]) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop_event = asyncio.Event()
        self._decoder = ThreadPoolExecutor(_DECODE_THREADS, "groundtrace-receiver-decode")
        try:
            self._store.start()
            server = await asyncio.start_server(
                self._on_connection,
                self.host,
                self._requested_port,
                reuse_address=True,
                ssl=self._tls,
                ssl_handshake_timeout=None
                if self._tls is None
                else self.limits.head_timeout_seconds,
            )
        except OSError as exc:
            self._startup_error = InputError(
                f"cannot start the receiver on {self.host}:{self._requested_port}: {exc}"
            )
            ready()
            return
        self._port = int(server.sockets[0].getsockname()[1])
        ready()
        await self._stop_event.wait()
        await self._shutdown(server)

    async def _shutdown(self, server: asyncio.Server) -> None:
        self._stopping = True
        server.close()  # stop accepting
        for conn in list(self._connections.values()):
            if not conn.busy:
                conn.http.writer.close()  # an idle keep-alive connection reads EOF and ends
        pending = [task for task in self._connections if not task.done()]
        if pending:
            _, late = await asyncio.wait(pending, timeout=self.limits.shutdown_grace_seconds)
            for task in late:
                task.cancel()
            if late:
                await asyncio.wait(late)
        if self._decoder is not None:  # a decode whose request was cancelled ends first
            await asyncio.to_thread(self._decoder.shutdown)
        await asyncio.to_thread(self._store.close)

    # -- connections -------------------------------------------------------------------------

    async def _on_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        http = HttpConnection(reader, writer)
        client = _client_address(writer)
        limits = self.limits
        crowded = self._per_client[client] >= limits.max_connections_per_client
        if crowded and not self._shed(client):
            self.stats.refused_connections += 1
            await http.close(linger=False)
            return
        full = len(self._connections) >= limits.max_connections and not self._shed(None)
        self._per_client[client] += 1
        state = self._connections[task] = _Conn(http, client, next(self._ticks))
        linger = False
        try:
            if full or self._stopping:
                request = await http.next_request(
                    limits.read_timeout_seconds, limits.head_timeout_seconds
                )
                if request is not None:
                    state.busy = True
                    reply = _text(503, "too many connections", close=True)
                    reply.headers.append(("retry-after", str(self.limits.retry_after_seconds)))
                    self.stats.count(503)
                    await http.send(reply)
                    linger = True
                return
            while not self._stopping:
                request = await http.next_request(
                    limits.idle_timeout_seconds, limits.head_timeout_seconds
                )
                if request is None:
                    return
                state.busy = True
                reply, consumed = await self._handle(http, request)
                if not consumed and not reply.close and not http.expects_continue():
                    consumed = await http.discard_body(
                        limits.max_body_bytes,
                        limits.read_timeout_seconds,
                        limits.body_timeout_seconds,
                    )
                if not consumed:
                    reply.close = linger = True
                if self._is_stopping():  # shutdown began while this request was served
                    reply.close = True
                self.stats.count(reply.status)
                await http.send(reply)
                state.busy = False
                state.waiting_since = next(self._ticks)
                if reply.close or not http.can_continue():
                    return
        except IdleTimeout:
            return
        except h11.RemoteProtocolError as exc:
            if http.can_answer():  # a malformed head, or one h11 parsed but we refuse
                status = exc.error_status_hint
                self.stats.count(status)
                reason = str(exc)[:_REASON_CHARS]
                with contextlib.suppress(h11.LocalProtocolError, OSError):
                    await http.send(_text(status, f"bad HTTP request: {reason}", close=True))
                linger = True
        except OSError:
            return  # the client went away
        except asyncio.CancelledError:
            return  # shed, or shutdown grace ran out: drop the connection (no answer was sent)
        finally:
            self._release(task)
            await http.close(linger=linger)

    def _shed(self, client: str | None) -> bool:
        """Close the connection (of ``client``, or of any client) that has waited longest for
        a request head; ``False`` when every such connection is busy with a request.

        Why shed rather than refuse the newcomer: what the caps protect is the process
        (sockets, tasks, head buffers), and a connection that has not sent a whole head yet
        has cost the receiver nothing it cannot drop. Refusing newcomers would let the
        oldest, slowest connections of an address lock out every fresh client of that
        address (and on loopback every client shares one address), whereas shedding the
        longest waiter lets a client whose head arrives promptly always get through. An idle
        keep-alive connection closed this way is ordinary HTTP: clients reconnect. Busy
        connections are bounded by the in-flight limits and the read deadline instead.
        """
        waiting = [
            (conn.waiting_since, task)
            for task, conn in self._connections.items()
            if not conn.busy and (client is None or conn.client == client)
        ]
        if not waiting:
            return False
        _, task = min(waiting)
        self._release(task)
        task.cancel()
        self.stats.shed_connections += 1
        return True

    def _release(self, task: asyncio.Task[None]) -> None:
        """Forget ``task``'s connection in the counts (idempotent)."""
        conn = self._connections.pop(task, None)
        if conn is not None:
            self._per_client[conn.client] -= 1
            if not self._per_client[conn.client]:
                del self._per_client[conn.client]

    def _is_stopping(self) -> bool:
        return self._stopping

    async def _handle(self, http: HttpConnection, request: h11.Request) -> tuple[Reply, bool]:
        """Answer one request; the flag says whether its body was read."""
        target = request.target.split(b"?", 1)[0].decode("latin-1")
        if target not in _PATHS:
            served = " and ".join(_PATHS)
            return _text(404, f"not found: only POST {served} are served"), False
        if request.method != b"POST":
            reply = _text(405, f"method not allowed: use POST {target}")
            reply.headers.append(("allow", "POST"))
            return reply, False
        if self.token is not None:
            given = header(request, b"authorization") or ""
            expected = f"Bearer {self.token}"
            if not hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8")):
                reply = _text(401, "missing or wrong bearer token", close=True)
                reply.headers.append(("www-authenticate", 'Bearer realm="groundtrace"'))
                return reply, False
        media = (header(request, b"content-type") or "").split(";", 1)[0].strip().lower()
        if media not in (_PROTOBUF, _JSON):
            message = f"unsupported media type {media!r}: use {_PROTOBUF} or {_JSON}"
            return _text(415, message), False
        encoding = (header(request, b"content-encoding") or "identity").strip().lower()
        if encoding not in ("identity", "gzip"):
            return _text(415, f"unsupported content encoding {encoding!r}: use gzip"), False
        limits = self.limits
        length_text = header(request, b"content-length")
        length = int(length_text) if length_text is not None else None  # h11 validated it
        if length is not None and length > limits.max_body_bytes:
            message = f"body of {length} bytes exceeds {limits.max_body_bytes}"
            return _status_reply(413, media, message, close=True), False
        reserve = length if length is not None else limits.max_body_bytes
        if (
            self._inflight_requests >= limits.max_inflight_requests
            or self._inflight_bytes + reserve > limits.max_inflight_bytes
        ):
            return self._busy(media), False
        self._inflight_requests += 1
        self._inflight_bytes += reserve
        try:
            return await self._export(http, media, encoding, target == LOGS_PATH), True
        except _Refused as refused:
            return refused.reply, not refused.reply.close
        finally:
            self._inflight_requests -= 1
            self._inflight_bytes -= reserve

    async def _export(self, http: HttpConnection, media: str, encoding: str, logs: bool) -> Reply:
        limits = self.limits
        try:
            body = await http.read_body(
                limits.max_body_bytes, limits.read_timeout_seconds, limits.body_timeout_seconds
            )
        except BodyTooLarge:
            text = f"body exceeds {limits.max_body_bytes} bytes"
            raise _Refused(_status_reply(413, media, text, close=True)) from None
        except IdleTimeout:
            reply = _status_reply(408, media, "request body timed out", close=True)
            raise _Refused(reply) from None
        if encoding != "gzip":
            return await self._decode_and_store(body, media, logs)
        loop = asyncio.get_running_loop()
        plain = await loop.run_in_executor(
            self._decoder, _gunzip, body, limits.max_body_bytes, media
        )
        if self._inflight_bytes + len(plain) > limits.max_inflight_bytes:
            raise _Refused(self._busy(media))
        self._inflight_bytes += len(plain)
        try:
            return await self._decode_and_store(plain, media, logs)
        finally:
            self._inflight_bytes -= len(plain)

    async def _decode_and_store(self, body: bytes, media: str, logs: bool) -> Reply:
        """Decode ``body`` in a decode thread within the memory budget, then store its line;
        the budget is held until the line is durable."""
        kind = LOGS if logs else TRACES
        decode = functools.partial(kind.accept, body, protobuf=media == _PROTOBUF)
        charge = await self._budget.acquire(len(body) * EXPANSION[media])
        try:
            try:
                items, line = await asyncio.get_running_loop().run_in_executor(
                    self._decoder, decode
                )
            except BodyDecodeError as exc:
                raise _Refused(_status_reply(400, media, str(exc))) from None
            if items == 0:  # nothing to keep; an empty line would only be noise for the readers
                return self._ok(media)
            try:
                await asyncio.wrap_future(self._store.submit(line))
            except (OSError, RuntimeError) as exc:
                reply = _status_reply(503, media, f"could not persist the batch: {exc}")
                reply.headers.append(("retry-after", str(self.limits.retry_after_seconds)))
                raise _Refused(reply) from None
        finally:
            self._budget.release(charge)
        self.stats.batches += 1
        if logs:
            self.stats.log_records += items
        else:
            self.stats.spans += items
        self.stats.body_bytes += len(body)
        return self._ok(media)

    def _busy(self, media: str) -> Reply:
        reply = _status_reply(429, media, "receiver busy: retry later")
        reply.headers.append(("retry-after", str(self.limits.retry_after_seconds)))
        return reply

    @staticmethod
    def _ok(media: str) -> Reply:
        if media == _PROTOBUF:
            return Reply(200, b"", content_type=_PROTOBUF)  # an empty Export*ServiceResponse
        return Reply(200, b"{}", content_type=_JSON)
