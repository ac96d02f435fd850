"""Attacks on the chat from another site, another port, another host name or another user: each is refused, and
nothing changes (titles stay, no question is stored, the browser keeps its account)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from hypothesis import example, given
from hypothesis import strategies as st

from deployments.settings import get_settings
from flows.interfaces.web.app import create_app
from flows.session import Conversation
from skills.documents import Session
from tests.flows.interfaces.web.conftest import ORIGIN

OTHER_PORT = "http://127.0.0.1:9999"  # same site as the app (SameSite cookies go along), another origin


@pytest.fixture
def accounts(web_app, monkeypatch):
    """Login on, with the victim ada (one session, titled) and the attacker bob."""
    state = web_app.state.web
    monkeypatch.setattr(state.settings, "web_login", True)
    state.users.add("ada", "ada-password")
    state.users.add("bob", "bob-password")
    Conversation.open(state.store, "ada-lab", user="ada").update(title="Copper")
    return state


def browser(web_app, address: str = "testclient", origin: str | None = ORIGIN, **kwargs) -> TestClient:
    """Another browser on loopback (at client ``address``), sending ``origin`` with every request (None: no Origin)."""
    return TestClient(web_app, base_url=ORIGIN, headers={"Origin": origin} if origin else {}, client=(address, 4000), **kwargs)


def login(client: TestClient, name: str, password: str):
    return client.post("/login", data={"name": name, "password": password}, follow_redirects=False)


def signed_in_as(client: TestClient) -> str | None:
    """Whose chat the client's cookie opens (None: sent to the login page)."""
    page = client.get("/chat", follow_redirects=False)
    if page.status_code != 200:
        return None
    return "ada" if "Copper" in page.text else "someone else"


# --- cross-site request forgery ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [{"Origin": OTHER_PORT}, {"Origin": "https://evil.example"}, {"Origin": "null"}, {"Origin": "http://localhost:8501"},
     {"Referer": f"{OTHER_PORT}/page"}, {}],
    ids=["another-port", "another-site", "null", "another-name", "referer-of-another-port", "none"],
)  # fmt: skip
def test_csrf_from_another_origin_changes_no_title_and_asks_nothing(web_app, headers):
    """A page on another port of 127.0.0.1 (same site, so SameSite=strict sends the cookie) posts to the chat."""
    client = browser(web_app, origin=None)
    store = web_app.state.web.store
    Conversation.open(store, "lab", "local").update(title="Copper")
    forged = [
        client.post("/chat/lab/details", data={"title": "pwned", "notes": "x"}, headers=headers, follow_redirects=False),
        client.post("/chat", data={"query": "What is 2+2? Return an integer."}, headers=headers, follow_redirects=False),
        client.post("/chat/lab/ask", data={"query": "What is 2+2? Return an integer."}, headers=headers, follow_redirects=False),
        client.post("/chat/lab/stop", headers=headers, follow_redirects=False),
    ]
    assert [r.status_code for r in forged] == [403] * 4
    session = store.get(Session, "lab")
    assert (session.title, session.notes, session.status, session.pending) == ("Copper", "", "open", None)
    assert store.count("sessions") == 1 and web_app.state.web.jobs.running("lab") is None
    # The same change from the app's own page goes through (its Origin, or without one its Referer).
    own = client.post("/chat/lab/details", data={"title": "Nickel"}, headers={"Referer": f"{ORIGIN}/chat/lab"}, follow_redirects=False)
    assert own.status_code == 303 and store.get(Session, "lab").title == "Nickel"
    own = client.post("/chat/lab/details", data={"title": "Zinc"}, headers={"Origin": ORIGIN}, follow_redirects=False)
    assert own.status_code == 303 and store.get(Session, "lab").title == "Zinc"


@given(st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=20))
@example(".evil.example")
@example("@evil.example")
@example("1")
@example("/chat")
def test_only_the_apps_own_origin_may_change_anything(client, web_app, suffix):
    """Origins that merely start like the app's own (a longer port, a sub-domain of the address, user info) are refused."""
    store = web_app.state.web.store
    Conversation.open(store, "lab", "local").update(title="Copper")
    response = client.post("/chat/lab/details", data={"title": "pwned"}, headers={"Origin": ORIGIN + suffix}, follow_redirects=False)
    if suffix[0] in "/?#":  # the same scheme, host and port, then a path: the app's own page
        assert response.status_code == 303 and store.get(Session, "lab").title == "pwned"
    else:
        assert response.status_code == 403 and store.get(Session, "lab").title == "Copper"


