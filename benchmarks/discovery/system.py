"""A chemical system to search: its elements and how many atoms a cell may hold.

>>> system = ChemicalSystem.parse("Cu-Ni-Pt", max_atoms=4)
>>> system.name, len(system.compositions())
('Cu-Ni-Pt', 22)
>>> ChemicalSystem.parse("made:ternary:0").name
'Mg-Sn-Sr'
"""

from __future__ import annotations

import itertools
import json
from functools import lru_cache
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pymatgen.core import Element, Structure

__all__ = ["ChemicalSystem", "Counts", "made_systems", "normalised", "cell_counts", "l1_distances"]

Counts = dict[str, int]
_MADE = Path(__file__).parent / "data"


def made_systems(kind: str) -> list[list[str]]:
    """MADE's system lists: ``ternary``, ``quaternary`` or ``quinary`` (10 intermetallic systems each)."""
    path = _MADE / f"made_{kind}.json"
    if not path.exists():
        raise ValueError(f"no MADE system list {kind!r}: use ternary, quaternary or quinary")
    return json.loads(path.read_text())


def normalised(counts: Counts, elements: list[str]) -> tuple[float, ...]:
    """A composition as atom fractions in the order of ``elements``."""
    total = sum(counts.values())
    return tuple(counts.get(e, 0) / total for e in elements)


def cell_counts(structure: Structure) -> Counts:
    """Atoms of each element in a cell: ``{"Cu": 3, "Pt": 1}``."""
    return {el.symbol: int(n) for el, n in structure.composition.items()}


def l1_distances(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """L1 distance between every row of ``a`` and every row of ``b`` (compositions as atom fractions)."""
    return np.abs(np.asarray(a, dtype=float)[:, None, :] - np.asarray(b, dtype=float)[None, :, :]).sum(-1)


class ChemicalSystem(BaseModel):
    """Elements (2–6, sorted) and the atoms per cell a proposal may have."""

    model_config = ConfigDict(frozen=True)

    elements: list[str] = Field(min_length=2, max_length=6)
    max_atoms: int = Field(default=8, ge=2, le=40, description="Most atoms in a proposed cell.")
    min_atoms: int = Field(default=2, ge=1, description="Fewest atoms in a proposed cell.")

    @field_validator("elements")
    @classmethod
    def _real_elements(cls, elements: list[str]) -> list[str]:
        for symbol in elements:
            if not Element.is_valid_symbol(symbol):
                raise ValueError(f"{symbol!r} is not an element")
        if len(set(elements)) != len(elements):
            raise ValueError(f"an element is repeated in {'-'.join(elements)}")
        return sorted(elements)

    @model_validator(mode="after")
    def _bounds_possible(self) -> ChemicalSystem:
        if self.min_atoms > self.max_atoms:
            raise ValueError(f"min_atoms={self.min_atoms} > max_atoms={self.max_atoms}: no cell fits these bounds")
        return self

    @classmethod
    def parse(cls, text: str, **bounds: int) -> ChemicalSystem:
        """``"Cu-Ni-Pt"`` or ``"made:ternary:3"`` (the fourth of MADE's ternary systems)."""
        if text.startswith("made:"):
            try:
                _, kind, index = text.split(":")
                elements = made_systems(kind)[int(index)]
            except (ValueError, IndexError) as exc:
                raise ValueError(f"{text!r}: write made:KIND:INDEX with INDEX 0-9 ({exc})") from exc
        else:
            elements = [part.strip() for part in text.replace(",", "-").split("-") if part.strip()]
        return cls(elements=elements, **bounds)

    @property
    def name(self) -> str:
        return "-".join(self.elements)

    def compositions(self) -> list[Counts]:
        """Every cell content with at least two of the elements and ``min_atoms``–``max_atoms`` atoms."""
        return [dict(c) for c in _compositions(tuple(self.elements), self.min_atoms, self.max_atoms)]


@lru_cache(maxsize=64)
def _compositions(elements: tuple[str, ...], min_atoms: int, max_atoms: int) -> list[Counts]:
    found = []
    for split in itertools.product(range(max_atoms + 1), repeat=len(elements)):
        if max(min_atoms, 2) <= sum(split) <= max_atoms and sum(1 for n in split if n) >= 2:
            found.append({e: n for e, n in zip(elements, split, strict=True) if n})
    return sorted(found, key=lambda c: (sum(c.values()), sorted(c.items())))
