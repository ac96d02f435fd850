"""Edges of binding: several substances, numbers no parameter takes, units and kinds of answer, bounds, kinds read from defaults.

Each test pins a decline (with its reason) or the exact values bound, so that a looser binder (one
that takes the first of two readings, or ties a number to a parameter by its unit alone) fails here.
"""

import pytest

from skills.binding import BindingDeclined, bind, parameter_kind
from skills.documents import Provenance, Skill, TestCase
from skills.mentions import find_mentions
from skills.parameter import Parameter
from tests.codes import N2_CODE, N2_QUERY
from tests.skills.test_binding import HCP_CODE, HCP_QUERY, NACL, ROCKSALT, ROCKSALT_QUERY, lifted, rocksalt


def declines(skill: Skill, query: str, reason: str) -> None:
    with pytest.raises(BindingDeclined, match=reason):
        bind(skill, query)


def skill_of(query: str, properties: dict, **fields) -> Skill:
    return Skill(
        name="edge",
        code="def run(**kw):\n    return 1.0\n",
        parameters={"type": "object", "properties": properties},
        test_case=TestCase(params={k: v["default"] for k, v in properties.items()}, expected=1.0),
        provenance=Provenance(query=query),
        **fields,
    )


# -- several substances: each to exactly one parameter, in the skill's order, else decline ----------------------------------

REACTION_QUERY = "What is the reaction energy (unit: eV) of Cu with NaBr and KI, computed with pymatgen? Return a float rounded to 3 decimal places."
REACTION = skill_of(
    REACTION_QUERY,
    {
        # Listed out of the question's order: the binder orders them by where the verified question states them.
        "salt": {"type": "string", "default": "NaBr", "kind": "formula", "source": "NaBr"},
        "halide": {"type": "string", "default": "KI", "kind": "formula", "source": "KI"},
        "metal": {"type": "string", "default": "Cu", "kind": "element", "source": "Cu"},
    },
)


def test_two_formulas_go_to_the_two_formula_parameters_in_the_order_the_verified_question_states_them():
    binding = bind(REACTION, REACTION_QUERY.replace("Cu with NaBr and KI", "Ag with LiBr and KCl"))
    assert binding.params == {"metal": "Ag", "salt": "LiBr", "halide": "KCl"}
    assert sorted((b.name, b.value, b.words) for b in binding.bound) == [
        ("halide", "KCl", "KCl"),
        ("metal", "Ag", "Ag"),
        ("salt", "LiBr", "LiBr"),
    ]


def test_two_formulas_that_could_go_either_way_decline():
    # The element must be the metal; the two salts could fill salt and halide either way, and neither way keeps the order.
    declines(REACTION, REACTION_QUERY.replace("Cu with NaBr and KI", "LiBr with Ag and KCl"), "cannot tell which of 'LiBr', 'Ag', 'KCl'")


def test_a_formula_with_nothing_to_fill_declines_with_what_the_skill_takes():
    declines(
        REACTION,
        REACTION_QUERY.replace("Cu with NaBr and KI", "Ag with LiBr and KCl and NaF"),
        r"the question names 'Ag', 'LiBr', 'KCl', 'NaF'; the skill takes metal \(element\), salt \(formula\), halide \(formula\)",
    )


def test_one_substance_never_fills_two_parameters():
    two_formulas = skill_of(
        REACTION_QUERY.replace("Cu with ", ""),
        {
            "salt": {"type": "string", "default": "NaBr", "kind": "formula", "source": "NaBr"},
            "halide": {"type": "string", "default": "KI", "kind": "formula", "source": "KI"},
        },
    )
    declines(two_formulas, REACTION_QUERY.replace("Cu with NaBr and KI", "LiBr"), r"names 'LiBr'; the skill takes salt \(formula\), halide \(formula\)")
    assert bind(two_formulas, REACTION_QUERY.replace("Cu with NaBr and KI", "LiBr and KCl")).params == {"salt": "LiBr", "halide": "KCl"}


