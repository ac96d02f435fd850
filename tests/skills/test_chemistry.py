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


def test_one_symbol_written_twice_is_no_formula():
    assert not is_formula("NN") and not is_formula("OO") and is_formula("N2") and is_formula("CO")


def test_a_mineral_name_resolves_to_the_mineral_not_to_a_hydrate_or_another_oxide_listed_under_it():
    assert resolve_name("chalcopyrite").formula == "FeCuS2"  # the prototype library's, where the database lists a hydrate
    assert same_formula(resolve_name("ilmenite").formula, "FeTiO3")
    assert resolve_name("magnetite").formula == "Fe3O4"  # the formula its common name writes, "magnetite (Fe3O4)", not FeO
    assert resolve_name("diamond") is None and resolve_name("copper").formula == "Cu"  # no new names, elements as they were


def test_a_ceramic_oxides_name_the_database_lacks_is_read():
    from skills.chemistry import resolve_name

    assert [resolve_name(name).formula for name in ("alumina", "yttria", "hafnia", "thoria")] == ["Al2O3", "Y2O3", "HfO2", "ThO2"]
