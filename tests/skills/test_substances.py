"""The substances a question names: one value however many ways it is written, parts and descriptions of it not values."""

import pytest

from skills.mentions import find_mentions
from skills.substances import assign_described, merge, parts_left_out, restated, restates


def groups(text: str) -> list[list[str]]:
    return [[m.text for m in group] for group in merge(parts_left_out([m for m in find_mentions(text) if m.kind != "number"], text))]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("L-methionine, CSCC[C@H](N)C(=O)O", [["methionine", "CSCC[C@H](N)C(=O)O"]]),  # the name database lists the other isomer
        ("caffeine (CN1C=NC2=C1C(=O)N(C(=O)N2C)C)", [["caffeine", "CN1C=NC2=C1C(=O)N(C(=O)N2C)C"]]),
        ("ethanol, SMILES COC", [["ethanol"], ["COC"]]),  # one formula, two molecules
        ("split an O2 molecule into two oxygen atoms", [["O2"]]),
        ("relative to a free Cu atom of copper", [["copper"]]),
        ("the Mg-O system: Mg 0.0, O2 0.0, MgO -6.2", [["Mg"], ["O2"], ["MgO"]]),
        ("the Ge-Ge distance in germanium (Ge)", [["germanium", "Ge"]]),
        ("is lithium cobalt oxide, LiCoO2, valid", [["LiCoO2"]]),
        ("the molar mass of magnetite (Fe3O4)", [["Fe3O4"]]),  # the name database has it as FeO: the written formula is the value
        ("NaCl and KBr", [["NaCl"], ["KBr"]]),
    ],
)
def test_each_substance_is_one_value_and_its_parts_and_descriptions_none(text, expected):
    assert groups(text) == expected


def test_a_compound_named_with_its_elements_is_read_the_one_way_that_fits():
    elements = [("element", "element"), ("element_2", "element")]
    found = assign_described(merge(find_mentions("For the semiconductor GaAs, the difference between Ga and As")), elements)
    assert found is not None and {name: group[0].text for name, group in found.items()} == {"element": "Ga", "element_2": "As"}
    found = assign_described(merge(find_mentions("NaCl, made of Na and Cl")), [("formula", "formula")])
    assert found is not None and found["formula"][0].text == "NaCl"


def test_a_constant_stated_fewer_times_than_the_verified_question_did_plays_another_part():
    verified = find_mentions("Li 0.0, O2 0.0, Li2O -6.0, Li2O2 -5.6, LiO2 -2.4: how far above the hull is Li2O2?")
    context = [m for m in verified if m.text in ("Li2O2",)]
    asked = find_mentions("Li 0.0, O2 0.0, Li2O -6.0, Li2O2 -5.6, LiO2 -2.4: how far above the hull is lithium superoxide, LiO2?")
    assert "Li2O2 2 times and this one 1" in (restated(context, asked, verified) or "")
    assert restated(context, verified, verified) is None


def test_a_substance_the_verified_question_never_named_plays_the_other_part():
    verified = find_mentions("the XRD pattern of fcc copper, ['Cu'], with XRDCalculator(wavelength='CuKa'): the strongest peak")
    context = [m for m in verified if m.element == "Cu"]
    assert "copper 2 times and this one 1" in (restated(context, find_mentions("fcc, a = 4.05 Å: the strongest Cu Kα peak"), verified) or "")
    assert restated(context, find_mentions("fcc Al, a = 4.05 Å: the strongest Cu Kα peak"), verified) is None


def test_a_count_restates_the_verified_one_however_it_is_written():
    five_layer = find_mentions("a 5-layer slab")[0]
    assert all(restates(m, five_layer) for m in find_mentions("a five-layer slab, five layers, 5 layers"))
    assert not restates(find_mentions("a three-layer slab")[0], five_layer)
    assert not restates(find_mentions("5 atoms")[0], five_layer)  # five of something else