def test_an_element_parameter_takes_an_element_and_only_an_element():
    metal = skill_of("What is the cohesive energy (unit: eV) of Cu with EMT? Return a float.", {"metal": {"type": "string", "default": "Cu", "kind": "element", "source": "Cu"}})
    assert bind(metal, "What is the cohesive energy (unit: eV) of Ag with EMT? Return a float.").params == {"metal": "Ag"}
    assert bind(metal, "What is the cohesive energy (unit: eV) of silver with EMT? Return a float.").params == {"metal": "Ag"}
    declines(metal, "What is the cohesive energy (unit: eV) of NaCl with EMT? Return a float.", r"names 'NaCl'; the skill takes metal \(element\)")


# -- a substance the answer was shown not to depend on -----------------------------------------------------------------------

HCP_FREE = lifted(HCP_CODE, HCP_QUERY).model_copy(update={"independent_of": ["element"]})


def test_a_substance_the_answer_does_not_depend_on_is_left_aside():
    query = HCP_QUERY.replace("magnesium", "zinc").replace("3.209", "2.665").replace("5.211", "4.947")
    assert bind(HCP_FREE, query).params == {"a": 2.665, "c": 4.947}


def test_only_one_substance_can_be_left_aside_and_never_one_of_another_kind():
    query = HCP_QUERY.replace("3.209", "2.665").replace("5.211", "4.947")
    declines(HCP_FREE, query.replace("magnesium", "zinc and cadmium"), "names 'zinc', 'cadmium'")
    declines(HCP_FREE, query.replace("magnesium", "MgO"), "names 'MgO'")
    declines(HCP_FREE, query.replace("magnesium", "zinc with NaCl"), "names 'zinc', 'NaCl'")


def test_a_substance_left_aside_needs_every_number_of_its_own():
    # The lattice constants were magnesium's: zinc without its own would get them, a confident wrong volume.
    declines(HCP_FREE, HCP_QUERY.replace("magnesium", "zinc").replace("3.209", "2.665").replace(" and c = 5.211 Å", ""), "does not state c for zinc")
    declines(HCP_FREE, "What is the volume (unit: Å^3) of the hexagonal unit cell of zinc, computed with pymatgen?", "does not state a for zinc")
    query = "hexagonal Ti unit cell volume, a 2.951 Å, c 4.686 Å — Å^3, pymatgen"  # ", a 2.951": a name, not an article
    assert bind(HCP_FREE, query).params == {"a": 2.951, "c": 4.686}


NEIGHBOUR_QUERY = (
    "Build diamond silicon with pymatgen (Fd-3m, a = 5.431 Å, Si at 0 0 0) and return the shortest Si-Si distance (unit: Å) among "
    "the neighbours of site 0 within 3.0 Å. Return a float rounded to 4 decimal places."
)
NEIGHBOUR_CODE = (
    "import json\nfrom pymatgen.core import Lattice, Structure\ns = Structure.from_spacegroup('Fd-3m', Lattice.cubic(5.431), ['Si'], [[0, 0, 0]])\n"
    "print(json.dumps(round(min(n.nn_distance for n in s.get_neighbors(s[0], 3.0)), 4)))\n"
)
NEIGHBOUR = lifted(NEIGHBOUR_CODE, NEIGHBOUR_QUERY, keep=("a",)).model_copy(update={"independent_of": ["element"]})


def test_a_number_of_a_constants_value_written_otherwise_restates_it_or_declines():
    # "within 3 Å" is the verified 3.0: with a = 5.658 stated it is that constant; alone it could be a, and a guess is refused.
    query = "Ge in the diamond structure, a = 5.658 Å: nearest-neighbour Ge-Ge distance in Å with pymatgen (look for neighbours within 3 Å)"
    assert bind(NEIGHBOUR, query).params == {"a": 5.658}
    declines(NEIGHBOUR, "Nearest-neighbour distance (unit: Å) in diamond Ge with pymatgen, neighbours within 3 Å", "cannot tell whether 3")


# -- numbers: tied by name, by the verified question's words, by unit; nothing else ---------------------------------------

FMAX = lifted(N2_CODE, N2_QUERY)  # formula and fmax (eV/Å)


