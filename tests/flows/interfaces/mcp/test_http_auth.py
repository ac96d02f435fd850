"""Attacks on MCP over HTTP: a request without the bearer token runs nothing, and no server starts beyond loopback
without one."""

from __future__ import annotations

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from deployments.settings import get_settings
from flows.interfaces.cli.main import main
from flows.interfaces.mcp.http import ExposureError, http_app
from flows.interfaces.mcp.server import build_server
from skills.store import open_store
from tests.codes import n2_skill

TOKEN = "s3cret-token-of-32-characters-xx"


@pytest.fixture
def shared_store(workspace, monkeypatch):
    """A file-backed store the server and the test both open, holding the EMT skill; the server's token set."""
    monkeypatch.setenv("EVOSKILL_STORE", "monty")
    monkeypatch.setenv("EVOSKILL_MCP_TOKEN", TOKEN)
    store = open_store(get_settings())
    skill, _ = store.put_skill(n2_skill())
    return store, skill


def _call(skill_id: str) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": skill_id, "arguments": {"formula": "O2"}}}


@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.1"])
def test_requests_without_the_right_token_get_401_and_run_nothing(shared_store, serve_asgi, host):
    store, skill = shared_store
    url = serve_asgi(http_app(build_server(get_settings()), get_settings(), host)) + "/mcp"
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    for authorization in (None, "", f"Bearer {TOKEN[:-1]}", f"Bearer {TOKEN}x", TOKEN, f"Basic {TOKEN}", f"bearer  {TOKEN}"):
        sent = {**headers, **({"Authorization": authorization} if authorization is not None else {})}
        refused = httpx.post(url, json=_call(skill.id), headers=sent, timeout=30)
        assert refused.status_code == 401, authorization
        assert refused.headers["www-authenticate"].startswith("Bearer") and TOKEN not in refused.text
    assert store.get_skill(skill.id).stats.uses == 0

    async def session() -> None:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120) as http:
            async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=120) as client:
                result = await client.call_tool(skill.id, {"formula": "O2"})
                assert not result.is_error and result.structured_content == {"result": 8.5753, "parameters": {"formula": "O2", "fmax": 0.01}}

    anyio.run(session)
    assert store.get_skill(skill.id).stats.uses == 1


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "example.org"])
def test_mcp_beyond_loopback_without_a_token_does_not_start(workspace, monkeypatch, capsys, host):
    started = []
    monkeypatch.setattr("uvicorn.run", lambda *args, **kwargs: started.append(args))
    with pytest.raises(ExposureError, match="EVOSKILL_MCP_TOKEN"):
        http_app(build_server(get_settings()), get_settings(), host)
    assert main(["mcp", "--transport", "http", "--host", host]) == 2
    assert "EVOSKILL_MCP_TOKEN" in capsys.readouterr().err and started == []

    monkeypatch.setenv("EVOSKILL_MCP_TOKEN", "short")
    assert main(["mcp", "--transport", "http", "--host", host]) == 2
    err = capsys.readouterr().err
    assert "too short" in err and "short'" not in err and started == []

    monkeypatch.setenv("EVOSKILL_MCP_TOKEN", TOKEN)
    assert main(["mcp", "--transport", "http", "--host", host]) == 0 and len(started) == 1
    assert "bearer token required" in capsys.readouterr().err


def test_mcp_on_loopback_without_a_token_keeps_the_rebinding_protection(workspace, serve_asgi):
    url = serve_asgi(http_app(build_server(get_settings()), get_settings(), "127.0.0.1")) + "/mcp"
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json", "Host": "rebind.evil.example"}
    assert httpx.post(url, json=_call("anything"), headers=headers, timeout=30).status_code == 421
