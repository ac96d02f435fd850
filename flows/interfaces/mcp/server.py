"""evoskill as an MCP server (``evoskill mcp``): every stored skill is a typed tool, beside ``solve``, ``search_memory``
and ``list_skills``.

A skill's tool takes the skill's parameter schema as its input schema; arguments are checked against it (JSON
Schema 2020-12) and a mismatch comes back to the client as a tool error naming each wrong argument. Tools are read
from the store on every ``tools/list``, so skills learned after the server started appear without a restart.
Skills run in the sandbox with no LLM; ``solve`` runs the ``solve`` flow and returns the plots its code drew as images
(the kept copies, ``deployments/run_outputs.py``). Both wait for their turn (``deployments/admission.py``, shared with
the chat): a waiting call hears "busy, position N" as progress, and a call beyond the queue's limit gets an error
result saying busy, to retry. A client that asks for progress (a ``progressToken``) then hears "running, N s" every
few seconds, and each stage of a solve as it starts and ends. A client's ``notifications/cancelled`` kills the call's
sandboxed run at once (``deployments/cancel.py``); a cancelled solve also makes no more LLM calls, so it ends at its
next one (an LLM call under way is not interrupted).

>>> from mcp import Client                                                   # doctest: +SKIP
>>> async with Client(StdioServerParameters(command="evoskill", args=["mcp"])) as client:   # doctest: +SKIP
...     (await client.call_tool("ase_emt_atomization-v1", {"formula": "O2"})).structured_content
{'result': 8.5753}
"""

from __future__ import annotations

import base64
import json
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from jsonschema import Draft202012Validator
from mcp.server.lowlevel import Server

from deployments.admission import Admission, Busy
from deployments.cancel import cancellable
from deployments.progress import Status, listening
from deployments.run_outputs import OutputRefused, read_image
from deployments.settings import Settings
from skills.documents import Skill
from skills.params import validate_params
from skills.runner import run_skill
from skills.store import SkillStore, open_store
from tasks.tools.memory import search_memory

__all__ = ["build_server", "skill_tool", "argument_errors"]

_MEMORY_KINDS = ["planning", "execution"]
_PROGRESS_S = 5.0  # "running, N s" this often while a skill or a solve runs
_PROGRESS_POLL_S = 0.25  # how often a solve's stage events are passed on
_STOP_WAIT_S = 15.0  # after a cancel, how long the call waits for its work to stop before it gives its turn back


def _fixed_tools(settings: Settings) -> list[types.Tool]:
    return [
        types.Tool(
            name="solve",
            description="Answer a scientific question (materials, chemistry) by reusing a learned skill or writing, running "
            "and debugging code. State the answer format, e.g. 'Return a float in eV rounded to 4 decimals'.",
            input_schema={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "maxLength": settings.web_max_query_chars},
                    "session": {"type": "string", "pattern": r"^[\w.-]+$", "description": "continue a conversation"},
                },
                "required": ["query"],
                "additionalProperties": False,
            },
        ),
        types.Tool(
            name="search_memory",
            description="Planning strategies and code that solved similar tasks before.",
            input_schema={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "maxLength": 2000},
                    "kind": {"type": "string", "enum": _MEMORY_KINDS},
                    "k": {"type": "integer", "minimum": 1, "maximum": 20, "default": 3},
                },
                "required": ["query"],
                "additionalProperties": False,
            },
        ),
        types.Tool(
            name="list_skills",
            description="The stored skills (each also callable as a tool of its own id), optionally ranked by a search text.",
            input_schema={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "maxLength": 2000},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50},
                },
                "additionalProperties": False,
            },
        ),
    ]


def skill_tool(skill: Skill) -> types.Tool:
    """The MCP tool of a skill: its id as the name, its parameter schema as the input schema."""
    schema = {"type": "object", **skill.parameters, "additionalProperties": False}
    unit = f" ({skill.unit})" if skill.unit else ""
    description = f"{skill.description or skill.name} Returns {skill.output_type}{unit}. Runs without an LLM."
    return types.Tool(name=skill.id, description=description, input_schema=schema)


