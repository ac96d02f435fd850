"""Random generators: the packed one rescales the cell, MADE's keeps the lattice it draws."""

import numpy as np

from benchmarks.discovery.generators import GENERATORS, MadeRandomGenerator, RandomGenerator, packed_volume
from benchmarks.discovery.system import ChemicalSystem

SYSTEM = ChemicalSystem.parse("Cu-Ni-Pt", max_atoms=6)


def test_made_random_generator_keeps_the_drawn_lattice():
    target = {"Cu": 2, "Pt": 1}
    made = MadeRandomGenerator().generate(target, SYSTEM, [], np.random.default_rng(1))
    packed = RandomGenerator().generate(target, SYSTEM, [], np.random.default_rng(1))
    assert len(made) == len(packed) == 4
    assert all(s.composition.formula == "Cu2 Pt1" for s in made + packed)
    assert all(3.0 <= length <= 15.0 for s in made for length in s.lattice.abc)  # MADE's ranges, unscaled
    assert all(60.0 <= angle <= 120.0 for s in made for angle in s.lattice.angles)
    volume = packed_volume(["Cu", "Cu", "Pt"])
    assert all(0.9 * volume - 1e-6 <= s.volume <= 1.3 * volume + 1e-6 for s in packed)
    assert GENERATORS["made-random"] is MadeRandomGenerator and MadeRandomGenerator().name == "made-random"
