"""Which addresses count as public, and a host is public only when every address it resolves to is."""

import socket

import pytest

from deployments.public_web import FetchRefused, fetch_public, is_public_address, public_address, public_addresses

NOT_PUBLIC = [
    "127.0.0.1", "127.1.2.3", "10.0.0.1", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
    "224.0.0.1", "255.255.255.255", "240.0.0.1", "::1", "::", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1", "ff0e::1",
    "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::7f00:1", "2002:7f00:1::", "2002:a00:1::",
    "64:ff9b::7f00:1", "2001:db8::1", "not an address",
]  # fmt: skip
PUBLIC = ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111", "2a00:1450:4001:80b::200e"]


@pytest.mark.parametrize("address", NOT_PUBLIC)
def test_loopback_private_link_local_multicast_reserved_and_mapped_addresses_are_not_public(address):
    assert not is_public_address(address)


@pytest.mark.parametrize("address", PUBLIC)
def test_global_addresses_are_public(address):
    assert is_public_address(address)


def _resolving_to(monkeypatch, *addresses):
    def getaddrinfo(host, port, *args, **kwargs):
        return [(socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in addresses]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def test_a_host_with_one_private_address_among_public_ones_is_refused(monkeypatch):
    _resolving_to(monkeypatch, "93.184.216.34", "127.0.0.1")
    with pytest.raises(FetchRefused, match="127.0.0.1"):
        public_address("docs.example.org", 443)
    _resolving_to(monkeypatch, "93.184.216.34")
    assert public_address("docs.example.org", 443) == "93.184.216.34"


def test_every_address_of_a_public_host_is_given_once_in_order(monkeypatch):
    _resolving_to(monkeypatch, "2606:4700:4700::1111", "1.1.1.1", "2606:4700:4700::1111", "1.0.0.1")
    assert public_addresses("one.example.org", 443) == ["2606:4700:4700::1111", "1.1.1.1", "1.0.0.1"]
    assert public_address("one.example.org", 443) == "2606:4700:4700::1111"
    _resolving_to(monkeypatch, "1.1.1.1", "1.0.0.1", "::ffff:10.0.0.1")
    with pytest.raises(FetchRefused, match="10.0.0.1"):
        public_addresses("one.example.org", 443)


def test_fetch_refuses_before_connecting(monkeypatch):
    for url in ["http://127.0.0.1/", "http://[::1]:8080/", "http://10.0.0.1/", "https://169.254.169.254/latest/meta-data/",
                "http://[::ffff:127.0.0.1]/", "http://0.0.0.0:4250/", "file:///etc/passwd", "gopher://127.0.0.1/"]:  # fmt: skip
        with pytest.raises(FetchRefused):
            fetch_public(url, timeout_s=1, max_bytes=1000)
