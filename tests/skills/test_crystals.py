"""A crystal stated as ``Structure.from_spacegroup`` takes it: read from prose and code, read from a script, checked as a value."""

import ast

import pytest

from skills.crystals import crystal_probes, crystal_problem, lattice_problem, script_crystal, stated_crystal
from tests.starter import rocksalt

CAF2 = {"space_group": "Fm-3m", "species": ["Ca", "F"], "coords": [[0.0, 0.0, 0.0], [0.25, 0.25, 0.25]]}
SRTIO3 = {"space_group": "Pm-3m", "species": ["Sr", "Ti", "O"], "coords": [[0.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, 0.5, 0.0]]}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Fluorite (CaF2), Fm-3m, a = 5.463 Å, Ca at (0, 0, 0) and F at (1/4, 1/4, 1/4): how many sites?", CAF2),
        ("CaF2 (Fm-3m; calcium at [0,0,0], fluorine at [0.25, 0.25, 0.25])", CAF2),
        ("SrTiO3 cubic perovskite, Pm-3m, a=3.905; Sr 0,0,0 / Ti 1/2,1/2,1/2 / O 1/2,1/2,0. pymatgen roundtrip", SRTIO3),
        ("perovskite SrTiO3, a=3.905 Å, space group Pm-3m with Sr (0,0,0), Ti (0.5,0.5,0.5), O (0.5,0.5,0). Return", SRTIO3),
        ("SrTiO3 in Pm-3m: Sr 0 0 0, Ti 0.5 0.5 0.5 and O 0.5 0.5 0", SRTIO3),
    ],
)
def test_a_crystal_stated_in_prose_is_its_space_group_and_every_site(text, value):
    stated = stated_crystal(text)
    assert stated is not None and stated.value == value and stated.lattice is None


def test_a_crystal_written_as_code_brings_its_lattice_constants():
    text = "Rutile: Structure.from_spacegroup('P4_2/mnm', Lattice.tetragonal(4.594, 2.959), ['Ti','O'], [[0,0,0],[0.305,0.305,0]]) -> ?"
    stated = stated_crystal(text)
    assert stated is not None and stated.lattice == [4.594, 2.959] and stated.family == "tetragonal"
    assert stated.value == {"space_group": "P4_2/mnm", "species": ["Ti", "O"], "coords": [[0.0, 0.0, 0.0], [0.305, 0.305, 0.0]]}
    assert text[slice(*stated.spans[0])].startswith("Structure.from_spacegroup(") and text[slice(*stated.spans[0])].endswith("]])")


@pytest.mark.parametrize(
    "text",
    [
        "Germanium in the diamond structure (Fd-3m, a = 5.658 Å): nearest-neighbour distance?",  # no site
        "Ca at (0, 0, 0) and F at (1/4, 1/4, 1/4) with a = 5.463 Å",  # no space group
        "Fm-3m or Pm-3m? Ca at (0, 0, 0) and F at (1/4, 1/4, 1/4)",  # two space groups
        "NaCl, Fm-3m: Na at (0, 0, 0); then, for the (1, 1, 1) surface, Cl at (0.5, 0.5, 0.5)",  # two runs of coordinates
        "Structure.from_spacegroup('Fm-3m', Lattice.cubic(a), species, coords)",  # a call with names, not values
        "Structure.from_spacegroup('Fm-3m', Lattice.from_parameters(5, 5, 5, 90, 90, 90), ['Na'], [[0, 0, 0]])",  # another lattice
    ],
)
def test_a_crystal_stated_in_part_or_twice_is_no_crystal(text):
    assert stated_crystal(text) is None


