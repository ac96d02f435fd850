"""Each lifted parameter must change the answer; an unstated constant that does is recorded as a hidden input."""

from deployments.settings import get_settings
from skills.lifting import lift_script
from skills.relevance import check_relevance
from skills.signatures import SandboxSignatures

CU_ENERGY = "import json\nfrom ase.build import bulk\nfrom ase.calculators.emt import EMT\natoms = bulk('Cu', 'fcc', a=3.6)\natoms.calc = EMT()\nprint(json.dumps(round(atoms.get_potential_energy() / len(atoms), 4)))\n"
BCC_ASE_VOLUME = "import json\nfrom ase.build import bulk\natoms = bulk('Fe', 'bcc', a=2.87)\nprint(json.dumps(round(atoms.get_volume() / len(atoms), 4)))\n"
BCC_VOLUME = "import json\nfrom pymatgen.core import Lattice, Structure\ns = Structure.from_spacegroup('Im-3m', Lattice.cubic(2.87), ['Fe'], [[0, 0, 0]])\nprint(json.dumps(round(s.volume / len(s), 4)))\n"


def check(code, question, expected):
    draft = lift_script(code, [question], SandboxSignatures(get_settings()))
    return check_relevance(draft, code, question, expected, 0.001, ["ase", "pymatgen"], get_settings(), "test")


def test_an_unstated_constant_that_changes_the_answer_is_a_hidden_input(workspace):
    report = check(CU_ENERGY, "What is the EMT energy per atom (unit: eV) of fcc copper? Return a float rounded to 4 decimal places.", -0.0067)
    assert report.error is None and report.kept == ["element", "crystal_structure"]  # bcc copper has another energy
    assert report.hidden_inputs == ["3.6 in bulk(a=)"]


def test_a_stated_value_the_answer_does_not_depend_on_is_put_back_and_noted(workspace):
    question = "What is the volume per atom (unit: Å^3/atom) of bcc iron with a lattice constant of 2.87 Å? Return a float rounded to 4 decimal places."
    report = check(BCC_ASE_VOLUME, question, 11.8199)
    assert report.kept == ["crystal_structure", "a"] and report.dropped == ["element"] and report.independent_of == ["element"]
    assert "def run(crystal_structure: str = 'bcc', a: float = 2.87)" in report.code and "'Fe'" in report.code
    assert report.parameters["a"]["source"] == "a lattice constant of 2.87 Å"


def test_a_crystal_built_from_its_space_group_is_one_parameter_kept_where_another_crystal_changes_the_answer(workspace):
    question = "What is the volume per atom (unit: Å^3/atom) of bcc iron with a lattice constant of 2.87 Å? Return a float rounded to 4 decimal places."
    report = check(BCC_VOLUME, question, 11.8199)  # iron's sites with other elements: the same volume; CsCl's two sites: another
    assert report.error is None and report.kept == ["a", "crystal"] and report.dropped == [] and report.independent_of == []
    assert report.parameters["crystal"]["default"] == {"space_group": "Im-3m", "species": ["Fe"], "coords": [[0.0, 0.0, 0.0]]}
    assert "_lattice(crystal['space_group'])(a)" in report.code and "crystal['species']" in report.code


def test_defaults_that_do_not_reproduce_the_answer_are_reported(workspace):
    report = check(BCC_VOLUME, "Volume per atom of bcc iron, a = 2.87 Å. Return a float rounded to 4 decimal places.", 99.0)
    assert report.error == "defaults do not reproduce"


AROMATIC_RINGS = 'import json\nfrom rdkit import Chem\nfrom rdkit.Chem import rdMolDescriptors\nprint(json.dumps(rdMolDescriptors.CalcNumAromaticRings(Chem.MolFromSmiles("c1ccc2ccccc2c1"))))\n'
AROMATIC_QUERY = "How many aromatic rings does naphthalene (SMILES c1ccc2ccccc2c1) have according to RDKit? Return an integer."
OXIDATION_STATE = 'import json\nfrom pymatgen.core import Composition\nprint(json.dumps(int(round(Composition("KMnO4").oxi_state_guesses()[0]["Mn"]))))\n'
OXIDATION_QUERY = "What is the oxidation state of manganese in KMnO4, as guessed by pymatgen? Return an integer."


def check_exact(code, question, expected, packages):
    draft = lift_script(code, [question], SandboxSignatures(get_settings()))
    return check_relevance(draft, code, question, expected, None, packages, get_settings(), "test")


def test_an_aromatic_ring_count_depends_on_the_smiles(workspace):
    report = check_exact(AROMATIC_RINGS, AROMATIC_QUERY, 2, ["rdkit"])
    assert report.error is None and report.kept == ["smiles"] and report.independent_of == [] and report.inconclusive == []
    assert "def run(smiles: str = 'c1ccc2ccccc2c1')" in report.code


def test_an_oxidation_state_depends_on_the_formula_and_the_element(workspace):
    report = check_exact(OXIDATION_STATE, OXIDATION_QUERY, 7, ["pymatgen"])
    assert report.error is None and sorted(report.kept) == ["element", "formula"] and report.independent_of == []
    assert "oxi_state_guesses()[0][element]" in report.code and "Composition(formula)" in report.code


def test_values_that_do_not_differ_in_what_the_code_reads_never_prove_independence(workspace, monkeypatch):
    look_alikes = ["Cc1ccc2ccccc2c1", "c1ccc2ccccc2c1O", "c1ccc2ccccc2c1C"]  # two aromatic rings each, like naphthalene
    monkeypatch.setattr("skills.relevance.perturbed", lambda kind, value: look_alikes if kind == "smiles" else [])
    monkeypatch.setattr("skills.relevance.probe_values", lambda kind, value, names: look_alikes if kind == "smiles" else [], raising=False)
    report = check_exact(AROMATIC_RINGS, AROMATIC_QUERY, 2, ["rdkit"])
    assert report.kept == ["smiles"] and report.inconclusive == ["smiles"] and report.dropped == [] and report.independent_of == []


