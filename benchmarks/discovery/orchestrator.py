"""The ReAct LLM orchestrator: for each query, the model works a candidate buffer with tools until it selects one.

Tools (one per reply, ``OrchestratorAction``):

- ``generate(generator, n, composition)``: ``n`` filtered candidates from the random or prototype
  generator (composition optional: the planner's random choice otherwise);
- ``create(prototype, elements)``: one named prototype decorated with the given elements in label order;
- ``score_buffer()``: surrogate formation energies for the buffer (cheaper oracle, see ``selectors``);
- ``list_buffer()`` / ``query_buffer(index)``: the buffer one line per candidate / one candidate in full;
- ``select(index)``: spend the query on that candidate (ends the turn).

A reply that names no valid tool, or a turn that runs out of steps, falls back to the best-scored
(else the first) candidate, and the fallback is noted in the episode.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel, Field
from pymatgen.core import Structure

from benchmarks.discovery.filters import default_filters, first_rejection
from benchmarks.discovery.generators import (
    PROTOTYPES,
    PrototypeGenerator,
    RandomGenerator,
)
from benchmarks.discovery.planners import RandomPlanner
from benchmarks.discovery.policy import NothingValid, PipelinePolicy, seen_structures
from benchmarks.discovery.selectors import RandomSelector, SurrogateScorer
from benchmarks.discovery.summary import candidate_line, history_lines
from deployments.llm.transport import LLMError

if TYPE_CHECKING:
    from benchmarks.discovery.environment import DiscoveryEnvironment
    from deployments.llm.client import LLMClient

__all__ = ["OrchestratorAction", "OrchestratorPolicy"]

TOOLS = """generate(generator: "random"|"prototype", n: int = 3, composition: {element: count} | null)
create(prototype: str, elements: [str])  prototypes: """ + "; ".join(p.name for p in PROTOTYPES) + """
score_buffer()
list_buffer()
query_buffer(index: int)
select(index: int)"""


class OrchestratorAction(BaseModel):
    thought: str = ""
    tool: Literal["generate", "create", "score_buffer", "list_buffer", "query_buffer", "select"]
    generator: Literal["random", "prototype"] = "prototype"
    n: int = Field(default=3, ge=1, le=8)
    composition: dict[str, int] | None = None
    prototype: str | None = None
    elements: list[str] = Field(default_factory=list)
    index: int | None = None


@dataclass
class OrchestratorPolicy:
    llm: LLMClient
    max_steps: int = 8
    name: str = "orchestrator"
    notes: list[str] = field(default_factory=list)
    buffer: list[Structure] = field(default_factory=list)
    scores: dict[int, float] = field(default_factory=dict)
    _scorer: SurrogateScorer | None = None

    def propose(self, env: DiscoveryEnvironment, rng: np.random.Generator) -> Structure:
        self.buffer, self.scores = [], {}
        observations: list[str] = []
        for _ in range(self.max_steps):
            try:
                action = self.llm.structured(
                    "discover:orchestrator",
                    "You run a materials discovery campaign one query at a time. Use one tool per reply; end the turn with select.\n"
                    f"Tools:\n{TOOLS}",
                    f"System {env.system.name}, cells of {env.system.min_atoms}-{env.system.max_atoms} atoms, {env.remaining} queries left.\n"
                    f"Queries so far:\n{history_lines(env)}\n\nThis turn:\n" + ("\n".join(observations[-6:]) or "(nothing yet)"),
                    OrchestratorAction,
                )
            except LLMError as exc:
                self.notes.append(f"query {len(env.records) + 1}: orchestrator stopped ({exc})")
                break
            if action.tool == "select" and action.index is not None and 0 <= action.index < len(self.buffer):
                return self.buffer[action.index]
            observations.append(f"{action.tool} → {self._act(action, env, rng)}")
        return self._fallback(env, rng)

    def _act(self, action: OrchestratorAction, env: DiscoveryEnvironment, rng: np.random.Generator) -> str:
        try:
            if action.tool == "generate":
                return self._generate(action, env, rng)
            if action.tool == "create":
                return self._create(action, env)
            if action.tool == "score_buffer":
                self._scorer = self._scorer or SurrogateScorer.for_oracle(env.oracle)
                self.scores = dict(enumerate(self._scorer.scores(self.buffer, env)))
                return self._listing()
            if action.tool == "list_buffer":
                return self._listing()
            if action.tool == "query_buffer":
                structure = self.buffer[action.index or 0]
                return f"{candidate_line(action.index or 0, structure, self.scores.get(action.index or 0))}\n{structure}"
            return f"select needs an index 0-{len(self.buffer) - 1} of the buffer"
        except (ValueError, IndexError, KeyError, NothingValid) as exc:
            return f"error: {exc}"

    def _generate(self, action: OrchestratorAction, env: DiscoveryEnvironment, rng: np.random.Generator) -> str:
        generator = PrototypeGenerator() if action.generator == "prototype" else RandomGenerator()
        pipeline = PipelinePolicy(RandomPlanner(), generator, RandomSelector(), pool_size=action.n)
        target = action.composition or RandomPlanner().plan(env, rng)
        if set(target) - set(env.system.elements):
            raise ValueError(f"composition {target} has elements outside {env.system.name}")
        added = pipeline.candidates(env, target, rng)
        self.buffer.extend(added)
        return f"{len(added)} added\n{self._listing()}"

    def _create(self, action: OrchestratorAction, env: DiscoveryEnvironment) -> str:
        prototype = next((p for p in PROTOTYPES if p.name == action.prototype or p.name.split(" ")[0] == action.prototype), None)
        if prototype is None:
            raise ValueError(f"no prototype {action.prototype!r}")
        if len(action.elements) != len(prototype.labels) or set(action.elements) - set(env.system.elements):
            raise ValueError(f"{prototype.name} needs {len(prototype.labels)} elements of {env.system.name}")
        structure = prototype.build(dict(zip(prototype.labels, action.elements, strict=True)))
        structure.properties["origin"] = f"{prototype.name} {'/'.join(action.elements)}"
        rejection = first_rejection(default_filters(), structure, seen_structures(env))
        if rejection:
            raise ValueError(f"{structure.composition.reduced_formula} rejected: {rejection[1]}")
        if not env.system.min_atoms <= len(structure) <= env.system.max_atoms:
            raise ValueError(f"{len(structure)} atoms is outside {env.system.min_atoms}-{env.system.max_atoms}")
        self.buffer.append(structure)
        return f"added as {len(self.buffer) - 1}"

    def _listing(self) -> str:
        return "\n".join(candidate_line(i, s, self.scores.get(i)) for i, s in enumerate(self.buffer)) or "(buffer empty)"

    def _fallback(self, env: DiscoveryEnvironment, rng: np.random.Generator) -> Structure:
        if not self.buffer:
            self.notes.append(f"query {len(env.records) + 1}: orchestrator selected nothing; a random pipeline proposed")
            return PipelinePolicy(RandomPlanner(), RandomGenerator(), RandomSelector()).propose(env, rng)
        best = min(self.scores, key=self.scores.__getitem__) if self.scores else 0
        self.notes.append(f"query {len(env.records) + 1}: orchestrator did not select; took candidate {best}")
        return self.buffer[best]
