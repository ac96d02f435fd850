"""What a run shares with the host: namespaces, System V IPC, and with the network on, the machine's own services.

Each test runs under every isolation this machine has, cold and warm. ``none`` claims no namespace (SECURITY.md): there the
documented weakness is asserted.
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import random
import socket
import struct
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

NAMESPACES = ("ipc", "uts", "pid", "net", "mnt")
IPC_CREAT, IPC_RMID = 0o1000, 0


def _host_namespaces() -> dict[str, str]:
    return {name: os.readlink(f"/proc/self/ns/{name}") for name in NAMESPACES}


def test_a_run_shares_no_namespace_with_the_host(sandbox, isolation):
    result = sandbox.run(f"import json, os\nprint(json.dumps({{n: os.readlink(f'/proc/self/ns/{{n}}') for n in {NAMESPACES!r}}}))\n")
    assert result.ok, result.error
    host = _host_namespaces()
    shared = sorted(name for name in NAMESPACES if result.answer[name] == host[name])
    if isolation["namespaces"]:
        assert shared == []  # e.g. ['ipc', 'uts']: the host's System V IPC objects and host name
    else:  # documented: without namespaces the run is in the host's
        assert shared == sorted(NAMESPACES)


def _shm_keys() -> dict[int, int]:
    """The host's System V shared-memory segments: key -> id."""
    lines = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    return {int(line.split()[0]): int(line.split()[1]) for line in lines if line.strip()}


@pytest.fixture
def shm_key() -> Iterator[int]:
    """A key for a System V segment; whatever segment of it reached the host is removed afterwards."""
    key = random.randrange(1 << 20, 1 << 30)
    yield key
    shmid = _shm_keys().get(key)
    if shmid is not None:
        ctypes.CDLL(None, use_errno=True).shmctl(shmid, IPC_RMID, None)


def test_a_shared_memory_segment_does_not_outlive_its_run(sandbox, isolation, shm_key):
    code = (
        "import ctypes, json, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        f"shmid = libc.shmget({shm_key}, 4096, {IPC_CREAT | 0o600})\n"
        "print(json.dumps([shmid, os.strerror(ctypes.get_errno()) if shmid < 0 else None]))\n"
    )
    result = sandbox.run(code)
    assert result.ok, result.error
    left = shm_key in _shm_keys()
    if isolation["namespaces"]:
        assert not left, f"the run's segment {result.answer} is in the host's IPC namespace after the run"
    else:  # documented: without namespaces the run's IPC objects are the host's
        assert left


def _own_addresses() -> list[str]:
    """The machine's IPv4 addresses on its interfaces other than loopback."""
    found = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _, name in socket.if_nameindex():
            try:
                packed = fcntl.ioctl(probe.fileno(), 0x8915, struct.pack("256s", name[:15].encode()))  # SIOCGIFADDR
            except OSError:  # no IPv4 address on it
                continue
            address = socket.inet_ntoa(packed[20:24])
            if not address.startswith("127."):
                found.append(address)
    return found


@pytest.fixture
def listeners() -> Iterator[list[tuple[str, int]]]:
    """TCP listeners on loopback (IPv4 and IPv6, where there is one) and on each of the machine's own addresses."""
    opened = []
    for family, address in [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1"), *((socket.AF_INET, a) for a in _own_addresses())]:
        listener = socket.socket(family)
        try:
            listener.bind((address, 0))
        except OSError:
            listener.close()
            continue
        listener.listen()
        opened.append(listener)
    yield [(s.getsockname()[0], s.getsockname()[1]) for s in opened]
    for listener in opened:
        listener.close()


def test_with_the_network_on_the_machines_own_services_stay_out_of_reach(sandbox, isolation, listeners):
    code = (
        "import json, socket\nreached = {}\n"
        f"for host, port in {listeners!r}:\n"
        "    try:\n"
        "        socket.create_connection((host, port), timeout=3).close()\n"
        "        reached[f'{host} {port}'] = 'connected'\n"
        "    except OSError as exc:\n"
        "        reached[f'{host} {port}'] = exc.strerror or type(exc).__name__\n"
        "print(json.dumps(reached))\n"
    )
    result = sandbox.run(code, network=True)
    assert result.ok, result.error
    connected = sorted(where for where, what in result.answer.items() if what == "connected")
    if isolation["namespaces"]:
        # e.g. the Prefect API on 127.0.0.1, a database on the machine's own address
        assert connected == [], f"with the network on, a run reached {connected} ({json.dumps(result.answer)})"
    else:  # documented: without namespaces the network is the host's
        assert f"127.0.0.1 {listeners[0][1]}" in connected


@pytest.fixture
def web_server() -> Iterator[int]:
    """A web server on this machine's loopback, standing for a public site (the test lets the proxy take it as one)."""
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"a public page")

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_with_the_network_on_the_web_is_reached_through_evoskills_proxy_and_nothing_else(sandbox, isolation, web_server, monkeypatch):
    if not isolation["namespaces"]:
        pytest.skip("without namespaces the network is the host's (SECURITY.md)")
    from deployments.public_web import FetchRefused
    from deployments.sandbox import egress

    def checked(host: str, port: int) -> list[str]:  # "example.test" stands for a public site; everything else is refused
        if host == "example.test":
            return ["127.0.0.1"]
        raise FetchRefused(f"{host} is not a public address")

    monkeypatch.setattr(egress, "checked_addresses", checked)
    code = (
        "import json, os, urllib.request\nseen = {}\n"
        f"for name, url in [('site', 'http://example.test:{web_server}/'), ('loopback', 'http://127.0.0.1:{web_server}/'),"
        f" ('by its name', 'http://localhost:{web_server}/')]:\n"
        "    try:\n"
        "        seen[name] = urllib.request.urlopen(url, timeout=10).read().decode()\n"
        "    except Exception as exc:\n"
        "        seen[name] = type(exc).__name__ + ' ' + str(getattr(exc, 'code', ''))\n"
        "seen['proxy'] = os.environ.get('HTTPS_PROXY', '')\n"
        "print(json.dumps(seen))\n"
    )
    result = sandbox.run(code, network=True)
    assert result.ok, result.error
    assert result.answer["site"] == "a public page"  # the one way out: the proxy, for an address it checked
    assert result.answer["loopback"] == "HTTPError 403" and result.answer["by its name"] == "HTTPError 403"
    assert result.answer["proxy"].startswith("http://127.0.0.1:")
