"""The MCP ``solve`` tool returns a solve's plot as an image, and never what the links and fakes its code planted
point at (``tests/output_attacks.py``): not in the result, not in the Prefect artifact."""

from __future__ import annotations

import base64

import anyio
from mcp import Client

from deployments.settings import get_settings
from flows.interfaces.mcp.server import build_server
from tests.output_attacks import CLEAR, PNG, QUESTION, artifacts, assert_absent, plant


def test_mcp_solve_returns_only_the_plot(scripted, monkeypatch):
    code, needles = plant(monkeypatch)
    scripted([CLEAR, {"stage": "research", "content": {"code": code}}])

    async def session() -> None:
        async with Client(build_server(get_settings())) as client:
            solved = await client.call_tool("solve", {"query": QUESTION})
            assert not solved.is_error and solved.structured_content["result"]["answer"] == 3
            images = [c for c in solved.content if c.type == "image"]
            assert len(images) == 1 and images[0].mime_type == "image/png"
            data = base64.b64decode(images[0].data)
            assert data.startswith(PNG)
            text = "".join(c.text for c in solved.content if c.type == "text")
            assert_absent(needles, "the MCP result", text.encode() + data)

    anyio.run(session)
    assert_absent(needles, "a Prefect artifact", artifacts())
