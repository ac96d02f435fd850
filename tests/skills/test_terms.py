"""Ordinary English or a technical term: only a technical word, or what the question asks for, needs a skill's explaining."""

import pytest

from skills.terms import asked_quantity, domain_phrases, domain_terms, explaining_forms, explains, is_phrase, is_technical


@pytest.mark.parametrize("word", ["them", "between", "equally", "work", "out", "two", "fall", "I'd", "split", "strongly", "looser", "redo"])
def test_ordinary_english_is_never_technical(word):
    assert not is_technical(word)


@pytest.mark.parametrize(
    "word",
    ["Birch", "monoisotopic", "heavy", "Morse", "bcc", "exact", "rotatable", "zincblende", "enthalpy", "total", "relaxed", "GPAW"],
)
def test_technical_terms_are_technical_however_common(word):
    assert is_technical(word)


def test_the_domain_terms_are_harvested_from_the_packages_not_from_python_itself():
    assert {"morse", "birch", "bcc", "rotatable"} <= domain_terms()
    assert not {"verify", "geometry", "redo"} & domain_terms()  # the stdlib names things with them too
    assert ("bond", "length") in domain_phrases() and ("heavy", "atom") in domain_phrases()
    assert is_phrase("bond", "lengths") and is_phrase("point", "group") and not is_phrase("work", "out")


@pytest.mark.parametrize(
    ("vocabulary", "word"),
    [
        ({"emt"}, "effective"),  # an abbreviation explains its words ...
        ({"effective", "medium", "theory"}, "emt"),  # ... and its words the abbreviation
        ({"fmax"}, "maximum"),
        ({"fmax"}, "criterion"),
        ({"body", "centred", "cubic"}, "bcc"),
        ({"atom"}, "atomic"),  # an adjective of a noun
        ({"neutral"}, "neutrality"),
        ({"neighbour"}, "neighbors"),  # British and American spellings
        ({"vacancy"}, "monovacancy"),
        ({"charge", "neutrality"}, "balance"),  # "charge balance" names charge neutrality
        ({"relaxation"}, "relaxed"),
    ],
)
def test_a_skill_explains_a_word_in_any_of_its_forms(vocabulary, word):
    assert explains(explaining_forms(vocabulary), word)


@pytest.mark.parametrize(("vocabulary", "word"), [({"atom"}, "heavy"), ({"mass"}, "exact"), ({"vacancy"}, "divacancy"), ({"form"}, "formation")])
def test_a_skill_does_not_explain_a_word_it_was_not_verified_on(vocabulary, word):
    assert not explains(explaining_forms(vocabulary), word)


@pytest.mark.parametrize(
    ("query", "quantity"),
    [
        ("What is the molar volume of Fe2O3 according to pymatgen?", ["molar", "volume"]),
        ("How many heavy atoms does naphthalene have?", ["heavy", "atoms"]),
        ("Can you work out the molecular weight of caffeine?", ["molecular", "weight"]),
        ("How large is the topological polar surface area (unit: Å^2) of caffeine?", ["topological", "polar", "surface", "area"]),
        ("Is CsPbI3 a chemically valid composition?", []),
    ],
)
def test_what_a_question_asks_for_is_read(query, quantity):
    assert asked_quantity(query) == quantity


def test_what_a_question_asks_for_stops_at_its_verb_and_never_starts_with_to():
    from skills.terms import asked_quantity

    assert asked_quantity("JSON round trip of CaF2: what reduced formula comes back? Return a string.") == ["reduced", "formula"]
    assert asked_quantity("I want the number the cheap potential gives.") == ["number"]
    assert asked_quantity("I want to confirm the composition survives.") == []
    assert asked_quantity("What is the molar volume of NaCl?") == ["molar", "volume"]


def test_a_question_adds_its_code_names_words_and_equivalent_phrases_for_retrieval():
    from skills.terms import search_words

    added = search_words("Return rdkit.Chem.rdMolDescriptors.CalcTPSA for paracetamol").lower().split()
    assert {"calc", "tpsa", "topological", "polar", "surface"} <= set(added)
    assert {"molar", "mass"} <= set(search_words("calcite, CaCO3: formula weight from pymatgen").split())
    assert "ca" not in search_words("CaCO3 formula weight").lower().split()  # a formula is no code name


def test_an_equivalent_phrase_counts_as_said_only_where_its_words_stand_together():
    texts = ["the composition-weighted average electronegativity of silica", "formula"]
    words = [w for text in texts for w in text.replace("-", " ").split()]
    assert not explains(explaining_forms(words, texts), "molar")  # "weighted" and "formula" are no "formula weight"
    assert explains(explaining_forms(["formula", "weight"], ["the formula weight of silica"]), "molar")
    spaced = ["give the international space-group symbol"]
    assert explains(explaining_forms(spaced[0].replace("-", " ").split(), spaced), "mauguin")  # a word or two between


def test_a_doubled_consonant_before_ed_or_ing_meets_the_word_it_inflects():
    assert explains(explaining_forms(["fit", "sum"]), "fitted") and explains(explaining_forms(["fit", "sum"]), "summed")
    assert not explains(explaining_forms(["bet"]), "better")


def test_a_verb_made_from_an_adjective_is_explained_by_the_adjective():
    from skills.terms import explaining_forms, explains

    assert explains(explaining_forms(["canonical"]), "canonicalise") and explains(explaining_forms(["normal"]), "normalize")
    assert not explains(explaining_forms(["canonical"]), "kekulize")
