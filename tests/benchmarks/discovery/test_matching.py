"""Uniqueness: a translated, rotated or re-celled copy is the same structure; a different decoration is not."""

from pymatgen.core import Lattice, Structure
from pymatgen.core.operations import SymmOp

from benchmarks.discovery.filters import (
    MinDistanceFilter,
    SmactFilter,
    UniquenessFilter,
)
from benchmarks.discovery.matching import StructureSet, structure_hash


def _cu3pt() -> Structure:
    return Structure(Lattice.cubic(3.7), ["Pt", "Cu", "Cu", "Cu"], [[0, 0, 0], [0, 0.5, 0.5], [0.5, 0, 0.5], [0.5, 0.5, 0]])


def test_translated_rotated_supercell_copy_is_rejected():
    original = _cu3pt()
    copy = original.copy()
    copy.translate_sites(list(range(len(copy))), [0.13, 0.27, 0.61])
    copy.apply_operation(SymmOp.from_axis_angle_and_translation([1, 2, 3], 37.0))
    copy.make_supercell([2, 1, 1])
    seen = StructureSet([original])
    assert copy in seen
    assert UniquenessFilter().reject(copy, seen) == "already seen"
    assert structure_hash(copy) != structure_hash(original)  # the cache key is the exact cell, not the class


def test_other_decoration_or_composition_is_new():
    seen = StructureSet([_cu3pt()])
    swapped = _cu3pt()
    swapped.replace_species({"Cu": "Ni"})
    b2 = Structure(Lattice.cubic(3.0), ["Cu", "Pt"], [[0, 0, 0], [0.5, 0.5, 0.5]])
    assert swapped not in seen and b2 not in seen
    assert UniquenessFilter().reject(b2, seen) is None


def test_min_distance_and_smact_filters():
    close = Structure(Lattice.cubic(4.0), ["Cu", "Ni"], [[0, 0, 0], [0.05, 0, 0]])
    assert "apart" in MinDistanceFilter().reject(close, StructureSet())
    assert MinDistanceFilter().reject(_cu3pt(), StructureSet()) is None
    assert SmactFilter().reject(_cu3pt(), StructureSet()) is None  # an all-metal alloy passes
    nacl2 = Structure(Lattice.cubic(5.0), ["Na", "Cl", "Cl"], [[0, 0, 0], [0.5, 0.5, 0.5], [0.25, 0.25, 0.25]])
    assert "SMACT" in SmactFilter().reject(nacl2, StructureSet())
