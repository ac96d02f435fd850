"""Policies by name: a preset, or a generator/planner/selector spec, turned into a policy; the campaigns' baselines.

>>> make_policy(BASELINES["made"].policy).describe()
'planner random → generator made-random → no filters → the first candidate'
>>> make_policy(BASELINES["filtered"].policy).describe()
'planner random → generator random → filters min_distance, smact, unique → selector random of up to 4 candidates'
"""

from __future__ import annotations

from typing import Any

from benchmarks.discovery.generators import GENERATORS
from benchmarks.discovery.orchestrator import OrchestratorPolicy
from benchmarks.discovery.planners import PLANNERS
from benchmarks.discovery.policy import PipelinePolicy, Policy
from benchmarks.discovery.presets import BASELINES, PRESETS, Baseline, BaselineName
from benchmarks.discovery.selectors import SELECTORS
from deployments.llm.client import LLMClient

__all__ = ["PRESETS", "BASELINES", "BaselineName", "Baseline", "policy_stages", "needs_llm", "make_policy"]

# Presets built otherwise than the default pipeline (filters min distance, SMACT, uniqueness; a pool of 4).
_PRESET_OPTIONS: dict[str, dict[str, Any]] = {"made-random": {"filters": [], "pool_size": 1}}


def _stage(table: dict[str, Any], name: str, llm: LLMClient | None) -> Any:
    return table[name](llm=llm) if name == "llm" else table[name]()


def policy_stages(spec: str) -> tuple[str, str, str] | None:
    """The (planner, generator, selector) names of a policy, checked; None for the orchestrator."""
    if spec == "orchestrator":
        return None
    parts = PRESETS.get(spec) or tuple(spec.split(":"))
    if len(parts) != 3:
        raise ValueError(f"unknown policy {spec!r}: use {', '.join([*PRESETS, 'orchestrator'])} or planner:generator:selector")
    for table, kind, name in zip((PLANNERS, GENERATORS, SELECTORS), ("planner", "generator", "selector"), parts, strict=True):
        if name not in table:
            raise ValueError(f"unknown {kind} {name!r}: use one of {', '.join(table)}")
    return parts


def needs_llm(spec: str) -> bool:
    """Whether a policy asks the LLM anything (the orchestrator, or an llm stage)."""
    stages = policy_stages(spec)
    return stages is None or "llm" in stages


def make_policy(spec: str, llm: LLMClient | None = None) -> Policy:
    """A policy by preset name or ``planner:generator:selector``."""
    stages = policy_stages(spec)
    if needs_llm(spec) and llm is None:
        raise ValueError(f"the {spec} policy needs an LLM client")
    if stages is None:
        assert llm is not None  # the orchestrator needs_llm: checked above
        return OrchestratorPolicy(llm=llm)
    planner, generator, selector = stages
    return PipelinePolicy(
        planner=_stage(PLANNERS, planner, llm), generator=_stage(GENERATORS, generator, llm),
        selector=_stage(SELECTORS, selector, llm), name=spec, **_PRESET_OPTIONS.get(spec, {}),
    )  # fmt: skip
