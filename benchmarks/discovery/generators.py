"""Generators: turn a target cell content into candidate structures.

- ``RandomGenerator``: lattice lengths 3–15 Å, angles 60–120°, uniform fractional positions; the cell
  is then scaled to the atoms' packed volume (sum of metallic-radius spheres / 0.68, ×0.9–1.3) so that
  relaxations start near a sensible density.
- ``MadeRandomGenerator`` (``made-random``): MADE's random generator, the same lattices and positions
  without the rescaling (the campaigns' default baseline uses it, unfiltered).
- ``PrototypeGenerator``: known structure types (B2, L1₂, L1₀, Laves C15, A15, Heusler, …) decorated
  with the system's elements, plus element substitutions of known or found structures.

>>> import numpy as np
>>> from benchmarks.discovery.system import ChemicalSystem
>>> system = ChemicalSystem.parse("Cu-Ni-Pt", max_atoms=6)
>>> s = RandomGenerator().generate({"Cu": 2, "Ni": 1}, system, [], np.random.default_rng(0))[0]
>>> s.composition.formula
'Cu2 Ni1'
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import numpy as np
from pymatgen.core import Element, Lattice, Structure

from benchmarks.discovery.system import (
    ChemicalSystem,
    Counts,
    cell_counts,
    l1_distances,
    normalised,
)

__all__ = ["Generator", "RandomGenerator", "MadeRandomGenerator", "PrototypeGenerator", "PROTOTYPES", "packed_volume", "substitutions", "GENERATORS"]


class Generator(Protocol):
    @property
    def name(self) -> str: ...

    def generate(self, target: Counts, system: ChemicalSystem, known: list[Structure], rng: np.random.Generator) -> list[Structure]:
        """Candidates for ``target`` (a cell content), best first; ``known``: structures to learn from (H0, stable finds)."""


def _radius(symbol: str) -> float:
    el = Element(symbol)
    return float(el.metallic_radius or el.atomic_radius or 1.5)


def packed_volume(symbols: list[str]) -> float:
    """Volume of the atoms as spheres at bcc packing (Å³)."""
    return sum(4 / 3 * math.pi * _radius(s) ** 3 for s in symbols) / 0.68


@dataclass(frozen=True)
class RandomGenerator:
    """Random lattices and positions for exactly the target content (``packed``: cell scaled to the packed volume)."""

    name: str = "random"
    per_call: int = 4
    packed: bool = True

    def generate(self, target: Counts, system: ChemicalSystem, known: list[Structure], rng: np.random.Generator) -> list[Structure]:
        species = [el for el, n in sorted(target.items()) for _ in range(n)]
        out = []
        for _ in range(self.per_call * 5):
            lengths = rng.uniform(3.0, 15.0, 3)
            angles = rng.uniform(60.0, 120.0, 3)
            try:
                lattice = Lattice.from_parameters(*lengths, *angles)
            except ValueError:
                continue
            if not np.isfinite(lattice.volume) or lattice.volume < 1.0:
                continue  # angles that do not close a cell
            if self.packed:
                lattice = lattice.scale(packed_volume(species) * rng.uniform(0.9, 1.3))
                if min(lattice.abc) < 1.5:
                    continue
            out.append(Structure(lattice, species, rng.uniform(0.0, 1.0, (len(species), 3))))
            if len(out) == self.per_call:
                break
        return out


@dataclass(frozen=True)
class MadeRandomGenerator(RandomGenerator):
    """MADE's random generator: lengths 3–15 Å, angles 60–120°, uniform positions, the cell as drawn (no rescaling)."""

    name: str = "made-random"
    packed: bool = False


@dataclass(frozen=True)
class Prototype:
    """A structure type: space group, c/a (and b/a), and Wyckoff sites per label (A, B, C, D)."""

    name: str
    spacegroup: str
    sites: tuple[tuple[str, tuple[float, float, float]], ...]
    system: str = "cubic"
    c_over_a: float = 1.0

    @property
    def labels(self) -> list[str]:
        return sorted({label for label, _ in self.sites})

    def build(self, decoration: dict[str, str]) -> Structure:
        """The primitive cell with each label replaced by an element, scaled to the atoms' packed volume."""
        structure = _placeholder_cell(self).copy()
        structure.replace_species({_PLACEHOLDERS[label]: decoration[label] for label in self.labels})
        return structure.scale_lattice(packed_volume([site.specie.symbol for site in structure]))

    def placeholder_cell(self) -> Structure:
        a = 4.0
        if self.system == "cubic":
            lattice = Lattice.cubic(a)
        elif self.system == "tetragonal":
            lattice = Lattice.tetragonal(a, a * self.c_over_a)
        else:
            lattice = Lattice.hexagonal(a, a * self.c_over_a)
        species = [_PLACEHOLDERS[label] for label, _ in self.sites]
        coords = [xyz for _, xyz in self.sites]
        return Structure.from_spacegroup(self.spacegroup, lattice, species, coords).get_primitive_structure()


_PLACEHOLDERS = {"A": "H", "B": "He", "C": "Li", "D": "Be"}


@lru_cache(maxsize=32)
def _placeholder_cell(prototype: Prototype) -> Structure:
    return prototype.placeholder_cell()


