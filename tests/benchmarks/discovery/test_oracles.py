"""The multi-element Lennard-Jones oracle: forces and stress agree with finite differences of its energy."""

import numpy as np
from ase.build import bulk

from benchmarks.discovery.oracles import MultiLennardJones, lj_pair


def test_lj_forces_and_stress_match_finite_differences():
    atoms = bulk("Cu", "fcc", a=3.6, cubic=True)
    atoms[1].symbol, atoms[2].symbol = "Ni", "Pt"
    atoms.rattle(0.05, seed=1)
    atoms.set_cell(atoms.cell * [[1, 0.02, 0], [0, 0.98, 0], [0, 0, 1.03]], scale_atoms=True)
    atoms.calc = MultiLennardJones()
    forces, stress = atoms.get_forces(), atoms.get_stress()
    assert np.abs(forces).max() > 0.1  # a rattled cell has real forces to compare
    np.testing.assert_allclose(forces, atoms.calc.calculate_numerical_forces(atoms, d=1e-5), atol=1e-6)
    np.testing.assert_allclose(stress, atoms.calc.calculate_numerical_stress(atoms, d=1e-6), atol=1e-6)


def test_unlike_pairs_bind_more_strongly_than_their_mean():
    (_, cu), (_, pt), (_, cupt) = lj_pair("Cu", "Cu"), lj_pair("Pt", "Pt"), lj_pair("Cu", "Pt")
    assert cupt > np.sqrt(cu * pt)