def test_login_csrf_cannot_switch_the_browser_to_the_attackers_account(client, accounts):
    """A cross-site page posts bob's name and password to /login: ada's browser stays ada's."""
    assert login(client, "ada", "ada-password").status_code == 303
    cookie = client.cookies["evoskill_session"]
    forged = client.post("/login", data={"name": "bob", "password": "bob-password"}, headers={"Origin": "https://evil.example"}, follow_redirects=False)
    assert forged.status_code == 403 and "set-cookie" not in forged.headers
    assert client.cookies["evoskill_session"] == cookie and signed_in_as(client) == "ada"
    logout = client.post("/logout", headers={"Origin": OTHER_PORT}, follow_redirects=False)
    assert logout.status_code == 403 and signed_in_as(client) == "ada"


# --- DNS rebinding and host names ----------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["rebind.evil.example", "rebind.evil.example:8501", "0.0.0.0:8501", "127.0.0.1.evil.example", "localhost.evil.example"])
def test_dns_rebinding_host_neither_asks_nor_reads(client, web_app, host):
    """With login off, a page on an attacker's name that resolves to 127.0.0.1 is same-origin with itself: the Host refuses it."""
    store = web_app.state.web.store
    Conversation.open(store, "lab", "local").update(title="Copper")
    origin = {"Host": host, "Origin": f"http://{host}"}
    asked = client.post("/chat", data={"query": "What is 2+2? Return an integer."}, headers=origin, follow_redirects=False)
    renamed = client.post("/chat/lab/details", data={"title": "pwned"}, headers=origin, follow_redirects=False)
    reads = [client.get(url, headers=origin) for url in ("/chat", "/chat/lab", "/chat/lab/progress", "/skills", "/healthz")]
    assert [r.status_code for r in (asked, renamed, *reads)] == [421] * 7
    assert all("Copper" not in r.text for r in reads) and "EVOSKILL_WEB_ALLOWED_HOSTS" in asked.text
    assert store.count("sessions") == 1 and store.get(Session, "lab").title == "Copper"


def test_allowed_host_names_are_served(client, web_app, monkeypatch):
    monkeypatch.setattr(web_app.state.web.settings, "web_allowed_hosts", ["chat.example.org"])
    for host in ("chat.example.org", "chat.example.org:443", "127.0.0.1:8501", "localhost:8501", "[::1]:8501"):
        assert client.get("/chat", headers={"Host": host}).status_code == 200, host
    assert client.get("/chat", headers={"Host": "other.example.org"}).status_code == 421
    own = client.post("/chat", data={"query": " "}, headers={"Host": "chat.example.org", "Origin": "https://chat.example.org"})
    assert own.status_code == 400 and "the question is empty" in own.text  # reached the page (behind a TLS proxy)


def test_allowed_hosts_setting_is_checked(workspace, monkeypatch):
    monkeypatch.setenv("EVOSKILL_WEB_ALLOWED_HOSTS", '["Chat.Example.org", "fe80::1"]')
    assert get_settings().web_allowed_hosts == ["chat.example.org", "[fe80::1]"]
    for bad in ('["https://chat.example.org"]', '["chat.example.org:443"]', '[""]'):
        monkeypatch.setenv("EVOSKILL_WEB_ALLOWED_HOSTS", bad)
        with pytest.raises(ValueError, match="a host name or address only"):
            get_settings()


# --- password guessing -----------------------------------------------------------------------------------------------


@pytest.fixture
def clock(web_app, monkeypatch):
    """The login throttle's clock, moved by hand: ``clock[0] += 61``."""
    now = [1000.0]
    monkeypatch.setattr(web_app.state.web.throttle, "clock", lambda: now[0])
    return now


def test_guessing_a_password_is_locked_out_and_the_wait_grows(client, accounts, clock):
    answers = [login(client, "ada", f"guess-{n}") for n in range(5)]
    assert [r.status_code for r in answers] == [401, 401, 401, 401, 429]
    assert answers[-1].headers["retry-after"] == "60" and "try again in 60 s" in answers[-1].text
    right = login(client, "ada", "ada-password")  # the right password, during the lockout
    assert right.status_code == 429 and int(right.headers["retry-after"]) == 60 and signed_in_as(client) is None
    clock[0] += 59
    assert login(client, "ada", "ada-password").status_code == 429 and signed_in_as(client) is None
    clock[0] += 2
    again = login(client, "ada", "guess-6")  # the lockout is over; one more wrong password doubles the wait
    assert again.status_code == 429 and again.headers["retry-after"] == "120"
    clock[0] += 121
    assert login(client, "ada", "ada-password").status_code == 303 and signed_in_as(client) == "ada"


