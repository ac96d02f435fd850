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
