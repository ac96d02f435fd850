"""Binding is precise first: a skill answers only a question it is sure it computes, and says why it declines."""

import pytest

from skills.binding import BindingDeclined, _answer_differs, bind, ran_with
from skills.documents import Provenance, Skill, TestCase
from skills.lifting import lift_script
from skills.params import validate_params
from tests.codes import N2_CODE, N2_QUERY
from tests.signatures import known
from tests.starter import rocksalt

ROCKSALT_QUERY = (
    "What is the density (unit: g/cm^3) of rock-salt NaCl with a cubic lattice constant of 5.64 Å, computed with pymatgen? "
    "Return a float rounded to 4 decimal places."
)
ROCKSALT_CODE = (
    "import json\nfrom pymatgen.core import Lattice, Structure\n"
    's = Structure.from_spacegroup("Fm-3m", Lattice.cubic(5.64), ["Na", "Cl"], [[0, 0, 0], [0.5, 0.5, 0.5]])\n'
    "print(json.dumps(round(float(s.density), 4)))\n"
)
NACL = rocksalt("Na", "Cl")


MOLWT_QUERY = "What is the molecular weight (unit: g/mol) of aspirin (SMILES CC(=O)Oc1ccccc1C(=O)O) according to RDKit? Return a float rounded to 3 decimal places."
MOLWT_CODE = (
    "import json\nfrom rdkit import Chem\nfrom rdkit.Chem import Descriptors\n"
    'print(json.dumps(round(Descriptors.MolWt(Chem.MolFromSmiles("CC(=O)Oc1ccccc1C(=O)O")), 3)))\n'
)
HCP_QUERY = "What is the volume (unit: Å^3) of the hexagonal unit cell of magnesium with a = 3.209 Å and c = 5.211 Å, computed with pymatgen? Return a float rounded to 3 decimal places."
HCP_CODE = "import json\nfrom pymatgen.core import Lattice\nprint(json.dumps(round(Lattice.hexagonal(3.209, 5.211).volume, 3)))\n"


def lifted(code: str, query: str, keep: tuple[str, ...] | None = None, hidden: list[str] | None = None) -> Skill:
    """A skill as the lifting generaliser writes it (``keep``: the parameters the relevance check kept)."""
    draft = lift_script(code, [query], known)
    params = {k: v for k, v in draft.parameters.items() if keep is None or k in keep}
    return Skill(
        name="lifted",
        code=draft.code,
        parameters={"type": "object", "properties": params},
        test_case=TestCase(params={k: v["default"] for k, v in params.items()}, expected=1.0),
        provenance=Provenance(query=query),
        method="lifted",
        hidden_inputs=hidden or [],
    )


def parameterless(query: str) -> Skill:
    return Skill(name="literal", code="def run():\n    return 9.9372\n", test_case=TestCase(expected=9.9372), provenance=Provenance(query=query))


N2 = lifted(N2_CODE, N2_QUERY, keep=("formula",))
ROCKSALT = lifted(ROCKSALT_CODE, ROCKSALT_QUERY)
MOLWT = lifted(MOLWT_CODE, MOLWT_QUERY)
HCP = lifted(HCP_CODE, HCP_QUERY)


def declines(skill: Skill, query: str, reason: str) -> None:
    with pytest.raises(BindingDeclined, match=reason):
        bind(skill, query)


# -- variants it must answer, bound from the question's own words ---------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (N2_QUERY.replace("a nitrogen molecule", "an oxygen molecule"), {"formula": "O2"}),
        (N2_QUERY.replace("a nitrogen molecule", "H2"), {"formula": "H2"}),
        ("Calculate the atomization energy (unit: eV) of N2 using ASE's EMT calculator. Return a float rounded to 3 decimal places.", {"formula": "N2"}),
    ],
)
def test_a_molecule_variant_binds_the_molecule_it_names(query, expected):
    assert bind(N2, query).params == expected


def test_a_compound_variant_binds_its_formula_and_its_own_lattice_constant():
    binding = bind(ROCKSALT, ROCKSALT_QUERY.replace("NaCl", "MgO").replace("5.64", "4.212"))
    assert binding.params == {"crystal": rocksalt("Mg", "O"), "a": 4.212}
    assert {b.name: b.words for b in binding.bound} == {"crystal": "MgO", "a": "cubic lattice constant of 4.212"}


