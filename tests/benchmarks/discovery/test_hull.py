"""Formation energies and energies above the hull, checked against pymatgen directly for a hand-made binary."""

import pytest
from pymatgen.analysis.phase_diagram import PDEntry, PhaseDiagram
from pymatgen.core import Composition

from benchmarks.discovery.hull import (
    HullEntry,
    energies_above_hull,
    formation_energy_per_atom,
)


def test_binary_hull_matches_pymatgen_and_hand_values():
    # Cu at -3.0 and Ni at -4.0 eV/atom; CuNi at -3.8 eV/atom (E_f -0.3) is the only compound on the hull.
    entries = [
        HullEntry(counts={"Cu": 1}, energy_per_atom=-3.0),
        HullEntry(counts={"Ni": 1}, energy_per_atom=-4.0),
        HullEntry(counts={"Cu": 1, "Ni": 1}, energy_per_atom=-3.8),
        HullEntry(counts={"Cu": 2, "Ni": 1}, energy_per_atom=-3.2),
        HullEntry(counts={"Cu": 1, "Ni": 3}, energy_per_atom=-3.6),
    ]
    refs = {"Cu": -3.0, "Ni": -4.0}
    assert formation_energy_per_atom({"Cu": 1, "Ni": 1}, -3.8, refs) == pytest.approx(-0.3)
    assert formation_energy_per_atom({"Cu": 2, "Ni": 1}, -3.2, refs) == pytest.approx(-3.2 + 10 / 3)
    ours = energies_above_hull(entries)
    diagram = PhaseDiagram([PDEntry(Composition(e.counts), e.energy_per_atom * sum(e.counts.values())) for e in entries])
    theirs = [diagram.get_e_above_hull(PDEntry(Composition(e.counts), e.energy_per_atom * sum(e.counts.values()))) for e in entries]
    assert ours == pytest.approx(theirs, abs=1e-9)
    # By hand: Cu2Ni (x_Ni = 1/3) against the Cu–CuNi line: E = -3.0 + (1/3)/(1/2) * (-0.8) = -3.5333 → 0.3333 above.
    # CuNi3 (x_Ni = 3/4) against CuNi–Ni: E = -3.8 + 0.5 * (-0.2) = -3.9 → 0.3 above.
    assert ours == pytest.approx([0.0, 0.0, 0.0, 1 / 3, 0.3], abs=1e-9)
