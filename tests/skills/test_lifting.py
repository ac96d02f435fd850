"""The model-free generaliser: stated constants become typed, named, described parameters; everything else stays as it was."""

import ast

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


def test_parameters_are_named_from_their_use():
    draft = lift_script(LINSPACE, [LINSPACE_QUERY], known)
    assert {k: v["default"] for k, v in draft.parameters.items()} == {"start": 3.5, "stop": 3.7, "num": 11, "element": "Cu"}
    assert draft.parameters["num"]["kind"] == "integer"


def test_without_the_functions_signatures_a_parameter_is_named_from_the_question():
    draft = lift_script(LINSPACE, [LINSPACE_QUERY])
    assert {k: v["default"] for k, v in draft.parameters.items()} == {"value": 3.5, "value_2": 3.7, "steps": 11, "element": "Cu"}


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
    assert list(draft.parameters) == ["element", "a"] and "Atoms(element)" in draft.code and "bulk(element, " in draft.code


def test_file_names_keywords_of_the_output_and_docstrings_are_not_lifted():
    code = '"""Density of Cu."""\nimport json\nfrom pymatgen.core import Lattice, Structure\ns = Structure.from_spacegroup("Fm-3m", Lattice.cubic(3.615), ["Cu"], [[0, 0, 0]])\ns.to(filename="Cu.cif")\nprint(json.dumps(round(s.density, 4), indent=2))\n'
    draft = lift_script(code, ["Density of fcc Cu with a = 3.615 Å, saved as Cu.cif; 2 spaces indent. Return a float rounded to 4 decimal places."], known)
    assert {k: v["default"] for k, v in draft.parameters.items()} == {"element": "Cu", "a": 3.615}
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