def test_a_named_compound_is_read_through_the_name_database():
    query = ROCKSALT_QUERY.replace("NaCl", "magnesium oxide").replace("5.64", "4.212")
    assert bind(ROCKSALT, query).params == {"crystal": rocksalt("Mg", "O"), "a": 4.212}


def test_a_smiles_variant_binds_the_smiles_also_when_the_molecule_is_named():
    query = MOLWT_QUERY.replace("aspirin", "caffeine").replace("CC(=O)Oc1ccccc1C(=O)O", "CN1C=NC2=C1C(=O)N(C(=O)N2C)C")
    assert bind(MOLWT, query).params == {"smiles": "CN1C=NC2=C1C(=O)N(C(=O)N2C)C"}


def test_two_numbers_of_one_unit_go_to_the_parameters_their_names_tie_them_to():
    query = "Compute the volume (unit: Å^3) of the hexagonal cell of magnesium with c = 5.3 Å and a = 3.1 Å using pymatgen. Return a float rounded to 3 decimal places."
    assert bind(HCP, query).params == {"a": 3.1, "c": 5.3}
    declines(HCP, query.replace("magnesium", "zinc"), "'zinc'")  # the skill does not take the element: another one is not its question


# -- format numbers are never parameter values -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tail",
    [
        "Return a float rounded to 4 decimal places.",
        "Return a float in eV rounded to 4 decimals.",
        "Give the answer to 2 significant figures (unit: eV).",
        "Return it as an integer.",
        "Return a float (unit: eV/Å^3).",
    ],
)
def test_format_and_unit_numbers_are_not_bound(tail):
    fmax_skill = lifted(N2_CODE, N2_QUERY)  # fmax kept: a number parameter a format number could be mistaken for
    binding = bind(fmax_skill, f"Calculate the atomization energy of N2 using ASE's EMT calculator, relaxing the molecule to fmax=0.01 eV/Å first. {tail}")
    assert binding.params == {"formula": "N2", "fmax": 0.01}


def test_the_issue_query_keeps_the_verified_fmax_instead_of_binding_four():
    fmax_skill = lifted(N2_CODE, N2_QUERY)
    binding = bind(fmax_skill, "Calculate the atomization energy of N2 using ASE's EMT calculator; return a float in eV rounded to 4 decimals.")
    assert binding.params == {"formula": "N2", "fmax": 0.01}
    assert [b.words for b in binding.bound] == ["N2", "verified default"]


def test_what_a_skill_ran_with_is_every_parameter_defaults_included_in_words():
    fmax_skill = lifted(N2_CODE, N2_QUERY)
    binding = bind(fmax_skill, "Calculate the atomization energy of N2 using ASE's EMT calculator; return a float in eV rounded to 4 decimals.")
    full = ["formula='N2' (from \"N2\")", "fmax=0.01 (the skill's verified default)"]
    assert [b.describe() for b in ran_with(binding.bound, validate_params(fmax_skill.parameters, binding.params))] == full
    assert [b.describe() for b in ran_with(binding.bound[:1], validate_params(fmax_skill.parameters, {"formula": "N2"}))] == full
    with_units = ran_with(binding.bound, validate_params(fmax_skill.parameters, binding.params), fmax_skill)
    assert [b.describe() for b in with_units] == ["formula='N2' (from \"N2\")", "fmax=0.01 eV/Å (the skill's verified default)"]


# -- it declines, with the reason -------------------------------------------------------------------------------------------------


def test_a_parameterless_skill_answers_only_its_own_question():
    skill = parameterless(N2_QUERY)
    assert bind(skill, N2_QUERY).params == {}
    declines(skill, N2_QUERY.replace("a nitrogen molecule", "O2"), "answers only its own question")
    declines(skill, N2_QUERY.replace("a nitrogen molecule", "an oxygen molecule"), "answers only its own question")
    # The value it lacks, as the skill's code has it: the verified question's own words ("a nitrogen molecule") are its teacher's.
    declines(skill, "Calculate the atomization energy (unit: eV) using ASE's EMT calculator. Return a float rounded to 4 decimal places.", "no N2")


