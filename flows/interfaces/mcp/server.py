"""evoskill as an MCP server (``evoskill mcp``): every stored skill is a typed tool, beside ``solve``, ``search_memory``
and ``list_skills``.

A skill's tool takes the skill's parameter schema (with its bounds) as its input schema; arguments are checked
against it (JSON Schema 2020-12) and a mismatch comes back to the client as a tool error naming each wrong argument,
as do arguments outside what the skill was verified on (``skills/domain.py``: another make-up or kind), with each
reason, and nothing runs; an unknown tool is a protocol error (-32602). Its output schema is the skill's verified output type and unit beside the
parameters it ran with (defaults filled in): ``{"result": 8.5753, "parameters": {"formula": "O2", "fmax": 0.01}}``.
Tools are read from the store on every ``tools/list``; the server watches the store and tells connected clients when
a skill is learned, deleted or re-versioned (``notifications/tools/list_changed``, or a ``subscriptions/listen`` event).
Skills run in the sandbox with no LLM, for at most their declared wall time; ``solve`` runs the ``solve`` flow and returns the plots its code drew as images
(the kept copies, ``deployments/run_outputs.py``). A recalled skill that declined the question only for words it was not
verified on comes back as ``suggestion`` (``{skill_id, params, bound, verified_on, reason, accepted}``, also said in
words); calling ``solve`` again with ``accept_suggestion: true`` answers through it and teaches it the wording. Both wait for their turn (``deployments/admission.py``, shared with
the chat): a waiting call hears "busy, position N" as progress, and a call beyond the queue's limit gets an error
result saying busy, to retry. A client that asks for progress (a ``progressToken``) then hears "running, N s" every
few seconds, and each stage of a solve as it starts and ends. A client's ``notifications/cancelled`` kills the call's
sandboxed run at once (``deployments/cancel.py``); a cancelled solve also makes no more LLM calls, so it ends at its
next one (an LLM call under way is not interrupted).

>>> from mcp import Client                                                   # doctest: +SKIP
>>> async with Client(StdioServerParameters(command="evoskill", args=["mcp"])) as client:   # doctest: +SKIP
...     (await client.call_tool("ase_emt_atomization-v1", {"formula": "O2"})).structured_content
{'result': 8.5753, 'parameters': {'formula': 'O2', 'fmax': 0.01}}
"""

from __future__ import annotations

import base64
import json
import queue
import re
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from jsonschema import Draft202012Validator
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from deployments.admission import Admission, Busy
from deployments.cancel import cancellable
from deployments.llm.quoting import quoted
from deployments.progress import Status, listening
from deployments.run_outputs import OutputRefused, read_image
from deployments.settings import Settings
from skills.disclosure import describe, shared_view, shows_words_to
from skills.documents import Skill
from skills.domain import checked_params
from skills.params import ParameterError, params_text
from skills.runner import run_skill
from skills.store import SkillStore, open_store
from tasks.tools.memory import search_memory

__all__ = ["build_server", "skill_tool", "argument_errors"]

_MEMORY_KINDS = ["planning", "execution"]
_PROGRESS_S = 5.0  # "running, N s" this often while a skill or a solve runs
_PROGRESS_POLL_S = 0.25  # how often a solve's stage events are passed on
_STOP_WAIT_S = 15.0  # after a cancel, how long the call waits for its work to stop before it gives its turn back
_OUTPUT_TYPES: dict[str, dict[str, Any]] = {
    "float": {"type": "number"}, "int": {"type": "integer"}, "bool": {"type": "boolean"}, "str": {"type": "string"},
    "list": {"type": "array"}, "any": {},
}  # fmt: skip
_NULLABLE_STRING = {"type": ["string", "null"]}
_SOLVE_RESULT = {
    "type": "object",
    "properties": {
        "success": {"type": "boolean"}, "answer": {}, "formatted": _NULLABLE_STRING, "unit": _NULLABLE_STRING,
        "path": {"type": "string"}, "skill_id": _NULLABLE_STRING, "learned": {"type": "boolean"}, "question": _NULLABLE_STRING,
        "session": _NULLABLE_STRING, "error": _NULLABLE_STRING, "code": _NULLABLE_STRING, "flow_run_id": _NULLABLE_STRING,
        "suggestion": {
            "type": ["object", "null"],
            "description": "a recalled skill declined only for words it was not verified on; solve again with accept_suggestion to run it",
            "properties": {
                "skill_id": {"type": "string"}, "params": {"type": "object"}, "bound": {"type": "array"},
                "verified_on": {"type": "string"}, "reason": {"type": "string"}, "accepted": {"type": "boolean"},
            },
            "required": ["skill_id", "params", "verified_on", "reason", "accepted"],
        },
        "grown": {"type": "array", "items": {"type": "string"}, "description": "skills that gave the accepted answer too and learned the question"},
    },
    "required": ["success", "session"],
}  # fmt: skip
_MEMORY_HIT = {
    "type": "object",
    "properties": {"kind": {"enum": _MEMORY_KINDS}, "subtask": {"type": "string"}, "solution": {"type": "string"}, "similarity": {"type": "number"}},
    "required": ["kind", "subtask", "solution", "similarity"],
}
_SKILL_SUMMARY = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "description": {"type": "string"}, "parameters": {"type": "object"}, "uses": {"type": "integer"}},
    "required": ["id", "description", "parameters", "uses"],
}


