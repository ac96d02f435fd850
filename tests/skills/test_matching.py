"""Matching by meaning: a skill answers a question written as working scientists type it when what is asked, how, on what
and in what form agree with what it was verified on; ordinary English never declines, a technical term it was not
verified on does.

The skills are lifted from the starter library's own scripts and questions (``skills/library/``), as learning makes them.
"""

import json
from pathlib import Path

import pytest

from skills.binding import BindingDeclined, bind
from skills.documents import Provenance, Skill
from skills.mentions import find_mentions
from tests.skills.test_binding import NACL, lifted, rocksalt

LIBRARY = Path("skills/library")


def library_skill(task: str, keep: tuple[str, ...] | None = None) -> Skill:
    """The starter task's script lifted into a skill verified on its question (level 1; level 0 as a second question)."""
    data = json.loads((LIBRARY / f"{task}.json").read_text())
    skill = lifted(data["solution_code_or_process"], data["user_query"]["1"], keep)
    provenance = Provenance(query=data["user_query"]["1"], queries=[data["user_query"]["0"]])
    return skill.model_copy(update={"unit": data.get("unit"), "output_type": data["output_type"], "provenance": provenance})


MOLAR_MASS = library_skill("pymatgen_molar_mass_fe2o3")
MOLWT = library_skill("rdkit_molwt_aspirin")
TPSA = library_skill("rdkit_tpsa_ethanol")
ROCKSALT = library_skill("pymatgen_rocksalt_density_nacl")
AROMATIC = library_skill("rdkit_aromatic_rings_naphthalene")
COHESIVE = library_skill("ase_emt_al_cohesive_energy")
BULK_MODULUS = library_skill("ase_emt_cu_bulk_modulus")
LJ_DIMER = library_skill("ase_lj_dimer_distance")
OXIDATION = library_skill("pymatgen_oxidation_state_mn_kmno4")
FRAGMENTS = library_skill("rdkit_fragments_benzyl", keep=("max_path_length", "smiles"))


def declines(skill: Skill, query: str, reason: str) -> None:
    with pytest.raises(BindingDeclined, match=reason):
        bind(skill, query)


# -- units are units ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("skill", "query", "params"),
    [
        (ROCKSALT, "Using pymatgen, what is the density in g/cm^3 of rock-salt KCl with a = 6.29 Å? Return a float.", {"a": 6.29, "crystal": rocksalt("K", "Cl")}),
        (MOLWT, "RDKit molecular weight of caffeine, CN1C=NC2=C1C(=O)N(C(=O)N2C)C, in g/mol please.", {"smiles": "CN1C=NC2=C1C(=O)N(C(=O)N2C)C"}),
        (TPSA, "What TPSA in Å^2 does RDKit give for paracetamol, CC(=O)Nc1ccc(O)cc1?", {"smiles": "CC(=O)Nc1ccc(O)cc1"}),
        (TPSA, "What TPSA does RDKit give for paracetamol, CC(=O)Nc1ccc(O)cc1? Answer in Å².", {"smiles": "CC(=O)Nc1ccc(O)cc1"}),
    ],
)
def test_unit_symbols_are_read_as_units_never_as_words(skill, query, params):
    assert bind(skill, query).params == params


def test_a_unit_of_another_quantity_still_declines():
    declines(TPSA, "What TPSA in Å does RDKit give for paracetamol, CC(=O)Nc1ccc(O)cc1?", "asks for Å; the skill gives Å\\^2")
    declines(MOLAR_MASS, "What is the mass of one Fe2O3 formula unit in grams, according to pymatgen?", "asks for grams")


# -- element symbols and formulas are substances ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "formula"),
    [
        ("Molar mass of Ge according to pymatgen, g/mol, 4 decimal places.", "Ge"),
        ("What is the molar mass of germanium (Ge) from pymatgen? Return a float.", "Ge"),
        ("What is the molar mass of calcite (CaCO3) from pymatgen? Return a float.", "CaCO3"),
        ("What's the molar mass of K₂Cr₂O₇ in g/mol with pymatgen?", "K2Cr2O7"),
    ],
)
def test_a_lone_element_symbol_or_a_formula_in_brackets_is_a_substance_not_a_word(query, formula):
    assert bind(MOLAR_MASS, query).params == {"formula": formula}


# -- ordinary English never declines --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "Could you work out the molar mass of CaCO3 for me with pymatgen? I'd like it in g/mol.",
        "Between the two of them I trust pymatgen more: what molar mass does it give for CaCO3? Round them equally, to 4 places.",
        "Where does the molar mass of CaCO3 fall according to pymatgen? Print them out to 4 decimal places.",
    ],
)
def test_ordinary_english_never_declines(query):
    assert bind(MOLAR_MASS, query).params == {"formula": "CaCO3"}


# -- a molecule given by name and SMILES is one substance ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "smiles"),
    [
        ("What is the TPSA of L-methionine, CSCC[C@H](N)C(=O)O, from RDKit?", "CSCC[C@H](N)C(=O)O"),  # the database lists D
        ("TPSA of acetylsalicylic acid (CC(=O)Oc1ccccc1C(=O)O) with RDKit?", "CC(=O)Oc1ccccc1C(=O)O"),
    ],
)
def test_a_molecule_given_by_name_and_smiles_is_one_substance(query, smiles):
    assert bind(TPSA, query).params == {"smiles": smiles}


def test_a_name_and_the_smiles_of_another_molecule_are_two():
    declines(TPSA, "What is the TPSA of ethanol, SMILES COC, from RDKit?", "names")


# -- "±5 %" is the factors 0.95 and 1.05 ------------------------------------------------------------------------------------

SCAN_CODE = """import json
import numpy as np
from ase.build import bulk
from ase.calculators.emt import EMT
from ase.eos import EquationOfState
volumes, energies = [], []
for s in np.linspace(0.95, 1.05, 7):
    atoms = bulk("Cu", "fcc", a=3.6 * s)
    atoms.calc = EMT()
    volumes.append(atoms.get_volume()); energies.append(atoms.get_potential_energy())
print(json.dumps(round(EquationOfState(volumes, energies).fit()[0], 4)))
"""
SCAN_QUERY = "What equilibrium volume (unit: Å^3) does ASE's EMT give for fcc copper (a = 3.6 Å) from an equation-of-state fit over lattice constants scaled by factors from 0.95 to 1.05? Return a float."


def test_plus_minus_five_per_cent_states_the_factors_095_and_105():
    scan = lifted(SCAN_CODE, SCAN_QUERY)
    assert {n: p["default"] for n, p in scan.parameters.model_dump()["properties"].items() if n in ("min_factor", "max_factor")} == {"min_factor": 0.95, "max_factor": 1.05}
    asked = "What equilibrium volume (unit: Å^3) does ASE's EMT give for fcc copper (a = 3.6 Å), fitting an equation of state to lattice constants scaled by ±5 %?"
    assert bind(scan, asked).params["min_factor"] == 0.95 and bind(scan, asked).params["max_factor"] == 1.05
    wider = bind(scan, asked.replace("±5 %", "±10%")).params
    assert (wider["min_factor"], wider["max_factor"]) == (0.9, 1.1)
    declines(scan, asked.replace("±5 %", "±150 %"), r"min_factor must be above 0 \(got -0.5\)")  # the factors are checked like any value


def test_plus_minus_restates_factors_the_verified_question_stated_as_constants():
    constant = lifted(SCAN_CODE, SCAN_QUERY, keep=("element", "a"))
    asked = "Fit an equation of state with ASE's EMT to fcc copper (a = 3.6 Å) scaled by ±5 %: what equilibrium volume (unit: Å^3) results?"
    assert bind(constant, asked).params == {"element": "Cu", "a": 3.6}
    declines(constant, asked.replace("±5 %", "±3 %"), "no pair of factors")  # another spread: the skill cannot scan it


# -- technical terms the skill was not verified on still decline ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("skill", "query", "word"),
    [
        (BULK_MODULUS, "Bulk modulus (unit: GPa) of fcc Cu with ASE's EMT from a Birch-Murnaghan fit to 11 lattice constants between 3.5 and 3.7 Å?", "birch"),
        (MOLWT, "What monoisotopic molecular weight (unit: g/mol) does RDKit give for aspirin, CC(=O)Oc1ccccc1C(=O)O?", "monoisotopic"),
        (AROMATIC, "How many heavy atoms does naphthalene (c1ccc2ccccc2c1) have in RDKit? Return an integer.", "heavy"),
        (LJ_DIMER, "Relax a dimer with ASE's Morse potential from 1.5 Å apart to fmax = 1e-5 eV/Å: the final separation (unit: Å)?", "morse"),
        (MOLWT, "What is the exact mass (unit: g/mol) of aspirin, CC(=O)Oc1ccccc1C(=O)O, in RDKit?", "exact"),
        (TPSA, "How many rotatable bonds does ethanol (CCO) have in RDKit? Return a float.", "rotatable"),
        (ROCKSALT, "Density (unit: g/cm^3) of zincblende NaCl with a = 5.64 Å, computed with pymatgen?", "zincblende"),
        (COHESIVE, "What total energy per atom (unit: eV/atom) does ASE's EMT give fcc aluminium at a = 4.05 Å?", "total"),
    ],
)
def test_a_technical_term_the_skill_was_not_verified_on_declines(skill, query, word):
    declines(skill, query, f"'{word}'")