def test_a_number_with_another_unit_and_no_words_of_a_parameter_declines():
    declines(
        FMAX,
        "At 300 K, calculate the atomization energy of N2 using ASE's EMT calculator. Return a float rounded to 4 decimal places.",
        "the question states 300 K, which no parameter of this skill takes",
    )
    declines(FMAX, "Calculate the atomization energy of N2 using 300 ASE's EMT calculator.", "the question states 300, which no parameter")


def test_a_temperature_before_the_format_sentence_is_not_fmax():
    declines(
        FMAX,
        "Calculate the atomization energy of N2 using ASE's EMT calculator at 300 K. Return a float rounded to 4 decimal places.",
        "300 K",
    )


def test_a_number_tied_by_the_verified_words_before_it_binds_without_a_unit():
    query = "What is the density (unit: g/cm^3), computed with pymatgen, of rock-salt MgO with a cubic lattice constant of 4.212? Return a float rounded to 4 decimal places."
    binding = bind(ROCKSALT, query)
    assert binding.params == {"crystal": rocksalt("Mg", "O"), "a": 4.212}
    assert [(b.name, b.value, b.words) for b in binding.bound] == [("crystal", rocksalt("Mg", "O"), "MgO"), ("a", 4.212, "cubic lattice constant of 4.212")]


def test_a_number_tied_only_by_its_unit_binds_when_one_parameter_has_that_unit():
    query = "What is the density (unit: g/cm^3), computed with pymatgen, of rock-salt MgO at 4.212 Å? Return a float rounded to 4 decimal places."
    assert bind(ROCKSALT, query).params == {"crystal": rocksalt("Mg", "O"), "a": 4.212}


def test_a_number_two_parameters_take_equally_declines_naming_both():
    skill = lifted(HCP_CODE, HCP_QUERY)
    query = "What is the volume (unit: Å^3) of the hexagonal unit cell of magnesium, 3.3 Å, computed with pymatgen? Return a float rounded to 3 decimal places."
    declines(skill, query, "cannot tell whether 3.3 is a or c")


def test_a_number_bound_by_its_name_is_exact_and_the_rest_keep_their_verified_defaults():
    skill = lifted(HCP_CODE, HCP_QUERY)
    binding = bind(skill, HCP_QUERY.replace("a = 3.209 Å and c = 5.211 Å", "c = 5.3 Å"))
    assert [(b.name, b.value, b.words) for b in binding.bound] == [("c", 5.3, "magnesium with c =5.3"), ("a", 3.209, "verified default")]


def test_a_lattice_constant_of_zero_is_below_the_verified_bound():
    declines(ROCKSALT, ROCKSALT_QUERY.replace("5.64", "0"), r"a must be above 0 \(got 0.0\)")


SUPERCELL_QUERY = "How many atoms are in a supercell of rock-salt NaCl repeated 2 times along each axis, computed with pymatgen? Return an integer."
SUPERCELL = skill_of(
    SUPERCELL_QUERY,
    {
        "formula": {"type": "string", "default": "NaCl", "kind": "formula", "source": "NaCl"},
        "repeats": {"type": "integer", "default": 2, "kind": "integer", "source": "repeated 2 times", "cue": ["repeat"], "minimum": 1},
    },
    output_type="int",
)


def test_an_integer_parameter_binds_a_whole_number_as_an_int():
    binding = bind(SUPERCELL, SUPERCELL_QUERY.replace("2 times", "3 times"))
    assert binding.params == {"formula": "NaCl", "repeats": 3} and isinstance(binding.params["repeats"], int)
    assert bind(SUPERCELL, SUPERCELL_QUERY.replace("2 times", "1 times")).params == {"formula": "NaCl", "repeats": 1}


def test_an_integer_parameter_declines_a_fraction_and_a_value_below_its_minimum():
    declines(SUPERCELL, SUPERCELL_QUERY.replace("2 times", "2.5 times"), r"repeats takes a whole number \(got 2.5\)")
    declines(SUPERCELL, SUPERCELL_QUERY.replace("2 times", "0 times"), r"repeats must be at least 1 \(got 0.0\)")


def test_another_compound_without_its_own_number_declines():
    declines(
        SUPERCELL,
        SUPERCELL_QUERY.replace("NaCl", "KCl").replace(" repeated 2 times along each axis", ""),
        "does not state repeats for KCl; the verified 2 belongs to NaCl",  # the parameter, not the verified question's words
    )


