"""MADE's analytic oracle: a multi-element Lennard-Jones potential with per-pair parameters for any elements.

The pair minimum sits at the sum of the two metallic radii, the depth follows the melting points, and
unlike pairs bind more strongly with their electronegativity difference (``lj_pair``).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np
from ase import Atoms
from ase.calculators.calculator import Calculator, all_changes
from ase.neighborlist import neighbor_list
from pymatgen.core import Element

__all__ = ["MultiLennardJones", "lj_pair", "lj_parameters"]


@lru_cache(maxsize=128)
def lj_parameters(element: str) -> tuple[float, float]:
    """(sigma Å, epsilon eV) for one element: the pair minimum at twice the atomic radius; depth from the melting point.

    The depth follows the Lindemann-like rule epsilon ≈ k_B T_melt / 0.7 (clipped to 0.02–1 eV), so
    refractory elements bind more strongly than alkali metals.
    """
    el = Element(element)
    radius = float(el.metallic_radius or el.atomic_radius or 1.5)
    melting = float(el.melting_point or 1000.0)
    epsilon = min(max(8.617e-5 * melting / 0.7, 0.02), 1.0)
    return 2.0 * radius / 2 ** (1 / 6), epsilon


def lj_pair(a: str, b: str) -> tuple[float, float]:
    """Mixed parameters: Lorentz sigma; Berthelot epsilon deepened by electronegativity difference, so compounds can form."""
    (sa, ea), (sb, eb) = lj_parameters(a), lj_parameters(b)
    if a == b:
        return sa, ea
    chi = abs(float(Element(a).X or 1.5) - float(Element(b).X or 1.5))
    return (sa + sb) / 2, math.sqrt(ea * eb) * (1.0 + chi)


class MultiLennardJones(Calculator):
    """Lennard-Jones with per-pair parameters (``lj_pair``), smoothly shifted to zero at 2.5 sigma."""

    implemented_properties = ["energy", "free_energy", "forces", "stress"]

    def calculate(self, atoms: Atoms | None = None, properties: Any = None, system_changes: Any = all_changes) -> None:
        super().calculate(atoms, properties, system_changes)
        assert self.atoms is not None  # Calculator.calculate has just set it
        symbols = self.atoms.get_chemical_symbols()
        kinds = sorted(set(symbols))
        index = np.array([kinds.index(s) for s in symbols])
        sigma = np.zeros((len(kinds), len(kinds)))
        epsilon = np.zeros_like(sigma)
        for i, a in enumerate(kinds):
            for j, b in enumerate(kinds):
                sigma[i, j], epsilon[i, j] = lj_pair(a, b)
        cutoff = 2.5 * float(sigma.max())
        first, second, distance, vector = neighbor_list("ijdD", self.atoms, cutoff)
        s = sigma[index[first], index[second]]
        e = epsilon[index[first], index[second]]
        rc = 2.5 * s
        inside = distance < rc
        first, distance, vector, s, e, rc = (x[inside] for x in (first, distance, vector, s, e, rc))  # forces need only the first atom
        sr6 = (s / distance) ** 6
        src6 = (s / rc) ** 6
        pair_energy = 4 * e * (sr6**2 - sr6) - 4 * e * (src6**2 - src6)
        # dE/dr, with the force shift that makes the force vanish at the cutoff too.
        de_dr = 4 * e * (-12 * sr6**2 + 6 * sr6) / distance - 4 * e * (-12 * src6**2 + 6 * src6) / rc
        pair_energy -= (distance - rc) * 4 * e * (-12 * src6**2 + 6 * src6) / rc
        pair_force = (de_dr / distance)[:, None] * vector  # gradient wrt the second atom's position
        forces = np.zeros((len(self.atoms), 3))
        np.add.at(forces, first, pair_force)  # each pair appears twice in the list, once per atom
        virial = -0.5 * np.einsum("ni,nj->ij", pair_force, vector)
        volume = self.atoms.get_volume()
        stress = -virial / volume
        energy = 0.5 * float(pair_energy.sum())
        self.results = {
            "energy": energy, "free_energy": energy, "forces": forces,
            "stress": stress.flat[[0, 4, 8, 5, 2, 1]],
        }  # fmt: skip
