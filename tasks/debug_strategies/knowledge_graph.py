"""``knowledge_graph``: fix the script with the signatures the package's knowledge graph gives for the failing names
(``parse_local_package`` + ``query_knowledge_graph``)."""

from __future__ import annotations

from deployments.sandbox.execute import SandboxLimits
from tasks.debug_strategies.base import DebugStrategy
from tasks.tool_plans import graph_answers, tool_notes
from tasks.tools.registry import ToolBox


def _notes(query: str, code: str, error: str, box: ToolBox, limits: SandboxLimits) -> list[str]:
    return tool_notes(graph_answers(box, code, error, "signature of", 3))


STRATEGY = DebugStrategy(
    name="knowledge_graph",
    goal="Fix the script using the API facts below, taken from the package's knowledge graph: use only names and signatures that exist.",
    tool_plan=_notes,
    self_reflection=True,
)