@pytest.mark.parametrize(
    ("skill", "query", "word"),
    [
        (MOLAR_MASS, "What is the molar volume of Fe2O3 according to pymatgen? Return a float.", "volume"),
        (MOLAR_MASS, "What is the mass percent of iron in Fe2O3 according to pymatgen? Return a float.", "percent"),
    ],
)
def test_what_is_asked_must_be_what_the_skill_computes_however_ordinary_the_word(skill, query, word):
    declines(skill, query, f"'{word}'")


# -- the words of a skill's own field are read by meaning -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("skill", "query", "params"),
    [
        # "effective-medium-theory" is EMT, "lattice parameter" the lattice constant
        (COHESIVE, "Estimate the cohesive energy (unit: eV/atom) of nickel (fcc, lattice parameter 3.52 Å) with ASE's effective-medium-theory calculator.", {"element": "Ni", "crystal_structure": "fcc", "a": 3.52}),
        # a range goes to the two ends the verified question stated as one
        (BULK_MODULUS, "Fit an equation of state to EMT energies of fcc Ag at 11 evenly spaced lattice constants from 4.0 to 4.2 Å and give me the bulk modulus (unit: GPa) from ASE.", {"element": "Ag", "crystal_structure": "fcc", "min_lattice_constant": 4.0, "max_lattice_constant": 4.2, "num": 11}),
        # the nearest of the verified words decides: the cutoff is 10.0, the start 1.5
        (LJ_DIMER, "Relax a Lennard-Jones dimer in ASE (sigma = 1.0 Å, epsilon = 1.0 eV, cutoff 10.0 Å) starting 1.5 Å apart, down to fmax = 1e-5 eV/Å: what separation (unit: Å) do you end up with?", {"sigma": 1.0, "epsilon": 1.0, "rc": 10.0, "fmax": 1e-05, "starting_distance": 1.5}),
        # the question states the same numbers as the verified one, in the same places
        (FRAGMENTS, "Count the total number of molecular fragments for Nc1ccccc1CO using RDKit with fragment path lengths 1 to 6 and RDKit's default functional groups file. Return an integer.", {"max_path_length": 6, "smiles": "Nc1ccccc1CO"}),
    ],
)
def test_a_question_in_other_words_binds_what_the_verified_one_stated(skill, query, params):
    assert bind(skill, query).params == params


def test_an_oxidation_state_asked_with_names_binds_the_element_and_the_compound():
    query = "Going by pymatgen's oxidation-state guesses, which oxidation state does manganese take in potassium permanganate? Return an integer."
    assert bind(OXIDATION, query).params == {"element": "Mn", "formula": "KMnO4"}
    assert bind(OXIDATION, "What oxidation state does pymatgen guess for O in KMnO4? Return an integer.").params == {"element": "O", "formula": "KMnO4"}


# -- a question that denies what the skill computes declines ---------------------------------------------------------------

ATOMIZATION = library_skill("ase_emt_atomization_n2")


@pytest.mark.parametrize(
    ("skill", "query", "reason"),
    [
        (COHESIVE, "What plain EMT energy per atom (unit: eV/atom) does ASE give fcc Ni at a = 3.52 Å? I mean E/N, not the cohesive energy.", "'not cohesive'"),
        (ATOMIZATION, "Atomization energy (unit: eV) of O2 with ASE's EMT calculator, with no relaxation of the molecule first?", "'not relaxation'"),
        (ATOMIZATION, "Atomization energy (unit: eV) of O2 with ASE's EMT calculator; don't relax the molecule first.", "'not relax'"),
    ],
)
def test_a_question_that_denies_what_the_skill_computes_declines(skill, query, reason):
    declines(skill, query, reason)


def test_a_denied_word_is_what_an_un_word_of_the_skill_says():
    vacancy = library_skill("ase_emt_cu_vacancy_formation")
    query = "Vacancy formation energy (unit: eV) of fcc Ni (a = 3.52 Å) in a 3x3x3 supercell of the conventional cubic cell with ASE's EMT, no relaxation."
    assert bind(vacancy, query).params == {"supercell": 3, "element": "Ni", "crystal_structure": "fcc", "a": 3.52}  # "no relaxation" is the skill's "unrelaxed"


def test_a_pronoun_is_never_what_a_question_asks_for():
    assert bind(AROMATIC, "Anthracene (c1ccc2cc3ccccc3cc2c1) has aromatic rings; count them with RDKit. Return an integer.").params == {
        "smiles": "c1ccc2cc3ccccc3cc2c1"
    }


# -- ordinary words that make it another quantity decline --------------------------------------------------------------------

MASS_FRACTION = library_skill("pymatgen_oxygen_mass_fraction_al2o3")
HBONDS = library_skill("rdkit_hbond_donors_acceptors_paracetamol")
LIPINSKI = library_skill("rdkit_lipinski_aspirin")
SMACT = library_skill("smact_validity_cspbi3")
SPACEGROUP = library_skill("spglib_spacegroup_nacl")
JSON_ROUNDTRIP = library_skill("pymatgen_json_roundtrip_formula")
XRD = library_skill("pymatgen_xrd_cu_strongest_peak")
FORMATION = library_skill("pymatgen_phase_diagram_formation_energy_li2o")
EHULL = library_skill("pymatgen_phase_diagram_ehull_li2o2")
VACANCY = library_skill("ase_emt_cu_vacancy_formation")

LI_O = "Li 0.0, O2 0.0, Li2O -6.2, Li2O2 -5.6, LiO2 -2.4"


@pytest.mark.parametrize(
    ("skill", "query", "reason"),
    [
        # the quantity turned around, or a part of it left out
        (MASS_FRACTION, "What fraction of the mass of Fe2O3 is not iron, computed with pymatgen? Return a float between 0 and 1.", "excludes iron"),
        (LIPINSKI, "Does ibuprofen (SMILES CC(C)Cc1ccc(cc1)C(C)C(=O)O) violate Lipinski's rule of five, computed with RDKit? Return true or false.", "'violate'"),
        (SMACT, "Is NaCl2 a chemically invalid composition according to SMACT's screening rules? Return true or false.", "'invalid'"),
        (SMACT, "Is Cu3Si chemically valid according to SMACT's charge-neutrality rule alone, ignoring the electronegativity test? Return true or false.", "'ignoring'"),
        # a word of what is asked, added or dropped
        (MASS_FRACTION, "What mole fraction of MgO is oxygen, computed with pymatgen? Return a float between 0 and 1.", "'mole'"),
        (SPACEGROUP, "What is the Hall symbol of rock-salt KCl with a = 6.29 Å, as found by spglib? Return a string.", "'hall'"),
        (JSON_ROUNDTRIP, "Store a wurtzite ZnO structure as JSON with pymatgen and load it back; what full formula does it have? Return a string.", "'full'"),
        (AROMATIC, "How many rings does tetralin (SMILES c1ccc2c(c1)CCCC2) have according to RDKit? Return an integer.", "without 'aromatic'"),
        (XRD, "At what 2-theta angle (unit: degrees) is the weakest Cu K-alpha powder diffraction peak of fcc copper (a = 3.615 Å), with pymatgen?", "weakest"),
        # another basis, another unit, another order
        (ATOMIZATION, "Atomization energy per atom (in eV) of O2 using ASE's EMT calculator, relaxing the molecule to fmax=0.01 eV/Å first?", "per atom"),
        (FORMATION, f"Given these total energies (eV per atom): {LI_O}, what is the formation energy per atom (unit: eV/atom) of Li2O? Use pymatgen.", "values in eV"),
        (EHULL, f"Given these total energies (kJ/mol per formula unit): {LI_O}, how far above the convex hull (unit: eV/atom) is Li2O2? Use pymatgen.", "values in kJ/mol"),
        (HBONDS, "How many hydrogen-bond donors and acceptors does aspirin (SMILES CC(=O)Oc1ccccc1C(=O)O) have per RDKit's Lipinski counts? Return a list [acceptors, donors] of integers.", r"\[acceptors, donors\]"),
        # a part of the substance singled out, a setting the code fixes, a repeat no parameter takes
        (MOLAR_MASS, "What is the molar mass (unit: g/mol) of the iron in Fe2O3 according to pymatgen?", "singles out 'iron'"),
        (TPSA, "What is the TPSA (unit: Å^2) of methionine (SMILES CSCCC(N)C(=O)O) according to RDKit, counting sulfur as polar?", "singles out 'sulfur'"),
        (VACANCY, "What is the unrelaxed vacancy formation energy (unit: eV) of copper (fcc, a = 3.6 Å) in a 2x2x3 repetition of the conventional cell, with ASE's EMT?", "2x2x3"),
        (library_skill("rdkit_fragments_benzyl"), "Count the total number of molecular fragments of OCc1ccccc1CN using RDKit with a fragment path length of exactly 3 and RDKit's default functional groups file.", "range"),
    ],
)
def test_ordinary_words_that_make_it_another_quantity_decline(skill, query, reason):
    declines(skill, query, reason)


