"""The MCP server as a door over the workspace's resident service: ``solve`` runs there (warm, shared with the CLI),
its stages come back as progress, and a client's cancel stops it there."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client

from deployments.settings import get_settings
from flows.interfaces.mcp.server import build_server
from flows.interfaces.service.client import stop_service
from flows.interfaces.service.place import read_records
from tests.codes import N2_ANSWER, N2_CODE, N2_QUERY, N2_SKILL
from tests.flows.interfaces.mcp.test_server_cancel import cancel_a_solve


@pytest.fixture
def in_service(scripted, workspace, monkeypatch):
    """A workspace whose store the MCP server and the service both open; its services stopped afterwards."""
    monkeypatch.setenv("EVOSKILL_STORE", "monty")
    monkeypatch.setenv("EVOSKILL_SERVICE", "true")
    yield scripted
    for record in read_records():
        if record.workspace == str(workspace.resolve()):
            stop_service(record.pid)


def _services(settings) -> list[int]:  # noqa: ANN001
    return [r.pid for r in read_records() if r.workspace == str(settings.workspace.resolve())]


def test_solve_runs_in_the_workspace_service_and_tells_its_stages(in_service):
    draft = {"stage": "compile", "content": {"name": "EMT atomization energy", "description": "EMT", "code": N2_SKILL}}
    in_service([{"stage": "triage", "content": {"conflict": "", "question": ""}}, {"stage": "research", "content": {"code": N2_CODE}}, draft])
    settings = get_settings()
    heard: list[str | None] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        heard.append(message)

    async def session() -> None:
        async with Client(build_server(settings, service=True)) as client:
            solved = await client.call_tool("solve", {"query": N2_QUERY}, progress_callback=progress)
            assert not solved.is_error, solved.content
            result = solved.structured_content["result"]
            assert result["answer"] == N2_ANSWER and result["learned"] and result["session"]
            # The skill the service learned is a tool here at once: one store.
            assert "atomization_energy_ase_emt-v1" in {t.name for t in (await client.list_tools()).tools}

    anyio.run(session)
    assert len(_services(settings)) == 1, "the solve did not run in the workspace's service"
    assert any(m and m.startswith("research: start") for m in heard) and any(m and m.startswith("research: done") for m in heard)


def test_a_solve_the_client_cancels_stops_in_the_service(in_service):
    cancel_a_solve(in_service, service=True)
    assert len(_services(get_settings())) == 1


def test_a_session_the_cli_would_refuse_is_refused_and_option_like_values_reach_the_service_as_values(in_service):
    draft = {"stage": "compile", "content": {"name": "EMT atomization energy", "description": "EMT", "code": N2_SKILL}}
    in_service([{"stage": "triage", "content": {"conflict": "", "question": ""}}, {"stage": "research", "content": {"code": N2_CODE}}, draft])
    settings = get_settings()

    async def session() -> None:
        async with Client(build_server(settings, service=True)) as client:
            refused = await client.call_tool("solve", {"query": N2_QUERY, "session": "abc\n"})
            assert refused.is_error and "is not a session" in refused.content[0].text
            dashed = await client.call_tool("solve", {"query": f"--json {N2_QUERY}", "session": "-x"})
            assert not dashed.is_error, dashed.content
            result = dashed.structured_content["result"]
            assert result["session"] == "-x" and result["answer"] == N2_ANSWER

    anyio.run(session)
