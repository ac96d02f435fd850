"""The agents' tools: plain typed functions whose docstrings the model sees, and a ``ToolBox`` to call them.

A tool's parameters named ``settings``, ``store``, ``cache``, ``knowledge`` and ``user`` are supplied by the
toolbox; the model sees (and is validated against) the others. ``user`` is the caller the toolbox was made
for (a solve's asker): a model can never act as another user. A failed call returns a short reminder of
correct use and the tool to try next, never a traceback.

>>> from deployments.settings import Settings
>>> box = ToolBox(Settings(store="memory"))
>>> box.call("check_package_version", name="ase").ok
True
>>> print(box.call("check_package_version").error)
check_package_version: arguments do not fit (name: Field required). Use: check_package_version(name: str)
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    ValidationError,
    create_model,
)

from deployments.settings import Settings
from skills.store import SkillStore, open_cache, open_store
from tasks.tools.docs_search import search
from tasks.tools.errors import ToolError
from tasks.tools.extract import extract_code_from_url, retrieve_extracted_code
from tasks.tools.graph_query import query_knowledge_graph
from tasks.tools.memory import TaskKnowledge, save_to_memory, search_memory
from tasks.tools.package_graph import parse_local_package
from tasks.tools.packages import (
    check_installed_packages,
    check_package_version,
    install_dependencies,
)
from tasks.tools.quick_introspect import quick_introspect
from tasks.tools.read_file import read_file
from tasks.tools.runtime_probe import runtime_probe_snippet
from tasks.tools.shell import create_and_execute_script, execute_shell_command

__all__ = ["Tool", "ToolCall", "ToolResult", "ToolBox", "TOOLS", "available_tools"]

MetaSkill = Literal["continuous_learning", "self_reflection", "memory", "environment"]
_INJECTED = {"settings", "store", "cache", "knowledge", "user"}
_OUTPUT_CHARS = 2500


@dataclass(frozen=True)
class Tool:
    """A function offered to the agents, with the meta-skill it belongs to and what it is for."""

    function: Callable[..., Any]
    meta: MetaSkill
    next_tool: str = ""

    @property
    def name(self) -> str:
        return self.function.__name__

    @property
    def description(self) -> str:
        return " ".join((inspect.getdoc(self.function) or "").split("\n\n")[0].split())

    def arguments_model(self) -> type[BaseModel]:
        return _arguments_model(self.function)

    def usage(self) -> str:
        params = [
            f"{name}: {_type_text(info.annotation)}" + ("" if info.is_required() else f" = {info.default!r}")
            for name, info in self.arguments_model().model_fields.items()
        ]
        return f"{self.name}({', '.join(params)})"


@cache
def _arguments_model(function: Callable[..., Any]) -> type[BaseModel]:
    """The pydantic model of a tool's model-visible arguments (built once per tool)."""
    hints = typing.get_type_hints(function)
    fields: dict[str, Any] = {}
    for name, param in inspect.signature(function).parameters.items():
        if name not in _INJECTED:
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[name] = (hints.get(name, Any), Field(default))
    return create_model(f"{function.__name__}_arguments", __config__=ConfigDict(extra="forbid"), **fields)


def _type_text(annotation: Any) -> str:
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


class ToolCall(BaseModel):
    """A request to run one tool (what a model asks for)."""

    name: str
    arguments: dict[str, JsonValue] = Field(default_factory=dict)


class ToolResult(BaseModel):
    """What a tool call returned, as text for the model, or why it failed and what to do instead."""

    name: str
    ok: bool
    output: str = ""
    error: str | None = None
    value: Any = Field(default=None, exclude=True, description="The tool's return value, for the stage that called it.")

    def __str__(self) -> str:
        return f"{self.name}: " + (self.output if self.ok else f"ERROR {self.error}")


TOOLS: list[Tool] = [
    Tool(search, "continuous_learning", "extract_code_from_url"),
    Tool(extract_code_from_url, "continuous_learning", "retrieve_extracted_code"),
    Tool(retrieve_extracted_code, "continuous_learning", "extract_code_from_url"),
    Tool(search_memory, "memory", "search"),
    Tool(save_to_memory, "memory"),
    Tool(quick_introspect, "self_reflection", "query_knowledge_graph"),
    Tool(runtime_probe_snippet, "self_reflection", "create_and_execute_script"),
    Tool(parse_local_package, "self_reflection", "query_knowledge_graph"),
    Tool(query_knowledge_graph, "self_reflection", "read_file"),
    Tool(read_file, "self_reflection", "query_knowledge_graph"),
    Tool(check_installed_packages, "environment", "check_package_version"),
    Tool(check_package_version, "environment", "install_dependencies"),
    Tool(install_dependencies, "environment", "check_installed_packages"),
    Tool(execute_shell_command, "environment", "create_and_execute_script"),
    Tool(create_and_execute_script, "environment", "runtime_probe_snippet"),
]