@pytest.mark.parametrize(
    ("skill", "query", "params"),
    [
        (FORMATION, f"Total energies (eV per formula unit) {LI_O}. Formation energy per atom (eV/atom) of Li2O with pymatgen?", None),
        (HBONDS, "Count the hydrogen-bond donors and acceptors of aspirin (CC(=O)Oc1ccccc1C(=O)O) with RDKit's Lipinski module; give [donors, acceptors].", None),
        (MASS_FRACTION, "Using pymatgen, what fraction of the mass of MgO is oxygen? Return a float between 0 and 1.", {"formula": "MgO", "element": "O"}),
        (AROMATIC, "Count the aromatic rings in pyrene (c1cc2ccc3cccc4ccc(c1)c2c34) with RDKit. Return an integer.", {"smiles": "c1cc2ccc3cccc4ccc(c1)c2c34"}),
    ],
)
def test_the_same_quantity_in_other_words_still_binds(skill, query, params):
    binding = bind(skill, query)
    assert params is None or binding.params == params
    assert binding.params


# -- a list of entries: another system, another length, the compound asked about beside it ---------------------------------


@pytest.mark.parametrize(
    ("skill", "query", "params"),
    [
        (
            EHULL,
            "For the Mg-O system with total energies Mg 0.0, O2 0.0, MgO -6.2 and MgO2 -6.0 eV per formula unit, how far (unit: eV/atom) "
            "does magnesium peroxide MgO2 sit above the convex hull? Compute it with pymatgen.",
            {"energies": [["Mg", 0.0], ["O2", 0.0], ["MgO", -6.2], ["MgO2", -6.0]], "formula": "MgO2"},
        ),
        (
            FORMATION,
            "Total energies (eV per formula unit): Na 0.0, F2 0.0, NaF -6.0, NaF2 -5.4. With pymatgen, what is the formation energy per "
            "atom (unit: eV/atom) of NaF?",
            {"energies": [["Na", 0.0], ["F2", 0.0], ["NaF", -6.0], ["NaF2", -5.4]], "formula": "NaF"},
        ),
    ],
)
def test_a_list_of_entries_binds_whole_for_another_system(skill, query, params):
    assert bind(skill, query).params == params


@pytest.mark.parametrize(
    ("skill", "query", "reason"),
    [
        (EHULL, f"Given these total energies (eV, per formula unit as written): {LI_O}, how far below the convex hull (unit: eV/atom) is Li2O? Use pymatgen.", "'below'"),
        (FORMATION, f"Given these total energies (eV, per formula unit as written): {LI_O}, how far below the convex hull (unit: eV/atom) is Li2O? Use pymatgen.", "'hull'"),
        (EHULL, f"Given these total energies (eV, per formula unit as written): {LI_O}, Li2O -5.9, how far above the convex hull (unit: eV/atom) is Li2O2? Use pymatgen.", "twice"),
        (EHULL, f"Given these total energies (eV, per formula unit as written): {LI_O}, how far above the convex hull (unit: eV/atom) would Li2O2 be with its energy lowered by 0.3 eV? Use pymatgen.", "0.3"),
        (EHULL, "How far above the convex hull (unit: eV/atom) is Li2O2, with pymatgen? Return a float.", "lists no entries"),
        # the formation energy is not the distance to the hull, however the hull is written
        (FORMATION, f"pymatgen PhaseDiagram, total energies in eV per formula unit as written: {LI_O}. E_above_hull of LiO2 in eV/atom?", "'hull'"),
        (FORMATION, f"Total energies (eV per formula unit): {LI_O}. How far from the hull is LiO2 (unit: eV/atom)? Use pymatgen.", "'hull'"),
        # per formula unit, where the skill answers per atom, though the energies it is given are per formula unit too
        (FORMATION, f"Given total energies {LI_O} eV (per formula unit as written), what is the formation energy of Li2O per formula unit (eV/f.u.), from pymatgen?", "per formula unit; the skill gives eV/atom"),
        (FORMATION, f"Energies per formula unit: {LI_O}. Formation energy of Li2O in eV/f.u. with pymatgen?", "the skill gives eV/atom"),
    ],
)
def test_a_list_of_entries_asked_otherwise_declines(skill, query, reason):
    declines(skill, query, reason)


# -- a structure type is a value: another one binds where the question names it, with the numbers that belong to it ------

SPACEGROUP_CODE = library_skill("spglib_spacegroup_nacl")
COHESIVE_CODE = library_skill("ase_emt_al_cohesive_energy")


@pytest.mark.parametrize(
    ("skill", "query", "params"),
    [
        (SPACEGROUP_CODE, "What space group (international symbol) does spglib find for zincblende GaAs with a = 5.653 Å? Return a string.",
         {"formula": "GaAs", "crystal_structure": "zincblende", "a": 5.653}),
        (COHESIVE_CODE, "What is the cohesive energy (unit: eV/atom) of body-centred cubic aluminium with a = 3.23 Å according to ASE's EMT calculator?",
         {"element": "Al", "crystal_structure": "bcc", "a": 3.23}),
    ],
)  # fmt: skip
def test_another_structure_type_binds_where_the_question_names_it(skill, query, params):
    assert bind(skill, query).params == params


@pytest.mark.parametrize(
    ("skill", "query", "reason"),
    [
        # another structure of the same element is another substance: the verified lattice constant does not belong to it
        (COHESIVE_CODE, "What is the cohesive energy (unit: eV/atom) of bcc aluminium according to ASE's EMT calculator?", "does not state a"),
        (COHESIVE_CODE, "Cohesive energy (unit: eV/atom) of aluminium with a = 3.23 Å in the bcc rather than the fcc structure, with ASE's EMT?", "fcc"),
        (COHESIVE_CODE, "Cohesive energy (unit: eV/atom) of aluminium with a = 3.23 Å, in the bcc structure and in the fcc one, with ASE's EMT?", "which structure"),
        (SPACEGROUP_CODE, "What is the international space-group symbol of perovskite SrTiO3 with a = 3.905 Å, as found by spglib?", "perovskite"),
    ],
)
def test_a_structure_type_asked_otherwise_declines(skill, query, reason):
    declines(skill, query, reason)


# -- what an attack found: an entry in another basis, another isomer, a structure by another name, a formula of its own --

ATOMIZATION_CODE = library_skill("ase_emt_atomization_n2")
VACANCY_CODE = library_skill("ase_emt_cu_vacancy_formation")
LI_O_ASK = "how far above the convex hull (unit: eV/atom) is Li2O2? Use pymatgen."


