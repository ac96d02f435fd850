"""What a debug strategy is: a name, the goal the model is given, when it runs, what its prompt shows, and its tool plan."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from deployments.sandbox.execute import SandboxLimits
from tasks.tools.registry import ToolBox

__all__ = ["DebugStrategy", "ToolPlan"]

# (query, failing code, error with the end of stderr, toolbox, sandbox limits) -> notes for the prompt
ToolPlan = Callable[[str, str, str, ToolBox, SandboxLimits], list[str]]


@dataclass(frozen=True)
class DebugStrategy:
    """One way of repairing a failed first execution; declared in its own module and listed in ``tasks.debug_strategies``."""

    name: str
    goal: str
    """The task the model is given, first thing in the prompt."""
    tool_plan: ToolPlan
    """Gathers the facts (notes) the prompt shows, with the tools the toolbox holds."""
    self_reflection: bool = False
    """It relies on the self-reflection tools, so it does not run with ``self_reflection=False``."""
    shows_failure: bool = True
    """The prompt shows the failing script and the end of its stderr (not for a rewrite from scratch)."""