HCP_VOLUME = "import json\nfrom pymatgen.core import Lattice\nprint(json.dumps(round(Lattice.hexagonal(3.209, 5.211).volume, 4)))\n"


def test_a_substance_the_code_never_reads_is_one_the_answer_does_not_depend_on(workspace):
    question = "Use pymatgen's Lattice.hexagonal(3.209, 5.211).volume to get the unit-cell volume (unit: Å^3) of hcp magnesium. Return a float rounded to 4 decimal places."
    report = check(HCP_VOLUME, question, 46.472)
    assert report.error is None and report.independent_of == ["element"]
    # Code that reads a substance (here copper, by its symbol) claims nothing of the substances it does not lift.
    assert check(CU_ENERGY, "What is the EMT energy per atom (unit: eV) of fcc copper? Return a float rounded to 4 decimal places.", -0.0067).independent_of == []


def test_code_reads_a_substance_by_any_of_its_elements_or_its_atomic_number():
    from skills.probes import code_reads

    assert code_reads("print(bulk('Cu'))", "Cu") and code_reads("Structure(l, ['Fe', 'O'], c)", "Fe2O3") and code_reads("Atoms(numbers=[12])", "Mg")
    assert not code_reads(HCP_VOLUME, "Mg") and not code_reads("print(1)", "NaCl")


CSCL_GROUP = (
    "import json\nfrom pymatgen.core import Lattice, Structure\nfrom pymatgen.symmetry.analyzer import SpacegroupAnalyzer\n"
    "s = Structure(Lattice.cubic(4.123), ['Cs', 'Cl'], [[0, 0, 0], [0.5, 0.5, 0.5]])\nprint(json.dumps(SpacegroupAnalyzer(s).get_space_group_number()))\n"
)
HCP_SITES_VOLUME = "import json\nfrom pymatgen.core import Lattice, Structure\ns = Structure.from_spacegroup('P6_3/mmc', Lattice.hexagonal(3.209, 5.211), ['Mg'], [[1/3, 2/3, 1/4]])\nprint(json.dumps(round(s.volume / len(s), 4)))\n"


def test_an_element_is_also_tried_as_the_other_sites_element_and_a_dropped_one_site_crystal_frees_the_element(workspace):
    question = "A cubic cell of edge 4.123 Å holds Cs at the corner and Cl at the body centre. What space-group number does pymatgen give? Return an integer."
    report = check(CSCL_GROUP, question, 221)  # Cs on both sites is bcc (229): each element matters, though any other pair gives 221
    assert report.error is None and report.kept == ["a", "element", "element_2"] and report.independent_of == []
    question = "What is the volume per atom (unit: Å^3/atom) of hcp magnesium, a = 3.209 Å and c = 5.211 Å, Mg at (1/3, 2/3, 1/4) in P6_3/mmc? Return a float rounded to 4 decimal places."
    report = check(HCP_SITES_VOLUME, question, 23.2364)  # every crystal tried gives the same volume per atom
    assert report.kept == ["a", "c"] and report.dropped == ["crystal"] and report.independent_of == ["element"]


LIPINSKI = (
    "import json\nfrom rdkit import Chem\nfrom rdkit.Chem import Descriptors, Lipinski\n"
    'm = Chem.MolFromSmiles("CC(=O)Oc1ccccc1C(=O)O")\n'
    "print(json.dumps(bool(Descriptors.MolWt(m) <= 500 and Lipinski.NumHAcceptors(m) <= 10)))\n"
)
LIPINSKI_QUERY = "Does aspirin (SMILES CC(=O)Oc1ccccc1C(=O)O) have a molecular weight of at most 500 and at most 10 H-bond acceptors, by RDKit? Return true or false."
EOS_POINTS = (
    "import json\nimport numpy as np\nfrom ase.build import bulk\nfrom ase.calculators.emt import EMT\nfrom ase.eos import EquationOfState\n"
    "v, e = [], []\nfor a in np.linspace(3.5, 3.7, 5):\n    c = bulk('Cu', 'fcc', a=a)\n    c.calc = EMT()\n    v.append(c.get_volume())\n"
    "    e.append(c.get_potential_energy())\nv0, e0, b = EquationOfState(v, e).fit()\nprint(json.dumps(round((4 * v0) ** (1 / 3), 4)))\n"
)
EOS_QUERY = "What lattice constant (unit: Å) of fcc copper does an EOS fit to 5 evenly spaced lattice constants from 3.5 to 3.7 Å give with ASE's EMT? Return a float rounded to 4 decimal places."


def test_a_bound_the_question_sets_is_the_criterions_and_stands_for_another_substance(workspace):
    report = check(LIPINSKI, LIPINSKI_QUERY, True)
    assert report.error is None and report.kept == ["smiles", "max_molecular_weight", "max_h_bond_acceptors"]
    assert report.tunables == ["max_molecular_weight", "max_h_bond_acceptors"]  # thresholds of the rule, not aspirin's properties  # a threshold of the rule, not aspirin's property


def test_a_count_of_the_methods_points_stands_for_another_substance_though_it_changes_the_answer(workspace):
    report = check(EOS_POINTS, EOS_QUERY, 3.5898)
    assert report.error is None and "num" in report.kept and "num" in report.tunables
    assert not {"min_lattice_constant", "max_lattice_constant"} & set(report.tunables)  # copper's range is copper's
    assert report.parameters["min_lattice_constant"]["unit"] == "Å"  # "3.5 to 3.7 Å": the range's unit is its start's too