@pytest.mark.parametrize(
    ("skill", "query", "reason"),
    [
        (EHULL, f"Given these total energies: Li 0.0 eV/atom, O2 0.0 eV/atom, Li2O -6.0, Li2O2 -1.4 eV/atom, LiO2 -2.4, {LI_O_ASK}", "not as the other entries"),
        (EHULL, f"Given these total energies (eV per formula unit unless noted): Li 0.0, O2 0.0, Li2O -6.0, Li2O2 -1.4 per atom, LiO2 -2.4, {LI_O_ASK}", "per atom"),
        (EHULL, f"Given these total energies (eV per formula unit): Li 0.0, O2 0.0, Li2O -6.0, Li2O2 -11.2 (per two formula units), LiO2 -2.4, {LI_O_ASK}", "two formula units"),
        (EHULL, f"Given these total energies (per formula unit): Li 0.0 eV, O2 0.0 eV, Li2O -6.0 eV, Li2O2 -5.6 eV, LiO2 -231.6 kJ/mol, {LI_O_ASK}", "not as the other entries"),
        (ATOMIZATION_CODE, "Calculate the atomization energy (unit: eV) of cyclopentene, C5H8, using ASE's EMT calculator, relaxing the molecule to fmax=0.01 eV/Å first.", "spiropentane"),
        (ATOMIZATION_CODE, "Calculate the atomization energy (unit: eV) of 1,3-pentadiene, C5H8, with ASE's EMT calculator after relaxing it to fmax=0.01 eV/Å.", "spiropentane"),
        (ATOMIZATION_CODE, "Calculate the atomization energy (unit: eV) of Dewar benzene (C6H6) using ASE's EMT calculator, relaxing the molecule to fmax=0.01 eV/Å first.", "as benzene"),
        (COHESIVE_CODE, "What is the cohesive energy (unit: eV/atom) of Cu in the A15 structure with a = 4.6 Å according to ASE's EMT calculator?", "A15 structure"),
        (library_skill("ase_emt_cu_lattice_constant"), "What is the equilibrium lattice constant (unit: Å) of copper in the A2 (tungsten-type) structure predicted by "
         "ASE's EMT potential, from an equation-of-state fit over 11 evenly spaced lattice constants from 2.8 to 3.0 Å?", "the skill builds fcc|.tungsten."),
        (VACANCY_CODE, "What is the unrelaxed vacancy formation energy (unit: eV) of copper (fcc, a = 3.6 Å) in a 3x3x3 supercell of the conventional cubic cell with ASE's EMT, "
         "taking the removed atom to the free atom (E_f = E(N-1) + E_atom - E(N))?", "its own formula"),
        (library_skill("spglib_symmetry_operations_si"), "How many symmetry operations does spglib find for the conventional 8-atom cubic cell of diamond silicon with "
         "a = 5.431 Å after replacing one Si atom by Ge? Return an integer.", "replacing"),
    ],
)  # fmt: skip
def test_what_an_attack_found_declines(skill, query, reason):
    declines(skill, query, reason)


@pytest.mark.parametrize(
    ("query", "structure"),
    [("Cu in the A2 (tungsten-type) structure", "bcc"), ("b.c.c. copper", "bcc"), ("Ni in the A3 (magnesium-type) structure", "hcp"), ("Ag in the Mg-type structure", "hcp")],
)
def test_a_structure_is_read_by_its_other_names(query, structure):
    from skills.structures import structures

    assert structures(query) == {structure}


def test_entries_with_the_lists_basis_said_after_them_bind():
    query = "E(Mg) = -1.60 eV, E(O2) = -9.86 eV, E(MgO) = -12.05 eV (total energies per formula unit). What is the energy above hull of MgO? (unit: eV/atom)"
    assert bind(EHULL, query).params["energies"] == [["Mg", -1.6], ["O2", -9.86], ["MgO", -12.05]]


def test_the_molecule_ase_builds_for_a_formula_binds_by_its_name_or_formula():
    query = "Calculate the atomization energy (unit: eV) of {} using ASE's EMT calculator, relaxing the molecule to fmax=0.01 eV/Å first."
    assert bind(ATOMIZATION_CODE, query.format("benzene (C6H6)")).params["formula"] == "C6H6"
    assert bind(ATOMIZATION_CODE, query.format("carbon monoxide (CO)")).params["formula"] == "CO"


def test_a_question_asking_for_a_value_in_a_unit_never_gets_a_name():
    crystal_system = SPACEGROUP_CODE.model_copy(update={"output_type": "str", "unit": None})
    declines(crystal_system, "rock-salt NaCl, a = 5.64 Å: unit cell volume in Å^3 via spglib, 4 dp", "asks for a value in Å\\^3")


def test_a_molecule_named_right_before_its_smiles_is_named_whatever_the_name_database_knows():
    smiles = "CC(C)c1c(C(=O)Nc2ccccc2)c(-c2ccccc2)c(-c2ccc(F)cc2)n1CC[C@@H](O)C[C@@H](O)CC(=O)O"
    assert bind(TPSA, f"What is the topological polar surface area (unit: Å^2) of atorvastatin (SMILES {smiles}) according to RDKit?").params == {"smiles": smiles}
    # a name the database does not know, away from the SMILES, is a word the skill was not verified on
    declines(TPSA, f"What is the topological polar surface area (unit: Å^2) of the atorvastatin lactone of {smiles} per RDKit?", "atorvastatin")


def test_a_formula_with_a_bracketed_group_binds_whole():
    assert bind(MOLAR_MASS, "According to pymatgen, what is the molar mass of calcium phosphate, Ca3(PO4)2, in grams per mole?").params == {"formula": "Ca3(PO4)2"}
    assert bind(MASS_FRACTION, "With pymatgen, what fraction of the mass of Mg(OH)2 is oxygen? Return a float between 0 and 1.").params == {
        "formula": "Mg(OH)2", "element": "O"
    }


def test_units_spelled_out_read_as_their_symbols():
    """ "4.08 angstrom" is a length in Å; "grams per cubic centimetre" is g/cm^3; "kilograms per cubic metre" is not."""
    from skills.units import same_unit, unit_spans

    assert same_unit("grams per cubic centimetre", "g/cm^3") and same_unit("angstrom", "Å") and same_unit("ångströms", "Å")
    assert not same_unit("kilograms per mole", "g/mol")
    assert [text for _, _, text in unit_spans("in grams per cubic centimetre, or kJ per mole")] == ["grams per cubic centimetre", "kJ per mole"]
    assert find_mentions("at a lattice constant of 4.08 angstrom?")[0].unit == "angstrom"


def test_questions_in_other_writers_words_bind_as_they_mean():
    """Written by someone else (blind set E): a unit spelled out, a sugar named beside the ring SMILES the database lists open."""
    gold = "According to ASE's effective-medium theory (EMT) calculator, what's the cohesive energy of fcc gold at a lattice constant of 4.08 angstrom? Answer in electronvolts per atom, as a positive number, to four decimals."
    assert bind(COHESIVE, gold).params["a"] == 4.08
    magnesia = "Density of rock-salt MgO with a cubic lattice constant of 4.212 Å, computed with pymatgen, in grams per cubic centimetre (4 decimal places)?"
    assert bind(ROCKSALT, magnesia).params == {"crystal": rocksalt("Mg", "O"), "a": 4.212}
    with pytest.raises(BindingDeclined):  # another unit of the answer
        bind(ROCKSALT, magnesia.replace("grams per cubic centimetre", "kilograms per cubic metre"))
    glucose = "Can you give me the Lipinski H-bond donor and acceptor counts that RDKit reports for glucose{} As [donors, acceptors]."
    for written in (", SMILES OCC1OC(O)C(O)C(O)C1O?", " (SMILES OCC1OC(O)C(O)C(O)C1O)?", " (OCC1OC(O)C(O)C(O)C1O)?"):
        assert bind(HBONDS, glucose.format(written)).params["smiles"] == "OCC1OC(O)C(O)C(O)C1O", written
    assert bind(HBONDS, glucose.format(" and OCC1OC(O)C(O)C(O)C1O?")).params["smiles"] == "OCC1OC(O)C(O)C(O)C1O"  # one molecule, twice
    for two in (" and for CCO?", " and ethanol, SMILES CCO?", ", SMILES OCC1OC(O)C(O)C1O?"):  # two molecules (the last a pentose ring)
        with pytest.raises(BindingDeclined):
            bind(HBONDS, glucose.format(two))


def test_a_length_in_another_unit_is_converted_and_anything_else_in_another_unit_declines():
    nickel = "Unrelaxed vacancy formation energy of nickel from ASE's EMT: fcc Ni with a = {}, 3×3×3 supercell of the conventional cubic cell. eV, 4 dp."
    for written in ("0.352 nm", "352 pm", "3.52 angstrom"):
        params = bind(VACANCY, nickel.format(written)).params
        assert (params["a"], params["element"]) == (3.52, "Ni"), written
    gold = "What's the cohesive energy of fcc gold at a lattice constant of {} with ASE's EMT? eV/atom, 4 dp."
    assert bind(COHESIVE, gold.format("0.408 nm")).params["a"] == 4.08
    for wrong in ("4.08 eV", "4.08 K"):
        with pytest.raises(BindingDeclined):
            bind(COHESIVE, gold.format(wrong))
    with pytest.raises(BindingDeclined):  # a range in nm never sets the verified range in Å
        bind(BULK_MODULUS, "Bulk modulus of fcc Ag from ASE EMT: E-V fit over 11 evenly spaced lattice constants from 0.395 to 0.415 nm. GPa.")


