"""A skill's crystal binds only whole: stated by its space group and every site, or the verified sites with another
substance of the same make-up; whatever else the question says about it still declines."""

import json
from pathlib import Path

import pytest

from skills.binding import BindingDeclined, bind
from skills.crystals import stated_crystal
from tests.skills.test_binding import lifted
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


_SUITE = json.loads((Path(__file__).resolve().parents[2] / "benchmarks/suites/transfer/pymatgen_bcc_volume_per_atom.json").read_text())["base"]
BCC_VOLUME = lifted(_SUITE["solution_code_or_process"], _SUITE["user_query"]["1"])


@pytest.mark.parametrize(
    ("skill", "query", "reason"),
    [  # what an attack on stated and substituted crystals found answered wrongly, each declined with its reason
        (CIF, "Diamond silicon, Fd-3m, a = 5.431 Å, Si at (1/8, 1/8, 1/8): save the conventional cell as a CIF with pymatgen, read it back, and report how many atomic sites it has. Return an integer.", "two origin choices"),
        (DENSITY, "What is the density (unit: g/cm^3) of cuprite Cu2O, Pn-3m, a = 4.2696 Å, Cu at (0, 0, 0) and O at (1/4, 1/4, 1/4), computed with pymatgen? Return a float rounded to 4 decimal places.", "two origin choices"),
        (JSON, "Store tetragonal FeSe (P4/nmm, a = 3.77 Å, c = 5.52 Å, Fe at (3/4, 1/4, 0) and Se at (1/4, 1/4, 0.2663)) as JSON with pymatgen and load it back; what reduced formula does the loaded structure have? Return a string.", "two origin choices"),
        (JSON, "Store Sb2Te3 (R-3m, a = 4.264 Å, c = 30.458 Å, Te at (0, 0, 0), Sb at (0.3988, 0.3988, 0.3988) and Te at (0.2128, 0.2128, 0.2128)) as JSON with pymatgen and load it back; what reduced formula does the loaded structure have? Return a string.", "hexagonal axes"),
        (CIF, "Zinc-blende ZnS, Fm-3m, a = 5.41 Å, Zn at (0, 0, 0) and S at (1/4, 1/4, 1/4): save the conventional cell as a CIF with pymatgen, read it back, and report how many atomic sites it has. Return an integer.", "build ZnS2, not the ZnS"),
        (DENSITY, "What is the density (unit: g/cm^3) of fluorite CaF2, Fm-3m, a = 5.463 Å, Ca at (0, 0, 0) and F at (1/2, 1/2, 1/2), computed with pymatgen? Return a float rounded to 4 decimal places.", "build CaF, not the fluorite"),
        (DENSITY, "What is the density (unit: g/cm^3) of rock-salt CaF2, Fm-3m, a = 5.463 Å, Ca at (0, 0, 0) and F at (1/4, 1/4, 1/4), computed with pymatgen? Return a float rounded to 4 decimal places.", "names the rock-salt structure, which CaF2 built from the sites stated does not have"),
        (DENSITY, "Build s = Structure.from_spacegroup('Fm-3m', Lattice.cubic(5.64), ['Na', 'Cl'], [[0, 0, 0], [0.5, 0.5, 0.5]]) with pymatgen, call s.pop(), and report s.density (unit: g/cm^3). Return a float rounded to 4 decimal places.", "calls pop"),
        (NEIGHBOUR, "Build s = Structure.from_spacegroup('Pm-3m', Lattice.cubic(4.0), ['Cs', 'Cl'], [[0, 0, 0], [0.8, 0.4, 0]], coords_are_cartesian=True) with pymatgen and return the shortest distance (unit: Å) among s.get_neighbors(s[0], 3.0). Return a float rounded to 4 decimal places.", "."),
        (DENSITY, "What is the density (unit: g/cm^3) of CsCl, which does not take the rock-salt structure, with a cubic lattice constant of 4.123 Å, computed with pymatgen? Return a float rounded to 4 decimal places.", "CsCl|not salt"),
        (NEIGHBOUR, "What is the nearest-neighbour Ge-Ge distance (unit: Å) in beta-tin germanium with a = 4.884 Å, computed with pymatgen by searching the neighbours of one atom within 3.0 Å? Return a float rounded to 4 decimal places.", "tin|germanium|Ge"),
        (BCC_VOLUME, "What is the volume per atom (unit: Å^3/atom) of beta-tungsten with a lattice constant of 5.04 Å, computed with pymatgen? Return a float rounded to 4 decimal places.", "tungsten"),
    ],
)
def test_what_an_attack_on_crystals_found_declines(skill, query, reason):
    declines(skill, query, reason)


