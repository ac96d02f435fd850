"""The values tried for a stated substance differ in what the code reads of it, and only such values prove independence."""

from pymatgen.core import Composition
from rdkit import Chem
from rdkit.Chem import Descriptors, rdMolDescriptors

from skills.probes import code_names, probe_values, read_properties, shown_independent

AROMATIC_RINGS = 'import json\nfrom rdkit import Chem\nfrom rdkit.Chem import rdMolDescriptors\nprint(json.dumps(rdMolDescriptors.CalcNumAromaticRings(Chem.MolFromSmiles("c1ccc2ccccc2c1"))))\n'
OXIDATION_STATE = 'import json\nfrom pymatgen.core import Composition\nprint(json.dumps(int(round(Composition("KMnO4").oxi_state_guesses()[0]["Mn"]))))\n'
NAPHTHALENE = "c1ccc2ccccc2c1"


def aromatic_rings(smiles: str) -> int:
    return rdMolDescriptors.CalcNumAromaticRings(Chem.MolFromSmiles(smiles))


def manganese(formula: str) -> float | None:
    guesses = Composition(formula).oxi_state_guesses()
    return guesses[0].get("Mn") if guesses else None


def test_the_code_s_own_calls_say_what_it_reads():
    assert read_properties("smiles", code_names(AROMATIC_RINGS)) == ["aromatic rings"]
    assert read_properties("formula", code_names(OXIDATION_STATE)) == ["oxidation states"]
    assert read_properties("element", {"bulk", "EMT", "get_potential_energy"}) == ["species"]
    # Code that reads nothing known: every property of the kind must be witnessed.
    assert len(read_properties("smiles", {"FragCatalog", "GetNumEntries"})) > 10


def test_an_aromatic_ring_counter_is_tried_on_molecules_with_fewer_and_more_aromatic_rings():
    tried = probe_values("smiles", NAPHTHALENE, code_names(AROMATIC_RINGS))
    counts = {aromatic_rings(s) for s in tried}
    assert min(counts) < 2 < max(counts), tried  # not only naphthalenes with a methyl group


def test_an_oxidation_state_is_tried_on_compounds_where_the_element_s_state_differs():
    tried = probe_values("formula", "KMnO4", code_names(OXIDATION_STATE))
    states = [manganese(f) for f in tried]
    assert sum(1 for s in states if s is not None and s != manganese("KMnO4")) >= 2, dict(zip(tried, states, strict=True))


def test_a_lipinski_check_is_tried_on_molecules_beyond_each_limit():
    names = {"MolFromSmiles", "MolWt", "MolLogP", "NumHDonors", "NumHAcceptors"}
    tried = [Chem.MolFromSmiles(s) for s in probe_values("smiles", "CC(=O)Oc1ccccc1C(=O)O", names)]
    assert any(Descriptors.MolWt(m) > 500 for m in tried) and any(Descriptors.NumHDonors(m) > 5 for m in tried)


def test_the_same_answer_from_values_that_read_the_same_proves_nothing():
    names = code_names(AROMATIC_RINGS)
    look_alikes = ["Cc1ccc2ccccc2c1", "c1ccc2ccccc2c1O", "c1ccc2ccccc2c1C"]  # all with two aromatic rings
    assert {aromatic_rings(s) for s in look_alikes} == {2}
    assert not shown_independent("smiles", NAPHTHALENE, look_alikes, names)
    assert not shown_independent("smiles", NAPHTHALENE, ["c1ccccc1"], names)  # one witness is not enough
    assert shown_independent("smiles", NAPHTHALENE, ["c1ccccc1", "C1CCCCC1"], names)


def test_a_substance_built_into_a_structure_is_witnessed_by_other_species():
    names = {"bulk", "get_symmetry_dataset", "international"}
    assert shown_independent("formula", "NaCl", ["KCl", "LiCl"], names)
    assert not shown_independent("formula", "NaCl", ["NaCl2", "Na2Cl2"], names)  # the same species
    assert not shown_independent("formula", "KMnO4", ["RbMnO4", "NaMnO4"], code_names(OXIDATION_STATE))  # Mn is +7 in both
