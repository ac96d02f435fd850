"""The way out of a contained run with the network on: an HTTP(S) proxy on a Unix socket, to public addresses only.

A run with the network on still has a network namespace of its own, with no route to this machine's loopback or
its other addresses; this proxy's socket, bind-mounted into the run's view, is its one way out. The proxy answers
``CONNECT host:port`` (HTTPS, any TLS) with a tunnel, and a plain-HTTP request in absolute form
(``GET http://host:port/path``) by forwarding it in origin form, one request per connection. Both only where every
address ``host`` resolves to is public (``deployments/public_web.py``) and none is one of this machine's own; the
proxy then connects to an address it checked, never to a second lookup (DNS rebinding). Any port is allowed.
Anything else is answered 4xx/5xx with a one-line reason, and logged.

Bounds: the request head (16 KB, within the idle timeout), the connect timeout, the idle timeout of a relay, and
the connections served at once (more wait, unaccepted, in the socket's backlog). Bodies are relayed, never held.

The proxy serves this process's runs; the runs themselves never import this module.
"""

from __future__ import annotations

import atexit
import ipaddress
import logging
import os
import re
import select
import socket
import stat
import threading
import time
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from deployments import public_web
from deployments.public_web import FetchRefused
from deployments.settings import Settings, get_settings

__all__ = ["SOCKET_NAME", "MAX_HEAD", "EgressProxy", "checked_addresses", "machine_addresses", "egress_proxy", "stop_all"]

log = logging.getLogger(__name__)

SOCKET_NAME = "egress.sock"  # the proxy's socket in the folder given to ``egress_proxy``
MAX_HEAD = 16 * 1024  # bytes of a request head, its closing blank line included

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_CHUNK = 64 * 1024
_BACKLOG = 64
_POLL_S = 0.25  # how often the accepting thread looks whether to stop
_MACHINE_TTL_S = 30.0  # how long the machine's addresses are kept before they are read again
_LINGER_S = 1.0  # how long a refused client's unread bytes are drained, so that it reads the answer
_SUN_PATH = 107  # the longest path of a Unix socket (bytes)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_HOP_BY_HOP = frozenset(
    {"connection", "proxy-connection", "keep-alive", "proxy-authorization", "proxy-authenticate", "te", "trailer", "upgrade", "host"}
)


def _setting(name: str) -> Any:
    """The default of the setting ``sandbox_egress_<name>``, the one source of a bound's default."""
    return Settings.model_fields[f"sandbox_egress_{name}"].default


class _Refused(Exception):
    """A request answered with ``status`` and a one-line ``reason`` instead of being relayed."""

    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status, self.reason = status, " ".join(reason.split())


@dataclass(frozen=True)
class _Request:
    """What a client asked for: ``forwarded`` is the head to send upstream (empty for ``CONNECT``)."""

    method: str
    host: str
    port: int
    forwarded: bytes


# --- which addresses a run may reach ------------------------------------------------------------------

_machine_lock = threading.Lock()
_machine: tuple[float, frozenset[IPAddress]] = (float("-inf"), frozenset())


def _interface_addresses() -> set[str]:
    """The addresses of this machine's interfaces (Linux: /proc/net) and those its host name resolves to."""
    found: set[str] = set()
    try:
        lines = Path("/proc/net/fib_trie").read_text().splitlines()
    except OSError:
        lines = []
    for above, line in zip(lines, lines[1:], strict=False):
        if line.split()[-2:] == ["host", "LOCAL"] and "|--" in above:
            found.add(above.split("|--", 1)[1].strip())
    try:
        found.update(
            str(ipaddress.IPv6Address(bytes.fromhex(line.split()[0]))) for line in Path("/proc/net/if_inet6").read_text().splitlines()
        )
    except (OSError, ValueError, IndexError):
        pass
    try:
        found.update(str(info[4][0]).partition("%")[0] for info in socket.getaddrinfo(socket.gethostname(), None))
    except (OSError, UnicodeError):
        pass
    return found


def machine_addresses() -> frozenset[IPAddress]:
    """This machine's own addresses: every address of its network interfaces, and those its host name resolves to
    (read again after 30 s)."""
    global _machine
    with _machine_lock:
        if time.monotonic() - _machine[0] < _MACHINE_TTL_S:
            return _machine[1]
        addresses: set[IPAddress] = set()
        for text in _interface_addresses():
            try:
                addresses.add(ipaddress.ip_address(text))
            except ValueError:
                continue
        _machine = (time.monotonic(), frozenset(addresses))
        return _machine[1]


