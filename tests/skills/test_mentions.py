"""A question's stated values: numbers, formulas, elements, SMILES and names, never the answer's format or unit."""

import pytest

from skills.mentions import content_words, find_mentions, topic_words


def kinds(text: str) -> list[tuple[str, str]]:
    return [(m.kind, m.text) for m in find_mentions(text)]


@pytest.mark.parametrize(
    "text",
    [
        "Return a float rounded to 4 decimal places.",
        "Give it to 3 significant figures.",
        "Return a float in eV rounded to 2 decimals (unit: eV/Å^3).",
        "Return a float between 0 and 1 rounded to 4 decimal places.",
        "What is the density (unit: g/cm^3)? Return a float to 3 d.p.",
        "The weight fraction — pymatgen Composition, 0–1, 4 decimals.",
    ],
)
def test_format_and_unit_numbers_are_not_values(text):
    assert [k for k, _ in kinds(text)] == []


def test_units_after_a_number_are_not_elements_and_acronyms_are_not_formulas():
    assert kinds("Relax at 300 K and 5 GPa the FCC cell read from a CIF, with VASP-like settings") == [("number", "300"), ("number", "5")]
    assert find_mentions("at 300 K")[0].unit == "K"


def test_formulas_elements_smiles_and_names_are_read():
    found = find_mentions("Compare rock-salt MgO, aluminium, caffeine (CN1C=NC2=C1C(=O)N(C(=O)N2C)C) and SMILES CCO with fmax=0.05.")
    assert [(m.kind, m.text) for m in found] == [
        ("formula", "MgO"), ("name", "aluminium"), ("name", "caffeine"), ("smiles", "CN1C=NC2=C1C(=O)N(C(=O)N2C)C"), ("smiles", "CCO"), ("number", "0.05"),
    ]  # fmt: skip
    assert found[1].element == "Al" and found[2].formula == "C8H10N4O2" and found[4].smiles == "CCO"
    assert kinds("diamond-structure tin and grey tin") == [("name", "tin"), ("name", "tin")]  # an element's name of three letters
    named = find_mentions("vanillin (4-hydroxy-3-methoxybenzaldehyde) and 2-phenylethanol")  # systematic names, locants and all
    assert [(m.text, m.formula) for m in named] == [("vanillin", "C8H8O3"), ("4-hydroxy-3-methoxybenzaldehyde", "C8H8O3"), ("2-phenylethanol", "C8H10O")]
    assert [m.number for m in find_mentions("energies from 0-1 eV, 0 to 1 fs")] == [0.0, 1.0, 0.0, 1.0]  # a range of values
    assert [m.number for m in find_mentions("a = 4.0…4.2 Å, then 3.5...3.7 and 5..6; e.g. d.p.")] == [4.0, 4.2, 3.5, 3.7, 5.0, 6.0]


def test_ordinary_words_the_name_database_knows_are_not_substances():
    assert kinds("the crystal of salt has a lattice energy we predict") == []


def test_ranges_supercells_and_code_arguments_are_split_into_values():
    assert [m.number for m in find_mentions("over 3.5-3.7 Å in a 3x3x3 supercell, Lattice.cubic(5.64)")] == [3.5, 3.7, 3.0, 5.64]


def test_content_words_leave_out_values_format_and_rewording():
    words = content_words("Suppose the rock-salt NaCl cell is expanded to a = 5.7 Å. What density (unit: g/cm^3) does pymatgen give? Return a float.")
    assert words == {"rock", "salt", "density", "pymatgen"}
    assert topic_words("What is the density of rock-salt MgO with pymatgen?")[:3] == ["density", "rock", "salt"]
