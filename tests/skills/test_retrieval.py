"""Lexical retrieval: BM25 ranking, normalised similarity, threshold."""

import pytest

from skills.retrieval import TextIndex, tokens


def test_tokens_keep_formulas_and_drop_stopwords():
    assert tokens("Return the energy of N2 using mp-149") == ["energy", "n2", "mp-149"]


def test_most_similar_text_comes_first_and_threshold_filters():
    index = TextIndex(["atomization energy of N2 with ASE EMT", "count RDKit fragments of a SMILES", "density of NaCl with pymatgen"])
    hits = index.search("atomization energy of O2 with EMT")
    assert hits[0].position == 0 and 0 < hits[0].similarity < 1
    assert index.search("atomization energy of O2 with EMT", threshold=0.99) == []
    assert index.search("band structure of graphene") == []


def test_identical_text_has_similarity_one_and_empty_index_finds_nothing():
    assert TextIndex(["density of NaCl with pymatgen"]).search("density of NaCl with pymatgen")[0].similarity == pytest.approx(1.0)
    assert TextIndex([]).search("anything") == []


def test_words_are_stemmed_hyphens_split_and_subscripts_read_as_digits():
    assert tokens("oxidation-state guesses of KMnO₄ (mp-149)") == ["oxidation", "state", "guess", "kmno4", "mp-149"]


REWORDINGS = [
    "Which charge does Mn carry in potassium permanganate, by pymatgen's best guess? Return an integer.",
    "What oxidation state does Mn have in KMnO₄, going by pymatgen's oxidation-state guesses? Return an integer.",
]


@pytest.mark.parametrize("query", REWORDINGS)
def test_a_library_question_asked_in_other_words_recalls_its_skill(workspace, query):
    import json
    from pathlib import Path

    from deployments.settings import get_settings
    from skills.documents import Provenance, Skill, TestCase
    from skills.store import open_store

    settings = get_settings()
    store = open_store(settings)
    for task in sorted(Path("skills/library").glob("*.json")):
        data = json.loads(task.read_text())
        skill = Skill(
            name=data["skill_family"] or data["id"], code="def run():\n    return 0\n", test_case=TestCase(expected=0),
            provenance=Provenance(query=data["user_query"]["1"]),
        )  # fmt: skip
        store.put_skill(skill)
    found = store.search_skills(query, k=1)
    assert found[0][0].name == "pymatgen_oxidation_state" and found[0][1] >= settings.skill_match_threshold
