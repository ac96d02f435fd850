"""Small network helpers shared by the local servers evoskill starts."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request

__all__ = ["url_responds", "port_accepts", "free_port"]


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
