"""The MCP server's solves and skill runs wait for their turn with the chat's (``deployments/admission.py``): a waiting
call hears "busy, position N" as progress, and a call beyond the user's queue limit gets an error result: busy, retry."""

from __future__ import annotations

import anyio
from mcp import Client

from deployments.admission import Admission
from deployments.settings import get_settings
from flows.interfaces.mcp.server import build_server
from skills.store import open_store
from tests.codes import add_two_skill


def test_a_waiting_call_hears_its_place_and_one_beyond_the_queue_is_told_busy(workspace, monkeypatch):
    for name, value in {"MAX_CONCURRENT_SOLVES": "1", "MAX_CONCURRENT_SOLVES_PER_USER": "1", "MAX_QUEUED_PER_USER": "1"}.items():
        monkeypatch.setenv(f"EVOSKILL_{name}", value)
    settings = get_settings()
    skill, _ = open_store(settings).put_skill(add_two_skill())
    holder = Admission.from_settings(settings).enter("someone-else")  # e.g. a chat user's solve in another process
    assert holder.admitted
    heard: list[str | None] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        heard.append(message)

    async def session() -> None:
        async with Client(build_server(settings)) as client:
            results = {}

            async def call_skill() -> None:
                results["skill"] = await client.call_tool(skill.id, {"a": 3, "b": 4}, progress_callback=progress)

            async with anyio.create_task_group() as group:
                group.start_soon(call_skill)
                with anyio.fail_after(30):
                    while not heard:
                        await anyio.sleep(0.01)
                busy = await client.call_tool("solve", {"query": "What is 2 + 2? Return an integer."})
                assert busy.is_error and "busy" in busy.content[0].text and "retry" in busy.content[0].text
                assert not results  # the skill still waits its turn
                holder.release()
            assert not results["skill"].is_error and results["skill"].structured_content == {"result": 7, "parameters": {"a": 3, "b": 4}}

    anyio.run(session)
    assert heard[0] == "busy, position 1: it starts when its turn comes"