def test_what_an_attack_on_units_and_tautomers_found_declines():
    """A number without a unit beside one in nm, a fixed setting restated in another unit, an answer unit not known before,
    and a ring isomer that is not the named molecule's hemiacetal: each declines."""
    hexagonal = library_skill("pymatgen_hcp_cell_volume_mg")
    volume = "What is the volume (unit: Å^3) of the hexagonal unit cell of magnesium with {}, computed with pymatgen?"
    assert bind(hexagonal, volume.format("a = 0.3209 nm and c = 0.5211 nm")).params == {"a": 3.209, "c": 5.211}
    for mixed in ("a = 0.3209 and c = 0.5211 nm", "c = 0.5211 nm and a = 0.3209"):
        with pytest.raises(BindingDeclined, match="without a unit"):
            bind(hexagonal, volume.format(mixed))
    dimer = library_skill("ase_lj_dimer_distance")
    assert bind(dimer, dimer.provenance.query.replace("sigma = 1.0 Å", "sigma = 1.0 nm")).params["sigma"] == 10.0  # a parameter: in Å
    third = bind(dimer, dimer.provenance.query.replace("cutoff of 10.0 Å", "cutoff of 1.0")).params  # a third 1.0: the cutoff's own
    assert (third["sigma"], third["epsilon"], third["rc"]) == (1.0, 1.0, 1.0)
    assert bind(dimer, dimer.provenance.query.replace("cutoff of 10.0 Å", "cutoff of 6.0 Å")).params["rc"] == 6.0
    with pytest.raises(BindingDeclined, match="pounds per cubic inch"):
        bind(ROCKSALT, "Density of rock-salt NaCl with a cubic lattice constant of 5.64 Å, computed with pymatgen, in pounds per cubic inch?")
    with pytest.raises(BindingDeclined, match="per atom"):  # a basis with a word between: "per iron atom"
        bind(MOLAR_MASS, "What is the molar mass (unit: g/mol) of Fe2O3 according to pymatgen, per iron atom?")
    assert bind(COHESIVE, "Cohesive energy of fcc aluminium, a = 4.05 Å, with ASE's EMT, in eV per Al atom?").params["a"] == 4.05
    with pytest.raises(BindingDeclined, match="milligrams per mole"):
        bind(MOLAR_MASS, "What is the molar mass of Fe2O3 in milligrams per mole according to pymatgen?")
    for named, ring in (("fructose", "OCC1OC(O)C(O)C(O)C1O"), ("glucose", "OCC1(O)OCC(O)C(O)C1O"), ("acetone", "CC1CO1"), ("hexanal", "OC1CCCCC1")):
        with pytest.raises(BindingDeclined, match="names"):
            bind(TPSA, f"TPSA of {named}, SMILES {ring}, with RDKit (unit: Å^2)")


def test_systematic_names_shorthand_and_a_negation_that_ends_at_its_phrase():
    """Blind set F: a molecule given by its IUPAC name beside its SMILES, "mol" for the molecule, "no relaxation of atoms"."""
    crippen = library_skill("rdkit_logp_ibuprofen")
    caffeine = "1,3,7-trimethylpurine-2,6-dione (caffeine, SMILES CN1C=NC2=C1C(=O)N(C(=O)N2C)C): what is its Crippen logP according to RDKit? 4 decimal places."
    assert bind(crippen, caffeine).params["smiles"] == "CN1C=NC2=C1C(=O)N(C(=O)N2C)C"
    nicotine = "MW nicotine? 3-[(2S)-1-methylpyrrolidin-2-yl]pyridine, CN1CCC[C@H]1c1cccnc1. rdkit, g/mol, 4dp"
    assert bind(MOLWT, nicotine).params["smiles"] == "CN1CCC[C@H]1c1cccnc1"
    for two in ("MW of ethanol and 2,6-dimethylpyridine (CCO), rdkit g/mol", "MW of 2,6-dimethylpyridine (CCO), rdkit g/mol",
                "MW of 3-[(2S)-1-methylpyrrolidin-2-yl]pyridine and pyridine, CN1CCC[C@H]1c1cccnc1, rdkit g/mol"):  # fmt: skip
        with pytest.raises(BindingDeclined, match="names"):
            bind(MOLWT, two)
    aromatic = "How many aromatic rings does hexa-2,4-dienal (SMILES {}) have according to RDKit?"
    with pytest.raises(BindingDeclined, match="not the molecule"):  # the name database knows the name: another molecule
        bind(AROMATIC, aromatic.format("Cc1ccc(C)o1"))
    atomization = library_skill("ase_emt_atomization_n2")
    assert bind(atomization, "CO atomization E? ASE EMT, relax mol w/ BFGS to fmax=0.01 eV/A first, give eV (positive), 4 dp").params["formula"] == "CO"
    platinum = "Vacancy formation energy for platinum, fcc with a = 3.92 Å, no relaxation of atoms, in 3x3x3 supercell made from the conventional cubic cell, EMT of ASE. eV."
    assert bind(VACANCY, platinum).params["element"] == "Pt"
    with pytest.raises(BindingDeclined, match="relax"):
        bind(VACANCY, platinum.replace("no relaxation of atoms", "relaxation of atoms"))


CHGNET_ENERGY = library_skill("chgnet_relax_energy_nacl")


def test_a_chgnet_skill_binds_another_rock_salt_and_declines_another_potential_written_in_capitals():
    asked = "Using the CHGNet universal potential, relax rock-salt KCl (starting lattice constant 6.29 Å) to fmax = 0.01 eV/Å. Energy per atom in eV/atom?"
    assert bind(CHGNET_ENERGY, asked).params == {"a": 6.29, "crystal": rocksalt("K", "Cl"), "fmax": 0.01}
    # "mace" is an English word (a club, a spice); written "MACE" beside "potential" it names another model
    declines(CHGNET_ENERGY, "Energy per atom (eV/atom) of rock-salt NaCl from a = 5.64 Å after a CHGNet relaxation to fmax = 0.01 eV/Å, computed with the MACE potential?", "mace")
    declines(CHGNET_ENERGY, "Relax rock-salt NaCl (a = 5.64 Å) with the M3GNet potential to fmax = 0.01 eV/Å; energy per atom in eV/atom?", "gnet")
    declines(CHGNET_ENERGY, "Relax rock-salt NaCl (a = 5.64 Å) with CHGNet to fmax = 0.01 eV/Å and give the SCAN energy per atom in eV/atom.", "scan")
    assert bind(CHGNET_ENERGY, "With CHGNet, relax rock-salt NaCl (a = 5.64 Å) to fmax 0.01 eV/Å and give ONLY the energy per atom, in eV/atom.").params["crystal"] == NACL


VACANCY = library_skill("ase_emt_cu_vacancy_formation")
NEIGHBOUR = library_skill("pymatgen_si_nearest_neighbour")
DIAMOND = {"space_group": "Fd-3m", "species": ["Si"], "coords": [[0.0, 0.0, 0.0]]}


def test_a_count_spoken_of_without_a_value_declines_and_a_setting_restated_binds_to_itself():
    # mutation testing of skills/binding.py: an integer the question names without a number must never fall back to its default
    asked = "What is the unrelaxed vacancy formation energy (unit: eV) of fcc copper (a = 3.6 Å) with ASE's EMT in a larger supercell?"
    declines(VACANCY, asked, "speaks of supercell but gives it no value")
    assert bind(VACANCY, asked.replace("a larger supercell", "a 4x4x4 supercell")).params["supercell"] == 4
    # "within 3 Å" restates the verified 3.0 Å search radius beside a lattice constant in Å; 3.5 Å could be either
    germanium = "What is the nearest-neighbour Ge-Ge distance (unit: Å) in diamond-structure germanium with a = 5.658 Å, from pymatgen's neighbours within {} Å?"
    assert bind(NEIGHBOUR, germanium.format("3")).params == {"crystal": {**DIAMOND, "species": ["Ge"]}, "a": 5.658, "value": 3.0}
    declines(NEIGHBOUR, germanium.format("3.5"), "cannot tell whether 3.5 is a or value")


def test_a_compound_the_verified_question_listed_and_asked_about_is_only_listed_here_so_another_is_asked_about():
    # the verified question listed Li2O2 and asked about it; this one lists it and asks about a compound it names in words
    asked = (
        "Given these total energies (eV, per formula unit as written): Li 0.0, O2 0.0, Li2O -6.0, Li2O2 -5.6, LiO2 -2.4, "
        "how far above the convex hull (unit: eV/atom) is lithium superoxide? Use pymatgen."
    )
    with pytest.raises(BindingDeclined) as declined:
        bind(EHULL, asked)
    assert "Li2O2" in str(declined.value) or "superoxide" in str(declined.value), declined.value


LATTICE = library_skill("ase_emt_cu_lattice_constant")


def test_a_relaxed_lattice_constant_is_the_equilibrium_one_and_a_quick_number_is_a_number():
    asked = "What's the relaxed fcc lattice constant of platinum with ASE's EMT (Å)? EOS fit over 11 evenly spaced lattice constants, a = 3.85…4.05 Å."
    assert bind(LATTICE, asked).params == {"element": "Pt", "min_lattice_constant": 3.85, "max_lattice_constant": 4.05, "num": 11}
    quick = "I want a quick number: the unrelaxed vacancy formation energy (eV) of copper (fcc, a = 3.6 Å) in a 3x3x3 supercell of the conventional cubic cell, with ASE's EMT."
    assert bind(VACANCY, quick).params["a"] == 3.6
    declines(VACANCY, quick.replace("unrelaxed", "relaxed"), "'relaxed'")  # relaxed is no unrelaxed, however quick


