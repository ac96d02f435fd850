"""The egress proxy: loopback and this machine's own addresses are never reached; public hosts are, by tunnel or forward.

No test leaves this machine: a local HTTP server stands in for a public host where the address checks are patched
to count it as one (``public``), and raw listening sockets show whether a refused request reached anything (a
connection the proxy made waits in their backlog).
"""

from __future__ import annotations

import hashlib
import http.client
import logging
import os
import socket
import stat
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from deployments import public_web
from deployments.sandbox import egress
from deployments.sandbox.egress import MAX_HEAD, SOCKET_NAME, EgressProxy, egress_proxy


class _Origin(ThreadingHTTPServer):
    """An HTTP server on loopback that records what it was asked: (method, path, headers, body digest and size)."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seen: list[tuple[str, str, dict[str, str], str, int]] = []

    @property
    def port(self) -> int:
        return self.server_address[1]


class _Handler(BaseHTTPRequestHandler):
    server: _Origin

    def _answer(self) -> None:
        size = int(self.headers.get("Content-Length") or 0)
        digest, left = hashlib.sha256(), size
        while left:
            chunk = self.rfile.read(min(left, 65536))
            digest.update(chunk)
            left -= len(chunk)
        self.server.seen.append((self.command, self.path, dict(self.headers), digest.hexdigest(), size))
        body = f"page {self.path} {size} {digest.hexdigest()}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def origin() -> Iterator[_Origin]:
    server = _Origin()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[EgressProxy]:
    with EgressProxy(tmp_path / SOCKET_NAME, connect_timeout_s=3, idle_s=10) as started:
        yield started


@pytest.fixture
def public(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every address counts as public, none as this machine's: the local test servers stand for public hosts."""
    monkeypatch.setattr(public_web, "is_public_address", lambda address: True)
    monkeypatch.setattr(egress, "machine_addresses", lambda: frozenset())


def _listening(host: str = "127.0.0.1") -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.bind((host, 0))
    sock.listen(8)
    sock.setblocking(False)
    return sock


def _reached(listener: socket.socket) -> bool:
    """Whether anything connected to ``listener`` (a connection waits in its backlog until accepted)."""
    try:
        listener.accept()[0].close()
    except BlockingIOError:
        return False
    return True


def _client(proxy: EgressProxy, data: bytes = b"") -> socket.socket:
    sock = socket.socket(socket.AF_UNIX)
    sock.settimeout(10)
    sock.connect(str(proxy.socket_path))
    sock.sendall(data)
    return sock


def _until_eof(sock: socket.socket) -> bytes:
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


def _ask(proxy: EgressProxy, data: bytes) -> bytes:
    """All the proxy answers ``data``."""
    with _client(proxy, data) as sock:
        return _until_eof(sock)


def _head(sock: socket.socket) -> bytes:
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = sock.recv(1)
        assert chunk, received
        received += chunk
    return received


