"""Which modules a run's code imports, read from its source: what a warm executor may import ahead of it."""

from __future__ import annotations

from deployments.sandbox.imports import MAX_CODE_CHARS, code_imports, roots_of

ROOTS = roots_of(["numpy", "ase.build", "pymatgen.core", "rdkit.Chem"])


def test_the_roots_are_the_top_level_packages():
    assert ROOTS == {"numpy", "ase", "pymatgen", "rdkit"}


def test_a_module_named_in_a_from_import_counts_and_a_class_does_not():
    code = "from rdkit.Chem import Descriptors, MolFromSmiles\nfrom pymatgen.core import Structure, Lattice\nfrom numpy import linalg\n"
    assert code_imports(code, ROOTS) == {"rdkit.Chem", "rdkit.Chem.Descriptors", "pymatgen.core", "numpy", "numpy.linalg"}


def test_dotted_and_aliased_imports_anywhere_in_the_code_count():
    code = "import json\ndef f():\n    import ase.eos as eos\n    try:\n        from pymatgen.io.vasp import Poscar\n    except ImportError:\n        pass\n"
    assert code_imports(code, ROOTS) == {"ase.eos", "pymatgen.io.vasp"}


def test_modules_outside_the_roots_or_not_here_never_count():
    code = (
        "import os, subprocess, json\nimport requests\nfrom . import sibling\nfrom .pkg import thing\n"
        "import pymatgen.no_such_module\nfrom ase.build import no_such_submodule\nfrom rdkit import *\n"
    )
    assert code_imports(code, ROOTS) == {"ase.build", "rdkit"}


def test_code_that_does_not_parse_imports_nothing():
    assert code_imports("import numpy\nthis is not python(", ROOTS) == frozenset()
    assert code_imports("(" * 500 + ")" * 500, ROOTS) == frozenset()


def test_private_names_main_modules_and_tests_never_count():
    code = "import ase.__main__\nimport numpy.f2py.__main__\nfrom numpy import _core\nimport numpy.conftest\nimport ase.test\nimport numpy.testing\n"
    assert code_imports(code, ROOTS) == {"numpy"}  # 'from numpy import _core' imports numpy, not its private module


def test_code_too_long_to_read_imports_nothing():
    code = "import ase.eos\n" + "#" * MAX_CODE_CHARS
    assert code_imports(code, ROOTS) == frozenset()
    assert code_imports("import ase.eos\n", ROOTS) == {"ase.eos"}
