"""A campaign: policies × episodes on one environment, summarised against the random baseline.

Per policy: mean ± s.e.m. over episodes of AUDC and mSUN; AF(1) and EF(B) on the mean curves
(policy vs baseline); diversity of the proposals (mean composition L1, unique compositions,
unique space groups, per episode, averaged). With a ground truth, each episode's H0 holds a seeded
``known_fraction`` of its stable phases (episode i of every policy the same ones), and recall,
precision and hit rate against the held-out rest are averaged too (``truth_table``).
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
from pydantic import BaseModel, Field

from benchmarks.discovery.episode import EpisodeResult, EpisodeSpec
from benchmarks.discovery.groundtruth import GroundTruth, TruthSettings
from benchmarks.discovery.metrics import (
    acceleration_factor,
    audc,
    enhancement_factor,
    mean_composition_distance,
    mean_sem,
)
from benchmarks.discovery.system import ChemicalSystem, normalised

__all__ = ["CampaignSpec", "PolicyMetrics", "summarise", "markdown_table", "truth_table", "BASELINE"]

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
    known_fraction: float = Field(default=0.5, ge=0.0, le=1.0, description="Share of the ground-truth stable phases put in H0.")
    truth_atoms: int = Field(default=4, ge=0, le=8, description="Most atoms in the ground truth's derivative supercells; 0: no ground truth.")

    @property
    def truth_settings(self) -> TruthSettings | None:
        """The ground truth's enumeration (cells no bigger than a proposal may be), or None without one."""
        if not self.truth_atoms:
            return None
        return TruthSettings(supercell_atoms=min(self.truth_atoms, self.system.max_atoms), prototype_atoms=self.system.max_atoms)

    @property
    def all_policies(self) -> list[str]:
        """The policies with the random baseline first (always run: every metric compares with it)."""
        return [BASELINE] + [p for p in self.policies if p != BASELINE]

    def episode_specs(self, truth: GroundTruth | None = None) -> list[tuple[int, EpisodeSpec]]:
        """``(i, spec)`` for episode i of every policy; episode i uses seed + i (and, with ``truth``, its split of H0)."""
        h0: list[list[dict]] = [[] for _ in range(self.episodes)]
        held_out: list[list[dict] | None] = [None] * self.episodes
        for i in range(self.episodes if truth else 0):
            known, rest = truth.split(self.known_fraction, self.seed + i)  # type: ignore[union-attr]  # only with a truth
            h0[i], held_out[i] = [k.start or {} for k in known], [h.relaxed or {} for h in rest]
        return [
            (i, EpisodeSpec(system=self.system, oracle=self.oracle, policy=p, budget=self.budget, seed=self.seed + i,
                            epsilon=self.epsilon, batch_size=self.batch_size, known=h0[i], held_out=held_out[i]))
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
    held_out: float | None = Field(default=None, description="Mean held-out ground-truth stable phases per episode.")
    recall: float | None = Field(default=None, description="Held-out ground-truth stable phases found / held out (mean over episodes).")
    recall_sem: float | None = None
    precision: float | None = Field(default=None, description="Discoveries that are held-out ground-truth stable phases / discoveries.")
    precision_sem: float | None = None
    hit_rate: float | None = Field(default=None, description="Held-out ground-truth stable phases found / queries.")
    hit_rate_sem: float | None = None
    truth_curve: list[float] = Field(default_factory=list, description="Mean held-out phases found after t queries.")
    truth_sem_curve: list[float] = Field(default_factory=list)


def _diversity(result: EpisodeResult) -> tuple[float, int, int]:
    done = [r for r in result.records if r.ok]
    elements = result.spec.system.elements
    fractions = [normalised(r.counts, elements) for r in done]
    return mean_composition_distance(fractions), len({r.formula for r in done}), len({r.spacegroup for r in done if r.spacegroup})


def _truth(episodes: list[EpisodeResult]) -> dict:
    """Ground-truth fields of ``PolicyMetrics``: means ± s.e.m. over the episodes that have a value."""
    scores = [e.truth for e in episodes if e.truth is not None]
    if not scores:
        return {}
    out: dict = {"held_out": float(np.mean([s.held_out for s in scores]))}
    for name in ("recall", "precision", "hit_rate"):
        values = [v for s in scores if (v := getattr(s, name)) is not None]
        out[name], out[f"{name}_sem"] = mean_sem(values) if values else (None, None)
    curves = np.array([s.curve for s in scores], dtype=float)
    out["truth_curve"] = curves.mean(0).round(4).tolist()
    out["truth_sem_curve"] = (curves.std(0, ddof=1) / np.sqrt(len(curves)) if len(curves) > 1 else np.zeros(curves.shape[1])).round(4).tolist()
    return out


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
            stopped=[r.stopped for r in episodes if r.stopped], **_truth(episodes),
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


def _pm(value: float | None, sem: float | None) -> str:
    return "—" if value is None else f"{value:.2f} ± {sem or 0.0:.2f}"


def truth_table(metrics: list[PolicyMetrics]) -> str:
    """Recall, precision and hit rate against the held-out ground-truth stable phases ('' without a ground truth)."""
    if all(m.held_out is None for m in metrics):
        return ""
    lines = ["| policy | held out | recall | precision | GT hit rate |", "|---|---|---|---|---|"]
    for m in metrics:
        lines.append(f"| {m.policy} | {_num(m.held_out, 1)} | {_pm(m.recall, m.recall_sem)} | {_pm(m.precision, m.precision_sem)} | "
                     f"{_pm(m.hit_rate, m.hit_rate_sem)} |")  # fmt: skip
    return "\n".join(lines)
