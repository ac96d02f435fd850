"""The model-free generaliser: stated constants become typed, named, described parameters; everything else stays as it was."""

import ast

import pytest

from skills.lifting import lift_script
from skills.params import signature_schema
from tests.codes import N2_CODE, N2_QUERY
from tests.signatures import known

LINSPACE = (
    "import json\nimport numpy as np\nfrom ase.build import bulk\nfrom ase.calculators.emt import EMT\n"
    "energies = []\nfor a in np.linspace(3.5, 3.7, 11):\n    atoms = bulk('Cu', 'fcc', a=a); atoms.calc = EMT(); energies.append(atoms.get_potential_energy())\n"
    "print(json.dumps(round(min(energies), 4)))\n"
)
LINSPACE_QUERY = "What is the lowest EMT energy of fcc copper over lattice constants 3.5-3.7 Å in 11 steps? Return a float rounded to 4 decimal places."


def test_the_n2_script_becomes_run_formula_with_the_atom_derived_from_it():
    draft = lift_script(N2_CODE, [N2_QUERY])
    assert list(draft.parameters) == ["formula", "fmax"]
    formula, fmax = draft.parameters["formula"], draft.parameters["fmax"]
    assert (formula["default"], formula["kind"], formula["source"], formula["derives"]) == ("N2", "formula", "nitrogen molecule", "elements")
    assert (fmax["default"], fmax["kind"], fmax["exclusiveMinimum"], fmax["unit"]) == (0.01, "number", 0, "eV/Å")
    assert "molecule(formula)" in draft.code and 'Atoms(_elements(formula)[0])' in draft.code and "run(fmax=fmax)" in draft.code
    assert "round(2 * " in draft.code  # an arithmetic constant and the format's 4 decimals stay
    assert signature_schema(draft.code)["properties"]["formula"]["default"] == "N2"


def test_parameters_are_named_from_their_meaning_then_their_use():
    """The question's range names its ends; the count takes the function's own name for it."""
    draft = lift_script(LINSPACE, [LINSPACE_QUERY], known)
    assert {k: v["default"] for k, v in draft.parameters.items()} == {
        "min_lattice_constant": 3.5, "max_lattice_constant": 3.7, "num": 11, "element": "Cu", "crystal_structure": "fcc"}  # fmt: skip
    assert draft.parameters["num"]["kind"] == "integer"


def test_without_the_functions_signatures_a_parameter_is_named_from_the_question():
    draft = lift_script(LINSPACE, [LINSPACE_QUERY])
    assert {k: v["default"] for k, v in draft.parameters.items()} == {
        "min_lattice_constant": 3.5, "max_lattice_constant": 3.7, "steps": 11, "element": "Cu", "crystal_structure": "fcc"}  # fmt: skip


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("What is the lowest EMT energy of Cu (fcc), a = 3.5 … 3.7 Å, 11 steps? Return a float.", ["min_a", "max_a", "steps"]),
        ("Lowest EMT energy of fcc copper for a between 3.5 and 3.7 Å (11 steps)? Return a float.", ["min_a", "max_a", "steps"]),
        ("Lowest EMT energy of fcc Cu, lattice constant range 3.5–3.7 Å, 11 steps. Return a float.", ["min_lattice_constant", "max_lattice_constant", "steps"]),
        # "and" makes a range only after "between": two numbers side by side are not its ends
        ("Lowest EMT energy of fcc copper with a 3.5 and 3.7 Å in 11 steps? Return a float.", ["value", "value_2", "steps"]),
    ],
)
def test_a_range_the_question_states_names_its_ends(query, names):
    assert list(lift_script(LINSPACE, [query]).parameters)[:3] == names