def available_tools(settings: Settings) -> list[Tool]:
    """The tools these settings allow: no self-reflection tools without self-reflection (``nsr``),
    no search, extraction or memory tools without continuous learning (``ncl``)."""
    removed = set()
    if not settings.self_reflection:
        removed.add("self_reflection")
    if not settings.continuous_learning:
        removed |= {"continuous_learning", "memory"}
    return [t for t in TOOLS if t.meta not in removed]


def _render(value: Any) -> str:
    if isinstance(value, list):
        text = "\n".join(_render(v) for v in value) or "(nothing)"
    elif isinstance(value, BaseModel) and type(value).__str__ is not BaseModel.__str__:
        text = str(value)
    elif isinstance(value, BaseModel):
        text = value.model_dump_json(exclude_defaults=True)
    else:
        text = str(value)
    return text if len(text) <= _OUTPUT_CHARS else text[:_OUTPUT_CHARS] + f"\n… ({len(text) - _OUTPUT_CHARS} more characters)"


class ToolBox:
    """The tools of one stage, bound to its settings, store, task knowledge and caller (``user``; ``settings.user`` when unset)."""

    def __init__(self, settings: Settings, store: SkillStore | None = None, tools: list[Tool] | None = None, user: str | None = None):
        self.settings = settings
        self.user = user or settings.user
        self._store = store
        self.tools = {t.name: t for t in (tools if tools is not None else available_tools(settings))}
        self.knowledge = TaskKnowledge()
        self.calls: list[ToolResult] = []

    @property
    def store(self) -> SkillStore:
        if self._store is None:
            self._store = open_store(self.settings)
        return self._store

    @property
    def cache(self) -> SkillStore:
        return open_cache(self.settings)

    def describe(self, names: list[str] | None = None) -> str:
        """One line per tool: its usage and what it does (what a prompt lists)."""
        return "\n".join(f"- {t.usage()}: {t.description}" for name, t in self.tools.items() if names is None or name in names)

    def call(self, name: str, /, **arguments: Any) -> ToolResult:
        """Run a tool; any failure becomes a result whose error says how to use it and what to try next."""
        tool = self.tools.get(name)
        if tool is None:
            result = ToolResult(name=name, ok=False, error=f"no tool {name!r} here. Tools: {', '.join(self.tools)}.")
            self.calls.append(result)
            return result
        try:
            args = tool.arguments_model()(**arguments).model_dump()
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(map(str, first["loc"])) or "arguments"
            result = ToolResult(name=name, ok=False, error=f"{name}: arguments do not fit ({where}: {first['msg']}). Use: {tool.usage()}")
            self.calls.append(result)
            return result
        wanted = inspect.signature(tool.function).parameters
        context = {"settings": self.settings, "knowledge": self.knowledge, "user": self.user}
        for key in _INJECTED & set(wanted):
            args[key] = self.store if key == "store" else self.cache if key == "cache" else context[key]
        try:
            value = tool.function(**args)
            result = ToolResult(name=name, ok=True, output=_render(value), value=value)
        except ToolError as exc:
            hint = exc.hint or (f"next, try {tool.next_tool}." if tool.next_tool else f"use: {tool.usage()}")
            result = ToolResult(name=name, ok=False, error=f"{exc.message} Hint: {hint}")
        except Exception as exc:  # noqa: BLE001 - a tool's crash is reported to the agent, not raised
            nxt = f" Then try {tool.next_tool}." if tool.next_tool else ""
            result = ToolResult(name=name, ok=False, error=f"{type(exc).__name__}: {exc}. Use: {tool.usage()}.{nxt}")
        self.calls.append(result)
        return result

    def call_log(self) -> list[str]:
        """Each call so far as one line: the tool and ``ok`` or its error (what trajectories keep)."""
        return [f"{c.name}: {'ok' if c.ok else c.error}"[:200] for c in self.calls]

    def run(self, call: ToolCall) -> ToolResult:
        return self.call(call.name, **call.arguments)
