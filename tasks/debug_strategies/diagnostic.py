"""``diagnostic``: read the traceback and fix the cause in the existing script, given documentation of the failing call (``search``)."""

from __future__ import annotations

from deployments.sandbox.execute import SandboxLimits
from tasks.debug_strategies.base import DebugStrategy
from tasks.tool_plans import call_tool, search_query, tool_notes
from tasks.tools.registry import ToolBox


def _notes(query: str, code: str, error: str, box: ToolBox, limits: SandboxLimits) -> list[str]:
    return tool_notes([call_tool(box, "search", query=search_query(query, error), k=2)])


STRATEGY = DebugStrategy(
    name="diagnostic",
    goal="Find the cause of the error from the traceback and fix it, changing only what is needed.",
    tool_plan=_notes,
)
