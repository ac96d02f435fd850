"""Edges of reading a question's values: where each value starts, its unit, its kind, and the words around it.

Binding compares these with the verified question, so a value read as another kind, or a format
number read as a value, makes a skill answer a question it should decline.
"""

import pytest

from skills.mentions import content_words, find_mentions, question_words, stem, words_after, words_before


def read(text: str) -> list[tuple]:
    return [(m.kind, m.text, m.start, m.number, m.unit, m.formula, m.element, m.smiles) for m in find_mentions(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a 2x2x2 supercell", [("number", "2x2x2", 2, 2.0, None, None, None, None)]),
        ("at 300K", [("number", "300K", 3, 300.0, "K", None, None, None)]),
        ("at 300 K", [("number", "300", 3, 300.0, "K", None, None, None)]),
        ("300 atoms", [("number", "300", 0, 300.0, None, None, None, None)]),
        ("an 8-atom cell", [("number", "8-atom", 3, 8.0, "-atom", None, None, None)]),
        ("the 2nd structure", []),
        ("fmax=0.01,", [("number", "0.01", 5, 0.01, None, None, None, None)]),
        ("run(0.01)", [("number", "0.01", 4, 0.01, None, None, None, None)]),
        ("range 3-5 Å", [("number", "3", 6, 3.0, None, None, None, None), ("number", "5", 8, 5.0, "Å", None, None, None)]),
        ("a=3.2).", [("number", "3.2", 2, 3.2, None, None, None, None)]),
        ("Relax Cu with EMT", [("formula", "Cu", 6, None, None, "Cu", "Cu", None)]),
        ("Relax K with EMT", [("formula", "K", 6, None, None, "K", "K", None)]),
        ("'NaCl',", [("formula", "NaCl", 1, None, None, "NaCl", None, None)]),
        ("[N2]", [("formula", "N2", 1, None, None, "N2", None, None)]),
        ("a supercell of 4 NaCl formula units", [("number", "4", 15, 4.0, None, None, None, None), ("formula", "NaCl", 17, None, None, "NaCl", None, None)]),
        ("SMILES CO", [("smiles", "CO", 7, None, None, "CO", None, "CO")]),
        ("SMILES ClCCl", [("smiles", "ClCCl", 7, None, None, "ClCCl", None, "ClCCl")]),
        ("SMILES c1ccccc1", [("smiles", "c1ccccc1", 7, None, None, None, None, "c1ccccc1")]),
        ("benzene c1ccccc1", [("name", "benzene", 0, None, None, "C6H6", None, "c1ccccc1"), ("smiles", "c1ccccc1", 8, None, None, None, None, "c1ccccc1")]),
        ("(CCO)", [("smiles", "CCO", 1, None, None, None, None, "CCO")]),
        ("mol(CCO)", [("smiles", "CCO", 4, None, None, None, None, "CCO")]),
    ],
)
def test_each_value_is_read_with_its_kind_place_and_unit(text, expected):
    assert read(text) == expected


@pytest.mark.parametrize(
    "tail",
    ["Rounded To 4 Decimal Places.", "(Unit: eV) to 3 SIGNIFICANT FIGURES.", "4 decimal places please.", "UNITS: eV"],
)
def test_format_phrases_are_read_whatever_their_case(tail):
    assert read(f"The energy of N2. {tail}") == [("formula", "N2", 14, None, None, "N2", None, None)]


def test_the_words_around_a_value_are_the_nearest_ones_stemmed():
    text = "Alpha beta gamma Lattice Constants 5.64 Å Relaxing the structure"
    at = text.index("5.64")
    assert words_before(text, at, 2) == ["lattice", "constant"]
    assert words_before(text, at) == ["alpha", "beta", "gamma", "lattice", "constant"]
    assert words_before("one two three four five six seven", 33) == ["three", "four", "five", "six", "seven"]
    assert words_after(text, at + 4) == ["relax", "the"]
    assert words_after(text, at + 4, 3) == ["relax", "the", "structure"]


def test_content_words_keep_two_letter_words_and_drop_values_and_format():
    assert content_words("the pH of water") == {"ph", "water"}
    assert content_words("Relax NaCl's cell at 300 K. Return a float rounded to 4 decimal places.") == {"relax"}