def test_bounds_are_named_by_what_they_bound_and_a_method_by_its_receivers_class():
    lipinski = (
        "import json\nfrom rdkit import Chem\nfrom rdkit.Chem import Crippen, Descriptors, Lipinski\n"
        "m = Chem.MolFromSmiles('CC(=O)Oc1ccccc1C(=O)O')\n"
        "print(json.dumps(bool(Descriptors.MolWt(m) <= 500 and Crippen.MolLogP(m) <= 4 and Lipinski.NumHAcceptors(m) <= 10)))\n"
    )
    query = ("Does aspirin (SMILES CC(=O)Oc1ccccc1C(=O)O) have molecular weight at most 500, logP at most 4 and at most 10 "
             "acceptors, computed with RDKit? Return true or false.")  # fmt: skip
    assert list(lift_script(lipinski, [query]).parameters) == ["smiles", "max_molecular_weight", "max_logp", "max_acceptors"]
    neighbours = (
        "import json\nfrom pymatgen.core import Lattice, Structure\n"
        "s = Structure.from_spacegroup('Fd-3m', Lattice.cubic(5.431), ['Si'], [[0, 0, 0]])\n"
        "print(json.dumps(round(min(n.nn_distance for n in s.get_neighbors(s[0], 3.0)), 4)))\n"
    )
    query = "Nearest-neighbour distance in diamond silicon, a = 5.431 Å, searching within 3.0 Å with pymatgen? Return a float."
    asked: list[str] = []

    def signatures(targets: list[str]) -> dict[str, list[str]]:
        asked.extend(targets)
        return {"pymatgen.core.Structure.get_neighbors": ["site", "r"], "pymatgen.core.Lattice.cubic": ["a"]}

    assert set(lift_script(neighbours, [query], signatures).parameters) == {"a", "r", "crystal"}
    assert "pymatgen.core.Structure.get_neighbors" in asked  # s is the Structure its class method made


def test_a_constant_the_question_does_not_state_stays_a_constant():
    draft = lift_script(N2_CODE, ["What is the atomization energy of a nitrogen molecule with EMT? Return a float."])
    assert list(draft.parameters) == ["formula"] and "fmax=0.01" in draft.code


def test_a_script_with_nothing_stated_stays_parameterless_and_runs_the_same_code():
    draft = lift_script(N2_CODE, ["What does this script print? Return a float."])
    assert draft.parameters == {} and "def run():" in draft.code
    assert 'molecule("N2")' in draft.code.replace("'", '"')


def test_a_value_stated_twice_in_different_places_is_not_lifted():
    code = "import json\nfrom pymatgen.core import Composition\nprint(json.dumps(round(Composition('NaCl').get_wt_fraction('Na'), 4)))\n"
    once = lift_script(code, ["What is the mass fraction of Na in NaCl? Return a float rounded to 4 decimal places."])
    assert {k: v["default"] for k, v in once.parameters.items()} == {"element": "Na", "formula": "NaCl"}
    twice = lift_script(code, ["Na is light. In NaCl, which is common table salt found in every kitchen of the world, what is the mass fraction of Na? Return a float."])
    assert "element" not in twice.parameters and any("stated more than once" in s for s in twice.skipped)


def test_one_stated_value_used_twice_in_the_script_becomes_one_parameter():
    code = "import json\nfrom ase import Atoms\nfrom ase.build import bulk\nx = Atoms('Na')\ny = bulk('Na', 'bcc', a=4.23)\nprint(json.dumps(len(x) + len(y)))\n"
    draft = lift_script(code, ["Count the atoms of a sodium atom and bcc sodium with a = 4.23 Å. Return an integer."])
    assert list(draft.parameters) == ["element", "crystal_structure", "a"] and "Atoms(element)" in draft.code and "bulk(element, " in draft.code


def test_file_names_keywords_of_the_output_and_docstrings_are_not_lifted():
    code = '"""Density of Cu."""\nimport json\nfrom pymatgen.core import Lattice, Structure\ns = Structure.from_spacegroup("Fm-3m", Lattice.cubic(3.615), ["Cu"], [[0, 0, 0]])\ns.to(filename="Cu.cif")\nprint(json.dumps(round(s.density, 4), indent=2))\n'
    draft = lift_script(code, ["Density of fcc Cu with a = 3.615 Å, saved as Cu.cif; 2 spaces indent. Return a float rounded to 4 decimal places."], known)
    crystal = {"space_group": "Fm-3m", "species": ["Cu"], "coords": [[0.0, 0.0, 0.0]]}
    assert {k: v["default"] for k, v in draft.parameters.items()} == {"a": 3.615, "crystal": crystal}
    assert '"Cu.cif"' in draft.code.replace("'", '"')


def test_a_script_whose_answer_is_not_printed_as_json_is_captured_from_stdout():
    code = "x = 2.5\ny = x * 4\nprint(y)\n"
    draft = lift_script(code, ["Multiply 2.5 by four. Return a float."])
    assert list(draft.parameters) == ["x"] and "redirect_stdout" in draft.code
    ast.parse(draft.code)