FRAGMENTS = library_skill("rdkit_fragments_benzyl")
AROMATIC_COUNT = AROMATIC


def test_a_function_name_a_systematic_name_and_a_minimum_and_maximum_setting_are_read_as_meant():
    assert bind(AROMATIC_COUNT, "pyrene c1cc2ccc3cccc4ccc(c1)c2c34 — RDKit CalcNumAromaticRings?").params == {"smiles": "c1cc2ccc3cccc4ccc(c1)c2c34"}
    declines(AROMATIC_COUNT, "pyrene c1cc2ccc3cccc4ccc(c1)c2c34 — RDKit CalcNumRings?", "aromatic")  # all rings: wider
    vanillin = "How many fragments does RDKit's fragment catalog give for vanillin ({name}), SMILES COc1cc(C=O)ccc1O, with paths 1 to 6?"
    assert bind(FRAGMENTS, vanillin.format(name="4-hydroxy-3-methoxybenzaldehyde")).params["smiles"] == "COc1cc(C=O)ccc1O"
    declines(FRAGMENTS, vanillin.format(name="4-hydroxy-3-methylbenzaldehyde"), "names")  # another molecule than the SMILES
    ranged = "How many fragments does RDKit's fragment catalog give for OCCc1ccccc1 when the minimum path length is 2 and the maximum is 5?"
    assert list(bind(FRAGMENTS, ranged).params.values())[1:] == [2, 5]
    declines(FRAGMENTS, "What is the longest fragment RDKit's fragment catalog gives for OCCc1ccccc1 with paths 1 to 6?", "longest")



@pytest.mark.parametrize(
    ("skill", "query", "reason"),
    [
        # what an attack on the loosened matching found: each bound, and each answer would have been wrong
        (LATTICE, "What lattice constant (unit: Å) gives the minimum of 11 EMT energies of fcc copper, sampled evenly from 3.5 to 3.7 Å with ASE?", "minimum"),
        (AROMATIC_COUNT, "How many rings does tetralin (SMILES c1ccc2c(c1)CCCC2) have according to RDKit? I want the ring count, not CalcNumAromaticRings.", "aromatic"),
        (MASS_FRACTION, "What fraction of the mass of β-alumina is oxygen, computed with pymatgen? Return a float between 0 and 1.", "alumina|names"),
        (MOLWT, "Dosing our TFA batch. What is the molecular weight (unit: g/mol) of procaine (SMILES CCN(CC)CCOC(=O)c1ccc(N)cc1) according to RDKit?", "tfa"),
        (MOLAR_MASS, "Doubling the formula. What is the molar mass (unit: g/mol) of Fe2O3 according to pymatgen?", "doubling"),
        (MOLAR_MASS, "What is the molar mass (unit: g/mol) of hydrated CuSO4 according to pymatgen?", "hydrated"),
        (MOLAR_MASS, "Weighing out hydrated crystals for a plating bath. What is the molar mass (unit: g/mol) of CuSO4 according to pymatgen?", "hydrated"),
        (FORMATION, f"Given these total energies (eV, per formula unit as written): {LI_O}, what is the formation energy of Li2O per Li2O? Use pymatgen.", "formula unit"),
        (FORMATION, f"Given these total energies (eV, per formula unit as written): {LI_O}, what is the formation energy of one Li2O unit? Use pymatgen.", "formula unit"),
    ],
)
def test_what_an_attack_on_the_loosened_matching_found_declines(skill, query, reason):
    declines(skill, query, reason)


# -- questions written by others: what they asked, however they wrote it ----------------------------------------------------

SYMMETRY_OPERATIONS = library_skill("spglib_symmetry_operations_si")
HBONDS = library_skill("rdkit_hbond_donors_acceptors_paracetamol")
FORMATION = library_skill("pymatgen_phase_diagram_formation_energy_li2o")
LATTICE = library_skill("ase_emt_cu_lattice_constant")


@pytest.mark.parametrize(
    ("skill", "query", "params"),
    [
        # a parameter's name right before its number, however many names stand before it; a cue noun right after one
        (LJ_DIMER, "Relaxed separation of an LJ dimer (ASE LennardJones, sigma 2.0 Å, epsilon 0.5 eV, a 10 Å cutoff, starting distance 2.5 Å, fmax 1e-5 eV/Å), 4 decimals.", {"sigma": 2.0, "epsilon": 0.5, "rc": 10.0, "fmax": 1e-05, "starting_distance": 2.5}),
        # a range written as one token with its unit, and one whose ends are each named; points of the scan are numpy's num
        (BULK_MODULUS, "According to ASE's EMT potential, what is the bulk modulus of fcc Ni (unit: GPa) from an 11-point EOS fit over a=3.42-3.62Å? Round to 1 dp.", {"element": "Ni", "crystal_structure": "fcc", "min_lattice_constant": 3.42, "max_lattice_constant": 3.62, "num": 11}),
        (LATTICE, "Using ASE's EMT and a 9-point equation-of-state scan of fcc gold between a=3.95Å and a=4.20Å, what is the equilibrium lattice constant (Å)? Three decimals.", {"element": "Au", "min_lattice_constant": 3.95, "max_lattice_constant": 4.2, "num": 9}),
        (LATTICE, "emt lattice parameter palladium fcc, scan 3.8-4.0 A 11 pts + ase eos. A 4 dp", {"element": "Pd", "min_lattice_constant": 3.8, "max_lattice_constant": 4.0, "num": 11}),
        # a ring-closing SMILES is no formula; a possessive name before it and a name after it in brackets name it
        (TPSA, "What is morpholine's (C1COCCN1) topological polar surface area according to RDKit? Square ångströms, two decimals.", {"smiles": "C1COCCN1"}),
        (MOLWT, "rdkit molwt for lidocaine CCN(CC)CC(=O)Nc1c(C)cccc1C — g/mol, round to 0.001", {"smiles": "CCN(CC)CC(=O)Nc1c(C)cccc1C"}),
        # units spelled in two words, and "per angstrom"
        (ATOMIZATION, "Using ASE's EMT calculator, how much energy (in electron volts) is needed to pull a relaxed O2 molecule apart into two free oxygen atoms? Relax it first to a maximum force of 0.01 eV per angstrom, and give four decimals.", {"formula": "O2", "fmax": 0.01}),
        # an order, not a pick
        (HBONDS, "Could you count the hydrogen-bond donors and acceptors of aspirin (SMILES CC(=O)Oc1ccccc1C(=O)O) with RDKit's Lipinski module? I'd like a two-element list of integers, donors first, then acceptors.", {"smiles": "CC(=O)Oc1ccccc1C(=O)O"}),
        (HBONDS, "How many H-bond donors and acceptors does nicotine (CN1CCC[C@H]1c1cccnc1) have by RDKit's Lipinski counts? Give a two-integer list, donors first.", {"smiles": "CN1CCC[C@H]1c1cccnc1"}),
        # a value the question gives from experiment, not an experimental value asked for
        (COHESIVE, "What is the cohesive energy (unit: eV/atom) of fcc copper at its experimental lattice constant, a = 3.61 Å, with ASE's EMT calculator?", {"element": "Cu", "crystal_structure": "fcc", "a": 3.61}),
        # an entry list ended by a dash and the question
        (FORMATION, "Using pymatgen and these total energies (eV, per formula unit as written): Mg -1.5, O2 -9.8, MgO -12.4, MgO2 -16.7 — what is the formation energy per atom (eV/atom) of MgO2? 4 decimal places.", {"energies": [["Mg", -1.5], ["O2", -9.8], ["MgO", -12.4], ["MgO2", -16.7]], "formula": "MgO2"}),
    ],
)
def test_questions_written_by_others_bind_what_they_state(skill, query, params):
    assert bind(skill, query).params == params


@pytest.mark.parametrize(
    ("skill", "query", "reason"),
    [
        # another quantity of the same cell, asked without naming the verified one
        (SYMMETRY_OPERATIONS, "What space group number does spglib assign to the conventional 8-atom cell of diamond silicon (a = 5.431 Å)? Return an integer.", "asks for the space group number; the skill computes the symmetry operations"),
        # a basis the question turns down is not one it asks for; the one it asks for is not the skill's
        (FORMATION, "Given these total energies (eV per formula unit as written): Li 0.0, O2 0.0, Li2O -6.0, Li2O2 -5.6, LiO2 -2.4, what is the formation energy of Li2O per formula unit (not per atom), in electron volts? Use pymatgen.", "asks per formula unit|not (?:per )?atom"),
    ],
)
def test_another_quantity_or_basis_declines_however_it_is_written(skill, query, reason):
    declines(skill, query, reason)