def test_a_compound_specific_default_never_stands_in_for_another_compound():
    declines(ROCKSALT, "What is the density (unit: g/cm^3) of rock-salt MgO, computed with pymatgen? Return a float rounded to 4 decimal places.", "belongs to Na, Cl in Fm-3m")


def test_an_unstated_constant_that_matters_keeps_the_skill_to_its_own_material():
    skill = lifted(ROCKSALT_CODE, ROCKSALT_QUERY, keep=("crystal",), hidden=["5.64 in Lattice.cubic(argument 1)"])
    declines(skill, ROCKSALT_QUERY.replace("NaCl", "KCl").replace(" with a cubic lattice constant of 5.64 Å", ""), "does not state")
    assert bind(skill, ROCKSALT_QUERY).params == {"crystal": NACL}


def test_two_candidate_substances_in_one_question_decline():
    declines(N2, N2_QUERY.replace("a nitrogen molecule", "O2 (or was it N2?)"), "cannot tell|names|asks about")
    declines(ROCKSALT, ROCKSALT_QUERY.replace("NaCl", "MgO or KCl"), "names")


def test_a_number_nothing_takes_declines():
    declines(N2, N2_QUERY.replace("first.", "first, at 300 K."), "300")
    declines(ROCKSALT, ROCKSALT_QUERY.replace("5.64 Å", "5.64 Å under 5 GPa"), "gpa|5")


def test_two_values_for_one_parameter_decline():
    declines(ROCKSALT, ROCKSALT_QUERY.replace("5.64 Å", "5.64 Å (or 5.5 Å)"), "two values|or")


def test_a_question_about_something_else_declines():
    declines(N2, N2_QUERY.replace("atomization energy", "bond length"), "'bond', 'length'")
    declines(N2, N2_QUERY.replace("ASE's EMT calculator", "GPAW DFT"), "dft|gpaw")
    declines(MOLWT, MOLWT_QUERY.replace("molecular weight (unit: g/mol)", "logP"), "logp")


def test_values_out_of_the_verified_kind_decline():
    declines(ROCKSALT, ROCKSALT_QUERY.replace("NaCl", "CaF2"), "another make-up")  # the skill puts Na and Cl on its two sites
    stated = ROCKSALT_QUERY.replace("rock-salt NaCl", "CaF2, Fm-3m with Ca at (0, 0, 0) and F at (0.25, 0.25, 0.25),")
    assert bind(ROCKSALT, stated).params["crystal"] == {**rocksalt("Ca", "F"), "coords": [[0.0, 0.0, 0.0], [0.25, 0.25, 0.25]]}
    declines(ROCKSALT, stated.replace("CaF2,", "rock-salt CaF2,"), "names the rock-salt structure")  # fluorite's sites
    declines(MOLWT, MOLWT_QUERY.replace("aspirin (SMILES CC(=O)Oc1ccccc1C(=O)O)", "C9H8O4"), "names|takes")
    declines(ROCKSALT, ROCKSALT_QUERY.replace("5.64", "-5.64"), "above 0")


def test_a_value_for_a_parameter_the_skill_does_not_have_declines():
    declines(MOLWT, MOLWT_QUERY.replace("according to RDKit", "at pH 7.4 according to RDKit"), "7.4|ph")


def test_one_word_is_never_bound_to_two_parameters():
    skill = lifted(HCP_CODE, HCP_QUERY)
    declines(skill, HCP_QUERY.replace("a = 3.209 Å and c = 5.211 Å", "a = c = 3.3 Å"), "speaks of a|gives c but not a")


def test_a_number_two_parameters_could_take_declines():
    skill = lifted(HCP_CODE, HCP_QUERY)
    declines(skill, "What is the volume (unit: Å^3) of the hexagonal unit cell of magnesium with lattice constants 3.3 Å, computed with pymatgen? Return a float rounded to 3 decimal places.", "cannot tell whether 3.3 is a or c|speaks of")


