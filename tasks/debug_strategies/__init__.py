"""The debug strategies: each declared once, in its own module, and listed here.

A strategy module holds one ``DebugStrategy`` (``STRATEGY``): its name, the goal the model is
given, whether it relies on the self-reflection tools, whether the prompt shows the failing script,
and its tool plan. To add one, write the module and add it to ``STRATEGIES`` below; it can then be
named in ``EVOSKILL_DEBUG_STRATEGIES``. The settings (the floor below) hold only names and the
defaults, so the names are checked here, before a solve starts (``check_strategies``).

>>> from tasks.debug_strategies import STRATEGIES
>>> list(STRATEGIES)
['diagnostic', 'introspection', 'knowledge_graph', 'local_package', 'research']
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, field_validator

from deployments.settings import Settings
from tasks.debug_strategies import (
    diagnostic,
    introspection,
    knowledge_graph,
    local_package,
    research,
)
from tasks.debug_strategies.base import DebugStrategy, ToolPlan

__all__ = ["DebugStrategy", "ToolPlan", "STRATEGIES", "check_strategies"]

STRATEGIES: dict[str, DebugStrategy] = {
    s.name: s
    for s in (
        diagnostic.STRATEGY,
        introspection.STRATEGY,
        knowledge_graph.STRATEGY,
        local_package.STRATEGY,
        research.STRATEGY,
    )
}


class _Chosen(BaseModel):
    """The strategies the settings name; a bad one fails as the settings' own validation does."""

    model_config = ConfigDict(title="Settings")

    debug_strategies: list[str]

    @field_validator("debug_strategies")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        unknown = sorted(set(value) - set(STRATEGIES))
        if unknown:
            raise ValueError(f"unknown debug strategies {unknown}; choose from {list(STRATEGIES)}")
        return value


def check_strategies(settings: Settings) -> Settings:
    """``settings``, once every debug strategy it names is known; else a ``pydantic.ValidationError`` naming ``debug_strategies``.

    Called where a solve starts (the solve, deep-solve, plan-solve and benchmark flows) and by the
    doors before they start one, so a bad ``EVOSKILL_DEBUG_STRATEGIES`` fails before any work.
    """
    _Chosen(debug_strategies=settings.debug_strategies)
    return settings