def test_the_verified_quantity_named_in_other_words_still_binds():
    query = "How many space-group operations does spglib find for the conventional 8-atom cubic cell of diamond silicon with a = 5.431 Å? Return an integer."
    assert bind(SYMMETRY_OPERATIONS, query).params == {"element": "Si", "crystal_structure": "diamond", "a": 5.431}


MASS_FRACTION = library_skill("pymatgen_oxygen_mass_fraction_al2o3")
LIPINSKI = library_skill("rdkit_lipinski_aspirin")


@pytest.mark.parametrize(
    ("skill", "query", "reason"),
    [
        # two values asked in the other order, however the order is written
        (HBONDS, "How many H-bond donors and acceptors does nicotine (CN1CCC[C@H]1c1cccnc1) have by RDKit? Give the acceptor count first.", "acceptor first"),
        (HBONDS, "How many donors and acceptors does aspirin (SMILES CC(=O)Oc1ccccc1C(=O)O) have according to RDKit? Return acceptors first, then donors.", r"asks for \[acceptors, donors\]"),
        (HBONDS, "How many hydrogen-bond donors and acceptors does aspirin (SMILES CC(=O)Oc1ccccc1C(=O)O) have according to RDKit? Order: acceptors, then donors.", r"asks for \[acceptors, donors\]"),
        # a yes-or-no skill never answers how many, nor a question for two values
        (LIPINSKI, "How many donors and acceptors does aspirin (SMILES CC(=O)Oc1ccccc1C(=O)O) have according to RDKit?", "how many"),
        (LIPINSKI, "Aspirin (SMILES CC(=O)Oc1ccccc1C(=O)O): H-bond acceptors first, then donors, per RDKit?", "asks for a list"),
        # a basis turned down that is the skill's own
        (FORMATION, "Given these total energies (eV per formula unit as written): Li 0.0, O2 0.0, Li2O -6.0, Li2O2 -5.6, LiO2 -2.4, what is the formation energy (not per atom) of Li2O, with pymatgen?", "not (?:per )?atom"),
        # the energies given on another basis than the list's, said before the list
        (FORMATION, "Given these DFT total energies per atom: Li 0.0, O2 0.0, Li2O -2.0, Li2O2 -1.4, LiO2 -0.8, what is the formation energy per atom of Li2O with pymatgen?", "not per formula unit"),
        (FORMATION, "Given these PBE total energies (eV per formula unit as written): Li 0.0, O2 0.0, Li2O -6.0, Li2O2 -5.6, LiO2 -2.4, what is the HSE formation energy per atom of Li2O?", "'hse'"),
        # a value from another source than the computation
        (BULK_MODULUS, "According to experiment, what bulk modulus (unit: GPa) does fcc copper have?", "'experiment'"),
        # a word in brackets after a SMILES that is not its name
        (MOLWT, "What is the molecular weight of CC(=O)Oc1ccccc1C(=O)O (anion) according to RDKit?", "'anion'"),
        # atoms are counted, not a unit: the fraction of the atoms is not the mass fraction
        (MASS_FRACTION, "What fraction of the atoms of Al2O3 are oxygen, computed with pymatgen? Return a float rounded to 4 decimal places.", "'atoms'"),
        # ten steps between two ends are eleven points: no value of numpy's num
        (BULK_MODULUS, "What bulk modulus (unit: GPa) does ASE's EMT give fcc Cu from an EOS fit stepping the lattice constant from 3.5 to 3.7 Å in 10 steps?", "states 10"),
    ],
)
def test_what_a_loosely_written_question_really_asks_still_declines(skill, query, reason):
    declines(skill, query, reason)


# -- side remarks, counts of another thing, a quantity's kind left out ---------------------------------------------------------

FRAGMENTS_ALL = library_skill("rdkit_fragments_benzyl")


@pytest.mark.parametrize(
    ("skill", "query", "params"),
    [
        # a remark the question sets aside itself: its numbers are no inputs, its words ask nothing
        (
            MOLWT,
            "Molecular weight (g/mol) of ibuprofen (CC(C)Cc1ccc(cc1)C(C)C(=O)O) according to RDKit? The tablet holds 400 mg, but that's not an input. Float, 3 d.p.",
            {"smiles": "CC(C)Cc1ccc(cc1)C(C)C(=O)O"},
        ),
        (
            TPSA,
            "What TPSA (Å^2) does RDKit give for methionine (CSCC[C@H](N)C(=O)O)? Our Caco-2 assay ran at 37 °C, ignore that. Float, 2 d.p.",
            {"smiles": "CSCC[C@H](N)C(=O)O"},
        ),
        (
            OXIDATION,
            "What oxidation state does pymatgen guess for Cr in K2Cr2O7 (the orange solution we titrated at pH 2, though pH doesn't matter here)? Return an integer.",
            {"formula": "K2Cr2O7", "element": "Cr"},
        ),
        # a preface saying what the answer is for; a molecule called NO is no negation
        (
            ATOMIZATION,
            "For the diatomics section of the report, my supervisor wants the EMT atomization energy of the NO molecule (unit: eV): relax NO with ASE's EMT first (fmax 0.01 eV/Å) and subtract from the isolated-atom energies. 4 d.p.",
            {"formula": "NO", "fmax": 0.01},
        ),
        # a package named by what it is
        (
            MASS_FRACTION,
            "What fraction of the mass of LiFePO4 is lithium, computed with the Materials Project's python library? Float, 4 d.p.",
            {"formula": "LiFePO4", "element": "Li"},
        ),
        # abbreviations
        (MASS_FRACTION, "wt frac Fe in Fe3O4 (pymatgen Composition.get_wt_fraction('Fe')), 4dp", {"formula": "Fe3O4", "element": "Fe"}),
        # the verified size said in atoms, the verified count of criteria in digits, a sentence saying what the substance is
        (VACANCY.model_copy(update={"tunables": ["supercell"]}), "Unrelaxed mono-vacancy formation energy (eV) of fcc Pt, a = 3.92 Å, in a 108-atom cubic supercell, with the EMT calculator from ASE? Float, 3 d.p.",
         {"element": "Pt", "a": 3.92}),
        (LIPINSKI.model_copy(update={"tunables": ["max_molecular_weight", "max_acceptors"]}), "Cholesterol. SMILES: CC(C)CCCC(C)C1CCC2C1(CCC3C2CC=C4C3(CCC(C4)O)C)C. Ro5 compliant (all 4 Lipinski criteria, RDKit)? bool",
         {"smiles": "CC(C)CCCC(C)C1CCC2C1(CCC3C2CC=C4C3(CCC(C4)O)C)C"}),
        (OXIDATION, "Potassium dichromate is the orange oxidiser, formula K2Cr2O7. Which oxidation state does pymatgen's oxidation-state guesser assign to chromium in its most likely guess?",
         {"formula": "K2Cr2O7", "element": "Cr"}),
        # a remark dismissing what it names sets aside itself only; a possessive name beside its formula
        (MASS_FRACTION, "What fraction of titanium dioxide's mass (TiO2) is oxygen, via pymatgen? Float between 0 and 1, rounded to 4 decimals.", {"formula": "TiO2", "element": "O"}),
        # the code's own substance named in words; saving is writing; the conventional cell said in atoms
        (LJ_DIMER, "Argon-like Lennard-Jones dimer in ASE: sigma = 3.4, epsilon = 0.0104, cutoff rc = 10. Relax it (BFGS, fmax 1e-5, starting 4.0 apart): the equilibrium separation?", {"sigma": 3.4, "epsilon": 0.0104}),
        (SYMMETRY_OPERATIONS, "How many symmetry operations does spglib find for the conventional 2-atom cubic cell of bcc iron (a = 2.866 Å)? Integer answer.", {"crystal_structure": "bcc", "a": 2.866}),
        # the cohesive energy described by the process it measures
        (
            COHESIVE,
            "How much energy, per atom, does it take to pull fcc nickel (lattice constant 3.52 angstroms) apart into free, isolated atoms, according to ASE's EMT calculator? In eV/atom, 4 decimals.",
            {"element": "Ni", "crystal_structure": "fcc", "a": 3.52},
        ),
    ],
)
def test_side_remarks_prefaces_and_shorthand_bind_what_is_asked(skill, query, params):
    assert {k: v for k, v in bind(skill, query).params.items() if k in params} == params