def _output_schema(result: dict[str, Any], parameters: dict[str, Any] | None = None) -> dict[str, Any]:
    """The schema of ``{"result": …}`` (and ``"parameters"``, what a run was bound to, when given)."""
    properties = {"result": result, **({"parameters": parameters} if parameters is not None else {})}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def _fixed_tools(settings: Settings) -> list[types.Tool]:
    return [
        types.Tool(
            name="solve",
            title="Solve a scientific question",
            description="Answer a scientific question (materials, chemistry) by reusing a learned skill or writing, running "
            "and debugging code. State the answer format, e.g. 'Return a float in eV rounded to 4 decimals'.",
            input_schema={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "maxLength": settings.web_max_query_chars},
                    "session": {"type": "string", "pattern": r"^[\w.-]+$", "description": "continue a conversation (the session a result returned)"},
                    "accept_suggestion": {
                        "type": "boolean", "default": False,
                        "description": "answer through the skill a previous result suggested (declined only for words), teaching it the wording",
                    },
                },
                "required": ["query"],
                "additionalProperties": False,
            },
            output_schema=_output_schema(_SOLVE_RESULT, {"type": "object", "description": "the parameters a reused skill ran with"}),
            # It learns skills and memories (not read-only), never removes any; asks an LLM and may run networked code.
            annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=True),
        ),
        types.Tool(
            name="search_memory",
            title="Search memory",
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
            output_schema=_output_schema({"type": "array", "items": _MEMORY_HIT}),
            annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False),
        ),
        types.Tool(
            name="list_skills",
            title="List skills",
            description="The stored skills (each also callable as a tool of its own id), optionally ranked by a search text.",
            input_schema={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "maxLength": 2000},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50},
                },
                "additionalProperties": False,
            },
            output_schema=_output_schema({"type": "array", "items": _SKILL_SUMMARY}),
            annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False),
        ),
    ]


def skill_tool(skill: Skill, viewer: str | None, network: bool = False) -> types.Tool:
    """The MCP tool of a skill as ``viewer`` may see it (``skills/disclosure.py``): its id as the name, its parameter schema
    as the input schema, its verified output type and unit (beside the parameters it ran with) as the output schema.
    The description is made from its code and parameters; its teacher's own description follows as quoted data where
    ``viewer`` may see it (its teacher; anyone, for a starter skill). ``network``: whether its sandbox may reach it."""
    shown = shared_view(skill, viewer)
    schema = shown.parameters.json_schema()  # standard keywords only: the kind and unit said in each description
    taught = f" {quoted(skill.description, 'Its teacher described it')}" if shows_words_to(skill, viewer) and skill.description else ""
    description = f"{describe(skill)} Runs without an LLM, for at most {skill.resources.walltime_s:g} s.{taught}"
    result = {**_OUTPUT_TYPES[skill.output_type], **({"description": f"in {skill.unit}"} if skill.unit else {})}
    properties = schema["properties"]
    bound = {
        "type": "object",
        "properties": {name: {k: prop[k] for k in ("type", "description") if k in prop} for name, prop in properties.items()},
        "required": list(properties),
        "additionalProperties": False,
    }
    return types.Tool(
        name=skill.id,
        title=f"{skill.name.replace('_', ' ')} (v{skill.version})",
        description=description,
        input_schema=schema,
        output_schema=_output_schema(result, bound),
        # A verified program in the sandbox: it changes nothing outside its run, and the same parameters give the same answer.
        annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True, destructive_hint=False, open_world_hint=network),
    )


