"""Numbers tied to parameters by place and form: ranges, entries listed with their substance, the nearest words, ±%."""

import pytest

from skills.binding import BindingDeclined, bind
from skills.mentions import find_mentions
from skills.numeric import factor, partner, ranges, spread
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
        "element": "Li", "formula": "O2", "formula_2": "Li2O", "value": -6.0, "value_2": -5.9, "formula_3": "LiO2", "value_3": -2.4,
    }  # fmt: skip


def test_the_compound_asked_about_may_not_change_when_the_code_fixes_it():
    # The skill's code looks up Li2O2; asking about LiO2 with the same entries is another question.
    query = (
        "Using pymatgen and the total energies Li 0.0, O2 0.0, Li2O -6.0, Li2O2 -5.6 and LiO2 -2.4 eV (per formula unit as written), "
        "what is the energy above the convex hull (unit: eV/atom) of LiO2? Return a float rounded to 4 decimal places."
    )
    with pytest.raises(BindingDeclined, match="Li2O2 2 times and this one 1"):
        bind(EHULL, query)
