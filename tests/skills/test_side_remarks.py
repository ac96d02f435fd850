"""Side remarks a question sets aside itself, and what stays."""

import pytest

from skills.side_remarks import split_side_remarks, without_side_remarks


@pytest.mark.parametrize(
    ("query", "kept"),
    [
        (
            "Molar mass of Ca3(PO4)2 with pymatgen? We'll weigh out 2.5 g of it later, but that number doesn't matter here. Float, 2 d.p.",
            "Molar mass of Ca3(PO4)2 with pymatgen? Float, 2 d.p.",
        ),
        (
            "Given energies [Na 0.0, NaO2 -2.4] (eV, per formula unit as written; the runs used a 520 eV cutoff, which you can ignore), what is E_hull?",
            "Given energies [Na 0.0, NaO2 -2.4] (eV, per formula unit as written), what is E_hull?",
        ),
        (
            "Density of KCl with pymatgen? We measured 1.98 g/cm^3 by pycnometry, but I want the computed value.",
            "Density of KCl with pymatgen? I want the computed value.",
        ),
        ("For our screening table, what TPSA does RDKit give for glycine (NCC(=O)O)?", "what TPSA does RDKit give for glycine (NCC(=O)O)?"),
        (
            "LJ dimer, sigma 3.4 Å (that's ~120 K in k_B units, but temperature plays no role), start at 4.0 Å?",
            "LJ dimer, sigma 3.4 Å, start at 4.0 Å?",
        ),
    ],
)
def test_a_remark_set_aside_goes_and_the_rest_stays(query, kept):
    assert without_side_remarks(query) == kept


@pytest.mark.parametrize(
    "query",
    [
        "What is the formation energy, not per atom, of Li2O?",  # a denial is part of what is asked
        "How many rings does it have, ignoring the aromatic ones?",  # "ignoring" names what to leave out: no remark
        "What is the MolWt of C(=O)O (formic acid)? Does that matter for Lipinski?",
        "Relax N2 with EMT, then tell me whether it is an input to the next step?",
    ],
)
def test_a_question_without_a_dismissal_is_unchanged(query):
    assert without_side_remarks(query) == query


def test_a_clause_set_aside_with_a_dismissal_of_something_else_is_returned_for_a_check():
    kept, uncertain = split_side_remarks("Relax N2 with EMT? Relax to fmax 0.05, the optimizer doesn't matter.")
    assert kept == "Relax N2 with EMT?"
    assert uncertain == ["Relax to fmax 0.05"]
