"""``research``: rewrite from scratch with another approach, given documentation and code examples
(``search`` + ``extract_code_from_url`` + ``retrieve_extracted_code``); the prompt leaves the failed script out."""

from __future__ import annotations

from deployments.sandbox.execute import SandboxLimits
from tasks.debug_strategies.base import DebugStrategy
from tasks.tool_plans import research_notes
from tasks.tools.registry import ToolBox


def _notes(query: str, code: str, error: str, box: ToolBox, limits: SandboxLimits) -> list[str]:
    return research_notes(query, box, error=error)


STRATEGY = DebugStrategy(
    name="research",
    goal="The approach below failed. Write a new script from scratch that takes a different route to the same answer, "
    "using the documentation and examples below.",
    tool_plan=_notes,
    shows_failure=False,
)