def test_every_site_is_read_the_symbols_that_read_as_words_too_and_a_triple_left_over_unreads_the_crystal():
    caesium_iodide = "What is the density (unit: g/cm^3) of the Pm-3m crystal with a = 4.567 Å, Cs at (0, 0, 0) and I at (1/2, 1/2, 1/2), computed with pymatgen? Return a float rounded to 4 decimal places."
    assert bind(DENSITY, caesium_iodide).params["crystal"] == {"space_group": "Pm-3m", "species": ["Cs", "I"], "coords": [[0.0, 0.0, 0.0], [0.5, 0.5, 0.5]]}
    assert bind(BCC_VOLUME, caesium_iodide.replace("density (unit: g/cm^3)", "volume per atom (unit: Å^3/atom)")).params["crystal"]["species"] == ["Cs", "I"]
    assert stated_crystal("Pm-3m: Cs at (0, 0, 0) and Xq at (1/2, 1/2, 1/2)") is None  # a triple no site reads
    iron = "What is the volume per atom (unit: Å^3/atom) of iron, Pm-3m, a = 2.87 Å, Fe at (0, 0, 0) and Fe at (½, ½, ½), computed with pymatgen? Return a float rounded to 4 decimal places."
    assert bind(BCC_VOLUME, iron).params["crystal"] == {"space_group": "Pm-3m", "species": ["Fe", "Fe"], "coords": [[0.0, 0.0, 0.0], [0.5, 0.5, 0.5]]}
    assert stated_crystal("Fm-3m: Na at (0, 0, 0) and Cl at (−½, ½, ½)").value["coords"][1] == [-0.5, 0.5, 0.5]  # type: ignore[union-attr]
    assert stated_crystal("Fm-3m: Na at (0, 0, 0) and Cl at (½, ½, ½), spin ½") is None  # a fraction outside the sites


@pytest.mark.parametrize(
    ("skill", "query", "reason"),
    [  # what a second attack found answered wrongly, each declined with its reason
        (BCC_VOLUME, "What is the volume per atom (unit: Å^3/atom) of bcc iron, Im-3m, a = 2.87 Å, Fe at (0, 0, 0) and Fe at (1/2, 1/2, 1/2), computed with pymatgen? Return a float rounded to 4 decimal places.", "two sites fall on one place"),
        (DENSITY, "What is the density (unit: g/cm^3) of rock-salt K+Cl- with a cubic lattice constant of 6.29 Å, computed with pymatgen? Return a float rounded to 4 decimal places.", "names no substance|K"),
        (DENSITY, "What is the density (unit: g/cm^3) of a rock-salt crystal with a cubic lattice constant of 6.29 Å, computed with pymatgen? Return a float rounded to 4 decimal places.", "names no substance this skill can build"),
        (DENSITY, "What is the density (unit: g/cm^3) of rock-salt lithium deuteride (LiD) with a cubic lattice constant of 4.07 Å, computed with pymatgen? Return a float rounded to 4 decimal places.", "."),
        (DENSITY, "What is the density (unit: g/cm^3) of CsCl, which isn't rock-salt, with a cubic lattice constant of 4.123 Å, computed with pymatgen? Return a float rounded to 4 decimal places.", "CsCl|not salt"),
        (NEIGHBOUR, "Nearest-neighbour distance (unit: Å) in cubic perovskite SrTiO3, Pm-3m, a = 3.905 Å, Sr at (0, 0, 0), Ti at (1/2, 1/2, 1/2) and O at (1/2, 1/2, 0), from pymatgen's neighbours of one atom within 3.0 Å? Return a float rounded to 4 decimal places.", "first site only"),
        (XRD, "What 2θ (degrees) does pymatgen's XRDCalculator (Cu K-alpha1) give for the strongest peak of copper with a = 3.615 Å? Return a float.", "CuKα1 line"),
    ],
)
def test_what_a_second_attack_on_crystals_found_declines(skill, query, reason):
    declines(skill, query, reason)


def test_a_substituted_crystal_checks_the_sites_the_question_places_its_elements_on():
    placed = "What is the density (unit: g/cm^3) of rock-salt MgO with a cubic lattice constant of 4.212 Å, Mg at the origin and O at (½, ½, ½), computed with pymatgen? Return a float rounded to 4 decimal places."
    assert bind(DENSITY, placed).params["crystal"] == rocksalt("Mg", "O")
    declines(DENSITY, placed.replace("Mg at the origin and O at", "O at the origin and Mg at"), "puts O at")
    declines(DENSITY, placed.replace("Mg at the origin", "Mg at (¼, ¼, ¼)"), "puts Mg at")
