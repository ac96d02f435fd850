"""A skill's crystal binds only whole: stated by its space group and every site, or the verified sites with another
substance of the same make-up; whatever else the question says about it still declines."""

import pytest

from skills.binding import BindingDeclined, bind
from tests.skills.test_context import library_skill
from tests.starter import rocksalt

CIF = library_skill("pymatgen_cif_roundtrip_sites")
JSON = library_skill("pymatgen_json_roundtrip_formula")
NEIGHBOUR = library_skill("pymatgen_si_nearest_neighbour")
XRD = library_skill("pymatgen_xrd_cu_strongest_peak")
DENSITY = library_skill("pymatgen_rocksalt_density_nacl")
CAF2 = {"space_group": "Fm-3m", "species": ["Ca", "F"], "coords": [[0.0, 0.0, 0.0], [0.25, 0.25, 0.25]]}


def declines(skill, query: str, reason: str) -> None:
    with pytest.raises(BindingDeclined, match=reason):
        bind(skill, query)


def test_a_crystal_stated_in_prose_binds_with_its_lattice_constant_and_its_names_say_nothing_more():
    fluorite = (
        "Fluorite (CaF2), Fm-3m, a = 5.463 Å, Ca at (0, 0, 0) and F at (1/4, 1/4, 1/4): build it with pymatgen, save it as a CIF "
        "file, read it back and report how many atomic sites it has. Return an integer."
    )
    binding = bind(CIF, fluorite)
    assert binding.params == {"crystal": CAF2, "a": 5.463}
    assert next(b.words for b in binding.bound if b.name == "crystal") == "Fm-3m … Ca at (0, 0, 0) and F at (1/4, 1/4, 1/4)"


def test_a_crystal_written_as_code_binds_its_lattice_constants_to_the_skills_lattice_in_order():
    rutile = (
        "Rutile TiO2: Structure.from_spacegroup('P4_2/mnm', Lattice.tetragonal(4.594, 2.959), ['Ti','O'], [[0,0,0],[0.305,0.305,0]]) "
        "-> as_dict -> json.dumps -> json.loads -> Structure.from_dict. Reduced formula of the loaded structure (pymatgen)? Return a string."
    )
    params = bind(JSON, rutile).params
    assert params["crystal"]["space_group"] == "P4_2/mnm" and (params["a"], params["c"]) == (4.594, 2.959)
    # the same lattice constant said again in prose is the call's, not a second value
    germanium = (
        "NN distance in diamond Ge, a0 = 5.658 Å: pymatgen Structure.from_spacegroup('Fd-3m', Lattice.cubic(5.658), ['Ge'], [[0,0,0]]), "
        "min nn_distance over get_neighbors(s[0], 3.0). Å, float, 4 dp."
    )
    assert bind(NEIGHBOUR, germanium).params == {"crystal": {"space_group": "Fd-3m", "species": ["Ge"], "coords": [[0.0, 0.0, 0.0]]}, "a": 5.658, "value": 3.0}


def test_a_stated_crystal_the_skills_lattice_cannot_hold_declines():
    cubic = "JSON round trip in pymatgen of fluorite CaF2, Fm-3m, a = 5.463 Å, Ca at (0,0,0), F at (1/4,1/4,1/4): what reduced formula comes back? Return a string."
    declines(JSON, cubic, "space group Fm-3m is cubic; this skill builds its lattice from a, c")
    tetragonal = "Rutile TiO2 (P4_2/mnm, a = 4.594 Å, c = 2.959 Å; Ti at 0,0,0; O at 0.305,0.305,0): how many sites after a CIF round trip? Return an integer."
    declines(CIF, tetragonal, "space group P4_2/mnm is tetragonal; this skill builds its lattice from a")
    code = "Structure.from_spacegroup('Fm-3m', Lattice.hexagonal(4.0, 6.5), ['Cu'], [[0, 0, 0]]): CIF round trip, number of sites? Return an integer."
    declines(CIF, code, "builds a hexagonal lattice for space group Fm-3m")


def test_what_else_the_question_says_of_a_stated_crystal_still_declines():
    stated = "CsCl (Pm-3m, a = 4.12 Å, Cs at 0,0,0 and Cl at 1/2,1/2,1/2) built with pymatgen"
    declines(CIF, f"{stated}, reduced to its primitive cell, written to a CIF and read back: how many sites? Return an integer.", "primitive")
    declines(CIF, f"{stated} as a 2x2x2 supercell, written to a CIF and read back: how many sites? Return an integer.", "supercell")
    declines(CIF, f"{stated}, written to a CIF and read back: how many of its sites are chlorine? Return an integer.", "names .chlorine.")
    declines(NEIGHBOUR, f"{stated}: the second-nearest neighbour distance of site 0 within 6.0 Å, in Å? Return a float.", "second")


def test_another_substance_of_the_verified_make_up_takes_the_verified_sites():
    assert bind(DENSITY, "Density (g/cm^3) of rock-salt KBr with a = 6.6 Å from pymatgen? Return a float.").params == {
        "crystal": rocksalt("K", "Br"), "a": 6.6
    }  # fmt: skip
    declines(DENSITY, "Density (g/cm^3) of rock-salt CaF2 with a = 5.46 Å from pymatgen? Return a float.", "another make-up")
    declines(DENSITY, "Density (g/cm^3) of CsCl with a = 4.12 Å from pymatgen? Return a float.", "CsCl")  # not said to be rock-salt
    # wurtzite's sites hold a free coordinate (u = 0.382) of zinc oxide's own: GaN takes them only stated whole
    declines(JSON, "Store a wurtzite GaN structure (a = 3.189 Å, c = 5.185 Å) as JSON with pymatgen; what reduced formula comes back? Return a string.", "GaN")


def test_an_element_takes_a_one_element_crystals_sites_where_its_reference_state_is_the_verified_structure():
    nickel = "What 2θ (degrees) does pymatgen's XRDCalculator (Cu Kα) give for the strongest peak of nickel with a = 3.524 Å? Return a float."
    assert bind(XRD, nickel).params == {"crystal": {"space_group": "Fm-3m", "species": ["Ni"], "coords": [[0.0, 0.0, 0.0]]}, "a": 3.524}
    declines(XRD, nickel.replace("nickel", "tungsten").replace("3.524", "3.165"), "names .tungsten.")  # bcc: not copper's fcc sites
    declines(XRD, nickel.replace("of nickel", "of bcc tungsten").replace("3.524", "3.165"), "bcc|tungsten|W")  # another structure
