"""The receiver against slow and greedy clients, the refusal of an exposed bind, and TLS.

Every server here binds 127.0.0.1; the exposed cases are checked as data, never bound.
"""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import time
import warnings
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from groundtrace.analyzer.cli import build_app
from groundtrace.collectors.errors import InputError
from groundtrace.collectors.receiver import (
    ExposedReceiverWarning,
    Receiver,
    ReceiverLimits,
    exposure_warning,
)
from tests.collectors.receiver.test_receiver_http import (
    PROTO,
    _raw_headers,
    _read_response,
    make_spans,
    proto_body,
)

_HEAD = b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-protobuf\r\n"


def _closed_by_peer(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def _post(port: int, body: bytes, source: str = "127.0.0.1") -> bytes:
    """One whole request on a fresh connection from ``source``; the response head."""
    with socket.create_connection(
        ("127.0.0.1", port), timeout=30, source_address=(source, 0)
    ) as sock:
        sock.sendall(_raw_headers(port, len(body)) + body)
        return _read_response(sock)


def test_a_head_trickled_a_byte_at_a_time_is_cut_off_at_the_head_deadline(
    tmp_path: Path,
) -> None:
    limits = ReceiverLimits(head_timeout_seconds=0.5, idle_timeout_seconds=30)
    with (
        Receiver("127.0.0.1", 0, tmp_path, limits=limits) as rx,
        socket.create_connection(("127.0.0.1", rx.port), timeout=5) as sock,
    ):
        started = time.monotonic()
        cut = False
        for byte in _HEAD:  # bounded: one byte every 50 ms, each well inside the idle timeout
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                cut = True
                break
            time.sleep(0.05)
            if time.monotonic() - started > 0.6:
                break
        assert cut or _closed_by_peer(sock)
        assert time.monotonic() - started < 2.0
        # a whole request in time is still served
        assert _post(rx.port, proto_body(make_spans(1))).startswith(b"HTTP/1.1 200")


@pytest.mark.parametrize(
    "host", ["0.0.0.0", "::", "", "192.168.1.7", "10.0.0.1", "[2001:db8::1]", "example.com"]
)
def test_beyond_loopback_without_a_token_is_exposed(host: str) -> None:
    message = exposure_warning(host, None)
    assert message is not None and "without a token" in message
    assert exposure_warning(host, "s3cret") is None


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"])
def test_loopback_is_not_exposed(host: str) -> None:
    assert exposure_warning(host, None) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "", "192.168.1.7", "example.com"])
def test_an_exposed_bind_without_a_token_is_refused(host: str, tmp_path: Path) -> None:
    # refused before anything is bound
    with pytest.raises(InputError, match="--allow-unauthenticated") as caught:
        Receiver(host, 0, tmp_path)
    assert caught.value.field == "host" and "without a token" in str(caught.value)


def test_the_receiver_warns_loudly_when_an_exposed_bind_is_allowed(tmp_path: Path) -> None:
    # built, never started: nothing is bound
    with pytest.warns(ExposedReceiverWarning, match="0.0.0.0"):
        Receiver("0.0.0.0", 0, tmp_path, allow_unauthenticated=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ExposedReceiverWarning)
        Receiver("0.0.0.0", 0, tmp_path, token="t")
        Receiver("127.0.0.1", 0, tmp_path)


def test_serve_refuses_an_exposed_bind_unless_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = build_app()
    refused = CliRunner().invoke(
        app, ["collect", "serve", "--host", "0.0.0.0", "--port", "0", "--out", str(tmp_path)]
    )
    assert refused.exit_code == 2
    assert "refused" in refused.output and "--allow-unauthenticated" in refused.output
    served: list[str] = []
    # the serving loop itself is replaced: nothing binds beyond loopback in a test
    monkeypatch.setattr(Receiver, "serve_forever", lambda self, on_ready: served.append(self.host))
    allowed = CliRunner().invoke(
        app,
        ["collect", "serve", "--host", "0.0.0.0", "--port", "0", "--out", str(tmp_path),
         "--allow-unauthenticated"],
    )  # fmt: skip
    assert allowed.exit_code == 0, allowed.output
    assert served == ["0.0.0.0"] and "WARNING" in allowed.output


def _self_signed(tmp_path: Path) -> tuple[Path, Path]:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1"),
            *("-addext", "subjectAltName=IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_tls_serves_https_on_loopback(tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    body = proto_body(make_spans(1))
    out = tmp_path / "out"
    with Receiver("127.0.0.1", 0, out, tls_cert=cert, tls_key=key) as rx:
        assert rx.endpoint.startswith("https://127.0.0.1:")
        trusted = ssl.create_default_context(cafile=str(cert))
        with httpx.Client(verify=trusted) as client:
            response = client.post(rx.endpoint, content=body, headers={"content-type": PROTO})
        assert response.status_code == 200
        with pytest.raises(httpx.TransportError):  # plain HTTP does not get through
            httpx.post(
                rx.endpoint.replace("https", "http"),
                content=body,
                headers={"content-type": PROTO},
            )
    assert len(list(out.glob("*.jsonl"))) == 1


def test_unloadable_tls_files_are_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "bad.pem").write_text("not a certificate")
    with pytest.raises(InputError, match="cannot load the TLS certificate"):
        Receiver("127.0.0.1", 0, tmp_path, tls_cert=tmp_path / "bad.pem")
    with pytest.raises(InputError, match="needs its certificate"):
        Receiver("127.0.0.1", 0, tmp_path, tls_key=tmp_path / "bad.pem")
