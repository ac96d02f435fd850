"""The MCP server through real MCP client sessions: over stdio (a subprocess) and over streamable HTTP."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from jsonschema import Draft202012Validator
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from deployments.settings import get_settings
from flows.interfaces.mcp.server import argument_errors
from skills.documents import Session, Skill, TestCase
from skills.store import open_store
from tasks.tools.memory import save_to_memory
from tests.codes import N2_CODE, n2_skill
from tests.starter import learn_n2_by_position, learn_starter, rocksalt_density
from tests.starter import rocksalt as rocksalt_crystal

ROOT = Path(__file__).resolve().parents[4]
DOUBLE = "def run(x: float = 1.0, times: int = 2) -> float:\n    return x * times\n"


@pytest.fixture
def shared_store(workspace, monkeypatch):
    """A file-backed store that the server process and the test both open, holding the EMT skill."""
    monkeypatch.setenv("EVOSKILL_STORE", "monty")
    store = open_store(get_settings())
    skill, _ = store.put_skill(n2_skill())
    return store, skill


def _server_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith(("EVOSKILL_", "PREFECT_")) or k in ("PATH", "HOME")}


def _tool(tools, name):
    return next(t for t in tools.tools if t.name == name)


def test_stdio_session_lists_skills_as_typed_tools_and_calls_them(shared_store):
    store, skill = shared_store
    save_to_memory(store, "execution", "atomization energy of N2 with EMT", N2_CODE, user="local")
    save_to_memory(store, "execution", "atomization energy of O2 with EMT", "# someone else's", user="someone-else")
    params = StdioServerParameters(command=sys.executable, args=["-m", "flows.interfaces.cli.main", "mcp"], env=_server_env(), cwd=str(ROOT))

    async def session() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            tools = await client.list_tools()
            assert {"solve", "search_memory", "list_skills", skill.id} <= {t.name for t in tools.tools}
            schema = _tool(tools, skill.id).input_schema
            assert schema["properties"]["fmax"]["type"] == "number" and schema["properties"]["formula"]["type"] == "string"

            result = await client.call_tool(skill.id, {"formula": "O2"})
            assert not result.is_error and result.structured_content == {"result": 8.5753, "parameters": {"formula": "O2", "fmax": 0.01}}
            assert result.content[1].text == "parameters: formula=O2, fmax=0.01"  # the default filled in, said so
            negative = await client.call_tool(skill.id, {"formula": "O2", "fmax": -1})  # once a run that never ended
            assert negative.is_error and "fmax: -1 is less than or equal to the minimum of 0" in negative.content[0].text

            wrong = await client.call_tool(skill.id, {"formula": 2, "fmax": "fast"})
            assert wrong.is_error
            assert "fmax: 'fast' is not of type 'number'" in wrong.content[0].text and "formula: 2 is not of type 'string'" in wrong.content[0].text
            extra = await client.call_tool(skill.id, {"formula": "O2", "temperature": 300})
            assert extra.is_error and "'temperature' was unexpected" in extra.content[0].text
            with pytest.raises(MCPError, match="unknown tool 'no_such_skill-v9'") as unknown:
                await client.call_tool("no_such_skill-v9", {})
            assert unknown.value.code == -32602  # a protocol error (invalid params), as the MCP spec has it

            # A skill stored by another process while the server runs is a tool at once.
            learned, _ = store.put_skill(Skill(name="double", description="Twice x.", code=DOUBLE, output_type="float",
                                               parameters={"type": "object", "properties": {"x": {"type": "number"}, "times": {"type": "integer"}}},
                                               test_case=TestCase(params={"x": 2.0}, expected=4.0)))  # fmt: skip
            assert learned.id in {t.name for t in (await client.list_tools()).tools}
            doubled = await client.call_tool(learned.id, {"x": 1.5, "times": 3})
            assert doubled.structured_content == {"result": 4.5, "parameters": {"x": 1.5, "times": 3}}

            listed = await client.call_tool("list_skills", {"query": "atomization energy"})
            assert listed.structured_content["result"][0]["id"] == skill.id
            memories = await client.call_tool("search_memory", {"query": "atomization energy of N2 with EMT", "k": 5})
            assert [m["solution"] for m in memories.structured_content["result"]] == [N2_CODE]  # another user's memory stays theirs
            bad_k = await client.call_tool("search_memory", {"query": "x", "k": "five"})
            assert bad_k.is_error and "k: 'five' is not of type 'integer'" in bad_k.content[0].text

    anyio.run(session)
    assert store.get_skill(skill.id).stats.uses == 1


def test_streamable_http_session_calls_a_skill(shared_store, serve_asgi):
    from flows.interfaces.mcp.server import build_server

    _, skill = shared_store
    url = serve_asgi(build_server(get_settings()).streamable_http_app())

    async def session() -> None:
        async with Client(f"{url}/mcp", read_timeout_seconds=120) as client:
            assert skill.id in {t.name for t in (await client.list_tools()).tools}
            result = await client.call_tool(skill.id, {"formula": "N2", "fmax": 0.05})
            assert not result.is_error and abs(result.structured_content["result"] - 9.9372) < 0.05

    anyio.run(session)


def test_argument_errors_name_each_wrong_argument():
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["a"], "additionalProperties": False}
    assert argument_errors(schema, {"a": 1, "b": "x"}) == []
    assert argument_errors(schema, {"b": 3}) == ["arguments: 'a' is a required property", "b: 3 is not of type 'string'"]


def test_solve_tool_answers_through_the_solve_flow_and_reports_failures(scripted, workspace, monkeypatch):
    from flows.interfaces.mcp.server import build_server
    from tests.codes import N2_ANSWER, N2_QUERY, N2_SKILL

    draft = {"stage": "compile", "content": {"name": "EMT atomization energy", "description": "EMT", "code": N2_SKILL}}
    scripted([{"stage": "triage", "content": {"conflict": "", "question": ""}}, {"stage": "research", "content": {"code": N2_CODE}}, draft])

    async def session() -> None:
        async with Client(build_server(get_settings())) as client:
            solved = await client.call_tool("solve", {"query": N2_QUERY})
            assert not solved.is_error
            assert solved.structured_content["result"]["answer"] == N2_ANSWER and solved.structured_content["result"]["learned"]
            solve_tool = next(t for t in (await client.list_tools()).tools if t.name == "solve")
            Draft202012Validator(solve_tool.output_schema).validate(solved.structured_content)
            session = solved.structured_content["result"]["session"]  # a new conversation, to continue
            assert session and open_store(get_settings()).get(Session, session).turns[0].query == N2_QUERY
            assert "atomization_energy_ase_emt-v1" in {t.name for t in (await client.list_tools()).tools}
            too_long = await client.call_tool("solve", {"query": "x" * 4001})
            assert too_long.is_error and "query: 'xxxx" in too_long.content[0].text and "is too long" in too_long.content[0].text

            monkeypatch.setenv("EVOSKILL_LLM_BACKEND", "openai")
            monkeypatch.setenv("EVOSKILL_LLM_MODEL", "gpt-4o-mini")
            monkeypatch.setenv("EVOSKILL_LLM_BASE_URL", "http://127.0.0.1:9/v1")
            down = await client.call_tool("solve", {"query": "What is the band gap (unit: eV) of silicon with PBE? Return a float."})
            assert down.is_error and "cannot reach the LLM endpoint at http://127.0.0.1:9/v1" in down.content[0].text
            Draft202012Validator(solve_tool.output_schema).validate(down.structured_content)  # a strict client checks errors too

    anyio.run(session)


def test_a_skill_tool_refuses_arguments_outside_what_it_was_verified_on(workspace, monkeypatch, serve_asgi):
    from flows.interfaces.mcp.server import build_server

    monkeypatch.setenv("EVOSKILL_STORE", "monty")
    [rocksalt] = learn_starter("pymatgen_rocksalt_density_nacl")
    by_position = learn_n2_by_position()
    url = serve_asgi(build_server(get_settings()).streamable_http_app())

    async def session() -> None:
        async with Client(f"{url}/mcp", read_timeout_seconds=120) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert "with the make-up of its default" in tools[by_position.id].description  # the bound, told to the client
            for name, arguments, reason in [
                (by_position.id, {"formula": "CO"}, "the skill uses the elements of formula by position, verified on N2; CO has another make-up"),
                (rocksalt.id, {"crystal": rocksalt_crystal("Ca", "Xx"), "a": 5.0}, "'Xx' is not an element symbol"),
                (rocksalt.id, {"crystal": {**rocksalt_crystal("K", "Cl"), "space_group": "P4/mmm"}}, "space group P4/mmm is tetragonal"),
            ]:
                refused = await client.call_tool(name, arguments)
                assert refused.is_error and refused.structured_content is None, refused
                assert f"{name} was not verified for" in refused.content[0].text and reason in refused.content[0].text
            answered = await client.call_tool(rocksalt.id, {"crystal": rocksalt_crystal("K", "Cl"), "a": 6.29})
            assert not answered.is_error and answered.structured_content["result"] == rocksalt_density("K", "Cl", 6.29)

    anyio.run(session)
    store = open_store(get_settings())
    assert (store.get_skill(rocksalt.id).stats.uses, store.get_skill(by_position.id).stats.uses) == (1, 0)  # refusals ran nothing


def test_solve_offers_a_near_miss_as_a_structured_suggestion_and_runs_it_when_accepted(scripted, workspace):
    from flows.interfaces.mcp.server import build_server
    from tests.starter import emt_atomization, starter_skill

    atomization = starter_skill("ase_emt_atomization_n2")
    question = "What is the total binding energy of a CO molecule with ASE's EMT calculator? Return a float rounded to 4 decimal places."
    scripted([])  # no model: the code path cannot answer, and the suggestion still comes back

    async def session() -> None:
        async with Client(build_server(get_settings())) as client:
            solve_tool = next(t for t in (await client.list_tools()).tools if t.name == "solve")
            offered = await client.call_tool("solve", {"query": question})
            Draft202012Validator(solve_tool.output_schema).validate(offered.structured_content)
            suggestion = offered.structured_content["result"]["suggestion"]
            assert offered.is_error and suggestion["skill_id"] == atomization.id and suggestion["params"] == {"formula": "CO", "fmax": 0.01}
            assert not suggestion["accepted"] and suggestion["verified_on"] == atomization.provenance.query
            assert "accept_suggestion: true" in offered.content[-1].text and f"This looks like {atomization.id}" in offered.content[-1].text

            accepted = await client.call_tool("solve", {"query": question, "accept_suggestion": True})
            Draft202012Validator(solve_tool.output_schema).validate(accepted.structured_content)
            result = accepted.structured_content["result"]
            assert not accepted.is_error and result["path"] == "skill" and result["skill_id"] == atomization.id
            assert result["answer"] == emt_atomization("CO") and result["suggestion"]["accepted"]
            assert accepted.structured_content["parameters"] == {"formula": "CO", "fmax": 0.01}

    anyio.run(session)
    assert question in open_store(get_settings()).get_skill(atomization.id).provenance.queries
