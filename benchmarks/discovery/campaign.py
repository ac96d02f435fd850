"""A campaign: policies × episodes on one environment, summarised against the random baseline.

Per policy: mean ± s.e.m. over episodes of AUDC and mSUN; AF(1) and EF(B) on the mean curves
(policy vs baseline); diversity of the proposals (mean composition L1, unique compositions,
unique space groups, per episode, averaged).
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
from pydantic import BaseModel, Field

from benchmarks.discovery.episode import EpisodeResult, EpisodeSpec
from benchmarks.discovery.metrics import (
    acceleration_factor,
    audc,
    enhancement_factor,
    mean_composition_distance,
    mean_sem,
)
from benchmarks.discovery.system import ChemicalSystem, normalised

__all__ = ["CampaignSpec", "PolicyMetrics", "summarise", "markdown_table", "BASELINE"]

BASELINE = "random"


class CampaignSpec(BaseModel):
    system: ChemicalSystem
    oracle: str = "emt"
    policies: list[str] = Field(min_length=1)
    budget: int = Field(default=50, ge=1)
    episodes: int = Field(default=5, ge=1)
    seed: int = 0
    epsilon: float = Field(default=0.1, ge=0.0)
    batch_size: int = Field(default=1, ge=1)

    @property
    def all_policies(self) -> list[str]:
        """The policies with the random baseline first (always run: every metric compares with it)."""
        return [BASELINE] + [p for p in self.policies if p != BASELINE]

    def episode_specs(self) -> list[tuple[int, EpisodeSpec]]:
        """``(i, spec)`` for episode i of every policy; episode i uses seed + i."""
        return [
            (i, EpisodeSpec(system=self.system, oracle=self.oracle, policy=p, budget=self.budget, seed=self.seed + i,
                            epsilon=self.epsilon, batch_size=self.batch_size))
            for p in self.all_policies for i in range(self.episodes)
        ]  # fmt: skip

    def campaign_id(self) -> str:
        text = json.dumps(self.model_dump(mode="json"), sort_keys=True)
        return f"{self.system.name}-{self.oracle}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"


class PolicyMetrics(BaseModel):
    policy: str
    episodes: int
    audc: float
    audc_sem: float
    msun: float
    msun_sem: float
    af: float | None = Field(description="AF(1) on the mean curves; None if the policy's mean curve never reaches 1.")
    ef: float | None = Field(description="EF(B) on the mean curves; None if the baseline found nothing.")
    discoveries: float = Field(description="Mean D(B).")
    composition_l1: float
    unique_compositions: float
    unique_spacegroups: float
    failed_queries: float
    mean_curve: list[float]
    sem_curve: list[float]
    stopped: list[str] = Field(default_factory=list)


def _diversity(result: EpisodeResult) -> tuple[float, int, int]:
    done = [r for r in result.records if r.ok]
    elements = result.spec.system.elements
    fractions = [normalised(r.counts, elements) for r in done]
    return mean_composition_distance(fractions), len({r.formula for r in done}), len({r.spacegroup for r in done if r.spacegroup})


def summarise(results: list[EpisodeResult]) -> list[PolicyMetrics]:
    """Metrics per policy (baseline first), from finished episodes."""
    by_policy: dict[str, list[EpisodeResult]] = {}
    for result in results:
        by_policy.setdefault(result.spec.policy, []).append(result)
    if BASELINE not in by_policy:
        raise ValueError("the campaign has no random-baseline episodes to compare with")
    baseline = np.mean([r.curve for r in by_policy[BASELINE]], axis=0)
    out = []
    for policy, episodes in by_policy.items():
        curves = np.array([r.curve for r in episodes], dtype=float)
        mean_curve = curves.mean(0)
        sem_curve = curves.std(0, ddof=1) / np.sqrt(len(curves)) if len(curves) > 1 else np.zeros_like(mean_curve)
        a, a_sem = mean_sem([audc(c) for c in curves])
        m, m_sem = mean_sem([r.msun for r in episodes])
        diversity = np.array([_diversity(r) for r in episodes], dtype=float).mean(0)
        out.append(PolicyMetrics(
            policy=policy, episodes=len(episodes), audc=a, audc_sem=a_sem, msun=m, msun_sem=m_sem,
            af=acceleration_factor(baseline, mean_curve, 1), ef=enhancement_factor(baseline, mean_curve),
            discoveries=float(mean_curve[-1]), composition_l1=float(diversity[0]), unique_compositions=float(diversity[1]),
            unique_spacegroups=float(diversity[2]), failed_queries=float(np.mean([sum(not r.ok for r in e.records) for e in episodes])),
            mean_curve=mean_curve.round(4).tolist(), sem_curve=sem_curve.round(4).tolist(),
            stopped=[r.stopped for r in episodes if r.stopped],
        ))  # fmt: skip
    return out


def _num(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def markdown_table(metrics: list[PolicyMetrics]) -> str:
    lines = [
        "| policy | AF(1) | EF(B) | AUDC | mSUN | D(B) | comp. L1 | unique comps | unique SGs | failed |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for m in metrics:
        lines.append(
            f"| {m.policy} | {_num(m.af)} | {_num(m.ef)} | {m.audc:.3f} ± {m.audc_sem:.3f} | {m.msun:.3f} ± {m.msun_sem:.3f} | "
            f"{m.discoveries:.1f} | {m.composition_l1:.2f} | {m.unique_compositions:.1f} | {m.unique_spacegroups:.1f} | {m.failed_queries:.1f} |"
        )
    return "\n".join(lines)
