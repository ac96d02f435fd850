"""Numbers tied to parameters by place and form: ranges, entries listed with their substance, the nearest words, ±%."""

import pytest

from skills.binding import BindingDeclined, bind
from skills.mentions import find_mentions
from skills.numeric import entry_pairs, factor, partner, ranges, spread
from tests.skills.test_matching import library_skill

EHULL = library_skill("pymatgen_phase_diagram_ehull_li2o2")


@pytest.mark.parametrize(
    ("text", "pairs"),
    [
        ("from 4.0 to 4.2 Å", [("4.0", "4.2")]),
        ("between 3.5 and 3.7 Å", [("3.5", "3.7")]),
        ("over 3.5-3.7 Å", [("3.5", "3.7")]),
        ("a = 3.2 Å and c = 5.2 Å", []),  # two values, not a range
        ("Li2O -6.0 and LiO2 -2.4", []),
    ],
)
def test_ranges_are_read_from_their_words(text, pairs):
    assert [(a.text, b.text) for a, b in ranges(text, find_mentions(text))] == pairs


def test_an_entrys_number_belongs_to_the_substance_just_before_it():
    text = "Li 0.0, O2 0.0, Li2O -6.0; the Li2O2 energy to -5.9 eV, a = 3.6"
    mentions = find_mentions(text)
    by_number = {m.text: partner(text, mentions, m) for m in mentions if m.kind == "number"}
    assert {n: p.text if p else None for n, p in by_number.items()} == {"0.0": "O2", "-6.0": "Li2O", "-5.9": "Li2O2", "3.6": None}


def test_plus_minus_is_the_pair_of_factors_either_side_of_one():
    five = find_mentions("scaled by ±5 %")[0]
    assert five.plus_minus and five.number == 5.0
    assert spread(five, find_mentions("from 0.95 to 1.05")) and not spread(five, find_mentions("from 0.9 to 1.1"))
    assert [factor(m, five) for m in find_mentions("0.95, 1.05, 1.0")] == [True, True, False]


def test_entries_listed_in_other_words_bind_to_the_entries_they_stand_for():
    query = (
        "A better calculation lowers the Li2O2 energy to -5.9 eV per formula unit; the other energies stay Li 0.0, O2 0.0, "
        "Li2O -6.0 and LiO2 -2.4 eV. With pymatgen, what is the energy above hull (unit: eV/atom) of Li2O2 now?"
    )
    assert bind(EHULL, query).params == {
        "energies": [["Li2O2", -5.9], ["Li", 0.0], ["O2", 0.0], ["Li2O", -6.0], ["LiO2", -2.4]], "formula": "Li2O2",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("text", "entries"),
    [
        ("Li 0.0, O2 0.0, Li2O -6.0 and LiO2 -2.4 eV", [("Li", 0.0), ("O2", 0.0), ("Li2O", -6.0), ("LiO2", -2.4)]),
        ("energies Mg: 0.0 eV; O2: 0.0 eV; MgO: -6.2 eV", [("Mg", 0.0), ("O2", 0.0), ("MgO", -6.2)]),
        ("E(Li) = -1.91 eV, E(S) = -4.13 eV, E(Li2S) = -8.75 eV", [("Li", -1.91), ("S", -4.13), ("Li2S", -8.75)]),
        ("total energies per formula unit: Mg: -1.60 eV, O2: -9.86 eV", [("Mg", -1.6), ("O2", -9.86)]),
        ("fcc Cu with a = 3.61 Å and 5 layers", []),
        ("Cu 3.61 Å", []),  # one value, not a list
        ("Cu 3.61 Å, relaxed to 0.01 eV/Å", []),
    ],
)
def test_a_list_of_entries_is_two_or_more_substances_each_with_its_number(text, entries):
    assert [(a.formula, b.number) for a, b in entry_pairs(text, find_mentions(text))] == entries


def test_the_compound_asked_about_is_a_parameter_beside_the_list():
    query = (
        "Using pymatgen and the total energies Li 0.0, O2 0.0, Li2O -6.0, Li2O2 -5.6 and LiO2 -2.4 eV (per formula unit as written), "
        "what is the energy above the convex hull (unit: eV/atom) of lithium superoxide, LiO2? Return a float rounded to 4 decimal places."
    )
    assert bind(EHULL, query).params["formula"] == "LiO2"
    with pytest.raises(BindingDeclined, match="not one of the entries"):
        bind(EHULL, query.replace("lithium superoxide, LiO2", "LiO3"))


def test_a_name_written_right_before_a_number_ties_it_more_than_a_name_a_few_words_back():
    from skills.binding import bind
    from tests.skills.test_context import library_skill

    dimer = library_skill("ase_lj_dimer_distance")
    query = "LJ dimer, sigma=2.0, epsilon=0.5, rc=10.0 (ase.calculators.lj.LennardJones), initial separation 2.5 Å, BFGS fmax=1e-5 -> relaxed distance in Å? float, round to 4 dp"
    params = bind(dimer, query).params
    assert (params["sigma"], params["epsilon"], params["rc"]) == (2.0, 0.5, 10.0)