def argument_errors(schema: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """Each way ``arguments`` break ``schema``, as 'where: what' lines (empty when they fit)."""
    errors = sorted(Draft202012Validator(schema).iter_errors(arguments), key=lambda e: list(e.absolute_path))
    return [f"{'.'.join(map(str, e.absolute_path)) or 'arguments'}: {e.message}" for e in errors]


def _result(value: Any, error: bool = False) -> types.CallToolResult:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    structured = None if isinstance(value, str) else {"result": value}
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured, is_error=error)


def _skill_summary(skill: Skill) -> dict[str, Any]:
    return {"id": skill.id, "description": skill.description, "parameters": skill.parameters, "uses": skill.stats.uses}


class _Handlers:
    """What each tool does; blocking work runs on a worker thread."""

    def __init__(self, settings: Settings, store: SkillStore):
        self.settings = settings
        self.store = store
        self.fixed = {tool.name: tool for tool in _fixed_tools(settings)}
        self.admission = Admission.from_settings(settings)

    async def list_tools(self, ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        skills = await anyio.to_thread.run_sync(self.store.latest_skills)
        return types.ListToolsResult(tools=[*self.fixed.values(), *(skill_tool(s) for s in sorted(skills, key=lambda s: s.id))])

    async def call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments or {}
        tool = self.fixed.get(params.name)
        skill = None
        if tool is None:
            try:
                skill = await anyio.to_thread.run_sync(self.store.get_skill, params.name)
            except KeyError:
                return _result(f"unknown tool {params.name!r}: call list_skills or tools/list for the tools there are", error=True)
            tool = skill_tool(skill)
        problems = argument_errors(tool.input_schema, arguments)
        if problems:
            return _result(f"invalid arguments for {params.name}: " + "; ".join(problems), error=True)
        if skill is not None:
            return await self._in_turn(ctx, lambda cancel: self._run_skill(skill, arguments, cancel))
        if params.name == "solve":
            return await self._in_turn(ctx, lambda cancel: self._solve(arguments))
        handler = {"search_memory": self._search_memory, "list_skills": self._list_skills}[params.name]
        return await anyio.to_thread.run_sync(handler, arguments)

    async def _in_turn(self, ctx: Any, work: Callable[[threading.Event], types.CallToolResult]) -> types.CallToolResult:
        """Run ``work(cancel)`` on a worker thread once admitted; meanwhile report "busy, position N" as progress.

        Beyond the user's queue limit the answer is an error result: busy, retry.
        """
        try:
            ticket = await anyio.to_thread.run_sync(self.admission.enter, self.settings.user)
        except Busy as exc:
            return _result(str(exc), error=True)
        with ticket:  # left on cancellation too
            told = 0
            while (position := await anyio.to_thread.run_sync(ticket.poll)) != 0:
                if position != told:
                    await ctx.session.report_progress(0, None, f"busy, position {position}: it starts when its turn comes")
                    told = position
                await anyio.sleep(self.admission.poll_s)
            return await _run_cancellable(ctx, work)

    def _run_skill(self, skill: Skill, arguments: dict[str, Any], cancel: threading.Event) -> types.CallToolResult:
        execution = run_skill(skill, validate_params(skill.parameters, arguments), self.settings, cancel)
        if not execution.cancelled:  # a cancelled run says nothing of the skill
            self.store.record_use(skill, execution.ok)
        if not execution.ok:
            return _result(f"{skill.id} failed: {execution.error or 'no result'}", error=True)
        return _result(execution.answer)

    def _solve(self, arguments: dict[str, Any]) -> types.CallToolResult:
        from deployments.prefect_server import prefect_runtime
        from flows.solve import solve

        with prefect_runtime(self.settings):
            result = solve(arguments["query"], session=arguments.get("session"), user=self.settings.user)
        keep = ("success", "answer", "formatted", "unit", "path", "skill_id", "learned", "question", "session", "error", "code", "flow_run_id")
        reply = _result(result.model_dump(mode="json", include=set(keep)), error=not (result.success or result.question))
        reply.content += self._images(result.images)
        return reply

    def _images(self, paths: list[str]) -> list[types.ImageContent]:
        """The plots a solve kept, as MCP images (each read by ``read_image``)."""
        images = []
        for path in paths:
            try:
                data, media = read_image(path, self.settings)
            except OutputRefused:
                continue
            images.append(types.ImageContent(data=base64.b64encode(data).decode(), mime_type=media))
        return images

    def _search_memory(self, arguments: dict[str, Any]) -> types.CallToolResult:
        self.store.refresh()  # other processes (the CLI, the web app) may have learned since
        # JSON Schema's integers include 2.0: the schema has checked it is whole.
        hits = search_memory(self.store, arguments["query"], kind=arguments.get("kind"), k=int(arguments.get("k", 3)),
                             threshold=self.settings.memory_threshold, user=self.settings.user)  # fmt: skip
        return _result([{"kind": h.memory.kind, "subtask": h.memory.subtask, "solution": h.memory.solution, "similarity": h.similarity} for h in hits])

    def _list_skills(self, arguments: dict[str, Any]) -> types.CallToolResult:
        limit = int(arguments.get("limit", 50))  # a whole number, possibly sent as 2.0
        if arguments.get("query", "").strip():
            self.store.refresh()
            skills = [s for s, _ in self.store.search_skills(arguments["query"], k=limit, threshold=0.05)]
        else:
            skills = sorted(self.store.latest_skills(), key=lambda s: s.id)[:limit]
        return _result([_skill_summary(s) for s in skills])


async def _run_cancellable(ctx: Any, work: Callable[[threading.Event], types.CallToolResult]) -> types.CallToolResult:
    """Run ``work(cancel)`` on a worker thread as one cancellable call (``deployments/cancel.py``), telling the client its
    progress: "running, N s" every ``_PROGRESS_S`` and the call's stage events. When the request is cancelled (the client's
    ``notifications/cancelled`` cancels this task), ``cancel`` is set and the call waits up to ``_STOP_WAIT_S`` for the work to stop."""
    cancel, finished = threading.Event(), threading.Event()
    events: queue.SimpleQueue[str] = queue.SimpleQueue()
    started = time.monotonic()
    told = 0.0

    def heard(stage: str, status: Status, detail: str) -> None:
        events.put(f"{stage}: {status}" + (f" — {detail[:300]}" if detail else ""))

    def in_thread() -> types.CallToolResult:
        try:
            with cancellable(cancel), listening(heard):
                return work(cancel)
        finally:
            finished.set()

    async def say(message: str) -> None:
        nonlocal told
        told = max(round(time.monotonic() - started, 3), told + 0.001)  # progress only grows: seconds since the start
        try:
            await ctx.session.report_progress(told, None, message)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):  # a courtesy: a client that is gone hears nothing
            pass

    async def tell() -> None:
        await say("running")
        next_tick = started + _PROGRESS_S
        while True:
            await anyio.sleep(_PROGRESS_POLL_S)
            while not events.empty():
                await say(events.get_nowait())
            if time.monotonic() >= next_tick:
                await say(f"running, {time.monotonic() - started:.0f} s")
                next_tick += _PROGRESS_S

    async with anyio.create_task_group() as group:
        group.start_soon(tell)
        try:
            result = await anyio.to_thread.run_sync(in_thread, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            cancel.set()
            with anyio.CancelScope(shield=True):  # its sandboxed run is killed within moments: the turn is given back after
                await anyio.to_thread.run_sync(finished.wait, _STOP_WAIT_S)
            raise
        group.cancel_scope.cancel()
    return result


def build_server(settings: Settings) -> Server[Any]:
    """The MCP server over ``settings``' store (serve it with ``.run`` on stdio, or ``.streamable_http_app()``)."""
    handlers = _Handlers(settings, open_store(settings))
    return Server(
        "evoskill",
        version="0.1.0",
        instructions="Learned scientific skills as tools; 'solve' answers new questions and learns from them.",
        on_list_tools=handlers.list_tools,
        on_call_tool=handlers.call_tool,
    )
