"""Side remarks a question sets aside itself, and what stays."""

import pytest

from skills.side_remarks import split_side_remarks, without_side_remarks


@pytest.mark.parametrize(
    ("query", "kept"),
    [
        ("Molar mass of Ca3(PO4)2 with pymatgen? We'll weigh out 2.5 g of it later, but that number doesn't matter here. Float, 2 d.p.", "Molar mass of Ca3(PO4)2 with pymatgen? Float, 2 d.p."),
        ("Given energies [Na 0.0, NaO2 -2.4] (eV, per formula unit as written; the runs used a 520 eV cutoff, which you can ignore), what is E_hull?",
         "Given energies [Na 0.0, NaO2 -2.4] (eV, per formula unit as written), what is E_hull?"),
        ("Density of KCl with pymatgen? We measured 1.98 g/cm^3 by pycnometry, but I want the computed value.", "Density of KCl with pymatgen? I want the computed value."),
        ("LJ dimer, sigma 3.4 Å, start at 4.0 Å? (that's ~120 K in k_B units, but temperature plays no role)", "LJ dimer, sigma 3.4 Å, start at 4.0 Å? (that's ~120 K in k_B units)"),
        ("Oxidation state of Cr in K2Cr2O7 (the solution we titrated at pH 2, though pH doesn't matter here)?", "Oxidation state of Cr in K2Cr2O7?"),
        # a dismissal that names its subject sets aside itself only
        ("Density of NaCl with pymatgen? Take a = 5.50 Å, the experimental value is irrelevant.", "Density of NaCl with pymatgen? Take a = 5.50 Å."),
    ],
)
def test_a_remark_set_aside_goes_and_the_rest_stays(query, kept):
    assert without_side_remarks(query) == kept


@pytest.mark.parametrize(
    "query",
    [
        "What is the formation energy, not per atom, of Li2O?",  # a denial is part of what is asked
        "How many rings does it have, ignoring the aromatic ones?",  # "ignoring" names what to leave out: no remark
        "How many donors and acceptors does paracetamol have by RDKit, if the amide nitrogen does not count as a donor?",  # a condition asked
        "What is the MolWt of C(=O)O (formic acid)? Does that matter for Lipinski?",
        "Relax N2 with EMT, then tell me whether it is an input to the next step?",
        "Nearest-neighbour distance of Ge with pymatgen? (The sample was at 300 K, ignore thermal expansion.)",
    ],
)
def test_a_question_without_a_remark_set_aside_is_unchanged(query):
    assert without_side_remarks(query) == query


def test_what_was_set_aside_is_returned_for_the_skill_to_check():
    kept, aside = split_side_remarks("Atomization energy of N2 with EMT? We compressed it to fmax 0.05, the paper's 0.01 is a typo, ignore that.")
    assert kept == "Atomization energy of N2 with EMT? We compressed it to fmax 0.05."
    assert aside == ["the paper's 0.01 is a typo"]
    assert split_side_remarks("Atomization energy of N2 with EMT. Relaxation is not needed.") == ("Atomization energy of N2 with EMT.", ["Relaxation is not needed."])
