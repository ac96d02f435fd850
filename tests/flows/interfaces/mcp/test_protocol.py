"""The MCP server keeps the protocol's conventions, through real (in-memory) MCP clients of both protocol eras.

Tools carry titles, output schemas and annotations; every structured result fits its tool's output schema (the
TypeScript SDK and the MCP Inspector reject one that does not); clients hear when the stored skills change; a skill
tool's result names the parameters it ran with; a run past a skill's declared wall time ends with an error saying so.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from deployments.settings import get_settings
from flows.interfaces.mcp.server import build_server
from skills.documents import Skill, SkillResources, TestCase
from skills.params import signature_schema
from skills.store import open_store
from tasks.tools.memory import save_to_memory
from tests.codes import add_two_skill, n2_skill

SLEEP = "import time\ndef run(seconds: float = 0.0) -> float:\n    time.sleep(seconds)\n    return seconds\n"
WRONG_TYPE = 'def run(x: int = 1) -> float:\n    return "not a number" if x > 1 else 1.0\n'


@pytest.fixture
def store(workspace, monkeypatch):
    monkeypatch.setenv("EVOSKILL_MCP_TOOLS_POLL_S", "0.1")
    return open_store(get_settings())


def _fits(tool: types.Tool, result: types.CallToolResult) -> None:
    """``result``'s structured content fits ``tool``'s output schema (what a strict client checks)."""
    assert tool.output_schema is not None and result.structured_content is not None
    Draft202012Validator.check_schema(tool.output_schema)
    errors = [e.message for e in Draft202012Validator(tool.output_schema).iter_errors(result.structured_content)]
    assert errors == [], (tool.name, result.structured_content)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_tools_carry_titles_output_schemas_annotations_and_list_changed(store, mode):
    skill, _ = store.put_skill(n2_skill())

    async def session() -> None:
        async with Client(build_server(get_settings()), mode=mode) as client:
            assert client.server_capabilities.tools.list_changed  # both eras: the handshake's flag, or subscriptions/listen
            tools = {t.name: t for t in (await client.list_tools()).tools}
            tool = tools[skill.id]
            assert tool.title == "emt atomization energy (v1)"
            assert tool.input_schema["properties"]["fmax"]["exclusiveMinimum"] == 0  # a force threshold is > 0
            result = tool.output_schema["properties"]["result"]
            assert result == {"type": "number", "description": "in eV"}
            assert tool.output_schema["properties"]["parameters"]["properties"]["formula"]["type"] == "string"
            assert tool.annotations.read_only_hint and tool.annotations.idempotent_hint and not tool.annotations.open_world_hint
            solve = tools["solve"].annotations
            assert not solve.read_only_hint and not solve.destructive_hint and not solve.idempotent_hint and solve.open_world_hint
            for name in ("search_memory", "list_skills"):
                assert tools[name].annotations.read_only_hint and tools[name].title
            for listed in tools.values():
                Draft202012Validator.check_schema(listed.output_schema)

    anyio.run(session)


def test_every_structured_result_fits_its_tools_output_schema(store):
    skill, _ = store.put_skill(add_two_skill())
    wrong, _ = store.put_skill(Skill(name="wrong_type", code=WRONG_TYPE, parameters=signature_schema(WRONG_TYPE), output_type="float",
                                     test_case=TestCase(params={"x": 1}, expected=1.0)))  # fmt: skip
    save_to_memory(store, "execution", "the sum of two integers", "print(2 + 2)", user="local")

    async def session() -> None:
        async with Client(build_server(get_settings())) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            calls: list[tuple[str, dict[str, Any]]] = [
                (skill.id, {"a": 5}), (wrong.id, {"x": 1}), ("list_skills", {}), ("list_skills", {"query": "sum of integers"}),
                ("search_memory", {"query": "the sum of two integers"}), ("search_memory", {"query": "nothing like it", "kind": "planning"}),
            ]  # fmt: skip
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                assert not result.is_error, result.content[0].text
                _fits(tools[name], result)
            added = await client.call_tool(skill.id, {"a": 5})
            assert added.structured_content == {"result": 7, "parameters": {"a": 5, "b": 2}}  # b: its default, filled in
            assert [c.text for c in added.content] == ["7", "parameters: a=5, b=2"]
            # A result that breaks the skill's declared type is an error, never structured content a client would reject.
            broken = await client.call_tool(wrong.id, {"x": 2})
            assert broken.is_error and broken.structured_content is None
            assert "gave a result its output schema does not allow: result: 'not a number' is not of type 'number'" in broken.content[0].text

    anyio.run(session)


def test_search_memory_returns_each_memory_once(store):
    code = "from rdkit import Chem\nprint(Chem.MolFromSmiles('c1ccccc1O').GetNumAtoms())"
    for query in ("How many heavy atoms does phenol have?", "Count the heavy atoms of phenol."):
        save_to_memory(store, "execution", query, code, condition=query)  # learned under each phrasing of its task
    save_to_memory(store, "execution", "How many heavy atoms does phenol have?", code, user="local")  # the user's own copy
    save_to_memory(store, "planning", "How many heavy atoms does phenol have?", "Count with RDKit.", user="local")

    async def session() -> None:
        async with Client(build_server(get_settings())) as client:
            found = (await client.call_tool("search_memory", {"query": "heavy atoms of phenol", "k": 5})).structured_content["result"]
            assert sorted(m["kind"] for m in found) == ["execution", "planning"]
            assert [m["solution"] for m in found if m["kind"] == "execution"] == [code]

    anyio.run(session)


def test_clients_hear_when_skills_are_learned_reversioned_or_deleted(store):
    heard: list[Any] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            heard.append(message)

    async def told(count: int) -> None:
        with anyio.fail_after(10):
            while len(heard) < count:
                await anyio.sleep(0.02)

    async def session() -> None:
        server = build_server(get_settings())
        async with Client(server, mode="legacy", message_handler=on_message) as client:
            await client.list_tools()
            await anyio.sleep(0.3)
            assert heard == []  # nothing changed
            skill, _ = store.put_skill(add_two_skill())  # learned (here by another writer of the store)
            await told(1)
            assert skill.id in {t.name for t in (await client.list_tools()).tools}
            changed = add_two_skill().model_copy(update={"code": add_two_skill().code.replace("a + b", "b + a")})
            assert store.put_skill(changed)[0].id == "add_two-v2"  # re-versioned
            await told(2)
            store.delete_skill("add_two")  # deleted
            await told(3)
        async with Client(server) as client, client.listen(tools_list_changed=True) as events:  # a 2026-07-28 client
            store.put_skill(add_two_skill())
            with anyio.fail_after(10):
                async for event in events:
                    assert type(event).__name__ == "ToolsListChanged"
                    break

    anyio.run(session)


def test_a_run_past_its_declared_wall_time_ends_with_an_error_saying_so(store):
    sleeper, _ = store.put_skill(Skill(name="sleeper", code=SLEEP, parameters=signature_schema(SLEEP), output_type="float",
                                       resources=SkillResources(walltime_s=2), test_case=TestCase(expected=0.0)))  # fmt: skip

    async def session() -> None:
        async with Client(build_server(get_settings()), read_timeout_seconds=60) as client:
            assert "for at most 2 s" in {t.name: t for t in (await client.list_tools()).tools}[sleeper.id].description
            with anyio.fail_after(40):
                result = await client.call_tool(sleeper.id, {"seconds": 600})
            assert result.is_error
            assert result.content[0].text.startswith(f"{sleeper.id} failed with seconds=600.0: ran past its declared wall time of 2 s")

    anyio.run(session)


def test_a_learned_skills_tool_schema_holds_standard_json_schema_keywords_only():
    """A lifted skill's parameters carry evoskill's own keys (kind, unit, cue, source, derives); its tool says them in words."""
    from flows.interfaces.mcp.server import skill_tool
    from tests.skills.test_parameter import EVOSKILL_KEYS, LIFTED

    code = "def run(formula: str = 'N2', a: float = 4.05, structure: str = 'fcc', energies: list = [['Li', 0.0], ['O2', 0.0]]) -> float:\n    return 1.0\n"
    skill = Skill(name="lifted", code=code, parameters=LIFTED, output_type="float", test_case=TestCase(expected=1.0))
    for viewer in (None, "bob"):
        schema = skill_tool(skill, viewer).input_schema
        Draft202012Validator.check_schema(schema)
        assert all(not EVOSKILL_KEYS & set(prop) for prop in schema["properties"].values()), schema
        assert "Å" in schema["properties"]["a"]["description"] and schema["properties"]["structure"]["enum"] == ["bcc", "fcc"]
        assert not list(Draft202012Validator(schema).iter_errors({"formula": "O2", "a": 3.6}))