def _resolving(monkeypatch: pytest.MonkeyPatch, names: dict[str, list[str]], later: list[str] | None = None) -> list[str]:
    """``names`` resolve to their addresses (to ``later`` from their second lookup on, where given; other names as
    before); the names looked up, in order, are returned."""
    looked_up: list[str] = []
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in names:
            return real(host, port, *args, **kwargs)
        addresses = later if later is not None and host in looked_up else names[host]
        looked_up.append(host)
        return [(socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in addresses]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return looked_up


def test_loopback_is_refused_and_never_reached(proxy, caplog):
    caplog.set_level(logging.WARNING, logger=egress.__name__)
    with _listening() as listener:
        port = listener.getsockname()[1]
        for request in [
            f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n",
            f"CONNECT localhost:{port} HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n",
            f"CONNECT [::ffff:127.0.0.1]:{port} HTTP/1.1\r\n\r\n",
            f"GET http://127.0.0.1:{port}/api/flow_runs HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n",
            f"POST http://localhost:{port}/v1/chat HTTP/1.1\r\nContent-Length: 2\r\n\r\n{{}}",
        ]:
            answer = _ask(proxy, request.encode())
            assert answer.startswith(b"HTTP/1.1 403 Forbidden\r\n"), (request, answer)
            assert b"not a public address" in answer
            assert not _reached(listener), request
    assert "Egress refused (403)" in caplog.text


def test_connect_relays_a_full_exchange(proxy, origin, public):
    with _client(proxy, f"CONNECT 127.0.0.1:{origin.port} HTTP/1.1\r\nHost: 127.0.0.1:{origin.port}\r\n\r\n".encode()) as sock:
        assert _head(sock) == b"HTTP/1.1 200 Connection established\r\n\r\n"
        sock.sendall(b"GET /through/the/tunnel HTTP/1.1\r\nHost: example.org\r\nConnection: close\r\n\r\n")
        answer = _until_eof(sock)
    assert answer.startswith(b"HTTP/1.0 200 OK\r\n") and answer.endswith(
        b"page /through/the/tunnel 0 " + hashlib.sha256().hexdigest().encode()
    )
    assert [(method, path) for method, path, *_ in origin.seen] == [("GET", "/through/the/tunnel")]


def test_a_tunnel_passes_the_clients_end_on_and_still_brings_the_answer(proxy, public):
    with _listening() as listener:
        listener.setblocking(True)

        def answer_after_eof() -> None:  # reads the whole request, then answers how long it was
            conn = listener.accept()[0]
            with conn:
                conn.sendall(f"got {len(_until_eof(conn))}".encode())

        server = threading.Thread(target=answer_after_eof, daemon=True)
        server.start()
        with _client(proxy, f"CONNECT 127.0.0.1:{listener.getsockname()[1]} HTTP/1.1\r\n\r\nfirst ".encode()) as sock:
            assert _head(sock).startswith(b"HTTP/1.1 200 ")
            sock.sendall(b"and last")
            sock.shutdown(socket.SHUT_WR)
            assert _until_eof(sock) == b"got 14"
        server.join(10)


def test_a_plain_request_is_forwarded_in_origin_form_and_answered(proxy, origin, public):
    request = (
        f"GET http://127.0.0.1:{origin.port}/page?q=1#part HTTP/1.1\r\nHost: elsewhere.example\r\nProxy-Connection: keep-alive\r\n"
        "Proxy-Authorization: Basic c2VjcmV0\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\nX-Kept: yes\r\n\r\n"
    )
    answer = _ask(proxy, request.encode())
    assert answer.startswith(b"HTTP/1.0 200 OK\r\n") and b"page /page?q=1 0" in answer
    [(method, path, headers, _, _)] = origin.seen
    assert (method, path) == ("GET", "/page?q=1")
    assert headers == {"Host": f"127.0.0.1:{origin.port}", "X-Kept": "yes", "Connection": "close"}


def test_a_body_is_streamed_to_the_host(proxy, origin, public):
    body = os.urandom(3 * 1024 * 1024)
    request = f"POST http://127.0.0.1:{origin.port}/upload HTTP/1.1\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    answer = _ask(proxy, request + body)
    assert answer.endswith(f"page /upload {len(body)} {hashlib.sha256(body).hexdigest()}".encode())


def _own_address() -> str:
    """This machine's address on its default route, found without the module under test (a UDP connect sends nothing)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.200", 9))
            address = probe.getsockname()[0]
    except OSError:
        pytest.skip("no IPv4 route on this machine")
    if address.startswith("127."):
        pytest.skip("this machine has no address but loopback")
    return str(address)


def test_an_address_of_this_machine_is_refused_even_counted_public(proxy, monkeypatch):
    monkeypatch.setattr(public_web, "is_public_address", lambda address: True)
    own = _own_address()
    with _listening(own) as listener:
        port = listener.getsockname()[1]
        for request in [f"CONNECT {own}:{port} HTTP/1.1\r\n\r\n", f"CONNECT [::ffff:{own}]:{port} HTTP/1.1\r\n\r\n",
                        f"GET http://{own}:{port}/ HTTP/1.1\r\n\r\n"]:  # fmt: skip
            answer = _ask(proxy, request.encode())
            assert answer.startswith(b"HTTP/1.1 403 Forbidden\r\n") and b"an address of this machine" in answer, (request, answer)
            assert not _reached(listener), request


def test_a_name_at_public_and_private_addresses_is_refused(proxy, monkeypatch):
    monkeypatch.setattr(public_web, "is_public_address", lambda address: address != "10.9.9.9")
    monkeypatch.setattr(egress, "machine_addresses", lambda: frozenset())
    with _listening() as listener:
        port = listener.getsockname()[1]
        _resolving(monkeypatch, {"mixed.example": ["127.0.0.1", "10.9.9.9"], "clean.example": ["127.0.0.1"]})
        for request in [f"CONNECT mixed.example:{port} HTTP/1.1\r\n\r\n", f"GET http://mixed.example:{port}/ HTTP/1.1\r\n\r\n"]:
            answer = _ask(proxy, request.encode())
            assert answer.startswith(b"HTTP/1.1 403 Forbidden\r\n") and b"10.9.9.9" in answer, answer
            assert not _reached(listener)
        with _client(proxy, f"CONNECT clean.example:{port} HTTP/1.1\r\n\r\n".encode()) as sock:
            assert _head(sock).startswith(b"HTTP/1.1 200 ")
        assert _reached(listener)


def test_the_name_is_resolved_once_and_its_checked_address_connected(proxy, origin, monkeypatch):
    monkeypatch.setattr(public_web, "is_public_address", lambda address: address != "10.9.9.9")
    monkeypatch.setattr(egress, "machine_addresses", lambda: frozenset())
    looked_up = _resolving(monkeypatch, {"rebind.example": ["127.0.0.1"]}, later=["10.9.9.9"])  # a second answer points elsewhere
    answer = _ask(proxy, f"GET http://rebind.example:{origin.port}/once HTTP/1.1\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.0 200 OK\r\n"), answer
    assert looked_up == ["rebind.example"]
    assert origin.seen[0][2]["Host"] == f"rebind.example:{origin.port}"


def test_a_head_over_16_kb_is_refused(proxy, origin, public):
    with _listening() as listener:
        port = listener.getsockname()[1]
        filler = "a" * MAX_HEAD
        answer = _ask(proxy, f"GET http://127.0.0.1:{port}/ HTTP/1.1\r\nX-Big: {filler}\r\n\r\n".encode())
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:100]
        assert not _reached(listener)
    request = f"GET http://127.0.0.1:{origin.port}/ HTTP/1.1\r\n\r\n"
    filler = "a" * (MAX_HEAD - len(request) - len("X-Big: \r\n"))
    fits = f"GET http://127.0.0.1:{origin.port}/ HTTP/1.1\r\nX-Big: {filler}\r\n\r\n".encode()
    assert len(fits) == MAX_HEAD and _ask(proxy, fits).startswith(b"HTTP/1.0 200 OK")
    assert _ask(proxy, fits[:-4] + b"a\r\n\r\n").startswith(b"HTTP/1.1 431 ")
    with _client(proxy, fits[:100]) as sock:  # the head's end comes later, beyond the limit
        time.sleep(0.3)
        sock.sendall(fits[100:-4] + b"a\r\n\r\n")
        assert _until_eof(sock).startswith(b"HTTP/1.1 431 ")
    with _client(proxy, fits[:-4] + b"a" * MAX_HEAD) as sock:  # no end in sight: answered without waiting for one
        assert _until_eof(sock).startswith(b"HTTP/1.1 431 ")
    assert len(origin.seen) == 1


@pytest.mark.parametrize(
    "request_head",
    ["GET / HTTP/1.1\r\nHost: {host}\r\n\r\n", "GET https://{host}/ HTTP/1.1\r\n\r\n", "CONNECT http://{host}/ HTTP/1.1\r\n\r\n", "CONNECT [::1:80 HTTP/1.1\r\n\r\n",
     "CONNECT 127.0.0.1 HTTP/1.1\r\n\r\n", "GET http://{host}/ HTTP/2\r\n\r\n", "GET http://{host}/\nX: 1 HTTP/1.1\r\n\r\n",
     "GET http://user@{host}@evil/ HTTP/1.1\r\n\r\n", "GET http://{host}/ HTTP/1.1\r\nBad Header: 1\r\n\r\n", "GET http://{host}/\tx HTTP/1.1\r\n\r\n"],
)  # fmt: skip
def test_requests_it_does_not_understand_are_refused(proxy, public, request_head):
    with _listening() as listener:
        host = f"127.0.0.1:{listener.getsockname()[1]}"
        answer = _ask(proxy, request_head.format(host=host).encode())
        assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n"), answer
        assert not _reached(listener)


def test_connections_beyond_the_cap_wait_their_turn(tmp_path, origin, public):
    connect = f"CONNECT 127.0.0.1:{origin.port} HTTP/1.1\r\n\r\n".encode()
    with EgressProxy(tmp_path / SOCKET_NAME, max_connections=2) as proxy:
        first, second = _client(proxy, connect), _client(proxy, connect)
        assert _head(first).startswith(b"HTTP/1.1 200 ") and _head(second).startswith(b"HTTP/1.1 200 ")
        with _client(proxy, connect) as third:
            third.settimeout(1.0)
            with pytest.raises(TimeoutError):
                third.recv(1)
            first.close()
            third.settimeout(10)
            assert _head(third).startswith(b"HTTP/1.1 200 ")
        second.close()


def test_an_idle_tunnel_is_closed(tmp_path, origin, public):
    with (
        EgressProxy(tmp_path / SOCKET_NAME, idle_s=0.5) as proxy,
        _client(proxy, f"CONNECT 127.0.0.1:{origin.port} HTTP/1.1\r\n\r\n".encode()) as sock,
    ):
        assert _head(sock).startswith(b"HTTP/1.1 200 ")
        started = time.monotonic()
        assert sock.recv(1) == b""
        assert time.monotonic() - started < 5


def _tcp_relay(unix_path: Path) -> tuple[int, socket.socket]:
    """A loopback TCP port whose every connection is relayed to the Unix socket ``unix_path`` (as a run's relay does)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)

    def pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def accept() -> None:
        while True:
            try:
                client = listener.accept()[0]
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX)
            upstream.connect(str(unix_path))
            threading.Thread(target=pump, args=(client, upstream), daemon=True).start()
            threading.Thread(target=pump, args=(upstream, client), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return listener.getsockname()[1], listener


def test_standard_clients_through_a_tcp_relay_get_their_pages(proxy, origin, public, monkeypatch):
    for name in ("no_proxy", "NO_PROXY", "http_proxy", "HTTP_PROXY"):
        monkeypatch.delenv(name, raising=False)
    _resolving(monkeypatch, {"origin.example": ["127.0.0.1"]})
    port, listener = _tcp_relay(proxy.socket_path)
    with listener:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": f"http://127.0.0.1:{port}"}))
        with opener.open(f"http://origin.example:{origin.port}/by/urllib?x=1", timeout=10) as response:
            assert response.status == 200 and response.read().startswith(b"page /by/urllib?x=1 0 ")
        tunnel = http.client.HTTPConnection("127.0.0.1", port, timeout=10)  # CONNECT, then HTTP inside the tunnel
        tunnel.set_tunnel("origin.example", origin.port)
        tunnel.request("GET", "/by/tunnel")
        assert tunnel.getresponse().read().startswith(b"page /by/tunnel 0 ")
        tunnel.close()
    assert [path for _, path, *_ in origin.seen] == ["/by/urllib?x=1", "/by/tunnel"]
    assert origin.seen[0][2]["Host"] == f"origin.example:{origin.port}"


def test_one_proxy_per_folder_started_on_first_use_and_stopped(tmp_path):
    folder = tmp_path / "egress"
    try:
        proxy = egress_proxy(folder)
        assert proxy.running and proxy.socket_path == folder.resolve() / SOCKET_NAME
        assert stat.S_IMODE(os.stat(proxy.socket_path).st_mode) == 0o666 and stat.S_ISSOCK(os.stat(proxy.socket_path).st_mode)
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
        assert egress_proxy(folder) is proxy
        assert _ask(proxy, b"GET / HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    finally:
        egress.stop_all()
    assert not proxy.running and not proxy.socket_path.exists()
    with pytest.raises(OSError), socket.socket(socket.AF_UNIX) as sock:
        sock.connect(str(proxy.socket_path))
    try:
        again = egress_proxy(folder)
        assert again is not proxy and again.running
    finally:
        egress.stop_all()


def test_stop_ends_the_tunnels_being_relayed(tmp_path, origin, public):
    proxy = EgressProxy(tmp_path / SOCKET_NAME)
    proxy.start()
    with _client(proxy, f"CONNECT 127.0.0.1:{origin.port} HTTP/1.1\r\n\r\n".encode()) as sock:
        assert _head(sock).startswith(b"HTTP/1.1 200 ")
        proxy.stop()
        assert sock.recv(1) == b""
