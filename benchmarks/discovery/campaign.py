"""A campaign: policies × episodes on one environment, summarised against a random baseline.

Per policy: mean ± s.e.m. over episodes of AUDC and mSUN; AF(1) and EF(B) on the mean curves
(policy vs baseline); diversity of the proposals (mean composition L1, unique compositions,
unique space groups, per episode, averaged). The baseline is MADE's unfiltered random generator
unless ``baseline="filtered"``; ``conventions`` states it and the AF/EF edge cases for the report.
With a ground truth, each episode's H0 holds a seeded ``known_fraction`` of its stable phases (episode
i of every policy the same ones), and recall, precision and hit rate against the held-out rest are
averaged too (``truth_table``).
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
from pydantic import BaseModel, Field

from benchmarks.discovery.episode import EpisodeResult, EpisodeSpec
from benchmarks.discovery.groundtruth import GroundTruth, TruthSettings
from benchmarks.discovery.metrics import (
    EF_CAP,
    acceleration_factor,
    audc,
    enhancement_factor,
    mean_composition_distance,
    mean_sem,
)
from benchmarks.discovery.policy import PipelinePolicy
from benchmarks.discovery.policy_factory import BASELINES, BaselineName, make_policy
from benchmarks.discovery.system import ChemicalSystem, normalised

__all__ = ["CampaignSpec", "PolicyMetrics", "summarise", "markdown_table", "truth_table", "conventions"]


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
    baseline: BaselineName = Field(default="made", description="made: MADE's unfiltered random generator; filtered: the filtered random preset.")

    @property
    def baseline_policy(self) -> str:
        """The policy every AF and EF compares with (``made-random`` or ``random``)."""
        return BASELINES[self.baseline].policy

    @property
    def all_policies(self) -> list[str]:
        """The policies with the baseline first (always run: every metric compares with it)."""
        return [self.baseline_policy] + [p for p in self.policies if p != self.baseline_policy]

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
    baseline: bool = Field(default=False, description="This policy is the campaign's baseline.")
    af: float | None = Field(description="AF(1) on the mean curves; None if the policy's mean curve never reaches 1.")
    af_lower_bound: bool = Field(default=False, description="The baseline's mean curve never reaches 1: af = B/t_policy(1) < the true AF.")
    ef: float | None = Field(description=f"EF(B) on the mean curves, capped at {EF_CAP:g}; None if neither found anything.")
    ef_capped: bool = Field(default=False, description="ef is the cap, a lower bound (the baseline found nothing, or the ratio exceeds it).")
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


def summarise(results: list[EpisodeResult], baseline_policy: str = BASELINES["made"].policy) -> list[PolicyMetrics]:
    """Metrics per policy (the baseline first), from finished episodes."""
    by_policy: dict[str, list[EpisodeResult]] = {}
    for result in results:
        by_policy.setdefault(result.spec.policy, []).append(result)
    if baseline_policy not in by_policy:
        raise ValueError(f"the campaign has no episodes of its baseline {baseline_policy!r} to compare with")
    baseline = np.mean([r.curve for r in by_policy[baseline_policy]], axis=0)
    out = []
    for policy in [baseline_policy, *(p for p in by_policy if p != baseline_policy)]:
        episodes = by_policy[policy]
        curves = np.array([r.curve for r in episodes], dtype=float)
        mean_curve = curves.mean(0)
        sem_curve = curves.std(0, ddof=1) / np.sqrt(len(curves)) if len(curves) > 1 else np.zeros_like(mean_curve)
        a, a_sem = mean_sem([audc(c) for c in curves])
        m, m_sem = mean_sem([r.msun for r in episodes])
        diversity = np.array([_diversity(r) for r in episodes], dtype=float).mean(0)
        af, ef = acceleration_factor(baseline, mean_curve, 1), enhancement_factor(baseline, mean_curve)
        out.append(PolicyMetrics(
            policy=policy, episodes=len(episodes), audc=a, audc_sem=a_sem, msun=m, msun_sem=m_sem, baseline=policy == baseline_policy,
            af=af.value if af else None, af_lower_bound=af is not None and af.lower_bound,
            ef=ef.value if ef else None, ef_capped=ef is not None and ef.lower_bound,
            discoveries=float(mean_curve[-1]), composition_l1=float(diversity[0]), unique_compositions=float(diversity[1]),
            unique_spacegroups=float(diversity[2]), failed_queries=float(np.mean([sum(not r.ok for r in e.records) for e in episodes])),
            mean_curve=mean_curve.round(4).tolist(), sem_curve=sem_curve.round(4).tolist(),
            stopped=[r.stopped for r in episodes if r.stopped], **_truth(episodes),
        ))  # fmt: skip
    return out


def _num(value: float | None, digits: int = 2, bound: bool = False) -> str:
    return "—" if value is None else f"{'≥ ' if bound else ''}{value:.{digits}f}"


def conventions(spec: CampaignSpec) -> str:
    """The report's "Conventions" section: the baseline's pipeline, AF and EF with their edge cases."""
    chosen = BASELINES[spec.baseline]
    policy = make_policy(chosen.policy)
    assert isinstance(policy, PipelinePolicy)  # the baselines are pipelines without an LLM
    system = spec.system
    return "\n".join([
        "## Conventions",
        "",
        f"- **Baseline** `{spec.baseline}` (policy `{chosen.policy}`): {chosen.summary}. Pipeline: {policy.describe()}; "
        f"cells of {system.min_atoms}–{system.max_atoms} atoms of {system.name} (`--max-atoms`), the same bounds as every policy. "
        f"Every AF and EF compares with its mean curve (`--baseline` {' or '.join(BASELINES)}).",
        "- **AF(1)** = t_baseline(1) / t_policy(1), t(k) the first query where the mean curve D(t) ≥ k. "
        "Baseline never reaching 1 within B: `≥ B/t_policy(1)`, a lower bound (it needs more than B queries; MADE's code gives 0). "
        "Policy never reaching 1: — (MADE's code gives 0).",
        f"- **EF(B)** = D_policy(B) / D_baseline(B), capped at {EF_CAP:g} as in MADE: `≥ {EF_CAP:g}` when the baseline found nothing "
        "and the policy did (or the ratio exceeds the cap); — when neither found anything.",
        "- `≥ x`: a lower bound; —: undefined.",
    ])  # fmt: skip


def markdown_table(metrics: list[PolicyMetrics]) -> str:
    """One row per policy; the baseline row is marked, lower bounds read ``≥ x`` (see ``conventions``)."""
    lines = [
        "| policy | AF(1) | EF(B) | AUDC | mSUN | D(B) | comp. L1 | unique comps | unique SGs | failed |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for m in metrics:
        lines.append(
            f"| {m.policy}{' (baseline)' if m.baseline else ''} | {_num(m.af, bound=m.af_lower_bound)} | {_num(m.ef, bound=m.ef_capped)} | {m.audc:.3f} ± {m.audc_sem:.3f} | {m.msun:.3f} ± {m.msun_sem:.3f} | "
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
