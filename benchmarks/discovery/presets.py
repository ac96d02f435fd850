"""The discovery campaign's named policies and baselines, by name only (no stage is imported here, so ``--help`` stays quick)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["PRESETS", "BASELINES", "BaselineName", "Baseline"]

PRESETS = {
    "random": ("random", "random", "random"),
    "diversity": ("diversity", "random", "random"),
    "ucb": ("ucb", "random", "random"),
    "substitution": ("random", "prototype", "random"),
    "surrogate": ("diversity", "random", "surrogate"),
    "llm": ("llm", "prototype", "llm"),
    "made-random": ("random", "made-random", "random"),
}

BaselineName = Literal["made", "filtered"]


@dataclass(frozen=True)
class Baseline:
    """What every AF and EF of a campaign compares with."""

    policy: str
    summary: str


BASELINES: dict[str, Baseline] = {
    "made": Baseline(
        policy="made-random",
        summary="MADE's random baseline: a uniformly random cell content, MADE's random generator "
        "(lattice lengths 3–15 Å, angles 60–120°, uniform positions, no rescaling), no filters, one structure per query",
    ),
    "filtered": Baseline(
        policy="random",
        summary="the filtered random pipeline: a uniformly random cell content, random lattices scaled to the atoms' packed volume, "
        "filters min distance 0.5 Å, SMACT and uniqueness, a random pick of up to 4 candidates (not MADE's comparator)",
    ),
}
