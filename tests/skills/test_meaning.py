"""The ordinary words that make a question another quantity (``skills/meaning.py``), each against the verified questions."""

import pytest

from skills.meaning import (
    denied_substance,
    dropped_qualifier,
    fixed_setting,
    other_basis,
    other_order,
    other_superlative,
    other_units,
    reversed_sense,
    uneven_repeat,
    unexplained_qualifiers,
)
from skills.mentions import find_mentions
from skills.terms import explaining_forms

FORMATION = "Given these total energies (eV, per formula unit as written): Li 0.0, O2 0.0, Li2O -6.0, what is the formation energy per atom (unit: eV/atom) of Li2O?"


def test_a_word_that_turns_the_quantity_around_counts_only_where_the_verified_question_lacks_it():
    assert reversed_sense(["Does aspirin satisfy Lipinski's rule of five?"], "Does ibuprofen violate Lipinski's rule of five?")
    assert reversed_sense(["Which of these violate the rule?"], "Which of these violate the rule for ibuprofen?") is None
    assert reversed_sense(["Is CsPbI3 valid?"], "Is NaCl valid according to SMACT?") is None


def test_a_denied_substance_is_found_however_it_is_denied():
    for query in ("What fraction of the mass of Fe2O3 is not iron?", "the mass fraction of Fe2O3 other than oxygen", "excluding the O of Fe2O3"):
        assert denied_substance(query, find_mentions(query)), query
    query = "What fraction of the mass of Fe2O3 is iron, not counting rounding?"
    assert denied_substance(query, find_mentions(query)) is None


def test_every_word_of_what_is_asked_must_be_explained_not_only_the_last():
    vocabulary = explaining_forms({"mass", "fraction", "oxygen", "pymatgen"})
    assert unexplained_qualifiers(vocabulary, "What mole fraction of Al2O3 is oxygen?", ["Al2O3"]) == ["mole"]
    assert unexplained_qualifiers(vocabulary, "What is the computed mass fraction of oxygen in Al2O3?", ["Al2O3"]) == []


@pytest.mark.parametrize(
    ("verified", "query", "dropped"),
    [
        ("How many aromatic rings does naphthalene have?", "How many rings does tetralin have?", True),
        ("What is the unrelaxed vacancy formation energy of Cu?", "What is the vacancy formation energy of Ni?", True),
        ("What is the unrelaxed vacancy formation energy of Cu?", "Vacancy formation energy of Ni, no relaxation?", False),  # said otherwise
        ("What is the oxidation state of Mn in KMnO4?", "what ox state does Cr take in K2Cr2O7?", False),  # a noun of a term, not a qualifier
        ("Count the total number of fragments of X.", "Count the fragments of Y.", False),  # "total number" narrows nothing
    ],
)
def test_a_technical_qualifier_left_out_asks_for_something_wider(verified, query, dropped):
    assert (dropped_qualifier([verified], query) is not None) is dropped


def test_a_basis_is_another_only_where_no_verified_question_states_it():
    assert other_basis(["Atomization energy (unit: eV) of N2."], "Atomization energy per atom of O2, in eV?")
    assert other_basis(["Cohesive energy (unit: eV/atom) of Al."], "Cohesive energy per atom of Ni in eV per atom?") is None
    assert other_basis(["Molar mass (unit: g/mol) of Fe2O3."], "Molar mass of CaO in grams per mole?") is None


def test_values_in_another_unit_or_basis_decline_but_the_answers_unit_and_a_numbers_own_do_not():
    assert other_units([FORMATION], FORMATION.replace("(eV, per formula unit as written)", "(kJ/mol per formula unit)"), "eV/atom")
    assert other_units([FORMATION], FORMATION.replace("(eV, per formula unit as written)", "(eV/atom)"), "eV/atom")
    assert other_units([FORMATION], FORMATION.replace("(eV, per formula unit as written)", "(eV)"), "eV/atom") is None  # the basis unsaid
    assert other_units(["TPSA (unit: Å^2) of ethanol?"], "TPSA of glycine, in square angstroms?", "Å^2") is None
    # the answer's unit asked for again in words is the answer's; the same unit where the values are given is theirs
    asked_twice = FORMATION.replace("Li2O -6.0, what is", "Li2O -6.0. What is").replace("of Li2O?", "of Li2O, in electronvolts per atom?")
    assert other_units([FORMATION], asked_twice, "eV/atom") is None
    given_apart = FORMATION.replace("Given these total energies (eV, per formula unit as written):", "All energies are in eV/atom. Given:")
    assert other_units([FORMATION], given_apart, "eV/atom")
    assert other_units(["Molar mass (unit: g/mol) of Fe2O3?"], "Molar mass of Ge, g/mol, 4 decimals.", "g/mol") is None