# -- the answer asked for must be the skill's ----------------------------------------------------------------------------------

N2_EV = lifted(N2_CODE, N2_QUERY, keep=("formula",)).model_copy(update={"unit": "eV", "output_type": "float"})


@pytest.mark.parametrize(
    ("tail", "reason"),
    [
        ("Return a float (unit: kJ/mol).", "the question asks for kJ/mol; the skill gives eV"),
        ("Return a float (unit: meV).", "the question asks for meV; the skill gives eV"),
        ("Return a boolean.", "the question asks for a bool; the skill gives a float"),
        ("Return a string.", "the question asks for a str; the skill gives a float"),
    ],
)
def test_another_unit_or_kind_of_answer_declines(tail, reason):
    declines(N2_EV, f"Calculate the atomization energy of O2 using ASE's EMT calculator. {tail}", reason)


@pytest.mark.parametrize("tail", ["Return a float (unit: eV).", "Return an integer (unit: eV).", "Return a float in eV.", "Return a float."])
def test_the_same_unit_and_a_number_kind_bind(tail):
    assert bind(N2_EV, f"Calculate the atomization energy of O2 using ASE's EMT calculator. {tail}").params == {"formula": "O2"}


def test_units_written_differently_are_the_same_unit():
    volume = lifted(HCP_CODE, HCP_QUERY).model_copy(update={"unit": "Å^3", "output_type": "float"})
    for unit in ("Å^3", "Å3", "A^3", "angstrom^3", "angstroms^3"):
        query = HCP_QUERY.replace("(unit: Å^3)", f"(unit: {unit})")
        assert bind(volume, query).params == {"a": 3.209, "c": 5.211}, unit
    declines(volume, HCP_QUERY.replace("(unit: Å^3)", "(unit: nm^3)"), "the question asks for nm")


# -- a parameterless skill: every value of its own question, and no other ----------------------------------------------------

TWO_NUMBERS_QUERY = "Calculate the atomization energy (unit: eV) of a nitrogen molecule using ASE's EMT calculator at 300 K, relaxing the molecule to fmax=0.01 eV/Å first."


def test_a_parameterless_skill_declines_when_one_of_its_numbers_is_left_out():
    skill = skill_of(TWO_NUMBERS_QUERY, {})
    assert bind(skill, TWO_NUMBERS_QUERY).params == {}
    declines(skill, TWO_NUMBERS_QUERY.replace(", relaxing the molecule to fmax=0.01 eV/Å first", ""), r"this one differs \(no 0.01\)")
    declines(skill, TWO_NUMBERS_QUERY.replace("at 300 K, ", ""), r"this one differs \(no 300\)")


# -- kinds read from defaults (skills written by the model generaliser carry no 'kind') ------------------------------------


@pytest.mark.parametrize(
    ("prop", "kind"),
    [
        ({"default": True}, "boolean"),
        ({"default": 3}, "integer"),
        ({"default": 2.5}, "number"),
        ({"default": "Cu"}, "element"),
        ({"default": "NaCl"}, "formula"),
        ({"default": "CC(=O)O"}, "smiles"),
        ({"default": "c1ccccc1"}, "smiles"),
        ({"default": "PBE"}, "word"),
        ({"default": None}, "other"),
        ({"default": [1, 2]}, "other"),
        ({"kind": "number", "default": "3.0"}, "number"),
    ],
)
def test_a_parameter_kind_is_its_recorded_kind_else_read_from_its_default(prop, kind):
    assert parameter_kind(Parameter.model_validate(prop)) == kind


def test_parameters_without_a_kind_bind_by_the_kind_of_their_default():
    query = "What is the lattice constant (unit: Å) of Cu relaxed with EMT to fmax 0.05 using the PBE setting? Return a float."
    skill = skill_of(
        query,
        {
            "element": {"type": "string", "default": "Cu"},
            "fmax": {"type": "number", "default": 0.05, "cue": ["fmax"]},
            "setting": {"type": "string", "default": "PBE"},
        },
    )
    binding = bind(skill, query.replace("Cu", "Ag").replace("0.05", "0.02"))
    assert binding.params == {"element": "Ag", "fmax": 0.02, "setting": "PBE"}
    assert [(b.name, b.words) for b in binding.bound] == [("element", "Ag"), ("fmax", "with EMT to fmax 0.02"), ("setting", "verified default")]
    declines(skill, query.replace("Cu", "NaCl"), r"the skill takes element \(element\)")


