"""Filters: cheap checks that drop a candidate before it costs an oracle query.

Each filter returns ``None`` to keep a candidate, or the reason it is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import numpy as np
from pymatgen.core import Structure

from benchmarks.discovery.matching import StructureSet

__all__ = ["Filter", "MinDistanceFilter", "SmactFilter", "UniquenessFilter", "default_filters", "first_rejection"]


class Filter(Protocol):
    @property
    def name(self) -> str: ...

    def reject(self, structure: Structure, seen: StructureSet) -> str | None: ...


@dataclass(frozen=True)
class MinDistanceFilter:
    """No two atoms (periodic images included) closer than ``min_distance`` Å."""

    name: str = "min_distance"
    min_distance: float = 0.5

    def reject(self, structure: Structure, seen: StructureSet) -> str | None:
        closest = min(structure.lattice.abc)
        if len(structure) > 1:
            d = structure.distance_matrix
            closest = min(closest, float(d[~np.eye(len(structure), dtype=bool)].min()))
        return f"atoms {closest:.2f} Å apart" if closest < self.min_distance else None


@lru_cache(maxsize=4096)
def _smact_valid(formula: str) -> bool:
    from smact.screening import smact_validity

    return bool(smact_validity(formula, use_pauling_test=True, include_alloys=True))


@dataclass(frozen=True)
class SmactFilter:
    """SMACT charge-neutrality and electronegativity screening (all-metal compositions pass as alloys)."""

    name: str = "smact"

    def reject(self, structure: Structure, seen: StructureSet) -> str | None:
        formula = structure.composition.reduced_formula
        return None if _smact_valid(formula) else f"{formula} fails SMACT screening"


@dataclass(frozen=True)
class UniquenessFilter:
    """Not the same structure (StructureMatcher) as one already known, proposed or found."""

    name: str = "unique"

    def reject(self, structure: Structure, seen: StructureSet) -> str | None:
        return "already seen" if structure in seen else None


def default_filters() -> list[Filter]:
    return [MinDistanceFilter(), SmactFilter(), UniquenessFilter()]


def first_rejection(filters: list[Filter], structure: Structure, seen: StructureSet) -> tuple[str, str] | None:
    """``(filter name, reason)`` of the first filter that drops ``structure``, or None when all keep it."""
    for candidate_filter in filters:
        reason = candidate_filter.reject(structure, seen)
        if reason:
            return candidate_filter.name, reason
    return None
