"""``local_package``: fix the script after reading the source of the definitions it relies on
(found with the knowledge graph's "where is", read with ``read_file``)."""

from __future__ import annotations

import re

from deployments.sandbox.execute import SandboxLimits
from tasks.debug_strategies.base import DebugStrategy
from tasks.tool_plans import call_tool, graph_answers, tool_notes
from tasks.tools.registry import ToolBox, ToolResult

_DEFINED_AT = re.compile(r"\((?:class|function|method), (.+):(\d+)\)")


def _notes(query: str, code: str, error: str, box: ToolBox, limits: SandboxLimits) -> list[str]:
    results: list[ToolResult | None] = []
    for found in graph_answers(box, code, error, "where is", 2):
        if found and found.ok and (match := _DEFINED_AT.search(found.output)):
            results.append(call_tool(box, "read_file", path=match.group(1), start=int(match.group(2)), lines=40))
    return tool_notes(results)


STRATEGY = DebugStrategy(
    name="local_package",
    goal="Fix the script after reading the package source below: call things the way the source defines them.",
    tool_plan=_notes,
    self_reflection=True,
)