def test_superlatives_orders_repeats_and_fixed_settings():
    vocabulary = explaining_forms({"strongest", "peak", "xrd"})
    assert other_superlative(vocabulary, "the weakest peak of W") and other_superlative(vocabulary, "the strongest peak of W") is None
    assert other_order(["Return a list [donors, acceptors]."], "Give [acceptors, donors].")
    assert other_order(["Return a list [donors, acceptors]."], "Give [donors, acceptors].") is None
    assert uneven_repeat(["in a 3x3x3 supercell"], "in a 2x2x3 supercell") and uneven_repeat(["a 3x3x3 cell"], "a 4x4x4 cell") is None
    verified = "Relax a Lennard-Jones dimer with sigma = 1.0 Å from 1.5 Å apart."
    context = [m for m in find_mentions(verified) if m.number == 1.0]
    query = "Relax a Lennard-Jones dimer with sigma = 1.5 Å from 1.0 Å apart."
    assert fixed_setting(verified, context, query, [m for m in find_mentions(query) if m.number == 1.5])
    same = "Relax a Lennard-Jones dimer with sigma = 1.0 Å from 2.0 Å apart."
    assert fixed_setting(verified, context, same, [m for m in find_mentions(same) if m.number == 2.0]) is None


def test_an_equation_of_the_same_shape_as_the_verified_one_binds_and_another_declines():
    from skills.meaning import own_formula

    atomization = ["Calculate it and compute 2*E(N atom) - E(N2). Return a float."]
    assert own_formula(atomization, "atomization of CO, i.e. E(C atom) + E(O atom) - E(CO)?") is None  # the atoms less the molecule
    assert own_formula(atomization, "for CH4: E(C atom) + 4*E(H atom) - E(CH4).") is None
    vacancy = ["Delete atom 0 and return E(N-1) - (N-1)/N * E(N). Return a float."]
    assert own_formula(vacancy, "the vacancy (E_f = E(N-1) - (N-1)/N E(N)) in Ni") is None
    assert own_formula(vacancy, "with the removed atom taken to the free atom (E_f = E(N-1) + E_atom - E(N))?")
    assert own_formula(["What is the TPSA of ethanol?"], "What is the TPSA of caffeine (CN1C=NC2=C1C(=O)N(C(=O)N2C)C)?") is None


def test_a_superlative_that_picks_the_same_one_is_explained_by_another_of_its_pick():
    from skills.meaning import other_superlative
    from skills.terms import explaining_forms

    vocabulary = explaining_forms({"shortest", "distance", "neighbour"})
    assert other_superlative(vocabulary, "take the smallest distance among the neighbours") is None
    assert other_superlative(vocabulary, "take the largest distance among the neighbours") is not None
    assert other_superlative(vocabulary, "the weakest peak") is not None


def test_another_qualifier_of_the_asked_quantity_is_told_apart_from_the_same_one_in_other_words():
    from skills.meaning import other_qualifier

    verified = ["What is the mass fraction of Fe in Fe2O3 with pymatgen?"]
    assert other_qualifier(verified, "Magnetite: what's the wt fraction of Fe in Fe3O4? Use pymatgen.") is None  # wt: weight, mass
    assert other_qualifier(verified, "What is the mole fraction of Fe in Fe3O4?") == "the question asks for the mole fraction; the skill was verified on the mass fraction"
    assert other_qualifier(verified, "What is the calculated mass fraction of Fe in FeO?") is None
    lj = ["What is the equilibrium separation (unit: Å) of an argon dimer with ASE's LennardJones calculator after BFGS?"]
    assert other_qualifier(lj, "Relax the dimer with BFGS and report the final interatomic separation in Å.") is None  # a state, not a kind
    si = ["What is the nearest-neighbour Si-Si distance (unit: Å) in diamond silicon with pymatgen?"]
    assert other_qualifier(si, "What is the Ge-Ge distance (unit: Å) in diamond germanium with pymatgen?") is None  # another substance
