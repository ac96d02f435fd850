"""Words that frame a question (another name of its substance, the asker's purpose) against words that change what is computed.

The starter library's own tasks are lifted as the generaliser lifts them; each question is one a scientist
might type around the same request, and each adversarial one hides a change of method in the framing.
"""

import json
from pathlib import Path

import pytest

from skills.binding import BindingDeclined, bind
from skills.context import framing_words, substance_names
from skills.mentions import find_mentions
from tests.skills.test_binding import lifted

LIBRARY = Path(__file__).resolve().parents[2] / "skills" / "library"


def library_skill(name: str, keep: tuple[str, ...] | None = None):
    task = json.loads((LIBRARY / f"{name}.json").read_text())
    return lifted(task["solution_code_or_process"], task["user_query"]["1"], keep)


def test_a_framing_sentence_of_the_askers_own_is_passed_over_and_a_request_is_not():
    query = "I'm filtering a set of antidiabetics. How many donors does metformin have? Return an integer."
    assert {"antidiabetics", "filtering"} <= framing_words(query, find_mentions(query))
    assert framing_words("Use the exact mass. What is the mass of caffeine?", []) == set()  # a request, not the asker's
    assert framing_words("We work with monoisotopic masses. What is the mass of caffeine?", []) == set()  # says how
    assert framing_words("We study NaCl at 5.64 Å. What is its density?", find_mentions("We study NaCl at 5.64 Å. What is its density?")) == set()


def test_a_purpose_before_the_request_is_framing_but_never_a_modifier_or_an_adjective():
    query = "For a fertiliser spec sheet I need the nitrogen mass fraction of NH4NO3."
    assert {"fertiliser", "spec", "sheet"} <= framing_words(query, find_mentions(query))
    tricky = "For our deuterated average samples I need the molar mass of D2O."
    assert not {"deuterated", "average"} & framing_words(tricky, find_mentions(tricky))


def test_another_name_of_the_given_formula_is_its_name():
    query = "We're screening spinel compositions. Is MgAl2O4 valid according to SMACT?"
    assert "spinel" in substance_names(query, find_mentions(query))
    assert "spinel" not in substance_names("Is spinel valid? Check MgO.", find_mentions("Is spinel valid? Check MgO."))
    aside = "Molar mass of LiFePO4 (the olivine cathode) with pymatgen?"
    assert {"olivine", "cathode"} <= substance_names(aside, find_mentions(aside))


@pytest.mark.parametrize(
    ("library", "query", "expected"),
    [
        (
            "smact_validity_cspbi3",
            "We're screening spinel compositions. Does MgAl2O4 pass SMACT's screening rules? Answer true or false.",
            {"formula": "MgAl2O4"},
        ),
        (
            "pymatgen_molar_mass_fe2o3",
            "Molar mass of LiFePO4 (the olivine cathode) according to pymatgen, in g/mol? Return a float rounded to 4 decimal places.",
            {"formula": "LiFePO4"},
        ),
        (
            "pymatgen_oxidation_state_mn_kmno4",
            "We're looking at cuprite films. What is the oxidation state of copper in Cu2O, as guessed by pymatgen? Return an integer.",
            {"element": "Cu", "formula": "Cu2O"},
        ),
    ],
)
def test_a_skill_of_a_substance_alone_answers_through_framing_words(library, query, expected):
    assert bind(library_skill(library), query).params == expected


@pytest.mark.parametrize(
    ("library", "query", "reason"),
    [
        (  # a change of quantity dressed as the asker's habit
            "pymatgen_molar_mass_fe2o3",
            "Our lab reports monoisotopic masses. What is the molar mass of Fe2O3 according to pymatgen? Return a float rounded to 4 decimal places.",
            "monoisotopic",
        ),
        (  # a sentence that says how to compute is no framing
            "pymatgen_molar_mass_fe2o3",
            "We use isotope-averaged masses of the minerals only. What is the molar mass of Fe2O3 according to pymatgen? Return a float rounded to 4 decimal places.",
            "isotope",
        ),
        (  # a mineral name carries a structure: a skill that builds one never passes it over
            "pymatgen_rocksalt_density_nacl",
            "What is the density (unit: g/cm^3) of rutile TiO2 with a cubic lattice constant of 4.59 Å, computed with pymatgen? Return a float rounded to 4 decimal places.",
            "rutile",
        ),
        (
            "pymatgen_rocksalt_density_nacl",
            "We're looking at rutile films. What is the density (unit: g/cm^3) of TiO2 with a cubic lattice constant of 4.59 Å, computed with pymatgen? Return a float rounded to 4 decimal places.",
            "rutile",
        ),
    ],
)
def test_framing_that_hides_another_computation_still_declines(library, query, reason):
    with pytest.raises(BindingDeclined, match=reason):
        bind(library_skill(library), query)


def test_a_framing_sentence_ends_at_its_full_stop_whatever_follows_but_not_at_an_abbreviation():
    query = "We're looking at cuprite films. pymatgen Composition('Cu2O').oxi_state_guesses(): what is the Cu oxidation state? Return an integer."
    assert "cuprite" in framing_words(query, find_mentions(query))
    glued = "We use, e.g. the monoisotopic masses. What is the mass of caffeine?"  # one sentence, and it says how
    assert framing_words(glued, find_mentions(glued)) == set()