def _forms(address: str) -> list[IPAddress]:
    """``address`` and the IPv4 addresses its IPv6 form carries (mapped, 6to4, NAT64)."""
    ip = ipaddress.ip_address(address)
    if not isinstance(ip, ipaddress.IPv6Address):
        return [ip]
    nat64 = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF) if ip in _NAT64 else None
    return [ip, *(v4 for v4 in (ip.ipv4_mapped, ip.sixtofour, nat64) if v4 is not None)]


def checked_addresses(host: str, port: int) -> list[str]:
    """The addresses a run may connect to for ``host``: every one it resolves to, when all are public and none is this
    machine's own; ``FetchRefused`` otherwise."""
    addresses = public_web.public_addresses(host, port)
    own = machine_addresses()
    mine = [a for a in addresses if any(form in own for form in _forms(a))]
    if mine:
        raise FetchRefused(f"{host} (at {', '.join(mine)}) is an address of this machine")
    return addresses


# --- the request head -------------------------------------------------------------------------------


def _read_head(client: socket.socket, timeout_s: float) -> tuple[bytes, bytes] | None:
    """The request head (without its blank line) and the bytes read after it; ``None`` when the client closed first."""
    deadline = time.monotonic() + timeout_s
    buffer = b""
    while (end := buffer.find(b"\r\n\r\n")) < 0:
        if len(buffer) >= MAX_HEAD:
            raise _Refused(431, f"the request head exceeds {MAX_HEAD} bytes")
        left = deadline - time.monotonic()
        if left <= 0:
            raise _Refused(408, "the request head did not come in time")
        client.settimeout(left)
        try:
            chunk = client.recv(MAX_HEAD)
        except TimeoutError as exc:
            raise _Refused(408, "the request head did not come in time") from exc
        if not chunk:
            return None
        buffer += chunk
    if end + 4 > MAX_HEAD:
        raise _Refused(431, f"the request head exceeds {MAX_HEAD} bytes")
    return buffer[:end], buffer[end + 4 :]


def _authority(text: str, default_port: int | None) -> tuple[str, int]:
    """``host`` and port of ``host:port`` or ``[v6]:port`` (the port may be left out where ``default_port`` is given)."""
    bad = _Refused(400, f"{text!r} is not host:port")
    if text.startswith("["):
        host, bracket, after = text[1:].partition("]")
        if not bracket or (after and not after.startswith(":")):
            raise bad
        port_text = after[1:]
    else:
        host, _, port_text = text.rpartition(":") if ":" in text else (text, "", "")
        if ":" in host:
            raise bad
    if not host or any(c in host for c in "/\\@?# "):
        raise bad
    if not port_text and default_port is not None:
        return host, default_port
    if not (port_text.isascii() and port_text.isdigit() and len(port_text) <= 5 and 0 < int(port_text) < 65536):
        raise bad
    return host, int(port_text)


def _parse(head: bytes) -> _Request:
    """The request a head asks for: a ``CONNECT host:port`` or an ``http://`` URL in absolute form."""
    lines = head.decode("latin-1").split("\r\n")
    if any(c in line for line in lines for c in "\r\n\0"):
        raise _Refused(400, "a bare CR, LF or NUL in the request head")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not _TOKEN.fullmatch(parts[0]) or parts[2] not in ("HTTP/1.0", "HTTP/1.1"):
        raise _Refused(400, "not an HTTP/1 request line")
    method, target, version = parts
    if any(c <= " " or c == "\x7f" for c in target):
        raise _Refused(400, "a control character in the request target")
    headers: list[tuple[str, str]] = []
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not _TOKEN.fullmatch(name):
            raise _Refused(400, "a malformed header line")
        headers.append((name, value.strip()))
    if method == "CONNECT":
        return _Request(method, *_authority(target, None), b"")
    url = urlsplit(target)
    if url.scheme != "http" or not url.netloc:
        raise _Refused(400, "ask for an absolute http:// URL, or CONNECT host:port for anything else (https)")
    host, port = _authority(url.netloc, 80)  # no user info: an @ is refused there
    origin = target[len("http://") + len(url.netloc) :].partition("#")[0]
    origin = origin if origin.startswith("/") else "/" + origin
    dropped = _HOP_BY_HOP | {
        t.strip().lower() for name, value in headers if name.lower() in ("connection", "proxy-connection") for t in value.split(",")
    }
    kept = [f"{name}: {value}" for name, value in headers if name.lower() not in dropped]
    forwarded = "\r\n".join([f"{method} {origin} {version}", f"Host: {url.netloc}", *kept, "Connection: close", "", ""])
    return _Request(method, host, port, forwarded.encode("latin-1"))


