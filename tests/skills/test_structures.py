"""Structure types and space groups as a question states them."""

from skills.structures import stated_groups


def test_space_groups_are_read_from_symbols_and_structure_types():
    assert stated_groups("bcc iron built with Structure.from_spacegroup('Im-3m', Lattice.cubic(2.87), ['Fe'], [[0, 0, 0]])") == {229}
    assert stated_groups("rutile, P4_2/mnm, next to hcp Mg (P6_3/mmc)") == {136, 194}
    assert stated_groups("Periclase (MgO) in the rock-salt structure") == {225}


def test_words_and_symbols_that_are_no_space_group_state_none():
    assert stated_groups("Fe and Cu at 300 K, P = 1 bar, in C") == set()


def test_ase_names_of_structure_types_are_read_as_written_in_code():
    from skills.structures import structures

    assert structures("ase.build.bulk('CsCl', 'cesiumchloride', a=4.12)") == {"cesiumchloride"}
    assert structures("LiFePO4, the olivine cathode") == {"olivine"}


def test_a_smiles_ring_bond_is_no_strukturbericht_symbol():
    from skills.structures import structures

    assert structures("What canonical SMILES does RDKit give for phenol written as C1=CC=CC=C1O?") == set()
    assert structures("NaCl in the B1 structure, CsCl (B2)") == {"rocksalt", "cesiumchloride"}