def test_a_main_block_runs_inside_run():
    code = "import json\n\nif __name__ == '__main__':\n    print(json.dumps(3.5 * 2))\n"
    draft = lift_script(code, ["Double 3.5. Return a float."])
    assert "if __name__" not in draft.code.split("def run")[1].split("if __name__")[0]


def test_a_stated_element_used_as_a_key_becomes_a_parameter_and_an_index_stays():
    script = 'import json\nfrom pymatgen.core import Composition\nprint(json.dumps(int(round(Composition("KMnO4").oxi_state_guesses()[0]["Mn"]))))\n'
    draft = lift_script(script, ["What is the oxidation state of manganese in KMnO4, as guessed by pymatgen? Return an integer."])
    assert draft.parameters["element"]["default"] == "Mn" and draft.parameters["formula"]["default"] == "KMnO4"
    assert "oxi_state_guesses()[0][element]" in draft.code


PHASE_DIAGRAM = (
    "import json\nfrom pymatgen.analysis.phase_diagram import PDEntry, PhaseDiagram\nfrom pymatgen.core import Composition\n"
    'entries = [PDEntry(Composition(f), e) for f, e in [("Li", 0.0), ("O2", 0.0), ("Li2O", -6.0), ("Li2O2", -5.6)]]\n'
    'target = next(e for e in entries if e.composition == Composition("Li2O2"))\n'
    "print(json.dumps(round(float(PhaseDiagram(entries).get_e_above_hull(target)), 4)))\n"
)


def test_a_list_of_entries_the_question_lists_becomes_one_parameter_beside_the_compound_asked_about():
    question = "Given the total energies (eV per formula unit) Li 0.0, O2 0.0, Li2O -6.0 and Li2O2 -5.6, how far above the hull is Li2O2?"
    draft = lift_script(PHASE_DIAGRAM, [question])
    assert {k: v["default"] for k, v in draft.parameters.items()} == {
        "energies": [["Li", 0.0], ["O2", 0.0], ["Li2O", -6.0], ["Li2O2", -5.6]], "formula": "Li2O2",
    }  # fmt: skip
    assert draft.parameters["energies"]["type"] == "array" and draft.parameters["energies"]["kind"] == "entries"
    assert "for f, e in energies]" in draft.code and "Composition(formula)" in draft.code
    # a list the question does not state entry by entry stays the script's own
    unlisted = lift_script(PHASE_DIAGRAM, ["How far above the hull is Li2O2 among its Li-O phases?"])
    assert "energies" not in unlisted.parameters and '("Li2O", -6.0)' in unlisted.code.replace("'", '"')


TWICE_THE_ATOM = (
    "import json\nfrom ase import Atoms\nfrom ase.build import molecule\nfrom ase.calculators.emt import EMT\n"
    'n2 = molecule("N2"); n2.calc = EMT(); e_n2 = n2.get_potential_energy()\n'
    'n = Atoms("N"); n.calc = EMT(); e_n = n.get_potential_energy()\n'
    "print(json.dumps(round(2 * e_n - e_n2, 4)))\n"
)


def test_a_term_of_the_one_element_times_its_count_becomes_a_sum_over_every_element():
    draft = lift_script(TWICE_THE_ATOM, ["What is the EMT atomization energy of a nitrogen molecule? Return a float."])
    formula = draft.parameters["formula"]
    assert formula["default"] == "N2" and "derives" not in formula  # any make-up: CO is the sum over C and O
    namespace: dict = {}
    exec(draft.code, namespace)  # noqa: S102 - the lifted code of a fixed script
    run = namespace["run"]
    assert run() == round(2 * _energy("N") - _energy("N2"), 4)
    assert run("CO") == round(_energy("C") + _energy("O") - _energy("CO"), 4)


def _energy(formula: str) -> float:
    from ase import Atoms
    from ase.build import molecule
    from ase.calculators.emt import EMT

    atoms = molecule(formula) if len(formula) > 1 else Atoms(formula)
    atoms.calc = EMT()
    return atoms.get_potential_energy()


def test_a_term_used_otherwise_keeps_the_formulas_make_up():
    # the atom's energy used twice (or a count that is not the formula's) is no per-element term: positions stay
    for script in (TWICE_THE_ATOM.replace("2 * e_n - e_n2", "2 * e_n - e_n2 + e_n"), TWICE_THE_ATOM.replace("2 * e_n", "3 * e_n")):
        draft = lift_script(script, ["What is the EMT atomization energy of a nitrogen molecule? Return a float."])
        assert draft.parameters["formula"]["derives"] == "elements" and "_term" not in draft.code


