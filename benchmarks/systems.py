"""The systems a benchmark compares: baselines, the DeepSolver, its ablations, memory, and the reference.

Each system is a set of settings for the same solve machinery, so a system differs from another
only in the switches it names. Every system but ``skills`` runs with memory off (no recall, no
learning); ``skills`` keeps one store per repetition and learns from the earlier tasks of that
repetition. ``reference`` writes no code: it runs the task's own ``solution_code_or_process`` in the
same sandbox, which checks the harness and the task set.

>>> SYSTEMS["nsr"].overrides["debug_agents"], SYSTEMS["nsr"].overrides["self_reflection"]
(False, False)
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

__all__ = ["BenchmarkSystem", "SYSTEMS", "DEFAULT_SYSTEMS", "resolve_systems"]

_MEMORY_OFF = {"use_memory": False, "learn": False, "triage_llm": False}


class BenchmarkSystem(BaseModel):
    """One column of the benchmark table."""

    name: str
    description: str
    overrides: dict[str, Any] = Field(default_factory=dict, description="Settings this system changes.")
    reference: bool = Field(default=False, description="Run the task's reference solution instead of solving.")
    learns: bool = Field(default=False, description="Tasks of a repetition run in order and share one store.")
    uses_llm: bool = True


SYSTEMS: dict[str, BenchmarkSystem] = {
    s.name: s
    for s in [
        BenchmarkSystem(
            name="native",
            description="Generate once, run once: no search, no debugging, no introspection.",
            overrides={**_MEMORY_OFF, "debug_agents": False, "self_reflection": False, "continuous_learning": False},
        ),
        BenchmarkSystem(
            name="search_debug",
            description="Search + iterative self-debugging: one debug agent, up to 4 attempts; no introspection or graph tools.",
            overrides={**_MEMORY_OFF, "self_reflection": False, "debug_strategies": ["diagnostic"], "debug_max_attempts": 4},
        ),
        BenchmarkSystem(name="deep", description="The full DeepSolver: research, execute, three parallel debug agents.", overrides=dict(_MEMORY_OFF)),
        BenchmarkSystem(
            name="nsr",
            description="Ablation: no self-reflection (no introspection, graph or source tools, no debug agents).",
            overrides={**_MEMORY_OFF, "debug_agents": False, "self_reflection": False},
        ),
        BenchmarkSystem(
            name="ncl",
            description="Ablation: no continuous learning (no search, extraction, code retrieval or memories).",
            overrides={**_MEMORY_OFF, "continuous_learning": False},
        ),
        BenchmarkSystem(
            name="skills",
            description="Memory on: recalls and reuses skills learned from the earlier tasks of the run.",
            overrides={"use_memory": True, "learn": True, "triage_llm": False},
            learns=True,
        ),
        BenchmarkSystem(
            name="reference",
            description="The task's own reference solution, run in the same sandbox (validates harness and tasks).",
            reference=True,
            uses_llm=False,
        ),
    ]
}

DEFAULT_SYSTEMS = ["native", "deep", "skills"]


def resolve_systems(names: list[str]) -> list[BenchmarkSystem]:
    """The systems named, in order, or a ``ValueError`` naming the unknown ones and the choices."""
    unknown = [n for n in names if n not in SYSTEMS]
    if unknown:
        raise ValueError(f"unknown system(s) {', '.join(unknown)}; choose from {', '.join(SYSTEMS)}")
    if not names:
        raise ValueError(f"name at least one system: {', '.join(SYSTEMS)}")
    return [SYSTEMS[n] for n in dict.fromkeys(names)]
