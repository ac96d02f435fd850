"""Discovery metrics on curves D(t), t = 0..B (D(0) = 0): how many stable, unique, novel finds after t queries.

AF and EF return a ``Factor``: the value, and whether it is only a lower bound (shown ``≥ value``).

>>> audc([0, 1, 2])          # every query a discovery: the ideal curve
1.0
>>> acceleration_factor([0, 0, 1, 1, 2], [0, 1, 2, 2, 2], k=2)   # baseline needs 4 queries for 2 finds, policy 2
Factor(value=2.0, lower_bound=False)
>>> str(acceleration_factor([0, 0, 0, 0, 0], [0, 1, 2, 2, 2], k=1))  # baseline never gets there: it needs > 4
'≥ 4.00'
>>> enhancement_factor([0, 0, 1, 1, 2], [0, 1, 2, 2, 2], t=4)
Factor(value=1.0, lower_bound=False)
>>> str(enhancement_factor([0, 0, 0], [0, 1, 2]))   # the baseline found nothing: MADE's cap
'≥ 100.00'
>>> str(spread([Factor(value=2.0), Factor(value=4.0, lower_bound=True), None]))  # over paired episodes
'≥ 3.00 ± 1.00 (2/3)'
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from benchmarks.discovery.system import l1_distances

__all__ = [
    "EF_CAP", "Factor", "FactorSpread", "spread", "audc", "first_reach", "acceleration_factor", "enhancement_factor", "mean_composition_distance", "mean_sem",
]  # fmt: skip

EF_CAP = 100.0  # MADE's cap on EF (its enhancement_factor(cap=100.0))


class Factor(BaseModel):
    """An AF or EF value; ``lower_bound``: the true factor is at least ``value`` (it could not be measured within the budget)."""

    model_config = ConfigDict(frozen=True)

    value: float
    lower_bound: bool = False

    def __str__(self) -> str:
        return f"{'≥ ' if self.lower_bound else ''}{self.value:.2f}"


class FactorSpread(BaseModel):
    """AF or EF over paired episodes (episode i of the policy against episode i of the baseline): mean ± s.e.m. of
    the episodes where it is defined. ``lower_bound``: some of them are lower bounds, so the mean is one too."""

    model_config = ConfigDict(frozen=True)

    mean: float | None
    sem: float | None
    defined: int = Field(description="Episodes with a value (the rest: the policy never got there).")
    episodes: int
    lower_bound: bool = False
    values: list[float | None] = Field(default_factory=list, description="Per episode.")

    def __str__(self) -> str:
        if self.mean is None:
            return f"— (0/{self.episodes})"
        return f"{'≥ ' if self.lower_bound else ''}{self.mean:.2f} ± {self.sem or 0.0:.2f} ({self.defined}/{self.episodes})"


def spread(factors: Sequence[Factor | None]) -> FactorSpread:
    """Mean ± s.e.m. of per-episode factors; None entries (undefined) are counted, not averaged."""
    known = [f for f in factors if f is not None]
    mean, sem = mean_sem([f.value for f in known]) if known else (None, None)
    return FactorSpread(
        mean=mean, sem=sem, defined=len(known), episodes=len(factors), lower_bound=any(f.lower_bound for f in known),
        values=[None if f is None else f.value for f in factors],
    )  # fmt: skip


def _check_curve(curve: Sequence[float], name: str) -> None:
    if len(curve) < 2:
        raise ValueError(f"the {name} curve needs D(0) and at least one query (got {len(curve)} points)")
    if curve[0] != 0:
        raise ValueError(f"the {name} curve must start at D(0) = 0 (got {curve[0]})")


def audc(curve: Sequence[float]) -> float:
    """Area under the discovery curve, 2/B² ∫₀^B D(t) dt (trapezoids); 1.0 when every query is a discovery."""
    budget = len(curve) - 1
    if budget < 1:
        raise ValueError("a discovery curve needs D(0) and at least one query")
    values = np.asarray(curve, dtype=float)
    area = float(((values[1:] + values[:-1]) / 2).sum())
    return 2.0 * area / budget**2


def first_reach(curve: Sequence[float], k: float) -> int | None:
    """The first t with D(t) ≥ k, or None if the curve never gets there."""
    return next((t for t, d in enumerate(curve) if d >= k), None)


def acceleration_factor(baseline: Sequence[float], policy: Sequence[float], k: float = 1) -> Factor | None:
    """AF(k) = t_baseline(k) / t_policy(k), t(k) the first query with D(t) ≥ k.

    Edge cases: the policy never reaches k → None (no time to compare; MADE's code returns 0.0, which
    would read as "infinitely slower"); the baseline never reaches k within its budget B but the policy
    does → ``Factor(B / t_policy(k), lower_bound=True)``: the baseline needs more than B queries, so
    AF > B / t_policy(k) (MADE's code returns 0.0 here too). ``k`` must be positive, and both curves
    start at D(0) = 0 (so t(k) ≥ 1); the curves may have different budgets.
    """
    if not k > 0:
        raise ValueError(f"AF(k) needs k > 0 discoveries (got k={k}): every curve has D(0) = 0 ≥ k at t = 0")
    _check_curve(baseline, "baseline")
    _check_curve(policy, "policy")
    t_policy, t_baseline = first_reach(policy, k), first_reach(baseline, k)
    if t_policy is None:
        return None
    if t_baseline is None:
        return Factor(value=(len(baseline) - 1) / t_policy, lower_bound=True)
    return Factor(value=t_baseline / t_policy)


def enhancement_factor(baseline: Sequence[float], policy: Sequence[float], t: int | None = None, cap: float = EF_CAP) -> Factor | None:
    """EF(t) = D_policy(t) / D_baseline(t) (default t = the policy's budget B), capped at ``cap`` (MADE's 100).

    A capped value is a lower bound: the baseline found nothing by t while the policy did → ``cap``,
    flagged; neither found anything → None (0/0; MADE's code returns 0.0). ``t`` must lie within both
    curves: a baseline run with a shorter budget than the policy cannot be compared at the policy's B.
    """
    _check_curve(baseline, "baseline")
    _check_curve(policy, "policy")
    t = len(policy) - 1 if t is None else t
    if not 0 <= t < len(policy):
        raise ValueError(f"EF(t) needs 0 ≤ t ≤ {len(policy) - 1}, the policy's budget (got t={t})")
    if t >= len(baseline):
        raise ValueError(f"EF(t={t}): the baseline's curve covers only {len(baseline) - 1} queries; run it with a budget of at least {t}")
    if not cap > 0:
        raise ValueError(f"the EF cap must be positive (got {cap})")
    found, reference = float(policy[t]), float(baseline[t])
    if reference <= 0:
        return Factor(value=cap, lower_bound=True) if found > 0 else None
    ratio = found / reference
    return Factor(value=cap, lower_bound=True) if ratio > cap else Factor(value=ratio)


def mean_composition_distance(fractions: Sequence[Sequence[float]]) -> float:
    """Mean L1 distance between every pair of compositions (atom fractions); 0 for fewer than two."""
    if len(fractions) < 2:
        return 0.0
    upper = np.triu_indices(len(fractions), 1)
    return float(l1_distances(fractions, fractions)[upper].mean())


def mean_sem(values: Sequence[float]) -> tuple[float, float]:
    """Mean and standard error of the mean (0 for one value)."""
    x = np.asarray(values, dtype=float)
    if len(x) == 0:
        return float("nan"), float("nan")
    return float(x.mean()), float(x.std(ddof=1) / np.sqrt(len(x))) if len(x) > 1 else 0.0
