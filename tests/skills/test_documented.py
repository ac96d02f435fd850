"""What the functions a skill calls say they compute explains the words of a question."""

from skills.binding import BindingDeclined, bind
from skills.documented import documented_words
from tests.skills.test_context import library_skill


def test_the_first_sentence_of_each_called_functions_docstring_is_read_and_nothing_else():
    code = "from rdkit import Chem\nfrom rdkit.Chem import Crippen, Descriptors\nm = Chem.MolFromSmiles('CCO')\nprint(Descriptors.MolWt(m), Crippen.MolLogP(m))\n"
    words = documented_words(code)
    assert "The average molecular weight of the molecule" in words and "Wildman-Crippen LogP value" in words
    assert ">>>" not in words and "C++" not in words and "30.07" not in words  # no examples, no signatures
    assert documented_words("import os\nos.system('true')\n") == ""  # only the scientific packages are looked up
    assert documented_words("def broken(:\n") == ""


def test_a_word_the_called_function_documents_is_explained_and_one_it_does_not_still_declines():
    lipinski = library_skill("rdkit_lipinski_aspirin")
    query = (
        "Using RDKit descriptors (average MolWt <= 500, Wildman-Crippen MolLogP <= 5, NumHDonors <= 5, NumHAcceptors <= 10), does caffeine "
        "(SMILES CN1C=NC2=C1C(=O)N(C(=O)N2C)C) satisfy every one of Lipinski's four rule-of-five criteria? Return true or false."
    )
    assert bind(lipinski, query).params["smiles"] == "CN1C=NC2=C1C(=O)N(C(=O)N2C)C"
    molwt = library_skill("rdkit_molwt_aspirin")
    try:
        bind(molwt, "What is the monoisotopic molecular weight (unit: g/mol) of caffeine (SMILES CN1C=NC2=C1C(=O)N(C(=O)N2C)C) according to RDKit?")
    except BindingDeclined as declined:
        assert "monoisotopic" in str(declined)
    else:
        raise AssertionError("a monoisotopic mass was answered with the average one")
