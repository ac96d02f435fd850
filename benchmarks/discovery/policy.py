"""Policies: a pipeline planner → generator → filters → selector, or the LLM orchestrator.

Named policies (``make_policy``):

| name | planner | generator | selector |
|---|---|---|---|
| random | random | random | random |
| diversity | diversity | random | random |
| ucb | ucb | random | random |
| substitution | random | prototype | random |
| surrogate | diversity | random | surrogate |
| llm | llm | prototype | llm |
| made-random | random | made-random (no rescaling), no filters, one candidate | random |
| orchestrator | the ReAct LLM orchestrator (``orchestrator.py``) | | |

Any ``planner:generator:selector`` triple also works, e.g. ``ucb:prototype:surrogate``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import numpy as np
from pymatgen.core import Structure

from benchmarks.discovery.filters import Filter, default_filters, first_rejection
from benchmarks.discovery.generators import Generator
from benchmarks.discovery.matching import StructureSet
from benchmarks.discovery.planners import Planner, RandomPlanner
from benchmarks.discovery.selectors import RandomSelector, Selector
from deployments.llm.transport import LLMError

if TYPE_CHECKING:
    from benchmarks.discovery.environment import DiscoveryEnvironment

__all__ = ["Policy", "PipelinePolicy", "NothingValid", "seen_structures"]


class NothingValid(RuntimeError):
    """The generator produced no candidate that passed the filters."""


class Policy(Protocol):
    name: str
    notes: list[str]

    def propose(self, env: DiscoveryEnvironment, rng: np.random.Generator) -> Structure: ...


def seen_structures(env: DiscoveryEnvironment) -> StructureSet:
    """The environment's seen structures plus those waiting in the batch (a copy the caller may add to)."""
    seen = env.seen.copy()
    for structure in env.pending:
        seen.add(structure)
    return seen


@dataclass
class PipelinePolicy:
    """planner → generator → filters → selector. LLM stages that fail fall back to random ones (noted)."""

    planner: Planner
    generator: Generator
    selector: Selector
    filters: list[Filter] = field(default_factory=default_filters)
    pool_size: int = 4
    max_tries: int = 30
    name: str = "pipeline"
    notes: list[str] = field(default_factory=list)
    rejected: dict[str, int] = field(default_factory=dict)

    def propose(self, env: DiscoveryEnvironment, rng: np.random.Generator) -> Structure:
        target = self._plan(env, rng)
        pool = self.candidates(env, target, rng)
        pick = self._select(pool, env, rng)
        chosen = pool[pick]
        chosen.properties["origin"] = chosen.properties.get("origin") or f"{self.generator.name} for {_formula(target)}"
        return chosen

    def candidates(self, env: DiscoveryEnvironment, target: dict[str, int], rng: np.random.Generator) -> list[Structure]:
        """Up to ``pool_size`` filtered candidates; ``NothingValid`` after ``max_tries`` generator calls give none."""
        seen = seen_structures(env)
        pool: list[Structure] = []
        known = env.known_structures + env.stable_structures()
        for _ in range(self.max_tries):
            fresh = self.generator.generate(target, env.system, known, rng)
            for structure in fresh:
                rejection = first_rejection(self.filters, structure, seen)
                if rejection is not None:
                    self.rejected[rejection[0]] = self.rejected.get(rejection[0], 0) + 1
                    continue
                pool.append(structure)
                seen.add(structure)
                if len(pool) == self.pool_size:
                    return pool
            if pool or not fresh:
                break
        if not pool:
            why = ", ".join(f"{k} rejected {v}" for k, v in sorted(self.rejected.items())) or "the generator returned nothing"
            raise NothingValid(f"no valid candidate for {_formula(target)} after {self.max_tries} tries ({why})")
        return pool

    def describe(self) -> str:
        """The pipeline in one line: stages, filters, pool."""
        filters = f"filters {', '.join(f.name for f in self.filters)}" if self.filters else "no filters"
        pick = "the first candidate" if self.pool_size == 1 else f"selector {self.selector.name} of up to {self.pool_size} candidates"
        return f"planner {self.planner.name} → generator {self.generator.name} → {filters} → {pick}"

    def _plan(self, env: DiscoveryEnvironment, rng: np.random.Generator) -> dict[str, int]:
        try:
            return self.planner.plan(env, rng)
        except (LLMError, ValueError) as exc:
            self.notes.append(f"query {len(env.records) + 1}: planner fell back to random ({exc})")
            return RandomPlanner().plan(env, rng)

    def _select(self, pool: list[Structure], env: DiscoveryEnvironment, rng: np.random.Generator) -> int:
        if len(pool) == 1:
            return 0
        try:
            return self.selector.select(pool, env, rng)
        except (LLMError, ValueError) as exc:
            self.notes.append(f"query {len(env.records) + 1}: selector fell back to random ({exc})")
            return RandomSelector().select(pool, env, rng)


def _formula(counts: dict[str, int]) -> str:
    return "".join(f"{el}{n if n > 1 else ''}" for el, n in sorted(counts.items()))


