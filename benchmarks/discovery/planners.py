"""Planners: choose the cell content (composition) the next proposal should have.

- ``random``: uniform over the system's compositions;
- ``diversity``: the composition farthest (L1, atom fractions) from everything known or tried,
  plus ``exploration`` × uniform noise;
- ``ucb``: a kernel UCB bandit over compositions; reward exp(−e_above_hull/ε), 0 for a failed query;
- ``llm``: the model names a composition, validated against the system.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
from pydantic import BaseModel, Field

from benchmarks.discovery.system import Counts, l1_distances, normalised

if TYPE_CHECKING:
    from benchmarks.discovery.environment import DiscoveryEnvironment
    from deployments.llm.client import LLMClient

__all__ = ["Planner", "RandomPlanner", "DiversityPlanner", "UCBPlanner", "LLMPlanner", "PlannedComposition", "PLANNERS"]


class Planner(Protocol):
    @property
    def name(self) -> str: ...

    def plan(self, env: DiscoveryEnvironment, rng: np.random.Generator) -> Counts: ...


@dataclass(frozen=True)
class RandomPlanner:
    name: str = "random"

    def plan(self, env: DiscoveryEnvironment, rng: np.random.Generator) -> Counts:
        options = env.system.compositions()
        return options[int(rng.integers(len(options)))]


def _fractions(env: DiscoveryEnvironment, counts: list[Counts]) -> np.ndarray:
    return np.array([normalised(c, env.system.elements) for c in counts]).reshape(len(counts), len(env.system.elements))


@dataclass(frozen=True)
class DiversityPlanner:
    name: str = "diversity"
    exploration: float = 0.1

    def plan(self, env: DiscoveryEnvironment, rng: np.random.Generator) -> Counts:
        options = env.system.compositions()
        tried = [e.counts for e in env.known_entries] + [r.counts for r in env.records]
        distance = l1_distances(_fractions(env, options), _fractions(env, tried)).min(1)
        score = distance + self.exploration * rng.random(len(options))
        return options[int(np.argmax(score))]


@dataclass(frozen=True)
class UCBPlanner:
    name: str = "ucb"
    kappa: float = 1.0
    length: float = 0.25

    def plan(self, env: DiscoveryEnvironment, rng: np.random.Generator) -> Counts:
        options = env.system.compositions()
        if not env.records:
            return options[int(rng.integers(len(options)))]
        x = _fractions(env, options)
        tried = _fractions(env, [r.counts for r in env.records])
        reward = np.array([math.exp(-max(r.e_above_hull or 0.0, 0.0) / env.epsilon) if r.ok else 0.0 for r in env.records])
        kernel = np.exp(-(l1_distances(x, tried) / self.length) ** 2)
        weight = kernel.sum(1)
        mean = (kernel @ reward + 0.5) / (weight + 1.0)  # prior: reward 0.5 worth one observation
        bonus = self.kappa * np.sqrt(math.log(len(env.records) + 1) / (1.0 + weight))
        score = mean + bonus + 1e-9 * rng.random(len(options))
        return options[int(np.argmax(score))]


class PlannedComposition(BaseModel):
    counts: dict[str, int] = Field(description="Atoms of each element in the cell, e.g. {\"Cu\": 3, \"Pt\": 1}.")
    reason: str = ""


@dataclass
class LLMPlanner:
    """Asks the model for the next composition; an invalid one raises ``ValueError`` (the policy falls back)."""

    llm: LLMClient
    name: str = "llm"

    def plan(self, env: DiscoveryEnvironment, rng: np.random.Generator) -> Counts:
        from benchmarks.discovery.summary import history_lines

        system = env.system
        reply = self.llm.structured(
            "discover:planner",
            "You plan a materials discovery campaign. Propose the composition of the next crystal to try: one likely to be "
            "thermodynamically stable and not yet explored.",
            f"System {system.name}, cells of {system.min_atoms}-{system.max_atoms} atoms, at least two elements.\n"
            f"Queries so far (formula, formation energy eV/atom, e above hull):\n{history_lines(env)}",
            PlannedComposition,
        )
        counts = {el: n for el, n in reply.counts.items() if n > 0}
        if set(counts) - set(system.elements) or len(counts) < 2 or not system.min_atoms <= sum(counts.values()) <= system.max_atoms:
            raise ValueError(f"the model planned {counts}, which is not a {system.name} cell of {system.min_atoms}-{system.max_atoms} atoms")
        return counts


PLANNERS = {"random": RandomPlanner, "diversity": DiversityPlanner, "ucb": UCBPlanner, "llm": LLMPlanner}
