"""Fixtures of the attribution tests: the loopback server returning prompt log-probabilities."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TypeVar

import pytest

from tests.analyzer.attribution.test_endpoint_scorer import _Handler, _Server

S = TypeVar("S", bound=ThreadingHTTPServer)


@contextmanager
def loopback(server_class: type[S], handler: type[BaseHTTPRequestHandler]) -> Iterator[S]:
    """``server_class`` serving ``handler`` on a free 127.0.0.1 port (its ``bodies``: the
    requests' JSON bodies), stopped on exit."""
    srv = server_class(("127.0.0.1", 0), handler)
    srv.bodies = []  # type: ignore[attr-defined]
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.fixture
def server() -> Iterator[_Server]:
    """A loopback OpenAI-compatible server answering /v1/completions with echo+logprobs."""
    with loopback(_Server, _Handler) as srv:
        yield srv


@pytest.fixture
def url(server: _Server) -> str:
    """The base URL of :func:`server`."""
    return f"http://127.0.0.1:{server.server_address[1]}/v1"