@pytest.mark.parametrize(
    ("word", "stemmed"),
    [
        ("relaxing", "relax"),
        ("relaxed", "relax"),
        ("Relaxed", "relax"),
        ("relaxation", "relax"),
        ("relaxations", "relax"),
        ("energies", "energy"),
        ("energy", "energy"),
        ("settings", "sett"),
        ("seeding", "seed"),
        ("constants", "constant"),
        ("boxes", "boxe"),
        ("atoms", "atom"),
        ("bonds", "bond"),
        ("NaCl's", "nacl"),
        ("ions", "ions"),
        ("gas", "gas"),
        ("need", "need"),
        ("sized", "sized"),
        ("cases", "case"),
        ("lattices", "lattic"),
        ("structures", "structur"),
    ],
)
def test_stem_meets_word_forms_and_leaves_short_words(word, stemmed):
    assert stem(word) == stemmed


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("calcite (CaCO3)?", [("name", "calcite", None, None), ("formula", "CaCO3", "CaCO3", None)]),  # not the word "caco"
        ("germanium (Ge)", [("name", "germanium", None, "Ge"), ("formula", "Ge", "Ge", "Ge")]),
        ("KMnO₄", [("formula", "KMnO4", "KMnO4", None)]),  # subscript digits are digits
        ("between Ga and As", [("formula", "Ga", "Ga", "Ga"), ("formula", "As", "As", "As")]),  # "As" mid-sentence: arsenic
        ("As a check, use NaCl", [("formula", "NaCl", "NaCl", None)]),  # "As" opening a sentence: a word
    ],
)
def test_symbols_and_formulas_are_read_as_substances_wherever_they_stand(text, expected):
    assert [(m.kind, m.text, m.formula if m.kind != "name" else None, m.element) for m in find_mentions(text)] == expected


def test_an_element_named_as_a_part_of_a_substance_is_marked_as_a_part():
    parts = {m.text: m.part for m in find_mentions("the Si-Si distance in silicon; split O2 into two oxygen atoms; a Cu atom")}
    assert parts == {"Si": True, "silicon": False, "O2": False, "oxygen": True, "Cu": True}


@pytest.mark.parametrize(
    ("text", "number", "counted"),
    [("a five-layer slab", 5.0, "layer"), ("five layers", 5.0, "layer"), ("5 layers", 5.0, "layer"), ("an 8-atom cell", 8.0, "atom")],
)
def test_a_count_is_a_number_whether_written_in_digits_or_words(text, number, counted):
    [mention] = find_mentions(text)
    assert (mention.number, mention.counted) == (number, counted)


def test_number_words_that_count_nothing_stay_words_and_plus_minus_is_a_spread():
    assert find_mentions("split it into two halves") == []
    [spread] = find_mentions("lattice constants scaled by ±5 %")
    assert (spread.number, spread.unit, spread.plus_minus) == (5.0, "%", True)


def test_question_words_leave_out_values_units_and_format_and_keep_the_word_before_and_any_negation():
    words = question_words("Could you work out the density in g/cm^3 of NaCl (unit: g/cm^3), with no relaxation? Return a float.")
    assert words == [("work", "you", False), ("out", "work", False), ("density", "the", False), ("no", "with", False), ("relaxation", "no", True)]
    negated = [w for w, _, n in question_words("its energy per atom, not the cohesive energy; then it doesn't relax. Is it stable?") if n]
    assert negated == ["cohesive", "energy", "relax"]  # a negation reaches a few words on, within its clause
    assert [w for w, _, n in question_words("the other energies stay; rather than the total energy") if n] == ["total", "energy"]


def test_a_molecule_named_by_its_count_of_atoms_is_that_molecule():
    assert [(m.kind, m.formula) for m in find_mentions("pull dinitrogen apart") ] == [("name", "N2")]
    assert [(m.kind, m.formula) for m in find_mentions("the bond in dichlorine")] == [("name", "Cl2")]


def test_a_function_of_a_variable_states_no_value():
    # "E(V)" is energy against volume, not vanadium; "E(N2)" still names N2.
    assert find_mentions("an E(V) fit over 11 lattice constants")[0].text == "11"
    assert [m.formula for m in find_mentions("return 2*E(N) - E(N2)") if m.kind != "number"] == ["N2"]


def test_a_tolerance_on_the_answer_is_not_a_spread_of_the_problem():
    assert [m.text for m in find_mentions("density of MgO with a = 4.212 Å, g/cm^3 (±5% is fine)")] == ["MgO", "4.212"]
    assert [m.plus_minus for m in find_mentions("strain the lattice by ±5% and report the density")] == [True]


