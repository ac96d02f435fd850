"""What each writing stage looks up with its tools before it asks the model, and the tool helpers of those plans.

The research stage gathers documentation and code examples (``research_notes``). Each debug
strategy's fixed tool plan, so even a small model gets grounded facts, is declared with the
strategy in ``tasks/debug_strategies/`` and built from the helpers here. A tool the settings
remove (``nsr``, ``ncl``) is simply not in the toolbox, and its step is skipped.
With ``tool_rounds`` > 0 the model may also call tools of its own choosing (``model_tool_round``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from pydantic import BaseModel, Field

from deployments.llm.client import LLMClient
from deployments.llm.transport import LLMBudgetExceeded, LLMSchemaError
from tasks.intent import retrieve_tools
from tasks.tools.introspect import ProbeRequest, probe_request
from tasks.tools.registry import ToolBox, ToolCall, ToolResult

__all__ = [
    "research_notes", "model_tool_round", "ToolRequests",
    "call_tool", "tool_notes", "failing_names", "search_query", "graph_answers",
]  # fmt: skip

_NOTE_CHARS = 1200


def _note(result: ToolResult) -> str | None:
    """A tool result as a short note; failures are left out of the model's context."""
    if not result.ok or not result.output.strip() or result.output.strip() == "(nothing)":
        return None
    text = result.output.strip()
    return f"{result.name}: " + (text if len(text) <= _NOTE_CHARS else text[:_NOTE_CHARS] + " …")


def tool_notes(results: Iterable[ToolResult | None]) -> list[str]:
    """The notes of ``results``, in order; steps skipped (``None``) and failures left out."""
    return [n for r in results if r is not None and (n := _note(r))]


def call_tool(box: ToolBox, name: str, **arguments: object) -> ToolResult | None:
    """Call tool ``name``, or ``None`` when the settings removed it from the toolbox."""
    return box.call(name, **arguments) if name in box.tools else None


def failing_names(request: ProbeRequest, error: str) -> list[str]:
    """Dotted names the error is about: missing attributes and imports first, then what the script imports."""
    names = [f"{owner}.{name}" for owner, name in request.missing]
    if request.missing_module:
        names.append(request.missing_module)
    names += re.findall(r"NameError: name '(\w+)' is not defined", error)
    names += [f"{module}.{name}" for module, name in request.names]
    names += request.called
    return list(dict.fromkeys(names))


def _top_package(request: ProbeRequest) -> str | None:
    for candidate in [o for o, _ in request.missing] + [m for m, _ in request.names] + request.modules:
        if "." in candidate or candidate in request.modules:
            return candidate.split(".")[0]
    return None


def search_query(query: str, error: str) -> str:
    """A search for the quoted names of ``error`` in the context of ``query``."""
    words = re.findall(r"'(\w+)'", error)
    return f"{' '.join(words)} {query}".strip()


def _graph_answer(box: ToolBox, package: str, form: str, leaf: str) -> ToolResult | None:
    """Ask the graph ``"{form} {leaf}"``; for a name that does not exist, ask about the closest one that does."""
    found = call_tool(box, "query_knowledge_graph", package=package, query=f"{form} {leaf}")
    if found and found.ok and not found.value.results:
        close = call_tool(box, "query_knowledge_graph", package=package, query=f"find {leaf}")
        if close and close.ok and close.value.results:
            found = call_tool(box, "query_knowledge_graph", package=package, query=f"{form} {close.value.results[0].split('.')[-1]}")
    return found


def graph_answers(box: ToolBox, code: str, error: str, form: str, count: int) -> Iterator[ToolResult | None]:
    """The knowledge graph's answers to ``"{form} NAME"`` for the first ``count`` names the failure is about.

    The failing script's top package is parsed first (``parse_local_package``); nothing comes when it does not parse.
    Answers are asked one at a time, as they are consumed.
    """
    request = probe_request(code, error)
    names = failing_names(request, error)
    package = _top_package(request)
    if package and (parsed := call_tool(box, "parse_local_package", package=package)) and parsed.ok:
        for name in names[:count]:
            yield _graph_answer(box, package, form, name.split(".")[-1])


def research_notes(query: str, box: ToolBox, error: str = "") -> list[str]:
    """Documentation and one or two code examples for ``query``: search, then extract and retrieve examples."""
    found = call_tool(box, "search", query=search_query(query, error) if error else query, k=3)
    if found is None or not found.ok:
        return []
    notes = tool_notes([found])
    files = [hit.location for hit in found.value or [] if hit.kind in ("api", "doc", "example") and not hit.location.startswith("http")]
    for location in list(dict.fromkeys(files))[:2]:
        call_tool(box, "extract_code_from_url", url=location)
    if "retrieve_extracted_code" not in box.tools or box.store.count("extracted_code", {"user": box.user}) == 0:
        return notes
    examples = call_tool(box, "retrieve_extracted_code", query=query, k=2)
    if examples and examples.ok and examples.value:
        notes.append("examples:\n" + "\n---\n".join(f"# {e.context[:160]}\n{e.code[:600]}" for e in examples.value))
    return notes


class ToolRequests(BaseModel):
    """Tools the model wants to call before it writes code (none is fine)."""

    calls: list[ToolCall] = Field(default_factory=list, max_length=3)


def model_tool_round(stage: str, llm: LLMClient, box: ToolBox, query: str, context: str) -> list[str]:
    """Let the model call up to three of the tools retrieved for ``stage``; their results, as notes.

    Runs ``settings.tool_rounds`` rounds; a reply that fails its schema or the budget ends it quietly.
    """
    if box.settings.tool_rounds == 0:
        return []
    tools = retrieve_tools(f"{query} {context}", stage.split(":")[0], box.settings)
    if not tools:
        return []
    menu = box.describe([t.name for t in tools])
    notes: list[str] = []
    for _ in range(box.settings.tool_rounds):
        prompt = f"Question: {query}\n\n{context}\n\nTools you may call (or none):\n{menu}" + ("\n\nResults so far:\n" + "\n".join(notes) if notes else "")
        try:
            requests = llm.structured(f"{stage}:tools", "Choose tools that would help write correct code. Reply with JSON.", prompt, ToolRequests)
        except (LLMSchemaError, LLMBudgetExceeded):
            break
        if not requests.calls:
            break
        notes += [str(box.run(call))[:_NOTE_CHARS] for call in requests.calls]
    return notes