@pytest.mark.parametrize(
    ("skill", "query", "reason"),
    [
        # what a question sets aside that may have been an input: a value, a substance, an instruction, a word of the skill's
        (
            LATTICE,
            "Using ASE's EMT potential, what equilibrium fcc lattice constant (Å) do you get for Au from an equation-of-state fit over 4.0-4.2 Å (11 points)? Experiment says 4.078 Å at room temperature, but ignore that, I want the EMT prediction. Float, 3 d.p.",
            "which states 4.078",
        ),
        (ROCKSALT, "What is the density of rock-salt NaCl (unit: g/cm^3) with a = 5.64 Å, computed with pymatgen? We compressed it to a = 5.50 Å, the paper's 5.64 Å is a typo, ignore that.", "sets aside"),
        (BULK_MODULUS, "What is the bulk modulus (unit: GPa) of fcc Cu with ASE's EMT from an EOS fit over 11 lattice constants from 3.5 to 3.7 Å? Thermal expansion plays no role, use the Murnaghan form.", "'thermal'"),
        (ATOMIZATION, "Calculate the atomization energy of a nitrogen molecule using ASE's EMT calculator. Relaxation is not needed.", "'relaxation'"),
        (XRD, "At what 2-theta angle (unit: degrees) is the strongest powder diffraction peak of fcc silver (a = 4.086 Å), computed with pymatgen? We used Co K-alpha radiation, which doesn't matter for you.", "names Co"),
        # a remark that speaks of what can change the answer is no remark to set aside, whatever it says of itself
        (AROMATIC, "How many aromatic rings does RDKit count in fluorene (C1c2ccccc2-c2ccccc12)? It melts at 116 °C, not relevant. Return an integer.", "'melts'"),
        (ATOMIZATION, "What is the EMT atomization energy of N2 with ASE? Relax it with BFGS to fmax 0.05 eV/Å, though the optimizer doesn't matter.", "'optimizer'"),
        # a condition inside what is asked is no remark
        (HBONDS, "How many hydrogen-bond donors and acceptors does paracetamol (SMILES CC(=O)Nc1ccc(O)cc1) have according to RDKit's Lipinski counts, if the amide nitrogen does not count as a donor?", "'amide'"),
        # the cohesive energy is the energy to pull a crystal apart into free atoms, not any energy it takes
        (COHESIVE, "How much energy does it take to split an fcc aluminium crystal (4.05 Å) into two halves with ASE's EMT? eV/atom.", "without 'cohesive'"),
        # an element of a formula that has none, another reflection than the strongest, the strongest denied
        (MASS_FRACTION, "What is the mass fraction of oxygen in NaCl, computed with pymatgen?", "O in NaCl, which has none"),
        (XRD, "fcc Al a = 4.05 Å, pymatgen XRDCalculator with CuKa: 2θ of the (200) reflection? degrees, 2 dp", r"plane \(200\)"),
        (XRD, "fcc Al a = 4.05 Å, pymatgen, Cu K-alpha: 2θ of the second peak (not the strongest one)? degrees, 2 dp", "not strongest"),
        # "but I want" sets aside only another source's value; a dismissal of temperature keeps the clause it follows
        (SYMMETRY_OPERATIONS, "How many symmetry operations does spglib find for diamond silicon with a = 5.431 Å? The cell is the primitive 2-atom one, but I want the spglib count.", "'primitive'"),
        (COHESIVE, "What is the cohesive energy (unit: eV/atom) of aluminium with lattice constant 4.05 Å according to ASE's EMT calculator? In the bcc phase at 300 K, though temperature plays no role.", "300"),
        (SYMMETRY_OPERATIONS, "How many symmetry operations does spglib find for the conventional 8-atom cubic cell of diamond silicon with a = 5.431 Å? We use the primitive cell and a 300 K anneal, which doesn't matter.", "sets aside"),
        # a part of the substance, every kind, some left out, another rank
        (MOLAR_MASS, "What is the molar mass (unit: g/mol) of titanium dioxide's metal (TiO2) according to pymatgen?", "the metal of titanium dioxide"),
        (AROMATIC, "How many rings, aromatic or not, does tetralin (SMILES c1ccc2c(c1)CCCC2) have according to RDKit?", "every kind"),
        (SYMMETRY_OPERATIONS, "How many symmetry operations does spglib find for the conventional 8-atom cubic cell of diamond silicon with a = 5.431 Å, not counting the centring translations?", "left out"),
        (XRD, "At what 2-theta angle (unit: degrees) is the runner-up in intensity among the Cu K-alpha powder diffraction peaks of fcc copper (a = 3.615 Å), computed with pymatgen?", "another rank"),
        # a condition that leaves something out, after what it leaves out; a doubled cell; a rank said as "behind the top";
        # a part of the method switched off; decimals of a value the skill rounds to an integer
        (SYMMETRY_OPERATIONS, "How many symmetry operations does spglib find for diamond silicon with a = 5.431 Å, if the conventional cell is not used?", "left out"),
        (SYMMETRY_OPERATIONS, "How many symmetry operations with zero translation does spglib find for the conventional 8-atom cubic cell of diamond silicon with a = 5.431 Å?", "left out"),
        (AROMATIC, "How many aromatic rings does naphthalene (SMILES c1ccc2ccccc2c1) have according to RDKit, if a fused ring does not count separately?", "left out"),
        (XRD, "Using pymatgen's XRDCalculator with Cu K-alpha, where (2-theta, degrees) is the peak whose intensity ranks just behind the top one for fcc aluminium with a = 4.05 Å?", "another rank"),
        (SMACT, "Does CsPbI3 pass SMACT's charge-neutrality test alone, with the electronegativity (Pauling) test switched off? Return true or false.", "switched off"),
        (OXIDATION, "What oxidation state does pymatgen's oxi_state_guesses give for iron in magnetite, Fe3O4 (first guess)? Give the value as returned, to 4 d.p.", "4 decimals"),
        # a cell in atoms that is not the conventional cell of the structure named
        (SYMMETRY_OPERATIONS, "How many symmetry operations does spglib find for the 8-atom cubic cell of bcc iron (a = 2.866 Å)? Integer answer.", "not the conventional cell"),
        # the Materials Project's database is another source than its python library
        (ROCKSALT, "What density does the Materials Project's python library (mp-api) report for rock-salt NaCl, mp-22862, with a = 5.64 Å?", "'materials', 'project'"),
        # another size in atoms, or the verified size of another cell, or another count of criteria
        (VACANCY, "Unrelaxed vacancy formation energy (eV) of fcc Pt, a = 3.92 Å, in a 32-atom cubic supercell, with ASE's EMT? Float, 3 d.p.", "states 32"),
        (LIPINSKI, "Does ibuprofen (CC(C)Cc1ccc(cc1)C(C)C(=O)O) meet 3 of the Lipinski criteria with RDKit? Return true or false.", "states 3"),
        # counting another thing than the verified questions count
        (
            SYMMETRY_OPERATIONS,
            "How many atoms does spglib find in the conventional 8-atom cubic cell of diamond silicon with a = 5.431 Å? Return an integer.",
            "counts atoms",
        ),
        (
            SYMMETRY_OPERATIONS,
            "How many rotations does spglib find for the conventional 8-atom cubic cell of diamond silicon with a = 5.431 Å?",
            "counts rotations",
        ),
        (
            SYMMETRY_OPERATIONS,
            "How many symmetry operations of the point group does spglib find for the conventional cubic cell of diamond silicon with a = 5.431 Å?",
            "'point'",
        ),
        # the kind of energy left out: the energy per atom is not the cohesive energy
        (
            COHESIVE,
            "What is the energy per atom (unit: eV/atom) of fcc aluminium with lattice constant 4.05 Å according to ASE's EMT? Return a float rounded to 4 decimal places.",
            "without 'cohesive'",
        ),
        # a function the skill's code never calls
        (
            EHULL,
            "Na-O hull w/ pymatgen PDEntry, E per f.u. as written: Na 0.0, O2 0.0, Na2O -4.5, Na2O2 -5.2, NaO2 -2.4. Hull energy at the NaO2 composition (pd.get_hull_energy_per_atom), eV/atom, 4dp",
            "get_hull_energy_per_atom",
        ),
        # "the Materials Project" alone is its database: another source
        (MASS_FRACTION, "What fraction of the mass of LiFePO4 is lithium according to the Materials Project?", "'materials', 'project'"),
    ],
)
def test_what_a_remark_or_a_count_hides_still_declines(skill, query, reason):
    declines(skill, query, reason)


def test_a_count_of_the_verified_thing_in_other_words_still_binds():
    query = "What is the number of symmetry operations spglib finds for bcc iron with a=2.87 Å (conventional cubic cell)?"
    assert {k: v for k, v in bind(SYMMETRY_OPERATIONS, query).params.items() if k != "element"} == {"crystal_structure": "bcc", "a": 2.87}