VACANCY_QUERY = "What is the unrelaxed vacancy formation energy (unit: eV) of copper (fcc, a = 3.6 Å) in a 3x3x3 supercell, computed with ASE's EMT?"
VACANCY = skill_of(
    VACANCY_QUERY,
    {
        "element": {"type": "string", "default": "Cu", "kind": "element"},
        "a": {"type": "number", "default": 3.6, "kind": "number", "unit": "Å"},
        "supercell": {"type": "integer", "default": 3, "kind": "integer"},
    },
    tunables=["supercell"],
)


def test_a_repeat_sets_only_a_repeat_and_a_count_of_atoms_only_a_count_of_atoms():
    ask = "unrelaxed vacancy formation energy of fcc silver with ASE's EMT, a = 4.09 Å, {} (unit: eV)"
    assert bind(VACANCY, ask.format("2×2×2 supercell of the 4-atom cubic cell (32 atoms)")).params == {"element": "Ag", "a": 4.09, "supercell": 2}
    declines(VACANCY, ask.format("in a 64-atom supercell"), "states 64-atom")
    # A setting that did not change the verified answer may keep its default for another substance; a lattice constant may not.
    assert bind(VACANCY, ask.format("")).params == {"element": "Ag", "a": 4.09, "supercell": 3}
    declines(VACANCY, "unrelaxed vacancy formation energy of fcc silver with ASE's EMT (unit: eV)", "does not state a for Ag")
    # Unsaid, the structure is the element's own (ASE's reference states): silver is fcc, tungsten bcc.
    assert bind(VACANCY, ask.format("").replace("fcc ", "")).params == {"element": "Ag", "a": 4.09, "supercell": 3}
    declines(VACANCY, ask.format("").replace("fcc silver", "tungsten"), "builds the fcc structure")


# -- what the skill's code fixes and another substance or setting may not share ------------------------------------------


def test_another_substance_must_be_said_to_have_the_structure_the_skill_builds():
    skill = lifted(
        "import json\nfrom pymatgen.core import Lattice, Structure\n"
        "s = Structure.from_spacegroup('Fm-3m', Lattice.cubic(5.64), ['Na', 'Cl'], [[0, 0, 0], [0.5, 0.5, 0.5]])\nprint(json.dumps(round(s.density, 4)))\n",
        "What is the density (unit: g/cm^3) of rock-salt NaCl with a = 5.64 Å, computed with pymatgen? Return a float rounded to 4 decimal places.",
    )
    # CsCl is not rock-salt: the skill would build the wrong crystal (15.96 for 3.99 g/cm^3).
    declines(skill, "What is the density (unit: g/cm^3) of CsCl with a = 4.123 Å, computed with pymatgen?", "CsCl")
    assert bind(skill, "density of KCl (rock salt, a = 6.293 Å) in g cm^-3 with pymatgen").params == {"crystal": rocksalt("K", "Cl"), "a": 6.293}
    assert bind(skill, "What is the density (unit: g/cm^3) of NaCl with a = 5.70 Å, with pymatgen?").params == {"crystal": NACL, "a": 5.7}


def test_an_x_ray_line_the_question_names_must_be_the_one_verified():
    skill = HCP_FREE.model_copy(update={"provenance": Provenance(query=HCP_QUERY.replace("computed with pymatgen", "for CuKa, computed with pymatgen"))})
    for line in ("Mo K-alpha", "Cu Kβ"):
        declines(skill, HCP_QUERY.replace("computed with pymatgen", f"for {line}, computed with pymatgen"), "line; the skill was verified with CuKα")


