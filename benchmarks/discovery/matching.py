"""Structure identity: the same crystal up to translation, rotation, cell choice and volume.

``StructureMatcher`` on primitive cells (ltol 0.2, stol 0.3, angle_tol 5°), tried only between
structures of the same reduced formula; a structure's key also serves as its cache hash.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
from pymatgen.analysis.structure_matcher import StructureMatcher
from pymatgen.core import Structure

__all__ = ["MATCHER", "StructureSet", "structure_hash"]

MATCHER = StructureMatcher(ltol=0.2, stol=0.3, angle_tol=5, primitive_cell=True, scale=True, attempt_supercell=False)


def structure_hash(structure: Structure, salt: str = "") -> str:
    """A hash of the exact cell (lattice and fractional positions rounded to 1e-5) — the oracle cache key."""
    order = np.lexsort(np.round(structure.frac_coords % 1.0, 5).T[::-1])
    sites = [[structure[i].specie.symbol, *np.round(structure.frac_coords[i] % 1.0, 5).tolist()] for i in order]
    text = json.dumps([salt, np.round(structure.lattice.matrix, 5).tolist(), sites])
    return hashlib.sha256(text.encode()).hexdigest()[:24]


class StructureSet:
    """Structures seen so far, grouped by reduced formula, answering "have we seen this one?"."""

    def __init__(self, structures: list[Structure] | None = None):
        self._by_formula: dict[str, list[Structure]] = {}
        for structure in structures or []:
            self.add(structure)

    def add(self, structure: Structure) -> None:
        self._by_formula.setdefault(structure.composition.reduced_formula, []).append(structure)

    def __contains__(self, structure: Structure) -> bool:
        return any(MATCHER.fit(structure, seen) for seen in self._by_formula.get(structure.composition.reduced_formula, []))

    def copy(self) -> StructureSet:
        """A set that starts with these structures; adding to it leaves this one as it is."""
        out = StructureSet()
        out._by_formula = {formula: list(group) for formula, group in self._by_formula.items()}
        return out

    def __len__(self) -> int:
        return sum(len(group) for group in self._by_formula.values())