def argument_errors(schema: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """Each way ``arguments`` break ``schema``, as 'where: what' lines (empty when they fit)."""
    errors = sorted(Draft202012Validator(schema).iter_errors(arguments), key=lambda e: list(e.absolute_path))
    return [f"{'.'.join(map(str, e.absolute_path)) or 'arguments'}: {e.message}" for e in errors]


def _result(value: Any, error: bool = False) -> types.CallToolResult:
    """A tool result: a message (text only), or a JSON value as ``{"result": …}``."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    structured = None if isinstance(value, str) else {"result": value}
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured, is_error=error)


def _answer(value: Any, parameters: dict[str, Any], error: bool = False) -> types.CallToolResult:
    """A run's answer (a string too) as ``{"result": …, "parameters": …}``, the parameters also said in words."""
    content: list[types.ContentBlock] = [types.TextContent(text=json.dumps(value, default=str)), types.TextContent(text=f"parameters: {params_text(parameters) or 'none'}")]
    return types.CallToolResult(content=content, structured_content={"result": value, "parameters": parameters}, is_error=error)


def _checked(tool: types.Tool, reply: types.CallToolResult) -> types.CallToolResult:
    """``reply``, or an error result when its structured content breaks the tool's output schema (clients reject such)."""
    if reply.structured_content is None or tool.output_schema is None:
        return reply
    problems = argument_errors(tool.output_schema, reply.structured_content)
    if not problems:
        return reply
    return _result(f"{tool.name} gave a result its output schema does not allow: " + "; ".join(problems)[:500], error=True)


def _skill_summary(skill: Skill, viewer: str | None) -> dict[str, Any]:
    """A skill as ``list_skills`` gives it, as ``viewer`` may see it."""
    shown = shared_view(skill, viewer)
    return {"id": shown.id, "description": shown.description, "parameters": shown.parameters.json_schema(), "uses": shown.stats.uses}


class _Handlers:
    """What each tool does; blocking work runs on a worker thread."""

    def __init__(self, settings: Settings, store: SkillStore, service: bool = False):
        self.settings, self.service = settings, service
        self.store = store
        self.fixed = {tool.name: tool for tool in _fixed_tools(settings)}
        self.admission = Admission.from_settings(settings)
        self.bus = InMemorySubscriptionBus()  # subscriptions/listen streams (2026-07-28 clients)
        self.sessions: dict[int, ServerSession] = {}  # by connection: earlier clients that listed the tools
        self.skill_ids: frozenset[str] | None = None  # the stored skills the last look saw

    async def list_tools(self, ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:  # told on its connection when the tools change
            # A request's session is a proxy built per request; its connection is what lasts (the SDK names no other handle).
            self.sessions[id(getattr(ctx.session, "_connection", ctx.session))] = ctx.session
        skills = await anyio.to_thread.run_sync(self.store.latest_skills)
        tools = (skill_tool(s, self.settings.user, self.settings.sandbox_network) for s in sorted(skills, key=lambda s: s.id))
        return types.ListToolsResult(tools=[*self.fixed.values(), *tools])

    async def call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments or {}
        tool = self.fixed.get(params.name)
        skill = None
        if tool is None:
            try:
                skill = await anyio.to_thread.run_sync(self.store.get_skill, params.name)
            except KeyError:
                raise MCPError(types.INVALID_PARAMS, f"unknown tool {params.name!r}: call list_skills or tools/list for the tools there are") from None
            tool = skill_tool(skill, self.settings.user, self.settings.sandbox_network)
        problems = argument_errors(tool.input_schema, arguments)
        if problems:
            return _result(f"invalid arguments for {params.name}: " + "; ".join(problems), error=True)
        if skill is not None:
            try:  # outside what the skill was verified on: an error result naming each reason, before it waits its turn
                bound = await anyio.to_thread.run_sync(checked_params, skill, arguments)
            except ParameterError as exc:
                return _result(str(exc), error=True)
            return _checked(tool, await self._in_turn(ctx, lambda cancel: self._run_skill(skill, bound, cancel)))
        if params.name == "solve":
            reply = await self._in_turn(ctx, lambda cancel: self._solve(arguments, cancel))
            await self.tools_changed()  # it may have learned a skill
            return _checked(tool, reply)
        handler = {"search_memory": self._search_memory, "list_skills": self._list_skills}[params.name]
        return _checked(tool, await anyio.to_thread.run_sync(handler, arguments))

    async def tools_changed(self) -> bool:
        """Tell connected clients the tools changed when the stored skills did (learned, deleted, re-versioned)."""
        ids = await anyio.to_thread.run_sync(self._skill_ids)
        changed = self.skill_ids is not None and ids != self.skill_ids
        self.skill_ids = ids
        if not changed:
            return False
        await self.bus.publish(ToolsListChanged())
        for key, session in list(self.sessions.items()):
            try:
                await session.send_tool_list_changed()
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError):
                del self.sessions[key]  # that client has gone
        return True

    def _skill_ids(self) -> frozenset[str]:
        return frozenset(self.store.store("skills").distinct("id"))  # cheap: the ids only; another process may write

    @asynccontextmanager
    async def lifespan(self, server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        """While the server serves: look at the store every ``mcp_tools_poll_s`` seconds (``tools_changed``)."""

        async def watch() -> None:
            while True:
                await self.tools_changed()
                await anyio.sleep(self.settings.mcp_tools_poll_s)

        async with anyio.create_task_group() as group:
            group.start_soon(watch)
            yield {}
            group.cancel_scope.cancel()

    async def _in_turn(self, ctx: Any, work: Callable[[threading.Event], types.CallToolResult]) -> types.CallToolResult:
        """Run ``work(cancel)`` on a worker thread once admitted; meanwhile report "busy, position N" as progress.

        Beyond the user's queue limit the answer is an error result: busy, retry.
        """
        try:
            ticket = await anyio.to_thread.run_sync(self.admission.enter, self.settings.user)
        except Busy as exc:
            return _result(str(exc), error=True)

        async def queued(position: int) -> None:
            await ctx.session.report_progress(0, None, f"busy, position {position}: it starts when its turn comes")

        with ticket:  # left on cancellation too
            await ticket.turn(queued)
            return await _run_cancellable(ctx, work)

    def _run_skill(self, skill: Skill, bound: dict[str, Any], cancel: threading.Event) -> types.CallToolResult:
        """Run the skill with its checked parameters (``checked_params``), in the sandbox."""
        execution = run_skill(skill, bound, self.settings, cancel)
        if not execution.cancelled:  # a cancelled run says nothing of the skill
            self.store.record_use(skill, execution.ok)
        if not execution.ok:
            return _result(f"{skill.id} failed with {params_text(bound) or 'no parameters'}: {execution.error or 'no result'}", error=True)
        return _answer(execution.answer, bound)

    def _solve(self, arguments: dict[str, Any], cancel: threading.Event) -> types.CallToolResult:
        session = arguments.get("session") or uuid.uuid4().hex[:12]  # a new conversation, as the chat starts one
        if not re.fullmatch(r"[\w.-]+", session):  # the schema's pattern lets a final newline through
            return _result(f"invalid arguments for solve: session: {session!r} is not a session (letters, digits, '.', '_', '-')", error=True)
        accept = bool(arguments.get("accept_suggestion"))
        result = None
        if self.service:
            from flows.interfaces.service.solving import solve_in_service

            answered = solve_in_service(self.settings, arguments["query"], session, cancel, accept_suggestion=accept)
            if answered is not None and answered.result is None:
                return _result(answered.error or "no answer", error=True)
            result = answered.result if answered is not None else None
        if result is None:
            from deployments.prefect_server import prefect_runtime
            from flows.solve import solve

            with prefect_runtime(self.settings):
                result = solve(arguments["query"], session=session, user=self.settings.user, accept_suggestion=accept)
        keep = (
            "success", "answer", "formatted", "unit", "path", "skill_id", "learned", "question", "session", "error", "code", "flow_run_id",
            "suggestion", "grown",
        )  # fmt: skip
        bound = {b.name: b.value for b in result.params}  # the skill path's parameters, defaults filled in
        reply = _answer(result.model_dump(mode="json", include=set(keep)), bound, error=not (result.success or result.question))
        if result.suggestion is not None and not result.suggestion.accepted:
            reply.content.append(types.TextContent(text=f"{result.suggestion.offer()} Call solve again with accept_suggestion: true to run it."))
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
        """Each remembered content once (``search_memory`` folds copies)."""
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
        return _result([_skill_summary(s, self.settings.user) for s in skills])


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


class _Server(Server[Any]):
    """The lowlevel server declaring ``tools.listChanged`` to clients of the initialize handshake too."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        told = notification_options or NotificationOptions(tools_changed=True)
        return super().create_initialization_options(told, experimental_capabilities, extensions)


def build_server(settings: Settings, service: bool = False) -> Server[Any]:
    """The MCP server over ``settings``' store (serve it with ``.run`` on stdio, or ``.streamable_http_app()``).
    ``service``: ``solve`` runs in the workspace's resident service, which this process's environment (the settings
    made from it) starts; otherwise here."""
    handlers = _Handlers(settings, open_store(settings), service)
    return _Server(
        "evoskill",
        version="0.1.0",
        instructions="Learned scientific skills as tools; 'solve' answers new questions and learns from them.",
        lifespan=handlers.lifespan,
        on_list_tools=handlers.list_tools,
        on_call_tool=handlers.call_tool,
        on_subscriptions_listen=ListenHandler(handlers.bus),
    )