def test_a_range_in_another_unit_and_a_ratio_of_names_set_nothing():
    skill = skill_of(
        "Equilibrium lattice constant (unit: Å) of fcc copper from 11 lattice constants between 3.5 and 3.7 Å with ASE's EMT?",
        {"start": {"type": "number", "default": 3.5, "kind": "number", "unit": "Å"}, "stop": {"type": "number", "default": 3.7, "kind": "number", "unit": "Å"}},
    )
    declines(skill, "Equilibrium lattice constant (unit: Å) of fcc copper from 11 lattice constants between 350 and 370 pm with ASE's EMT?", "pm")
    assert HCP_FREE.parameters.model_dump()["properties"]["a"]["default"] == 3.209
    declines(HCP_FREE, HCP_QUERY.replace("a = 3.209 Å and c = 5.211 Å", "c = 5.211 Å and c/a = 1.624"), "states 1.624, which no parameter")


# -- values said again in other words: the verified constant restated, the same value twice, a quantity's symbol ------------


def test_a_threshold_restated_in_other_words_is_the_verified_one_and_said_twice_declines():
    from tests.skills.test_context import library_skill

    lipinski = library_skill("rdkit_lipinski_aspirin")
    query = "Ro5 check in RDKit for caffeine, CN1C=NC2=C1C(=O)N(C(=O)N2C)C: MW ≤ 500, Crippen logP ≤ 5, HBD ≤ 5, HBA ≤ 10 all satisfied? true/false"
    binding = bind(lipinski, query)
    assert binding.params["smiles"] == "CN1C=NC2=C1C(=O)N(C(=O)N2C)C" and sorted(binding.params.values(), key=str)[:2] == [10, 500]
    declines(lipinski, query.replace("MW ≤ 500", "MW ≤ 600"), "states 10")  # restated only beside the verified numbers, all of them
    declines(lipinski, query.replace("HBA ≤ 10", "HBA ≥ 10"), "compares otherwise")  # "≥" is no restatement of "at most"
    declines(lipinski, query.replace(", HBA", " or HBA"), "compares otherwise")  # criteria joined by "or"
    hexadecane = "Does hexadecane (SMILES CCCCCCCCCCCCCCCC) pass MolWt <= 500 and MolLogP <= 10 with RDKit? Return true or false."
    declines(lipinski, hexadecane, "states")  # the 10 of another criterion is not the acceptors' 10
    declines(lipinski, query.replace("HBA ≤ 10", "HBA ≤ 500"), "500")  # said twice where the verified question said it once


def test_the_same_value_said_twice_binds_once_and_two_values_decline():
    from tests.skills.test_context import library_skill

    cohesive = library_skill("ase_emt_al_cohesive_energy")
    query = "Cohesive energy of fcc Cu at a = 3.61 Å with ASE's EMT calculator (bulk('Cu', 'fcc', a=3.61)), in eV/atom: positive float, 4 decimal places."
    assert bind(cohesive, query).params["a"] == 3.61
    declines(cohesive, query.replace("a=3.61", "a=3.62"), "two values for a")


def test_a_one_letter_symbol_given_in_a_unit_is_a_quantity_not_an_element():
    assert [m.text for m in find_mentions("EMT bulk modulus of fcc Al; B in GPa, V (Å^3)") if m.kind == "formula"] == ["Al"]
    assert [m.text for m in find_mentions("the mass fraction of N in NH4NO3") if m.kind == "formula"] == ["N", "NH4NO3"]


def test_a_substance_shown_not_to_matter_in_one_structure_declines_in_another():
    from tests.skills.test_context import library_skill

    spacegroup = library_skill("spglib_spacegroup_nacl", keep=("crystal_structure", "a")).model_copy(update={"independent_of": ["formula"]})
    query = "Space group (international symbol) of diamond-cubic Si, a = 5.431 Å, built with ase.build.bulk('Si', 'diamond', a=5.431) and analysed with spglib? Return a string."
    declines(spacegroup, query, "only in the rocksalt structure; the question names Si in another")


