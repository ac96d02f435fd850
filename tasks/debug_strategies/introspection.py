"""``introspection``: fix the script with facts probed from the installed packages.

Its plan: a runtime probe in the sandbox (close matches for misspelt names, real signatures),
``quick_introspect`` of the names that failed, and a ``runtime_probe_snippet`` for Key/AttributeErrors.
"""

from __future__ import annotations

import re

from deployments.sandbox.execute import SandboxLimits
from tasks.debug_strategies.base import DebugStrategy
from tasks.tool_plans import call_tool, failing_names, tool_notes
from tasks.tools.introspect import introspection_notes, probe_request
from tasks.tools.registry import ToolBox


def _notes(query: str, code: str, error: str, box: ToolBox, limits: SandboxLimits) -> list[str]:
    if "quick_introspect" not in box.tools:
        return []
    notes = introspection_notes(code, error, box.settings.run_root(), limits) if code else []
    results = [call_tool(box, "quick_introspect", target=name) for name in failing_names(probe_request(code, error), error)[:3]]
    if re.search(r"KeyError|has no attribute", error):
        results.append(call_tool(box, "runtime_probe_snippet", error=error.strip().splitlines()[-1] if error.strip() else error))
    return notes + tool_notes(results)


STRATEGY = DebugStrategy(
    name="introspection",
    goal="Fix the script using the facts below, probed from the installed packages: use only names and signatures that exist.",
    tool_plan=_notes,
    self_reflection=True,
)
