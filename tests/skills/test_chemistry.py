"""Chemical values compared offline: names through the name database, formulas as compositions, SMILES canonically."""

from skills.chemistry import canonical_smiles, element_neighbours, formula_text, is_formula, resolve_name, same_formula


def test_names_resolve_to_formula_smiles_and_element():
    assert resolve_name("sodium chloride").formula == "NaCl"
    assert resolve_name("paracetamol").smiles == canonical_smiles("CC(=O)Nc1ccc(O)cc1")
    assert resolve_name("copper").element == "Cu" and resolve_name("oxygen").formula == "O2"
    assert resolve_name("unobtainium") is None


def test_formulas_compare_as_compositions_and_print_as_written():
    assert same_formula("ClNa", "NaCl") and not same_formula("H2O", "H4O2") and not same_formula("NaCl", "not a formula")
    assert formula_text("ClNa") == "NaCl" and formula_text("C8H10N4O2") == "C8H10N4O2"
    assert is_formula("CsPbI3") and not is_formula("FCC") and not is_formula("In") and not is_formula("Fm-3m")


def test_neighbours_are_other_elements_of_the_group_then_the_period():
    assert element_neighbours("Na")[:2] == ["K", "Li"] and "Na" not in element_neighbours("Na")


def test_one_symbol_written_twice_is_no_formula_and_tautomers_are_one_compound():
    from skills.chemistry import same_tautomers

    assert not is_formula("NN") and not is_formula("OO") and is_formula("N2") and is_formula("CO")
    assert same_tautomers("CN(C)C(=N)N=C(N)N", "CN(C)C(=N)NC(=N)N")  # metformin as the name database and a question write it
    assert not same_tautomers("CCO", "COC")  # isomers, not tautomers