def test_a_substance_shown_not_to_matter_binds_in_another_structure_of_as_many_elements():
    import json
    from pathlib import Path

    family = json.loads((Path(__file__).resolve().parents[2] / "benchmarks/suites/transfer/spglib_crystal_system.json").read_text())
    base = family["base"]
    system = lifted(base["solution_code_or_process"], base["user_query"]["1"], keep=("crystal_structure", "a", "c"))
    system = system.model_copy(update={"independent_of": ["element"]})  # hcp magnesium's crystal system, whatever the element
    query = "Indium has a body-centred tetragonal lattice with a = 3.25 Å and c = 4.95 Å. What crystal system does spglib (through pymatgen's SpacegroupAnalyzer) assign to it? Return the crystal system as a lowercase string (e.g. 'monoclinic')."
    assert bind(system, query).params == {"crystal_structure": "bct", "a": 3.25, "c": 4.95}


def test_a_substance_put_in_place_of_one_shown_not_to_matter_declines_unless_it_is_said_to_have_the_structure():
    from tests.skills.test_context import library_skill

    # The space group of rock-salt NaCl does not depend on which two elements fill it, but CsCl is no rock salt (Pm-3m, not
    # Fm-3m): a question that does not say its substance has the verified structure must not get the rock-salt answer.
    spacegroup = library_skill("spglib_spacegroup_nacl", keep=("crystal_structure", "a")).model_copy(update={"independent_of": ["formula"]})
    question = "What is the international space-group symbol of CsCl with a = 4.12 Å, as found by spglib? Return a string."
    declines(spacegroup, question, "builds the rocksalt structure of its own substance; the question does not say its substance has it")
    assert bind(spacegroup, question.replace("of CsCl", "of rock-salt KCl").replace("4.12", "6.29")).params == {"crystal_structure": "rocksalt", "a": 6.29}


def test_an_element_named_inside_a_compounds_name_is_part_of_that_name():
    from tests.skills.test_context import library_skill

    fraction = library_skill("pymatgen_oxygen_mass_fraction_al2o3")
    query = "What fraction of the mass of lithium superoxide, LiO2, is oxygen, computed with pymatgen? Return a float between 0 and 1 rounded to 4 decimal places."
    assert bind(fraction, query).params == {"formula": "LiO2", "element": "O"}  # "lithium" names LiO2's part, no element of its own


def test_a_number_passed_where_the_skills_code_passes_a_parameter_binds_it():
    from tests.skills.test_context import library_skill

    skill = library_skill("ase_emt_cu_bulk_modulus")
    query = (
        "Nickel, fcc, ASE EMT: bulk modulus in GPa from an EquationOfState fit to the energies of bulk('Ni', 'fcc', a=a) for "
        "lattice constants numpy.linspace(3.42, 3.62, 9). Float, 4 decimal places."
    )
    assert bind(skill, query).params == {"crystal_structure": "fcc", "element": "Ni", "min_lattice_constant": 3.42, "max_lattice_constant": 3.62, "num": 9}
    swapped = query.replace("numpy.linspace(3.42, 3.62, 9)", "numpy.logspace(3.42, 3.62, 9)")  # another function: no place
    with pytest.raises(BindingDeclined):
        bind(skill, swapped)


def test_a_compound_named_by_element_and_ion_before_its_formula_is_one_substance():
    from tests.skills.test_context import library_skill

    skill = library_skill("smact_validity_cspbi3")
    assert bind(skill, "Is barium titanate (BaTiO3) a valid composition according to SMACT's screening rules? Return true or false.").params == {"formula": "BaTiO3"}
    with pytest.raises(BindingDeclined):
        bind(skill, "Is barium sulfate (BaTiO3) a valid composition according to SMACT's screening rules? Return true or false.")


def test_a_skill_of_a_lattice_alone_takes_structure_words_of_its_crystal_family_only():
    from skills.binding import _lattice_system, _structure_words_of_system

    assert _lattice_system("return round(float(Lattice.hexagonal(a, c).volume), 4)") == "hexagonal"
    assert _lattice_system("s = Structure.from_spacegroup('Fm-3m', Lattice.cubic(a), ['Cu'], [[0, 0, 0]])") is None  # builds sites
    words = _structure_words_of_system("the wurtzite GaN cell, not rock-salt, not rutile", "hexagonal")
    assert "wurtzite" in words and not {"rock", "salt", "rutile"} & words