PROTOTYPES: tuple[Prototype, ...] = (
    Prototype("B2 (CsCl)", "Pm-3m", (("A", (0, 0, 0)), ("B", (0.5, 0.5, 0.5)))),
    Prototype("L1_2 (Cu3Au)", "Pm-3m", (("A", (0, 0, 0)), ("B", (0, 0.5, 0.5)))),
    Prototype("L1_0 (CuAu)", "P4/mmm", (("A", (0, 0, 0)), ("B", (0.5, 0.5, 0.5))), "tetragonal", 1.35),
    Prototype("B1 (NaCl)", "Fm-3m", (("A", (0, 0, 0)), ("B", (0.5, 0.5, 0.5)))),
    Prototype("C1 (CaF2)", "Fm-3m", (("A", (0, 0, 0)), ("B", (0.25, 0.25, 0.25)))),
    Prototype("C15 Laves (MgCu2)", "Fd-3m", (("A", (0.125, 0.125, 0.125)), ("B", (0.5, 0.5, 0.5)))),
    Prototype("A15 (Cr3Si)", "Pm-3n", (("A", (0, 0, 0)), ("B", (0.25, 0, 0.5)))),
    Prototype("C32 (AlB2)", "P6/mmm", (("A", (0, 0, 0)), ("B", (1 / 3, 2 / 3, 0.5))), "hexagonal", 1.1),
    Prototype("C11b (MoSi2)", "I4/mmm", (("A", (0, 0, 0)), ("B", (0, 0, 1 / 3))), "tetragonal", 3.3),
    Prototype("D0_19 (Ni3Sn)", "P6_3/mmc", (("A", (1 / 3, 2 / 3, 0.25)), ("B", (5 / 6, 2 / 3, 0.25))), "hexagonal", 0.8),
    Prototype("C1_b half-Heusler (MgAgAs)", "F-43m", (("A", (0, 0, 0)), ("B", (0.5, 0.5, 0.5)), ("C", (0.25, 0.25, 0.25)))),
    Prototype("L2_1 Heusler (Cu2MnAl)", "Fm-3m", (("A", (0.25, 0.25, 0.25)), ("B", (0, 0, 0)), ("C", (0.5, 0.5, 0.5)))),
    Prototype("E2_1 perovskite (CaTiO3)", "Pm-3m", (("A", (0, 0, 0)), ("B", (0.5, 0.5, 0.5)), ("C", (0, 0.5, 0.5)))),
    Prototype("Y quaternary Heusler (LiMgPdSn)", "F-43m",
              (("A", (0, 0, 0)), ("B", (0.5, 0.5, 0.5)), ("C", (0.25, 0.25, 0.25)), ("D", (0.75, 0.75, 0.75)))),
)  # fmt: skip


@lru_cache(maxsize=16)
def _decorated(elements: tuple[str, ...]) -> tuple[Structure, ...]:
    out = []
    for prototype in PROTOTYPES:
        for chosen in itertools.permutations(elements, len(prototype.labels)):
            structure = prototype.build(dict(zip(prototype.labels, chosen, strict=True)))
            structure.properties["origin"] = f"{prototype.name} {'/'.join(chosen)}"
            out.append(structure)
    return tuple(out)


def substitutions(structure: Structure, elements: list[str]) -> list[Structure]:
    """``structure`` with one element replaced by another of ``elements`` (or two swapped), rescaled to the new atoms."""
    present = sorted({site.specie.symbol for site in structure})
    out = []
    for old, new in itertools.product(present, elements):
        if new == old:
            continue
        swapped = structure.copy()
        swapped.replace_species({old: new} if new not in present else {old: new, new: old})
        swapped = swapped.scale_lattice(packed_volume([site.specie.symbol for site in swapped]))
        swapped.properties["origin"] = f"{structure.composition.reduced_formula} with {old}→{new}"
        out.append(swapped)
    return out


@dataclass(frozen=True)
class PrototypeGenerator:
    """Decorated prototypes and substituted known structures, the nearest to the target composition first."""

    name: str = "prototype"

    def candidates(self, system: ChemicalSystem, known: list[Structure]) -> list[Structure]:
        """Every decoration of every prototype, and every substitution of ``known``, that fits the cell bounds."""
        out = [s.copy() for s in _decorated(tuple(system.elements))]
        for structure in known:
            if len(structure.composition) >= 2:
                out.extend(substitutions(structure, system.elements))
        return [s for s in out if system.min_atoms <= len(s) <= system.max_atoms and len(s.composition) >= 2]

    def generate(self, target: Counts, system: ChemicalSystem, known: list[Structure], rng: np.random.Generator) -> list[Structure]:
        pool = self.candidates(system, known)
        goal = normalised(target, system.elements)
        distance = l1_distances([normalised(cell_counts(s), system.elements) for s in pool], [goal])[:, 0] if pool else np.zeros(0)
        order = np.lexsort((rng.random(len(pool)), np.round(distance, 6)))
        return [pool[i] for i in order]


GENERATORS: dict[str, type] = {"random": RandomGenerator, "made-random": MadeRandomGenerator, "prototype": PrototypeGenerator}
