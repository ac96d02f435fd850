"""Long MCP calls through a real client: one cancelled by the client (``notifications/cancelled`` over JSON-RPC) kills
its sandboxed run at once; one whose client asks for progress hears "running" while it runs, a solve its stages too.

A run's processes are observed from the host: the skill starts a child whose command line holds a marker made for
the test, and the host's ``/proc`` is read for processes whose command line holds it.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid

import anyio
import pytest
from mcp import Client
from prefect.client.orchestration import get_client

from deployments.settings import get_settings
from flows.interfaces.mcp import server
from flows.interfaces.mcp.server import build_server
from skills.documents import Experience, Skill, TestCase
from skills.params import signature_schema
from skills.store import open_store
from tests.codes import N2_CODE, N2_QUERY
from tests.processes import marked


def _sleeper_code(marker: str) -> str:
    return (
        "import subprocess, sys, time\n\n\n"
        "def run(seconds: float = 60.0) -> float:\n"
        f"    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', {marker!r}])\n"
        "    time.sleep(seconds)\n"
        "    return seconds\n"
    )


def _sleeper(marker: str) -> Skill:
    code = _sleeper_code(marker)
    return Skill(name="sleeper", description="Sleeps.", code=code, parameters=signature_schema(code), output_type="float",
                 test_case=TestCase(params={"seconds": 0.1}, expected=0.1))  # fmt: skip


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_a_call_the_client_cancels_kills_its_sandboxed_run_at_once(workspace, monkeypatch, warm):
    monkeypatch.setenv("EVOSKILL_SANDBOX_WARM", str(warm).lower())
    monkeypatch.setenv("EVOSKILL_SANDBOX_WARM_PACKAGES", "[]")  # a warm executor that starts in moments
    monkeypatch.setenv("EVOSKILL_SANDBOX_WALL_S", "120")
    settings = get_settings()
    marker = f"evoskill-mcp-cancel-{uuid.uuid4().hex}"
    store = open_store(settings)
    skill, _ = store.put_skill(_sleeper(marker))
    if warm:
        from deployments.sandbox.execute import SandboxLimits, warm_up

        assert warm_up(SandboxLimits.from_settings(settings))
    timings: dict[str, float] = {}

    async def session() -> None:
        async with Client(build_server(settings), mode="legacy") as client:  # JSON-RPC: the cancel is a notification
            async with anyio.create_task_group() as group:

                async def call() -> None:
                    await client.call_tool(skill.id, {"seconds": 60})
                    timings["answered"] = 1.0  # never: the call is cancelled

                group.start_soon(call)
                with anyio.fail_after(60):
                    while not marked(marker):
                        await anyio.sleep(0.05)
                group.cancel_scope.cancel()  # the client sends notifications/cancelled
            timings["cancelled"] = time.monotonic()
            with anyio.fail_after(10):
                while marked(marker):
                    await anyio.sleep(0.02)
            timings["gone_s"] = time.monotonic() - timings["cancelled"]
            assert (await client.call_tool("list_skills", {})).structured_content is not None  # the server still serves

    anyio.run(session)
    print(f"\n{'warm' if warm else 'cold'}: the skill's processes gone {timings['gone_s']:.2f} s after the client cancelled")
    assert "answered" not in timings
    assert timings["gone_s"] < 10
    assert store.get_skill(skill.id).stats.uses == 0  # a cancelled run is no use of the skill


def test_a_client_that_asks_for_progress_hears_a_long_skill_running(workspace, monkeypatch):
    monkeypatch.setattr(server, "_PROGRESS_S", 0.5)
    settings = get_settings()
    marker = f"evoskill-mcp-progress-{uuid.uuid4().hex}"
    skill, _ = open_store(settings).put_skill(_sleeper(marker))
    heard: list[tuple[float, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        heard.append((done, message))

    async def session() -> None:
        async with Client(build_server(settings)) as client:
            result = await client.call_tool(skill.id, {"seconds": 2.0}, progress_callback=progress)
            assert not result.is_error and result.structured_content == {"result": 2.0, "parameters": {"seconds": 2.0}}
            silent = await client.call_tool(skill.id, {"seconds": 0.1})  # no progress asked: none sent, nothing breaks
            assert not silent.is_error

    anyio.run(session)
    messages = [message for _, message in heard]
    assert messages[0] == "running"
    assert any(m and m.startswith("running, ") and m.endswith(" s") for m in messages[1:])
    assert [done for done, _ in heard] == sorted(done for done, _ in heard) and len({done for done, _ in heard}) == len(heard)


def test_a_solve_tells_its_stages_as_progress(scripted, workspace):
    from tests.codes import N2_SKILL

    draft = {"stage": "compile", "content": {"name": "EMT atomization energy", "description": "EMT", "code": N2_SKILL}}
    scripted([{"stage": "triage", "content": {"conflict": "", "question": ""}}, {"stage": "research", "content": {"code": N2_CODE}}, draft])
    heard: list[str | None] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        heard.append(message)

    async def session() -> None:
        async with Client(build_server(get_settings())) as client:
            solved = await client.call_tool("solve", {"query": N2_QUERY}, progress_callback=progress)
            assert not solved.is_error

    anyio.run(session)
    assert heard[0] == "running"
    assert any(m and m.startswith("research: start") for m in heard) and any(m and m.startswith("research: done") for m in heard)


def cancel_a_solve(scripted, service: bool = False) -> dict:  # noqa: ANN001 - the scripted fixture
    """Ask ``solve`` over MCP for code that runs a minute, cancel the call once its run's processes are seen, and check
    that they are gone within 10 s, that the solve asked the LLM nothing more and was not remembered as a failure; its
    trajectory. ``service``: the MCP server sends ``solve`` to the workspace's resident service."""
    marker = f"evoskill-mcp-solve-cancel-{uuid.uuid4().hex}"
    code = (
        "import json, subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', {marker!r}])\n"
        "time.sleep(60)\n"
        "print(json.dumps(1.0))\n"
    )
    scripted([{"stage": "triage", "content": {"conflict": "", "question": ""}}, {"stage": "research", "content": {"code": code}}])
    settings = get_settings()
    timings: dict[str, float] = {}

    async def session() -> None:
        async with Client(build_server(settings, service=service), mode="legacy") as client:
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "solve", {"query": N2_QUERY})
                with anyio.fail_after(180):
                    while not marked(marker):
                        await anyio.sleep(0.05)
                group.cancel_scope.cancel()
            cancelled = time.monotonic()
            with anyio.fail_after(10):
                while marked(marker):
                    await anyio.sleep(0.02)
            timings["gone_s"] = time.monotonic() - cancelled
            with anyio.fail_after(60):  # the solve ends: its trajectory is written
                while not list(settings.trajectory_root().glob("*.json")):
                    await anyio.sleep(0.1)

    anyio.run(session)
    print(f"\nsolve{' in the service' if service else ''}: its run's processes gone {timings['gone_s']:.2f} s after the client cancelled")
    (path,) = settings.trajectory_root().glob("*.json")
    trajectory = json.loads(path.read_text())
    assert [call["stage"] for call in trajectory["llm_calls"]] == ["triage", "research"]  # none after the cancel
    assert trajectory["code_agent"]["execution"]["cancelled"] is True
    assert not trajectory["result"]["success"]
    assert not open_store(settings).all(Experience), "a cancelled solve is not remembered as a failure"
    return trajectory


def test_a_solve_the_client_cancels_kills_its_run_and_asks_the_llm_nothing_more(scripted, workspace):
    trajectory = cancel_a_solve(scripted)

    async def flow_state():
        async with get_client() as client:
            return (await client.read_flow_run(trajectory["result"]["flow_run_id"])).state

    state = asyncio.run(flow_state())
    assert state.is_cancelled() and state.message == "cancelled by its caller"

    async def task_states():  # of the solve's flow run and of its deep-solve subflow run
        from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId, FlowRunFilterParentFlowRunId

        solve_run = trajectory["result"]["flow_run_id"]
        async with get_client() as client:
            subflows = await client.read_flow_runs(flow_run_filter=FlowRunFilter(parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=[solve_run])))
            ids = [solve_run, *(run.id for run in subflows)]
            runs = await client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=ids)))
            return [(run.task_key, run.state.type.value) for run in runs]

    stages = asyncio.run(task_states())
    assert [state for key, state in stages if "research" in key] == ["COMPLETED"], stages  # it wrote the code before the cancel
    assert [state for key, state in stages if "code_agent" in key] == ["CANCELLED"], stages  # the stage whose run was killed
    assert "FAILED" not in {state for _, state in stages}, stages  # the stages after it refused their work: Cancelled too