def test_a_number_in_another_unit_never_ties_to_a_parameter_by_nearby_words():
    fmax_skill = lifted(N2_CODE, N2_QUERY)
    for query in [
        "Calculate the atomization energy of the N2 molecule at 300 K using ASE's EMT calculator. Return a float rounded to 4 decimal places.",
        "Calculate the atomization energy of N2 using ASE's EMT calculator, relaxing the molecule first at 300 K. Return a float rounded to 4 decimal places.",
    ]:
        declines(fmax_skill, query, "300 K")


ELECTRONEGATIVITY_CODE = "import json\nfrom pymatgen.core import Composition\nprint(json.dumps(round(float(Composition('SiO2').average_electroneg), 4)))\n"
ELECTRONEGATIVITY_QUERY = "What is the composition-weighted average Pauling electronegativity of silica (SiO2), as given by pymatgen? Round to 4 decimal places."
CSCL_CODE = (
    "import json\nfrom pymatgen.core import Lattice, Structure\nfrom pymatgen.symmetry.analyzer import SpacegroupAnalyzer\n"
    "s = Structure(Lattice.cubic(4.123), ['Cs', 'Cl'], [[0, 0, 0], [0.5, 0.5, 0.5]])\nprint(json.dumps(SpacegroupAnalyzer(s).get_space_group_number()))\n"
)
CSCL_QUERY = "A cubic cell of edge 4.123 Å contains Cs at the corner and Cl at the body centre (caesium chloride structure). What international space-group number does pymatgen's SpacegroupAnalyzer assign to it? Return an integer."


def test_a_quantity_of_other_words_declines_though_the_skills_words_hold_each_of_its_words_apart():
    skill = lifted(ELECTRONEGATIVITY_CODE, ELECTRONEGATIVITY_QUERY)
    assert bind(skill, ELECTRONEGATIVITY_QUERY.replace("silica (SiO2)", "Fe2O3")).params == {"formula": "Fe2O3"}
    declines(skill, "What is the molar mass of Fe2O3 in g/mol according to pymatgen (Composition('Fe2O3').weight)? Round to 4 decimal places.", "molar")


def test_a_skill_built_on_its_own_substance_declines_a_question_naming_only_part_of_it():
    skill = lifted(CSCL_CODE, CSCL_QUERY, keep=("a",))  # the elements shown not to matter (as swapped for others)
    assert bind(skill, CSCL_QUERY.replace("4.123", "4.2")).params == {"a": 4.2}
    bcc = "A cubic cell of edge 4.123 Å has a Cs atom at the corner and another Cs atom at the body centre. What space-group number does pymatgen's SpacegroupAnalyzer give? Integer."
    declines(skill, bcc, "names Cs but not Cl")


def test_the_basis_of_the_skills_unit_said_apart_from_the_unit_asks_for_that_unit():
    skill = parameterless("What is the EMT energy per atom (unit: eV/atom) of fcc copper with a = 3.6 Å?").model_copy(update={"unit": "eV/atom"})
    assert _answer_differs(skill, "Cu fcc, a = 3.6 Å, ASE EMT calculator: energy per atom in eV (5 dp)?") is None
    assert _answer_differs(skill, "Cu fcc, a = 3.6 Å, ASE EMT calculator: total energy in eV (5 dp)?") == "the question asks for eV; the skill gives eV/atom"


def test_a_quantity_with_another_qualifier_declines_where_the_verified_qualifier_goes_unsaid():
    skill = lifted(N2_CODE, N2_QUERY)  # the atomization energy of N2
    declines(skill, "Relax N2 with the ASE EMT calculator and BFGS to fmax = 0.01 eV/Å. What is the potential energy of the relaxed molecule itself, in eV?", "potential energy")
    split = "How much energy (unit: eV) does it take to split an O2 molecule into two oxygen atoms with ASE's EMT, relaxed to fmax=0.01 eV/Å first?"
    assert bind(skill, split).params["formula"] == "O2"  # the atomization energy in other words
    assert bind(skill, N2_QUERY.replace("a nitrogen molecule", "O2")).params["formula"] == "O2"  # the atomization energy, said as verified
