"""extract_code_from_url reaches only public addresses, and what one user extracts no other user retrieves."""

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from deployments import public_web
from deployments.settings import get_settings
from skills.store import open_store
from tasks.tools.errors import ToolError
from tasks.tools.extract import extract_code_from_url, retrieve_extracted_code
from tasks.tools.registry import ToolBox

PUBLIC_PAGE = "# Public\n\nFit it:\n\n```python\nprint('public example')\n```\n"
SECRET_PAGE = "# Latest solve\n\nAlice's code:\n\n```python\nprint('ALICE-SECRET-CANARY')\n```\n"
_real_getaddrinfo = socket.getaddrinfo


class Site:
    """A web server on a loopback address: ``/page.md``, ``/latest.md`` (a secret), ``/redirect`` (to ``location``)."""

    def __init__(self, host: str, port: int, body: str):
        self.requests: list[str] = []
        self.location = ""
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                site.requests.append(self.path)
                if self.path == "/redirect":
                    self.send_response(302)
                    self.send_header("Location", site.location)
                    self.end_headers()
                    return
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer((host, port), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def secret_site() -> Iterator[Site]:
    """Stands for evoskill's own web app on loopback, serving another user's latest solve."""
    site = Site("127.0.0.1", 0, SECRET_PAGE)
    yield site
    site.close()


@pytest.fixture
def settings(workspace):
    return get_settings()


def _resolve(monkeypatch, names: dict[str, list[str]]) -> None:
    """``socket.getaddrinfo`` answering ``names`` with the addresses given (one list per lookup, the last repeated)."""
    calls: dict[str, int] = {}

    def getaddrinfo(host, port, *args, **kwargs):
        if host not in names:
            return _real_getaddrinfo(host, port, *args, **kwargs)
        answers = names[host]
        address = answers[min(calls.get(host, 0), len(answers) - 1)]
        calls[host] = calls.get(host, 0) + 1
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def _refused(url: str, settings, site: Site) -> None:
    store = open_store(settings)
    with pytest.raises(ToolError, match="not a public address"):
        extract_code_from_url(url, store, settings, user="bob")
    assert site.requests == [] and store.count("extracted_code") == 0


def test_loopback_is_refused_and_never_requested(settings, secret_site):
    _refused(f"http://127.0.0.1:{secret_site.port}/latest.md#example.py", settings, secret_site)
    _refused(f"http://[::ffff:127.0.0.1]:{secret_site.port}/latest.md", settings, secret_site)
    _refused(f"http://localhost:{secret_site.port}/latest.md", settings, secret_site)


def test_private_and_ipv6_loopback_addresses_are_refused(settings, secret_site):
    for url in ["http://10.0.0.1/latest.md", "http://[::1]:4250/api/artifacts/solve-result/latest", "http://169.254.169.254/latest/meta-data/"]:
        _refused(url, settings, secret_site)


def test_a_name_resolving_to_loopback_is_refused(settings, secret_site, monkeypatch):
    _resolve(monkeypatch, {"docs.example.org": ["127.0.0.1"]})
    _refused(f"http://docs.example.org:{secret_site.port}/latest.md", settings, secret_site)


def test_a_redirect_to_loopback_is_checked_again_and_refused(settings, secret_site, monkeypatch):
    """The first hop counts as public (a stand-in for a public page); its redirect to loopback is refused."""
    _resolve(monkeypatch, {"docs.example.org": ["127.0.0.1"]})
    real_check, checks = public_web.is_public_address, []

    def public_once(address: str) -> bool:
        checks.append(address)
        return len(checks) == 1 or real_check(address)

    monkeypatch.setattr(public_web, "is_public_address", public_once)
    secret_site.location = f"http://127.0.0.1:{secret_site.port}/latest.md"
    store = open_store(settings)
    with pytest.raises(ToolError, match="not a public address"):
        extract_code_from_url(f"http://docs.example.org:{secret_site.port}/redirect", store, settings, user="bob")
    assert secret_site.requests == ["/redirect"] and checks == ["127.0.0.1", "127.0.0.1"]
    assert store.count("extracted_code") == 0


def test_dns_rebinding_cannot_switch_the_checked_address(settings, secret_site, monkeypatch):
    """The name answers a "public" address when checked and loopback afterwards: the request goes to the checked one."""
    try:
        public = Site("127.0.0.2", secret_site.port, PUBLIC_PAGE)
    except OSError:
        pytest.skip("127.0.0.2 is not a loopback address here")
    try:
        _resolve(monkeypatch, {"docs.example.org": ["127.0.0.2", "127.0.0.1"]})
        real_check = public_web.is_public_address
        monkeypatch.setattr(public_web, "is_public_address", lambda address: address == "127.0.0.2" or real_check(address))
        found = extract_code_from_url(f"http://docs.example.org:{secret_site.port}/page.md", open_store(settings), settings, user="bob")
        assert [e.code for e in found] == ["print('public example')"]
        assert public.requests == ["/page.md"] and secret_site.requests == []
    finally:
        public.close()


def test_extracted_code_is_kept_per_user(workspace, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "alice.md").write_text(SECRET_PAGE)
    settings = get_settings(sandbox_inputs=[docs])
    alice, bob = ToolBox(settings, user="alice"), ToolBox(settings, user="bob")
    assert alice.call("extract_code_from_url", url=str(docs / "alice.md")).ok
    assert alice.call("retrieve_extracted_code", query="Alice's code latest solve").value[0].user == "alice"
    mine = bob.call("retrieve_extracted_code", query="Alice's code latest solve")
    assert not mine.ok and "ALICE-SECRET-CANARY" not in (mine.error or "") + mine.output
    assert not bob.call("retrieve_extracted_code", query="Alice's code latest solve", user="alice").ok  # not an argument
    (docs / "bob.md").write_text(PUBLIC_PAGE)
    assert bob.call("extract_code_from_url", url=str(docs / "bob.md")).ok
    everything = retrieve_extracted_code("code solve public example Alice's latest fit", bob.store, user="bob", k=10)
    assert [e.code for e in everything] == ["print('public example')"]
    for tool in ("extract_code_from_url", "retrieve_extracted_code"):
        assert "user" not in alice.tools[tool].arguments_model().model_json_schema()["properties"]
