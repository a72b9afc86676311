"""Fixtures of the attribution tests: the loopback server returning prompt log-probabilities."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from tests.analyzer.attribution.test_endpoint_scorer import _Handler, _Server


@pytest.fixture
def server() -> Iterator[_Server]:
    """A loopback OpenAI-compatible server answering /v1/completions with echo+logprobs."""
    srv = _Server(("127.0.0.1", 0), _Handler)
    srv.bodies = []
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def url(server: _Server) -> str:
    """The base URL of :func:`server`."""
    return f"http://127.0.0.1:{server.server_address[1]}/v1"
