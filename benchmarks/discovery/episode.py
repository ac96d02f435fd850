"""One episode: a policy spends an environment's budget; the result is what the metrics read.

>>> from benchmarks.discovery.system import ChemicalSystem
>>> result = run_episode(EpisodeSpec(system=ChemicalSystem.parse("Cu-Ni", max_atoms=2), oracle="emt", policy="random", budget=2, seed=0))
>>> len(result.records), len(result.curve)
(2, 3)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel, Field
from pymatgen.core import Structure

from benchmarks.discovery.environment import DiscoveryEnvironment, QueryRecord
from benchmarks.discovery.evaluation import Evaluator
from benchmarks.discovery.groundtruth import TruthScore, score_episode
from benchmarks.discovery.oracles import make_oracle
from benchmarks.discovery.policy import NothingValid
from benchmarks.discovery.policy_factory import make_policy
from benchmarks.discovery.system import ChemicalSystem

if TYPE_CHECKING:
    from deployments.llm.client import LLMClient

__all__ = ["EpisodeSpec", "EpisodeResult", "run_episode"]


class EpisodeSpec(BaseModel):
    """Everything that determines an episode (with the seed, it is reproducible)."""

    system: ChemicalSystem
    oracle: str = "emt"
    policy: str = "random"
    budget: int = Field(default=50, ge=1)
    seed: int = 0
    epsilon: float = Field(default=0.1, ge=0.0)
    batch_size: int = Field(default=1, ge=1, description="Proposals per step, relaxed in parallel (see evaluation.episode_evaluator).")
    known: list[dict] = Field(default_factory=list, description="H0 beyond the elements: pymatgen Structure dicts.")
    held_out: list[dict] | None = Field(
        default=None, description="The ground-truth stable phases not in H0 (relaxed Structure dicts) that recall and precision count; "
        "None: no ground truth.",
    )  # fmt: skip


class EpisodeResult(BaseModel):
    spec: EpisodeSpec
    records: list[QueryRecord]
    curve: list[int] = Field(description="D(t) for t = 0..budget (flat after an early stop).")
    final_e_above_hull: list[float | None]
    stopped: str | None = Field(default=None, description="Why the episode ended before its budget, if it did.")
    notes: list[str] = Field(default_factory=list)
    references: dict[str, float]
    known_entries: list[dict] = Field(default_factory=list)
    wall_s: float = 0.0
    oracle_evaluations: int = 0
    cache_hits: int = 0
    llm_calls: int = 0
    truth: TruthScore | None = Field(default=None, description="Against the held-out ground-truth stable phases, if the spec has them.")

    @property
    def msun(self) -> float:
        """Fraction of the budget's queries that are stable (final hull), unique and novel."""
        return sum(r.sun for r in self.records) / self.spec.budget


def run_episode(
    spec: EpisodeSpec, evaluator: Evaluator | None = None, llm: LLMClient | None = None, progress: Callable[[QueryRecord], None] | None = None,
) -> EpisodeResult:
    """Run ``spec.policy`` until the budget is spent or it cannot propose anything valid."""
    started = time.perf_counter()
    evaluator = evaluator or Evaluator()
    first_evaluated, first_hits = evaluator.evaluated, evaluator.hits
    oracle = make_oracle(spec.oracle)
    env = DiscoveryEnvironment(spec.system, oracle, spec.budget, spec.epsilon, [Structure.from_dict(k) for k in spec.known], evaluator)
    policy = make_policy(spec.policy, llm)
    rng = np.random.default_rng(spec.seed)
    calls_before = len(llm.calls) if llm is not None else 0
    stopped = None
    while env.remaining and stopped is None:
        try:
            for _ in range(min(spec.batch_size, env.remaining)):
                env.pending.append(policy.propose(env, rng))
        except NothingValid as exc:
            stopped = f"stopped after {len(env.records)} queries: {exc}"
        batch, env.pending = env.pending, []
        if batch:
            for record in env.query(batch):
                if progress is not None:
                    progress(record)
    curve = env.curve + [env.curve[-1]] * (spec.budget + 1 - len(env.curve))
    truth = None
    if spec.held_out is not None:
        relaxed = [Structure.from_dict(r.relaxed) if r.relaxed else None for r in env.records]
        truth = score_episode(relaxed, [r.sun for r in env.records], [Structure.from_dict(d) for d in spec.held_out])
        truth.curve += [truth.curve[-1]] * (spec.budget + 1 - len(truth.curve))
    return EpisodeResult(
        spec=spec, records=env.records, curve=curve, final_e_above_hull=env.final_e_above_hull(), stopped=stopped,
        notes=list(policy.notes), references=env.references, known_entries=[e.model_dump() for e in env.known_entries],
        wall_s=time.perf_counter() - started, oracle_evaluations=evaluator.evaluated - first_evaluated,
        cache_hits=evaluator.hits - first_hits, llm_calls=(len(llm.calls) - calls_before) if llm is not None else 0, truth=truth,
    )  # fmt: skip