# --- serving ----------------------------------------------------------------------------------------------


def _answer(client: socket.socket, refused: _Refused) -> None:
    """Send ``refused`` as a small text response, then drain what the client still sends, briefly, so that it reads it."""
    body = f"{refused.reason}\n".encode()
    head = (
        f"HTTP/1.1 {refused.status} {HTTPStatus(refused.status).phrase}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    try:
        client.sendall(head.encode("ascii") + body)
        client.shutdown(socket.SHUT_WR)
        deadline, drained = time.monotonic() + _LINGER_S, 0
        while (left := deadline - time.monotonic()) > 0 and drained < 1024 * 1024:
            client.settimeout(left)
            if not (chunk := client.recv(_CHUNK)):
                break
            drained += len(chunk)
    except OSError:
        pass


def _relay(client: socket.socket, upstream: socket.socket, idle_s: float) -> None:
    """Copy bytes both ways until upstream ends (the client's end is passed on as a half close), a socket fails, or
    ``idle_s`` passes without a byte either way."""
    poller = select.poll()
    ends = {client.fileno(): (client, upstream), upstream.fileno(): (upstream, client)}
    for fd in ends:
        poller.register(fd, select.POLLIN)
    while events := poller.poll(idle_s * 1000):
        for fd, _ in events:
            source, sink = ends[fd]
            if data := source.recv(_CHUNK):
                sink.sendall(data)
            elif source is upstream:
                return
            else:
                poller.unregister(fd)
                sink.shutdown(socket.SHUT_WR)


class EgressProxy:
    """An HTTP(S) proxy to public addresses on the Unix socket ``socket_path``: ``start()``, later ``stop()``.

    ``connect_timeout_s``: to reach a host; ``idle_s``: a connection with no byte either way this long is closed;
    ``max_connections``: served at once (more wait to be accepted).
    """

    def __init__(
        self,
        socket_path: Path,
        *,
        connect_timeout_s: float = _setting("connect_timeout_s"),
        idle_s: float = _setting("idle_s"),
        max_connections: int = _setting("connections"),
    ):
        self.socket_path = Path(socket_path)
        if len(os.fsencode(self.socket_path)) > _SUN_PATH:
            raise ValueError(f"{self.socket_path}: longer than the {_SUN_PATH} bytes a Unix socket's path may have")
        self.connect_timeout_s, self.idle_s, self.max_connections = connect_timeout_s, idle_s, max_connections
        self._slots = threading.BoundedSemaphore(max_connections)
        self._stopping = threading.Event()
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._inode: tuple[int, int] | None = None
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, socket_path: Path, settings: Settings) -> EgressProxy:
        """A proxy bounded by the ``sandbox_egress_*`` settings."""
        return cls(
            socket_path,
            connect_timeout_s=settings.sandbox_egress_connect_timeout_s,
            idle_s=settings.sandbox_egress_idle_s,
            max_connections=settings.sandbox_egress_connections,
        )

    @property
    def running(self) -> bool:
        """Whether the proxy accepts connections."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Listen on the socket (a socket file left there is replaced; the new one is made 0666, for the runs' own
        user: the folder is what guards it) and serve on daemon threads."""
        if self._listener is not None:
            raise RuntimeError(f"the egress proxy on {self.socket_path} was started already")
        try:
            if not stat.S_ISSOCK(os.lstat(self.socket_path).st_mode):
                raise FileExistsError(f"{self.socket_path} exists and is not a socket")
            self.socket_path.unlink()
        except FileNotFoundError:
            pass
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(str(self.socket_path))
            os.chmod(self.socket_path, 0o666)
            info = os.stat(self.socket_path)
            listener.listen(_BACKLOG)
            listener.settimeout(_POLL_S)
        except BaseException:
            listener.close()
            raise
        self._listener, self._inode = listener, (info.st_dev, info.st_ino)
        self._thread = threading.Thread(target=self._accept, args=(listener,), name=f"egress {self.socket_path}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop accepting, end every connection being relayed, and remove the socket file."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
        if self._listener is not None:
            self._listener.close()
        try:
            info = os.lstat(self.socket_path)
            if (info.st_dev, info.st_ino) == self._inode:
                self.socket_path.unlink()
        except FileNotFoundError:
            pass
        with self._lock:
            for sock in self._open:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def __enter__(self) -> EgressProxy:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _accept(self, listener: socket.socket) -> None:
        """Accept a connection whenever a slot is free, each served on a thread of its own."""
        while not self._stopping.is_set():
            if not self._slots.acquire(timeout=_POLL_S):
                continue
            try:
                client, _ = listener.accept()
            except TimeoutError:
                self._slots.release()
                continue
            except OSError as exc:
                self._slots.release()
                if not self._stopping.is_set():
                    log.warning("Egress proxy on %s cannot accept: %s", self.socket_path, exc)
                    time.sleep(_POLL_S)
                continue
            try:
                threading.Thread(target=self._serve, args=(client,), name="egress relay", daemon=True).start()
            except RuntimeError as exc:  # no thread to be had
                log.warning("Egress proxy on %s cannot serve a connection: %s", self.socket_path, exc)
                client.close()
                self._slots.release()

    def _track(self, sock: socket.socket, keep: bool) -> None:
        with self._lock:
            if keep:
                self._open.add(sock)
            else:
                self._open.discard(sock)

    def _serve(self, client: socket.socket) -> None:
        """Answer one connection: read its request, check the host, then tunnel or forward it."""
        upstream: socket.socket | None = None
        self._track(client, True)
        try:
            read = _read_head(client, self.idle_s)
            if read is None:
                return
            head, rest = read
            request = _parse(head)
            try:
                addresses = checked_addresses(request.host, request.port)
            except FetchRefused as exc:
                raise _Refused(403, str(exc)) from exc
            upstream = self._connect(request.host, addresses, request.port)
            self._track(upstream, True)
            client.settimeout(self.idle_s)
            if request.method == "CONNECT":
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            if request.forwarded or rest:
                upstream.sendall(request.forwarded + rest)
            _relay(client, upstream, self.idle_s)
        except _Refused as refused:
            log.warning("Egress refused (%d): %s", refused.status, refused.reason)
            _answer(client, refused)
        except OSError:
            pass
        finally:
            for sock in (client, upstream):
                if sock is not None:
                    self._track(sock, False)
                    sock.close()
            self._slots.release()

    def _connect(self, host: str, addresses: list[str], port: int) -> socket.socket:
        """A connection to the first of ``addresses`` that answers within the connect timeout (no name is looked up)."""
        deadline = time.monotonic() + self.connect_timeout_s
        failures = []
        for address in addresses:
            if (left := deadline - time.monotonic()) <= 0:
                break
            sock = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET, socket.SOCK_STREAM)
            sock.settimeout(left)
            try:
                sock.connect((address, port))
            except TimeoutError:
                sock.close()
                break
            except OSError as exc:
                sock.close()
                failures.append(f"{address}: {exc.strerror or exc}")
                continue
            sock.settimeout(self.idle_s)
            return sock
        if len(failures) < len(addresses):
            raise _Refused(504, f"{host} port {port} did not answer within {self.connect_timeout_s:g} s")
        raise _Refused(502, f"{host} port {port} cannot be reached ({'; '.join(failures)})")