CRYSTAL_SYSTEM = (
    "import json\nfrom ase.build import bulk\nfrom pymatgen.io.ase import AseAtomsAdaptor\nfrom pymatgen.symmetry.analyzer import SpacegroupAnalyzer\n"
    'structure = AseAtomsAdaptor.get_structure(bulk("Mg", "hcp", a=3.21, c=5.21))\n'
    "print(json.dumps(SpacegroupAnalyzer(structure).get_crystal_system()))\n"
)
FCC_FROM_VOLUME = (
    "import json\nfrom ase.build import bulk\nfrom ase.calculators.emt import EMT\n"
    'atoms = bulk("Cu", "fcc", a=3.6); atoms.calc = EMT()\n'
    "print(json.dumps(round((4 * atoms.get_volume()) ** (1 / 3), 4)))\n"
)


def test_a_structure_type_the_question_names_becomes_a_parameter_unless_the_arithmetic_may_be_its_own():
    draft = lift_script(CRYSTAL_SYSTEM, ["Which crystal system does spglib assign to hcp magnesium with a = 3.21 Å and c = 5.21 Å?"])
    structure = draft.parameters["crystal_structure"]
    assert (structure["default"], structure["kind"], structure["source"]) == ("hcp", "structure", "hcp")
    assert "bct" in structure["enum"] and "bulk(element, crystal_structure, a=a, c=c)" in draft.code
    # the 4 atoms of the fcc cell in (4 V)^(1/3): another structure would need another number, so fcc stays fixed
    fixed = lift_script(FCC_FROM_VOLUME, ["What is the lattice constant of fcc copper from the EMT volume of a cell with a = 3.6 Å?"])
    assert "crystal_structure" not in fixed.parameters and "'fcc'" in fixed.code


def test_a_value_in_a_dict_is_named_by_its_key_unless_the_key_names_a_module_a_builtin_or_an_element():
    script = (
        "import json\nfrom ase.optimize import FIRE\nsettings = {'fmax': 0.03, 'io': 3.5, 'Fe': 2.2}\n"
        "print(json.dumps(settings['fmax'] + settings['io'] + settings['Fe']))\n"
    )
    draft = lift_script(script, ["Relax with fmax 0.03 eV/Å, a spacing of 3.5 Å and an iron moment of 2.2 μB: the sum?"])
    names = set(draft.parameters)
    assert "fmax" in names and not names & {"io", "Fe", "fe"}, names


def test_a_number_stated_twice_is_lifted_where_its_keyword_names_it_and_a_value_inside_a_list_is_named_from_the_question():
    import json
    from pathlib import Path

    from skills.lifting import lift_script

    task = json.loads((Path(__file__).resolve().parents[2] / "skills/library/ase_lj_dimer_distance.json").read_text())
    draft = lift_script(task["solution_code_or_process"], [task["user_query"]["1"]])
    assert list(draft.parameters) == ["sigma", "epsilon", "rc", "fmax", "starting_distance"]  # not "positions" for 1.5
    assert "LennardJones(sigma=sigma, epsilon=epsilon, rc=rc)" in draft.code and "[starting_distance, 0, 0]" in draft.code


def test_the_one_of_n_minus_one_is_the_formulas_never_a_parameter():
    code = (
        "import json\nfrom ase.build import bulk\nfrom ase.calculators.emt import EMT\n"
        "atoms = bulk('Cu', 'fcc', a=3.6, cubic=True).repeat((2, 2, 2))\nn = len(atoms)\natoms.calc = EMT()\ne_bulk = atoms.get_potential_energy()\n"
        "del atoms[0]\natoms.calc = EMT()\nprint(json.dumps(round(atoms.get_potential_energy() - (n - 1) / n * e_bulk, 4)))\n"
    )
    question = "What is the unrelaxed vacancy formation energy (eV) of fcc copper (a = 3.6 Å) with ASE's EMT, using a 2x2x2 supercell of the cubic cell and removing one atom? Round to 4 decimal places."
    draft = lift_script(code, [question])
    assert "(n - 1) / n" in draft.code and not any(p["default"] == 1 for p in draft.parameters.values())  # del atoms[0] removes one, whatever
