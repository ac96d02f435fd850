"""Oracles: relax a structure and return its energy per atom, behind one interface.

- ``emt``: ASE's EMT (Al, Cu, Ag, Au, Ni, Pd, Pt);
- ``lj``: a multi-element Lennard-Jones potential for any elements (MADE's analytic oracle);
- ``chgnet``: the CHGNet MLIP, whose pretrained weights ship in its PyPI package (``pip install chgnet``).

Relaxation is ASE FIRE on positions and cell (``UnitCellFilter``) to ``fmax`` 0.02 eV/Å in at
most 500 steps. A result that is not a finite energy, or a cell that blew up or collapsed, is a
failed query.

>>> from pymatgen.core import Lattice, Structure
>>> oracle = make_oracle("emt")
>>> result = oracle.evaluate(Structure(Lattice.cubic(3.0), ["Cu", "Ni"], [[0, 0, 0], [0.5, 0.5, 0.5]]))
>>> result.ok, round(result.energy_per_atom, 3) < 0.5
(True, True)
"""

from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
from ase import Atoms
from ase.calculators.calculator import Calculator, all_changes
from ase.filters import UnitCellFilter
from ase.neighborlist import neighbor_list
from ase.optimize import FIRE
from pydantic import BaseModel, Field
from pymatgen.core import Element, Structure
from pymatgen.io.ase import AseAtomsAdaptor

__all__ = ["OracleResult", "Oracle", "EMTOracle", "LJOracle", "CHGNetOracle", "OracleError", "make_oracle", "ORACLES", "UnsupportedElements"]

EMT_ELEMENTS = ("Ag", "Al", "Au", "Cu", "Ni", "Pd", "Pt")


class OracleError(RuntimeError):
    """The oracle cannot be used (unknown name, missing package)."""


class UnsupportedElements(ValueError):
    """The oracle has no parameters for some elements of the system."""


class OracleResult(BaseModel):
    """One relaxation: energy per atom of the relaxed cell, or why there is none."""

    ok: bool
    energy_per_atom: float | None = None
    relaxed: dict[str, Any] | None = Field(default=None, description="The relaxed pymatgen Structure, as_dict().")
    steps: int = 0
    converged: bool = False
    error: str | None = None
    wall_s: float = 0.0

    def structure(self) -> Structure | None:
        return Structure.from_dict(self.relaxed) if self.relaxed else None


@dataclass(frozen=True)
class Oracle(ABC):
    """Relaxes structures with one calculator. Subclasses say which elements they know and build the calculator."""

    name: str = "oracle"
    fmax: float = 0.02
    max_steps: int = 500
    surrogate: str | None = field(default=None, metadata={"doc": "a cheaper oracle to rank candidates for this one"})

    @abstractmethod
    def calculator(self) -> Calculator:
        """A fresh ASE calculator."""

    def unsupported(self, elements: list[str]) -> list[str]:
        """Elements this oracle has no parameters for."""
        return []

    def check(self, elements: list[str]) -> None:
        missing = self.unsupported(elements)
        if missing:
            raise UnsupportedElements(f"the {self.name} oracle does not know {', '.join(missing)}{self._known()}")

    def _known(self) -> str:
        return ""

    def evaluate(self, structure: Structure) -> OracleResult:
        """Relax ``structure``; never raises for a bad structure (the result says what went wrong)."""
        started = time.perf_counter()
        atoms = AseAtomsAdaptor.get_atoms(structure)
        atoms.calc = self.calculator()
        n_atoms = len(atoms)
        try:
            optimizer = FIRE(UnitCellFilter(atoms), logfile=None)
            converged = bool(optimizer.run(fmax=self.fmax, steps=self.max_steps))
            energy = float(atoms.get_potential_energy()) / n_atoms
            problem = _unphysical(atoms, energy)
        except Exception as exc:  # noqa: BLE001 - a failed relaxation is a recorded failed query
            return OracleResult(ok=False, error=f"relaxation failed: {type(exc).__name__}: {exc}"[:300], wall_s=time.perf_counter() - started)
        wall = time.perf_counter() - started
        if problem:
            return OracleResult(ok=False, steps=optimizer.nsteps, error=problem, wall_s=wall)
        relaxed = AseAtomsAdaptor.get_structure(atoms)
        return OracleResult(ok=True, energy_per_atom=energy, relaxed=relaxed.as_dict(), steps=optimizer.nsteps, converged=converged, wall_s=wall)


def _unphysical(atoms: Atoms, energy_per_atom: float) -> str | None:
    if not math.isfinite(energy_per_atom):
        return f"energy is {energy_per_atom}"
    volume = atoms.get_volume() / len(atoms)
    if not 2.0 <= volume <= 500.0:
        return f"relaxed volume {volume:.1f} Å^3/atom: the cell collapsed or blew up"
    return None


@dataclass(frozen=True)
class EMTOracle(Oracle):
    """ASE's effective-medium theory for the fcc metals it is fitted to."""

    name: str = "emt"
    surrogate: str | None = "lj"

    def calculator(self) -> Calculator:
        from ase.calculators.emt import EMT

        return EMT()

    def unsupported(self, elements: list[str]) -> list[str]:
        return [e for e in elements if e not in EMT_ELEMENTS]

    def _known(self) -> str:
        return f" (EMT knows {', '.join(EMT_ELEMENTS)}; use --oracle lj for any elements)"


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


@dataclass(frozen=True)
class LJOracle(Oracle):
    """The analytic oracle: multi-element Lennard-Jones (see ``lj_pair``); knows every element."""

    name: str = "lj"

    def calculator(self) -> Calculator:
        return MultiLennardJones()


@dataclass(frozen=True)
class CHGNetOracle(Oracle):
    """CHGNet (pretrained weights from its PyPI package); ranks candidates with EMT or LJ as a surrogate."""

    name: str = "chgnet"
    surrogate: str | None = "lj"

    def calculator(self) -> Calculator:
        try:
            from chgnet.model.dynamics import CHGNetCalculator
        except ImportError as exc:
            raise OracleError("the chgnet oracle needs the chgnet package: pip install 'evoskill[mlip]'") from exc
        return _chgnet_calculator(CHGNetCalculator)

    def unsupported(self, elements: list[str]) -> list[str]:
        return [e for e in elements if Element(e).Z > 94]


@lru_cache(maxsize=1)
def _chgnet_calculator(cls: Any) -> Calculator:
    return cls(use_device=None)  # GPU when there is one


ORACLES: dict[str, type[Oracle]] = {"emt": EMTOracle, "lj": LJOracle, "chgnet": CHGNetOracle}


def make_oracle(name: str, **options: Any) -> Oracle:
    """The oracle called ``name`` (emt, lj, chgnet)."""
    if name not in ORACLES:
        raise OracleError(f"unknown oracle {name!r}: use one of {', '.join(ORACLES)}")
    return ORACLES[name](**options)