def test_a_scripts_literal_call_is_its_crystal_and_a_computed_one_is_not():
    literal = ast.parse("s = Structure.from_spacegroup('P6_3mc', Lattice.hexagonal(3.25, 5.21), ['Zn', 'O'], [[1/3, 2/3, 0], [1/3, 2/3, 0.382]])")
    found = script_crystal(literal)
    assert found is not None and found.lattice == "hexagonal" and len(found.lengths) == 2
    assert found.value["species"] == ["Zn", "O"] and found.value["coords"][1] == [1 / 3, 2 / 3, 0.382]
    assert script_crystal(ast.parse("s = Structure.from_spacegroup('Fm-3m', Lattice.cubic(5.64), species, [[0, 0, 0]])")) is None
    two = "a = Structure.from_spacegroup('Fm-3m', Lattice.cubic(4), ['Cu'], [[0, 0, 0]])\nb = Structure.from_spacegroup('Im-3m', Lattice.cubic(3), ['Fe'], [[0, 0, 0]])"
    assert script_crystal(ast.parse(two)) is None  # which one would a question state?


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (rocksalt("Na", "Cl"), None),
        (rocksalt("Cs", "I"), None),  # a symbol that reads as a word is a symbol still
        ({**rocksalt("Na", "Cl"), "coords": [[0, 0, 0], [1, 1, 1]]}, "two sites have the same coordinates"),
        ({**rocksalt("Na", "Cl"), "space_group": "R-3m:R"}, "give space group R-3m without a setting (pymatgen's default setting is used)"),
        ({**rocksalt("Na", "Cl"), "space_group": "P2/m"}, "space group P2/m is not cubic, tetragonal, trigonal or hexagonal"),
        ({**rocksalt("Na", "Cl"), "space_group": "Fm-3x"}, "'Fm-3x' is not a space-group symbol"),
        (rocksalt("Na", "salt"), "'salt' is not an element symbol"),
        ({**rocksalt("Na", "Cl"), "coords": [[0, 0, 0]]}, "a crystal lists as many sites (coords) as species, at least one"),
        ({**rocksalt("Na", "Cl"), "coords": [[0, 0, 0], [0.5, 0.5]]}, "each site's coords are three fractional coordinates between -1 and 1"),
        ({**rocksalt("Na", "Cl"), "coords": [[0, 0, 0], [0.5, 0.5, True]]}, "each site's coords are three fractional coordinates between -1 and 1"),
        ({"species": ["Na"]}, "a crystal is a mapping of space_group, species, coords"),
        ("NaCl", "a crystal is a mapping of space_group, species, coords"),
    ],
)
def test_a_crystal_value_is_checked_whole(value, problem):
    assert crystal_problem(value) == problem


def test_the_lattice_a_skill_builds_must_be_the_stated_groups():
    cubic = "s = Structure.from_spacegroup(crystal['space_group'], _lattice(crystal['space_group'])(a), crystal['species'], crystal['coords'])"
    assert lattice_problem(rocksalt("K", "Cl"), cubic) is None
    rutile = {"space_group": "P4_2/mnm", "species": ["Ti", "O"], "coords": [[0, 0, 0], [0.305, 0.305, 0]]}
    assert lattice_problem(rutile, cubic) == "space group P4_2/mnm is tetragonal; this skill builds its lattice from a"
    assert lattice_problem(rutile, cubic.replace("(a)", "(a, c)")) is None


def test_probes_swap_the_elements_and_try_other_crystals_of_the_same_lattice_family():
    probes = crystal_probes({"space_group": "Fd-3m", "species": ["Si"], "coords": [[0.0, 0.0, 0.0]]})
    assert probes[0]["species"] != ["Si"] and probes[0]["space_group"] == "Fd-3m"
    assert {p["space_group"] for p in probes[1:]} == {"Pm-3m", "Fm-3m", "F-43m"}
    hexagonal = crystal_probes({"space_group": "P6_3mc", "species": ["Zn", "O"], "coords": [[1 / 3, 2 / 3, 0], [1 / 3, 2 / 3, 0.382]]})
    assert [p["space_group"] for p in hexagonal] == ["P6_3mc", "P6_3/mmc"]
    assert crystal_probes("NaCl") == []
