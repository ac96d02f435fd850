"""Fetch a web page from public addresses only: never loopback, the local network, or the cloud's metadata service.

The host is resolved once and every address it resolves to must be public; the request then goes to
the address that was checked (the name kept for the ``Host`` header and TLS), so a second lookup
cannot switch it (DNS rebinding). Redirects are followed here, a few at most, each target checked
the same way. No proxy from the environment is used.

>>> is_public_address("93.184.216.34"), is_public_address("127.0.0.1"), is_public_address("::ffff:10.0.0.1")
(True, False, False)
"""

from __future__ import annotations

import ipaddress
import socket

import httpx
from pydantic import BaseModel

__all__ = ["FetchRefused", "PublicPage", "is_public_address", "public_address", "public_addresses", "fetch_public"]

_DEFAULT_PORTS = {"http": 80, "https": 443}
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_REDIRECTS = (301, 302, 303, 307, 308)


class FetchRefused(ValueError):
    """A fetch not made or given up: a host not (only) at public addresses, not http(s), too many redirects, too large a body."""


class PublicPage(BaseModel):
    """What a public URL answered: the final URL (after redirects) and its body as text."""

    url: str
    text: str


def is_public_address(address: str) -> bool:
    """Whether ``address`` (IPv4 or IPv6) is globally reachable: not loopback, private, link-local, multicast, reserved
    or unspecified, nor an IPv6 form of such an IPv4 address (mapped, 6to4, NAT64)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return is_public_address(str(ip.ipv4_mapped))
        embedded = ip.sixtofour or (ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF) if ip in _NAT64 else None)
        if embedded is not None and not is_public_address(str(embedded)):
            return False
    return ip.is_global and not (
        ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_multicast or ip.is_reserved or ip.is_unspecified
    )


def public_address(host: str, port: int) -> str:
    """The address to connect to for ``host``: the first it resolves to, when every one is public; else ``FetchRefused``."""
    return public_addresses(host, port)[0]


def public_addresses(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (once, in the resolver's order, without repeats), when every one is public; else
    ``FetchRefused``. Connect to these, never to a second lookup of ``host``."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise FetchRefused(f"{host} does not resolve ({exc})") from exc
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    refused = [a for a in addresses if not is_public_address(a)]
    if refused or not addresses:
        where = host if refused == [host] else f"{host} (at {', '.join(refused) or 'no address'})"
        raise FetchRefused(f"{where} is not a public address")
    return addresses


def _checked(url: httpx.URL) -> httpx.URL:
    """``url`` pointed at its host's checked address."""
    if url.scheme not in _DEFAULT_PORTS or not url.host:
        raise FetchRefused(f"{url} is not an http(s) address")
    return url.copy_with(host=public_address(url.host, url.port or _DEFAULT_PORTS[url.scheme]))


def fetch_public(url: str, timeout_s: float, max_bytes: int, max_redirects: int = 5) -> PublicPage:
    """GET ``url`` from public addresses only, following at most ``max_redirects`` redirects and reading at most
    ``max_bytes``: ``FetchRefused`` otherwise. HTTP failures raise ``httpx.HTTPError``."""
    current = httpx.URL(url)
    with httpx.Client(timeout=timeout_s, trust_env=False, follow_redirects=False) as client:
        for _ in range(max_redirects + 1):
            request = client.build_request(
                "GET", _checked(current), headers={"Host": current.netloc.decode("ascii")}, extensions={"sni_hostname": current.host}
            )
            response = client.send(request, stream=True)
            try:
                if response.status_code in _REDIRECTS and "location" in response.headers:
                    current = current.join(response.headers["location"])
                    continue
                response.raise_for_status()
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > max_bytes:
                        raise FetchRefused(f"{url} answered more than {max_bytes} bytes")
                return PublicPage(url=str(current), text=body.decode(response.encoding or "utf-8", errors="replace"))
            finally:
                response.close()
    raise FetchRefused(f"{url} redirected more than {max_redirects} times")
