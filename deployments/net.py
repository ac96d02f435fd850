"""Small network helpers shared by the local servers evoskill starts."""

from __future__ import annotations

import ipaddress
import socket
import urllib.error
import urllib.request

__all__ = ["url_responds", "port_accepts", "free_port", "is_loopback"]


def url_responds(url: str, timeout: float = 2.0) -> bool:
    """Whether a GET of ``url`` answers 200 within ``timeout`` seconds."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError, TimeoutError):
        return False


def port_accepts(port: int, timeout: float = 1.0) -> bool:
    """Whether something accepts connections on the loopback ``port`` (a server busy with a request still does)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout):
            return True
    except OSError:
        return False


def free_port() -> int:
    """A loopback port that is free now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def is_loopback(host: str) -> bool:
    """Whether listening on ``host`` keeps a server on this machine: ``localhost`` or a loopback address (not ``0.0.0.0``).

    >>> [is_loopback(h) for h in ("127.0.0.1", "localhost", "::1", "[::1]", "0.0.0.0", "192.168.1.5", "example.org", "")]
    [True, True, True, True, False, False, False, False]
    """
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