# --- one proxy per folder and process ---------------------------------------------------------------------

_proxies: dict[Path, EgressProxy] = {}
_proxies_lock = threading.Lock()
_proxies_pid = os.getpid()


def egress_proxy(folder: Path, settings: Settings | None = None) -> EgressProxy:
    """This process's proxy on ``folder / SOCKET_NAME``, started on first use (bounded by ``settings``, or those of the
    environment) and stopped at exit. ``folder`` should be owner-only and this process's own: a socket found there is
    replaced."""
    global _proxies_pid
    key = Path(folder).resolve()
    with _proxies_lock:
        if _proxies_pid != os.getpid():  # a forked child: its parent's proxies do not run here
            _proxies.clear()
            _proxies_pid = os.getpid()
        proxy = _proxies.get(key)
        if proxy is None or not proxy.running:
            key.mkdir(mode=0o700, parents=True, exist_ok=True)
            proxy = EgressProxy.from_settings(key / SOCKET_NAME, settings or get_settings())
            proxy.start()
            _proxies[key] = proxy
        return proxy


@atexit.register
def stop_all() -> None:
    """Stop every proxy of this process."""
    with _proxies_lock:
        proxies = list(_proxies.values()) if _proxies_pid == os.getpid() else []
        _proxies.clear()
    for proxy in proxies:
        proxy.stop()
