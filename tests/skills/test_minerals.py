"""Mineral and prototype names: the formulas they can name (pymatgen's AFLOW prototypes, the name database) and their space groups."""

from skills.minerals import names_formula, prototype_groups, prototype_names


def test_a_mineral_names_its_formula_from_the_prototype_library_or_the_name_database():
    assert names_formula("cuprite", "Cu2O")  # the prototype library's, reduced from its cell
    assert names_formula("chalcopyrite", "CuFeS2")  # the name database gives a hydrate; the library the mineral
    assert names_formula("magnetite", "Fe3O4")  # the formula the name database's common name writes ("magnetite (Fe3O4)")
    assert names_formula("periclase", "MgO") and names_formula("vanadium pentoxide", "V2O5")


def test_a_name_of_another_formula_or_no_name_names_nothing():
    assert not names_formula("hematite", "Fe3O4")
    assert not names_formula("anatase", "Cu2O")
    assert not names_formula("cathode", "LiFePO4")


def test_the_prototype_library_gives_space_groups_and_only_names():
    assert prototype_groups("cuprite") == {224} and prototype_groups("wurtzite") == {186}
    assert prototype_groups("periclase") == frozenset()  # the name database knows it; the library does not build it
    names = prototype_names()
    assert {"cuprite", "rutile", "anatase", "zincblende", "sphalerite"} <= names
    assert not {"alpha", "beta", "high"} & names
