"""Discovery metrics on curves D(t), t = 0..B (D(0) = 0): how many stable, unique, novel finds after t queries.

>>> audc([0, 1, 2])          # every query a discovery: the ideal curve
1.0
>>> acceleration_factor([0, 0, 1, 1, 2], [0, 1, 2, 2, 2], k=2)   # baseline needs 4 queries for 2 finds, policy 2
2.0
>>> enhancement_factor([0, 0, 1, 1, 2], [0, 1, 2, 2, 2], t=4)
1.0
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from benchmarks.discovery.system import l1_distances

__all__ = ["audc", "first_reach", "acceleration_factor", "enhancement_factor", "mean_composition_distance", "mean_sem"]


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


def acceleration_factor(baseline: Sequence[float], policy: Sequence[float], k: float = 1) -> float | None:
    """AF(k) = t_baseline(k) / t_policy(k).

    Edge cases: the policy never reaches k → None (no acceleration to speak of); the baseline never
    reaches k but the policy does → B (MADE's convention: as if the baseline needed the whole budget
    for one step).
    """
    budget = len(policy) - 1
    t_policy, t_baseline = first_reach(policy, k), first_reach(baseline, k)
    if t_policy is None:
        return None
    if t_baseline is None:
        return float(budget)
    return t_baseline / t_policy


def enhancement_factor(baseline: Sequence[float], policy: Sequence[float], t: int | None = None) -> float | None:
    """EF(t) = D_policy(t) / D_baseline(t) (default t = B); None when the baseline found nothing by t."""
    t = len(policy) - 1 if t is None else t
    if baseline[t] <= 0:
        return None
    return float(policy[t]) / float(baseline[t])


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