def test_a_count_variable_in_a_written_formula_is_not_nitrogen():
    text = "vacancy energy of silver, E_f = E(N-1) - (N-1)/N E(N). eV"
    assert [m.text for m in find_mentions(text)] == ["silver"]
    assert [m.text for m in find_mentions("Ni vacancy, E(N−1) − (N−1)/N·E(N)")] == ["Ni"]
    assert [m.text for m in find_mentions("split N2 into two N atoms, 2*E(N) - E(N2)")] == ["N2", "N", "N2"]  # no count: N is nitrogen


def test_a_structure_type_is_not_a_second_substance():
    assert [m.text for m in find_mentions("density of KCl (rock salt, a = 6.293 Å)")] == ["KCl", "6.293"]
    assert [m.text for m in find_mentions("GaAs in the zinc blende structure")] == ["GaAs"]


def test_a_formula_with_a_bracketed_group_is_one_formula_and_a_smiles_with_a_branch_one_smiles():
    from skills.mentions import find_mentions

    assert [(m.text, m.kind) for m in find_mentions("molar mass of Ca3(PO4)2, in g/mol")] == [("Ca3(PO4)2", "formula")]
    assert [(m.text, m.kind) for m in find_mentions("the N of (NH4)2SO4 and Mg(OH)2.")][-2:] == [("(NH4)2SO4", "formula"), ("Mg(OH)2", "formula")]
    assert [(m.text, m.kind) for m in find_mentions("isopropanol, SMILES CC(C)O, with RDKit")][-1] == ("CC(C)O", "smiles")  # not ethane
    assert find_mentions("fit E(V) and f(x)") == []  # a function of a variable states no value


def test_words_joined_by_an_underscore_are_read_as_one_term():
    from skills.mentions import question_words

    assert ("hull", "above", False) in question_words("What is the E_above_hull of LiO2?")


def test_code_written_in_a_question_states_its_keyword_values_and_a_hydrate_is_one_formula():
    from skills.mentions import find_mentions

    numbers = [m.number for m in find_mentions("ASE LennardJones(sigma=3.4, epsilon=0.0104, rc=10.0) on bulk('Cu','fcc',a=3.615,cubic=True)") if m.kind == "number"]
    assert numbers == [3.4, 0.0104, 10.0, 3.615]
    assert [(m.text, m.formula) for m in find_mentions("the molar mass of CuSO4·5H2O")] == [("CuSO4·5H2O", "CuSO4(H2O)5")]
    assert [m.text for m in find_mentions("2 E(H) + E(O) - E(H2O), relaxed")] == ["H", "O", "H2O"]  # a count of atoms, no value
    assert [m.text for m in find_mentions("the octanol/water partition coefficient of naproxen")] == ["naproxen"]
    assert [m.text for m in find_mentions("N,N-dimethylformamide and 1,3-butadiene")] == ["dimethylformamide", "1,3-butadiene"]


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("fit over a=3.42-3.62Å? Round", [("3.42", None), ("3.62Å", "Å")]),  # a range as one token, its unit after the second end
        ("scan 3.8-4.0 A 11 pts", [("3.8", None), ("4.0", "A"), ("11", None)]),
        ("relax to a maximum force of 0.01 eV per angstrom", [("0.01", "eV/Å")]),
        ("the cohesive energy, 3.5 eV per atom", [("3.5", "eV/atom")]),
    ],
)
def test_ranges_and_units_written_loosely(text, values):
    assert [(m.text, m.unit) for m in find_mentions(text) if m.kind == "number"] == values


def test_points_written_short_are_points_and_a_ring_closing_smiles_is_no_formula():
    assert [m.counted for m in find_mentions("scan 3.8-4.0 A 11 pts") if m.kind == "number"] == [None, None, "point"]
    ring = [m for m in find_mentions("the TPSA of morpholine (C1COCCN1)") if m.text == "C1COCCN1"]
    assert [(m.kind, m.smiles, m.formula) for m in ring] == [("smiles", "C1COCCN1", None)]
    assert [m.kind for m in find_mentions("LiFePO4 and Li1Fe1P1O4")] == ["formula", "formula"]  # counts of one, no ring


@pytest.mark.parametrize("text", ["g/mol, round to 0.001", "mass fraction (pymatgen), float 0..1 4 dp"])
def test_a_rounding_step_and_a_zero_to_one_range_are_the_answers_format(text):
    assert [m for m in find_mentions(text) if m.kind == "number"] == []


def test_an_irregular_plural_meets_its_singular():
    assert stem("criteria") == stem("criterion") and stem("radii") == stem("radius")
