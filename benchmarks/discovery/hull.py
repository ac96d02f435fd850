"""Formation energies and distances to the convex hull, with pymatgen's ``PhaseDiagram``.

>>> formation_energy_per_atom({"Li": 1, "Na": 1}, -2.0, {"Li": -1.0, "Na": -2.0})
-0.5
>>> entries = [HullEntry(counts={"Li": 1}, energy_per_atom=-1.0), HullEntry(counts={"Na": 1}, energy_per_atom=-2.0),
...            HullEntry(counts={"Li": 1, "Na": 1}, energy_per_atom=-1.6)]
>>> [round(e, 3) for e in energies_above_hull(entries)]
[0.0, 0.0, 0.0]
>>> [round(e, 3) for e in distances_to(entries[:2], [HullEntry(counts={"Li": 1, "Na": 1}, energy_per_atom=-1.4)])]
[0.1]
"""

from __future__ import annotations

from pydantic import BaseModel
from pymatgen.analysis.phase_diagram import PDEntry, PhaseDiagram
from pymatgen.core import Composition

from benchmarks.discovery.system import Counts

__all__ = ["HullEntry", "formation_energy_per_atom", "phase_diagram", "energies_above_hull", "distances_to"]


class HullEntry(BaseModel):
    """A cell's content and its energy per atom (total, as the oracle gives it)."""

    counts: Counts
    energy_per_atom: float

    def pd_entry(self, name: str = "") -> PDEntry:
        composition = Composition(self.counts)
        return PDEntry(composition, self.energy_per_atom * composition.num_atoms, name=name or composition.reduced_formula)


def formation_energy_per_atom(counts: Counts, energy_per_atom: float, references: dict[str, float]) -> float:
    """Energy per atom relative to the elemental references (energy per atom of each element's ground state)."""
    total = sum(counts.values())
    return energy_per_atom - sum(n * references[el] for el, n in counts.items()) / total


def phase_diagram(entries: list[HullEntry]) -> PhaseDiagram:
    """The phase diagram of these entries (they must include every element alone)."""
    return PhaseDiagram([entry.pd_entry() for entry in entries])


def energies_above_hull(entries: list[HullEntry]) -> list[float]:
    """Each entry's energy above the hull of all of them (eV/atom; 0 on the hull, never negative)."""
    diagram = PhaseDiagram(pd_entries := [entry.pd_entry() for entry in entries])
    return [max(float(diagram.get_e_above_hull(e, allow_negative=True)), 0.0) for e in pd_entries]  # type: ignore[arg-type]  # None only with on_error="ignore"


def distances_to(hull: list[HullEntry], entries: list[HullEntry]) -> list[float]:
    """Each entry's energy above a fixed hull (eV/atom; 0 on or below it): the entries are judged, not added."""
    diagram = phase_diagram(hull)
    return [max(float(diagram.get_e_above_hull(e.pd_entry(), allow_negative=True)), 0.0) for e in entries]  # type: ignore[arg-type]  # None only with on_error="ignore"
