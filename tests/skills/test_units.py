"""Units are read as units wherever a question writes them: never a word, an element, or a shorter unit."""

import pytest

from skills.answer_spec import read_answer_spec
from skills.units import normal_unit, same_unit, unit_spans


def units(text: str) -> list[str]:
    return [unit for _, _, unit in unit_spans(text)]


def test_composite_units_are_read_whole_anywhere():
    assert units("a density in g/cm^3, a weight in g/mol and a TPSA in Å² (or Å^2)") == ["g/cm^3", "g/mol", "Å²", "Å^2"]
    assert units("kJ mol^-1, J m^-2, 4.4e-5 1/K, eV/atom, Å3") == ["kJ mol^-1", "J m^-2", "1/K", "eV/atom", "Å3"]


def test_a_symbol_that_is_also_a_word_or_an_element_is_a_unit_only_in_a_units_place():
    assert units("K in KCl is potassium and A is a label") == []
    assert units("at 300 K, in K, (unit: A)") == ["K", "K", "A"]
    assert units("the energy per atom of Cu") == []  # "per atom" is part of what is asked, not a unit to skip


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [("Å^3", "angstrom^3", True), ("Å³", "Å3", True), ("kJ mol^-1", "kJ/mol", True), ("Å^2", "Å", False), ("eV/atom", "eV", False)],
)
def test_units_written_differently_compare_as_one(a, b, same):
    assert same_unit(a, b) is same
    assert (normal_unit(a) == normal_unit(b)) is same


@pytest.mark.parametrize(
    ("query", "unit"),
    [
        ("What is the TPSA in Å^2 of ethanol (CCO)?", "Å^2"),
        ("What is the density in g/cm^3 of rock-salt NaCl?", "g/cm^3"),
        ("What is the mass of one formula unit in grams?", "grams"),
        ("Return the cohesive energy in units of eV/atom.", "eV/atom"),
        ("What is the TPSA (unit: Å^2) of ethanol?", "Å^2"),
    ],
)
def test_the_unit_asked_for_is_the_whole_expression(query, unit):
    assert read_answer_spec(query).unit == unit


def test_negative_powers_are_the_units_divided():
    from skills.units import same_unit

    assert same_unit("g cm^-3", "g/cm^3") and same_unit("g·cm⁻³", "g/cm3") and same_unit("J mol^-1 K^-1", "J/mol/K")
    assert not same_unit("g cm^-3", "g/cm^2")


def test_a_length_spelled_to_a_power_is_one_unit():
    assert [text for _, _, text in unit_spans("Answer in cubic ångströms, not square nm")] == ["cubic ångströms", "square nm"]
    assert same_unit("cubic ångströms", "Å^3") and same_unit("square angstroms", "Å^2") and not same_unit("cubic ångströms", "Å^2")
    assert read_answer_spec("Answer in cubic ångströms as a float to 4 decimal places.").unit == "cubic ångströms"
