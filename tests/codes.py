"""Scripts the scripted LLM 'writes' in tests: real ASE code, right and wrong."""

N2_QUERY = (
    "Calculate the atomization energy (unit: eV) of a nitrogen molecule using ASE's EMT calculator, "
    "relaxing the molecule to fmax=0.01 eV/Å first. Return a positive float rounded to 4 decimal places."
)
N2_ANSWER = 9.9372

N2_CODE = """import json
from ase import Atoms
from ase.build import molecule
from ase.calculators.emt import EMT
from ase.optimize import BFGS
n2 = molecule("N2"); n2.calc = EMT()
BFGS(n2, logfile=None).run(fmax=0.01)
n = Atoms("N"); n.calc = EMT()
print(json.dumps(round(2 * n.get_potential_energy() - n2.get_potential_energy(), 4)))
"""

# Misspelt import: fails with ImportError, as small models often do.
N2_TYPO = N2_CODE.replace("from ase.build import molecule", "from ase.build import molecul")

# Runs but answers something else.
WRONG_ANSWER = "import json\nprint(json.dumps(1.2345))\n"

CRASH = "raise ValueError('scripted failure')\n"

O2_QUERY = N2_QUERY.replace("a nitrogen molecule", "an oxygen molecule O2")
O2_ANSWER = 8.5753

# The generalisation a model would write for N2_CODE: one run() with the molecule and fmax as parameters.
N2_SKILL = """import json
from ase import Atoms
from ase.build import molecule
from ase.calculators.emt import EMT
from ase.optimize import BFGS


def run(formula: str = "N2", fmax: float = 0.01) -> float:
    \"\"\"Atomization energy (eV) of a molecule with ASE's EMT calculator.

    formula: molecule formula for ase.build.molecule
    fmax: BFGS force threshold in eV/A
    \"\"\"
    mol = molecule(formula)
    mol.calc = EMT()
    BFGS(mol, logfile=None).run(fmax=fmax)
    isolated = 0.0
    for symbol in mol.get_chemical_symbols():
        atom = Atoms(symbol)
        atom.calc = EMT()
        isolated += atom.get_potential_energy()
    return round(isolated - mol.get_potential_energy(), 4)
"""

SI_QUERY = "What is the space group number of diamond-cubic silicon (a = 5.43 Å)? Return an integer."
SI_ANSWER = 227
SI_CODE = """import json
from pymatgen.core import Lattice, Structure
from pymatgen.symmetry.analyzer import SpacegroupAnalyzer
si = Structure.from_spacegroup("Fd-3m", Lattice.cubic(5.43), ["Si"], [[0, 0, 0]])
print(json.dumps(SpacegroupAnalyzer(si).get_space_group_number()))
"""
# A wrong import, as small models write: pymatgen has no 'Strucutre'.
SI_TYPO = SI_CODE.replace("import Lattice, Structure", "import Lattice, Strucutre").replace("si = Structure.", "si = Strucutre.")


def n2_skill():  # noqa: ANN201 - Skill, imported lazily
    """N2_SKILL as a verified skill document, as the compiler would store it."""
    from skills.documents import Skill, TestCase
    from skills.params import signature_schema

    return Skill(
        name="emt_atomization_energy", description="Atomization energy of a molecule with ASE's EMT calculator.",
        code=N2_SKILL, parameters=signature_schema(N2_SKILL), packages=["ase"], output_type="float", unit="eV",
        test_case=TestCase(params={"formula": "N2", "fmax": 0.01}, expected=N2_ANSWER, tolerance=1e-3),
    )  # fmt: skip


# A trivial skill whose runs cost only the sandbox: for load, fuzzing and interface tests.
ADD = "def run(a: int = 2, b: int = 2) -> int:\n    \"\"\"The sum of two integers.\"\"\"\n    return a + b\n"


def add_two_skill():  # noqa: ANN201 - Skill, imported lazily
    """ADD as a skill document with its test case."""
    from skills.documents import Skill, TestCase
    from skills.params import signature_schema

    return Skill(
        name="add_two", description="The sum of two integers.", code=ADD, parameters=signature_schema(ADD), output_type="int",
        test_case=TestCase(params={"a": 2, "b": 2}, expected=4),
    )  # fmt: skip
