"""Requests the web app refuses before any page sees them: an unknown ``Host`` (DNS rebinding) and a state-changing
request that does not come from the app's own pages (cross-site request forgery, also from another port of the host).

>>> host_name("127.0.0.1:8501"), host_name("[::1]:8501"), host_name("Chat.Example.org")
('127.0.0.1', '[::1]', 'chat.example.org')
>>> refusal("GET", {"host": "rebind.evil.example"}, [])
(421, "unknown host 'rebind.evil.example': add it to EVOSKILL_WEB_ALLOWED_HOSTS to serve it")
>>> refusal("POST", {"host": "127.0.0.1:8501", "origin": "http://127.0.0.1:8501"}, []) is None
True
>>> refusal("POST", {"host": "127.0.0.1:8501", "origin": "http://127.0.0.1:9000"}, [])[0]
403
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

__all__ = ["LOOPBACK_HOSTS", "host_name", "same_origin", "refusal"]

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def host_name(host: str) -> str:
    """The name in a ``Host`` header, without its port, lower-case (IPv6 addresses keep their brackets)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1] if "]" in host else host
    return host.rsplit(":", 1)[0] if ":" in host else host


def same_origin(headers: Mapping[str, str], host: str) -> bool:
    """Whether the request's ``Origin`` (or, without one, its ``Referer``) is the app's own: the same host and port.

    A request with neither is refused too: browsers send ``Origin`` with every form post, and the app's pages set
    ``Referrer-Policy: same-origin``, so only a page of another origin (or a stripped request) lacks both.
    """
    source = headers.get("origin") or headers.get("referer")
    if not source or source == "null":
        return False
    try:
        parts = urlsplit(source)
    except ValueError:  # e.g. an unbalanced '[' in the address
        return False
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host.strip().lower()


def refusal(method: str, headers: Mapping[str, str], allowed_hosts: Iterable[str]) -> tuple[int, str] | None:
    """Why the request is refused, as (status, message), or None when it may go on.

    ``headers``: lower-case names. The host must be a loopback name or one of ``allowed_hosts``; a method other than
    GET, HEAD and OPTIONS must come from the app's own origin.
    """
    host = headers.get("host", "")
    name = host_name(host)
    if name not in (*LOOPBACK_HOSTS, *allowed_hosts):
        return 421, f"unknown host {name[:100]!r}: add it to EVOSKILL_WEB_ALLOWED_HOSTS to serve it"
    if method.upper() not in SAFE_METHODS and not same_origin(headers, host):
        return 403, "refused: this request does not come from the app's own pages (Origin or Referer of another site, or none)"
    return None
