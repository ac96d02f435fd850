"""Fuzzing the MCP server's tools through a real (in-memory) MCP client: every bad call is an error result naming the
problem (an unknown tool, a protocol error naming it)."""

from __future__ import annotations

import anyio
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from mcp import Client
from mcp.shared.exceptions import MCPError

from deployments.settings import get_settings
from flows.interfaces.mcp.server import build_server
from skills.disclosure import shared_view
from skills.store import open_store
from tests.codes import add_two_skill

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
arguments = st.dictionaries(st.sampled_from(["a", "b", "query", "k", "kind", "limit", "session"]) | text, json_values, max_size=4)
# Arguments of the right names and types, at and past the schemas' bounds: many valid calls among the invalid ones.
fixed_tool_arguments = arguments | st.fixed_dictionaries(
    {"query": text},
    optional={"k": st.integers(0, 21), "kind": st.sampled_from(["planning", "execution", "code"]), "limit": st.integers(0, 201)},
)


@pytest.fixture
def server(workspace):
    settings = get_settings()
    skill, _ = open_store(settings).put_skill(add_two_skill())
    return build_server(settings), skill


def call(server, name: str, args: dict):
    """The tool's result, or the protocol error the call got."""

    async def once():
        async with Client(server) as client:
            try:
                return await client.call_tool(name, args)
            except MCPError as exc:
                return exc

    return anyio.run(once)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@given(arguments)
def test_skill_tool_arguments(server, args):
    mcp, skill = server
    result = call(mcp, skill.id, args)
    valid = set(args) <= {"a", "b"} and all(_is_int(v) for v in args.values())
    if valid:
        assert not result.is_error and result.structured_content["result"] == args.get("a", 2) + args.get("b", 2)
    else:
        message = result.content[0].text
        assert result.is_error and message.startswith(f"invalid arguments for {skill.id}: ") and "Traceback" not in message


def _is_schema_int(value, low: int, high: int) -> bool:
    """A JSON Schema integer (an int, or a float with no fraction; never a bool) in [low, high]."""
    whole = _is_int(value) or (isinstance(value, float) and value.is_integer())
    return whole and low <= value <= high


def _is_text(value, low: int, high: int) -> bool:
    return isinstance(value, str) and low <= len(value) <= high


def _valid(tool: str, args: dict) -> bool:
    """Whether ``args`` fit ``tool``'s input schema, spelled out here from the tools' documented arguments."""
    if tool == "search_memory":
        return (set(args) <= {"query", "kind", "k"} and _is_text(args.get("query"), 1, 2000)
                and args.get("kind", "planning") in ("planning", "execution") and _is_schema_int(args.get("k", 3), 1, 20))  # fmt: skip
    return set(args) <= {"query", "limit"} and _is_text(args.get("query", ""), 0, 2000) and _is_schema_int(args.get("limit", 50), 1, 200)


@given(st.sampled_from(["search_memory", "list_skills", "solve"]), fixed_tool_arguments)
@example("list_skills", {"query": "The sum of two integers.", "limit": 1})
@example("search_memory", {"query": "add two integers", "kind": "execution", "k": 2.0})
@example("search_memory", {"query": "add two integers", "k": True})
@example("list_skills", {"limit": 1.0})
def test_fixed_tool_arguments(server, tool, args):
    """Valid arguments get the tool's answer over the store (one skill, no memories); anything else an error naming the tool."""
    mcp, skill = server
    query_ok = isinstance(args.get("query"), str) and 0 < len(args["query"]) <= 4000
    if tool == "solve" and query_ok and set(args) <= {"query", "session"} and isinstance(args.get("session", ""), str):
        return  # a valid solve runs the solve flow: covered by the MCP server tests
    result = call(mcp, tool, args)
    message = result.content[0].text
    assert "Traceback" not in message
    if tool == "solve" or not _valid(tool, args):
        assert result.is_error and message.startswith(f"invalid arguments for {tool}: "), message
    elif tool == "search_memory":
        assert not result.is_error and result.structured_content == {"result": []}, message  # nothing solved yet
    else:
        shown = shared_view(skill, get_settings().user)  # no teacher recorded: described from its code
        summary = {"id": skill.id, "description": shown.description, "parameters": shown.parameters.json_schema(), "uses": 0}
        found = result.structured_content["result"]
        assert not result.is_error and found in ([], [summary]), message
        if not args.get("query", "").strip() or args["query"] == skill.description:  # every skill, or a search for this one
            assert found == [summary]


@given(text)
def test_unknown_tool_names(server, name):
    mcp, skill = server
    if name in ("search_memory", "list_skills", "solve", skill.id, skill.name):
        return
    error = call(mcp, name, {})
    assert isinstance(error, MCPError) and error.code == -32602 and error.message.startswith(f"unknown tool {name!r}")