def test_guessing_across_accounts_from_one_address_is_locked_out(web_app, accounts, clock):
    attacker = browser(web_app, "203.0.113.7")
    statuses = [login(attacker, name, "password1").status_code for name in ("carol", "dave", "erin", "frank", "grace")]
    assert statuses == [401, 401, 401, 401, 429]
    assert login(attacker, "bob", "bob-password").status_code == 429 and signed_in_as(attacker) is None
    assert login(browser(web_app, "198.51.100.9"), "bob", "bob-password").status_code == 303  # another address is not held up


def test_guessing_one_account_from_many_addresses_is_locked_out(web_app, accounts, clock):
    statuses = [login(browser(web_app, f"203.0.113.{n}"), "ada", f"guess-{n}").status_code for n in range(5)]
    assert statuses == [401, 401, 401, 401, 429]
    ada = browser(web_app, "198.51.100.9")
    assert login(ada, "ada", "ada-password").status_code == 429 and signed_in_as(ada) is None
    assert login(ada, "bob", "bob-password").status_code == 303  # other accounts are not held up


# --- revocation ------------------------------------------------------------------------------------------------------


def test_logout_revokes_every_cookie_issued_before(web_app, client, accounts):
    assert login(client, "ada", "ada-password").status_code == 303
    stolen = client.cookies["evoskill_session"]
    thief = browser(web_app, "203.0.113.7", cookies={"evoskill_session": stolen})
    assert signed_in_as(thief) == "ada"
    assert client.post("/logout", follow_redirects=False).headers["location"] == "/login"
    assert signed_in_as(thief) is None
    thief.cookies.set("evoskill_session", stolen)
    renamed = thief.post("/chat/ada-lab/details", data={"title": "pwned"}, follow_redirects=False)
    assert renamed.status_code == 303 and renamed.headers["location"] == "/login"
    assert accounts.store.get(Session, "ada-lab").title == "Copper"
    client.cookies.set("evoskill_session", stolen)  # the old cookie, replayed
    assert signed_in_as(client) is None
    assert login(client, "ada", "ada-password").status_code == 303 and signed_in_as(client) == "ada"


def test_a_new_password_revokes_the_cookies_issued_before(client, accounts):
    assert login(client, "ada", "ada-password").status_code == 303 and signed_in_as(client) == "ada"
    accounts.users.add("ada", "a new password")  # evoskill serve --add-user ada
    assert signed_in_as(client) is None
    assert login(client, "ada", "ada-password").status_code == 401
    assert login(client, "ada", "a new password").status_code == 303 and signed_in_as(client) == "ada"


# --- cookies and caching ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("secure", [False, True])
def test_the_session_cookie_is_secure_when_set(workspace, secure):
    app = create_app(get_settings(web_login=True, web_secure_cookie=secure))
    try:
        app.state.web.users.add("ada", "ada-password")
        with TestClient(app, base_url=ORIGIN, headers={"Origin": ORIGIN}) as client:
            cookie = login(client, "ada", "ada-password").headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie and ("; secure" in cookie) == secure
    finally:
        app.state.web.jobs.close()


def test_pages_and_answers_are_never_cached(client, web_app, emt_skill):
    Conversation.open(web_app.state.web.store, "lab", "local").update(title="Copper")
    responses = [client.get(url, follow_redirects=False) for url in
                 ("/", "/chat", "/chat/lab", "/chat/lab/progress", "/chat/nope", "/skills", f"/skills/{emt_skill.id}",
                  f"/skills/{emt_skill.id}/workflow.json", "/login", "/healthz")]  # fmt: skip
    responses.append(client.post("/chat/lab/details", data={"title": "Nickel"}, follow_redirects=False))
    responses.append(client.post("/chat/lab/details", data={"title": "x"}, headers={"Origin": OTHER_PORT}))
    responses.append(client.get("/chat", headers={"Host": "rebind.evil.example"}))
    assert [r.headers.get("cache-control") for r in responses] == ["no-store"] * len(responses)
    assert "no-store" not in client.get("/static/style.css").headers.get("cache-control", "")
