"""A minimal HTTP/1.1 server connection on asyncio streams and the sans-IO ``h11`` parser.

Why this stack: the receiver serves one small endpoint whose hard parts are admission
control, bounded bodies and durable writes, not routing. One asyncio event loop serves every
connection without a thread per connection (so a flood of clients costs sockets, not
threads), in-flight accounting needs no locks, request bodies are read incrementally so an
oversize body is refused from its ``Content-Length`` before any of it is buffered, and
shutdown is a matter of closing the listener and awaiting the busy connections. ``h11`` is a
small, strict, pure-Python HTTP/1.1 state machine (the one under ``httpcore``/``httpx``, already
a dependency); everything else is the standard library.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import h11

__all__ = ["BodyTooLarge", "HttpConnection", "IdleTimeout", "Reply", "header"]

_READ_CHUNK: Final = 65_536
_LINGER_BYTES: Final = 64 * 1024 * 1024
_LINGER_SECONDS: Final = 2.0


class IdleTimeout(Exception):
    """The peer sent nothing within the allowed time, or not its whole request head."""


class BodyTooLarge(Exception):
    """A request body grew past the allowed size while it was being read."""


@dataclass(slots=True)
class Reply:
    """A response to send: status, extra headers, body, and whether to close afterwards."""

    status: int
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    headers: list[tuple[str, str]] = field(default_factory=list)
    close: bool = False


class HttpConnection:
    """One client connection: read requests and bodies, send replies (HTTP/1.1, keep-alive)."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        max_header_bytes: int = 16_384,
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.conn = h11.Connection(h11.SERVER, max_incomplete_event_size=max_header_bytes)

    async def _receive(self, timeout: float) -> None:
        """Feed the parser the next bytes (or the end of stream) to arrive within ``timeout``."""
        try:
            async with asyncio.timeout(timeout):
                data = await self.reader.read(_READ_CHUNK)
        except TimeoutError:
            raise IdleTimeout from None
        self.conn.receive_data(data)

    async def _next_event(self, timeout: float) -> h11.Event | type[h11.PAUSED]:
        while True:
            event = self.conn.next_event()
            if event is not h11.NEED_DATA:
                return event  # type: ignore[return-value]
            await self._receive(timeout)

    async def next_request(self, idle_timeout: float, head_timeout: float) -> h11.Request | None:
        """The next request's head, or ``None`` when the connection ended before or inside
        a head (closed by the peer, or by the receiver's own shutdown).

        The connection may idle for ``idle_timeout`` seconds before a request begins; from
        its first byte the whole head must arrive within ``head_timeout`` seconds, however
        the client spreads it out (a head trickled a byte at a time is cut off).

        Raises:
            IdleTimeout: nothing arrived within ``idle_timeout`` seconds, or the head did
                not complete within ``head_timeout`` seconds.
            h11.RemoteProtocolError: the peer sent something that is not HTTP/1.1, or a
                head framing its body both by ``Content-Length`` and ``Transfer-Encoding``
                (answer it with :meth:`can_answer` and the error's ``error_status_hint``).
        """
        event = self.conn.next_event()
        if event is h11.NEED_DATA:
            await self._receive(idle_timeout)  # a keep-alive connection may idle this long
            try:
                async with asyncio.timeout(head_timeout):
                    event = await self._next_event(head_timeout)
            except TimeoutError:
                raise IdleTimeout from None
            except h11.RemoteProtocolError:
                if self.conn.trailing_data[1]:  # the stream ended inside a head: the peer left
                    return None
                raise
        if isinstance(event, h11.Request):
            if _find(event.headers, b"transfer-encoding") is not None and (
                _find(event.headers, b"content-length") is not None
            ):
                # RFC 9112 section 6.3: a sender of both may be smuggling a second request
                # past a proxy that frames the body by the other header; reject and close.
                raise h11.RemoteProtocolError(
                    "Content-Length together with Transfer-Encoding", error_status_hint=400
                )
            return event
        return None

    async def read_body(self, limit: int, timeout: float, deadline: float) -> bytes:
        """Read the whole body of the current request, at most ``limit`` bytes.

        Raises:
            BodyTooLarge: more than ``limit`` bytes arrived (the rest is left unread).
            IdleTimeout: the body stalled for ``timeout`` seconds, or was not whole
                ``deadline`` seconds after it began, however it trickles in.
        """
        if self.conn.they_are_waiting_for_100_continue:
            # The client holds the body back until told to go on (curl does for > 1 KiB).
            go_on = h11.InformationalResponse(status_code=100, headers=[])
            self.writer.write(self.conn.send(go_on) or b"")
        chunks: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(deadline):
                while True:
                    event = await self._next_event(timeout)
                    if isinstance(event, h11.Data):
                        size += len(event.data)
                        if size > limit:
                            raise BodyTooLarge
                        chunks.append(bytes(event.data))
                    elif isinstance(event, h11.EndOfMessage):
                        return b"".join(chunks)
                    else:
                        raise h11.RemoteProtocolError("connection closed inside a request body")
        except TimeoutError:
            raise IdleTimeout from None

    async def discard_body(self, budget: int, timeout: float, deadline: float) -> bool:
        """Read and drop the rest of the current body; ``False`` if it exceeds ``budget``
        bytes or is not whole within ``deadline`` seconds.

        Raises:
            IdleTimeout: the body stalled for ``timeout`` seconds.
        """
        size = 0
        try:
            async with asyncio.timeout(deadline):
                while self.conn.their_state is h11.SEND_BODY:
                    event = await self._next_event(timeout)
                    if isinstance(event, h11.Data):
                        size += len(event.data)
                        if size > budget:
                            return False
                    elif not isinstance(event, h11.EndOfMessage):
                        return False
        except TimeoutError:
            return False
        return self.conn.their_state is h11.DONE

    async def send(self, reply: Reply) -> None:
        """Send ``reply`` (with ``Content-Length``; ``Connection: close`` when closing)."""
        headers: list[tuple[str, str]] = [
            ("content-type", reply.content_type),
            ("content-length", str(len(reply.body))),
            *reply.headers,
        ]
        if reply.close:
            headers.append(("connection", "close"))
        data = self.conn.send(h11.Response(status_code=reply.status, headers=headers))
        data = (data or b"") + (self.conn.send(h11.Data(data=reply.body)) or b"")
        data += self.conn.send(h11.EndOfMessage()) or b""
        self.writer.write(data)
        await self.writer.drain()

    def can_answer(self) -> bool:
        """Whether a response may still be sent: none has begun for the current request,
        which may also be a head the parser refused (h11 lets a server answer that one)."""
        return self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE)

    def expects_continue(self) -> bool:
        """Whether the client still waits for ``100 Continue`` before sending its body."""
        return bool(self.conn.they_are_waiting_for_100_continue)

    def can_continue(self) -> bool:
        """Start the next request/response cycle if both sides finished; else ``False``."""
        if self.conn.our_state is h11.DONE and self.conn.their_state is h11.DONE:
            self.conn.start_next_cycle()
            return True
        return False

    async def close(self, *, linger: bool) -> None:
        """Close the socket; with ``linger``, half-close and drain first.

        Closing a socket with unread request bytes makes the kernel send a reset that can
        destroy the response the client has not read yet; lingering (bounded in bytes and
        time) lets an early error reply such as 413 actually reach the client.
        """
        try:
            if linger and self.writer.can_write_eof():
                self.writer.write_eof()
                drained = 0
                async with asyncio.timeout(_LINGER_SECONDS):
                    while drained < _LINGER_BYTES:
                        chunk = await self.reader.read(_READ_CHUNK)
                        if not chunk:
                            break
                        drained += len(chunk)
        except (TimeoutError, OSError):
            pass  # best effort: the connection is going away either way
        finally:
            self.writer.close()
            with contextlib.suppress(OSError):
                await self.writer.wait_closed()


def header(request: h11.Request, name: bytes) -> str | None:
    """The value of header ``name`` (lower-case bytes) in ``request``, if present."""
    return _find(request.headers, name)


def _find(headers: Sequence[tuple[bytes, bytes]], name: bytes) -> str | None:
    for key, value in headers:
        if key == name:
            return value.decode("latin-1")
    return None
