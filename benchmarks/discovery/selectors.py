"""Selectors: pick which of the filtered candidates spends the next oracle query.

- ``random``;
- ``surrogate``: relax each candidate with a cheaper oracle (the oracle's ``surrogate``, e.g. LJ for
  EMT or CHGNet; loose: fmax 0.1, 100 steps) and take the lowest surrogate formation energy;
- ``llm``: the model picks from a one-line-per-candidate list.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import numpy as np
from pydantic import BaseModel
from pymatgen.core import Structure

from benchmarks.discovery.hull import formation_energy_per_atom
from benchmarks.discovery.oracles import Oracle, make_oracle
from benchmarks.discovery.summary import candidate_line, history_lines
from benchmarks.discovery.system import cell_counts

if TYPE_CHECKING:
    from benchmarks.discovery.environment import DiscoveryEnvironment
    from deployments.llm.client import LLMClient

__all__ = ["Selector", "RandomSelector", "SurrogateSelector", "LLMSelector", "SurrogateScorer", "Choice", "SELECTORS"]


class Selector(Protocol):
    @property
    def name(self) -> str: ...

    def select(self, candidates: list[Structure], env: DiscoveryEnvironment, rng: np.random.Generator) -> int: ...


@dataclass(frozen=True)
class RandomSelector:
    name: str = "random"

    def select(self, candidates: list[Structure], env: DiscoveryEnvironment, rng: np.random.Generator) -> int:
        return int(rng.integers(len(candidates)))


@dataclass
class SurrogateScorer:
    """Formation energies from a cheap oracle, with that oracle's own elemental references."""

    oracle: Oracle
    _references: dict[str, float] = field(default_factory=dict)

    @classmethod
    def for_oracle(cls, oracle: Oracle) -> SurrogateScorer:
        return cls(make_oracle(oracle.surrogate or "lj", fmax=0.1, max_steps=100))

    def scores(self, candidates: list[Structure], env: DiscoveryEnvironment) -> list[float]:
        from benchmarks.discovery.environment import elemental_structures

        missing = [el for el in env.system.elements if el not in self._references]
        for el in missing:
            energies: list[float] = [r.energy_per_atom for r, _ in env.evaluator.evaluate(self.oracle, elemental_structures(el)) if r.ok]  # type: ignore[misc]  # ok results have an energy
            self._references[el] = min(energies) if energies else 0.0
        out = []
        for structure, (result, _) in zip(candidates, env.evaluator.evaluate(self.oracle, candidates), strict=True):
            out.append(formation_energy_per_atom(cell_counts(structure), result.energy_per_atom, self._references) if result.ok else float("inf"))  # type: ignore[arg-type]  # ok results have an energy
        return out


@dataclass
class SurrogateSelector:
    name: str = "surrogate"
    scorer: SurrogateScorer | None = None

    def select(self, candidates: list[Structure], env: DiscoveryEnvironment, rng: np.random.Generator) -> int:
        self.scorer = self.scorer or SurrogateScorer.for_oracle(env.oracle)
        scores = np.array(self.scorer.scores(candidates, env))
        return int(np.lexsort((rng.random(len(scores)), scores))[0])


class Choice(BaseModel):
    index: int
    reason: str = ""


@dataclass
class LLMSelector:
    """The model picks a candidate; an out-of-range pick raises ``ValueError`` (the policy falls back)."""

    llm: LLMClient
    name: str = "llm"

    def select(self, candidates: list[Structure], env: DiscoveryEnvironment, rng: np.random.Generator) -> int:
        listing = "\n".join(candidate_line(i, s) for i, s in enumerate(candidates))
        reply = self.llm.structured(
            "discover:selector",
            "You choose which candidate crystal to evaluate next in a materials discovery campaign: the one most likely "
            "to be stable and new.",
            f"System {env.system.name}. Queries so far:\n{history_lines(env)}\n\nCandidates:\n{listing}",
            Choice,
        )
        if not 0 <= reply.index < len(candidates):
            raise ValueError(f"the model chose candidate {reply.index} of {len(candidates)}")
        return reply.index


SELECTORS = {"random": RandomSelector, "surrogate": SurrogateSelector, "llm": LLMSelector}
