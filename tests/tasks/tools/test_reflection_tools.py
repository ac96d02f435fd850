"""quick_introspect (jedi), runtime_probe_snippet, read_file, shell and scripts: against real installed packages."""

import importlib.util
import subprocess
import sys

import pytest

from deployments.settings import get_settings
from tasks.tools.errors import ToolError
from tasks.tools.quick_introspect import quick_introspect
from tasks.tools.read_file import read_file
from tasks.tools.runtime_probe import runtime_probe_snippet
from tasks.tools.shell import create_and_execute_script, execute_shell_command


def test_quick_introspect_finds_a_class_and_its_signature():
    found = quick_introspect("pymatgen.analysis.interface_reactions.InterfacialReactivity")
    assert found.found and found.kind == "class"
    assert found.full_name == "pymatgen.analysis.interface_reactions.InterfacialReactivity"
    assert found.signatures[0].startswith("InterfacialReactivity(c1: Composition, c2: Composition, pd: PhaseDiagram")
    assert "get_kinks" in found.members


def test_quick_introspect_suggests_the_right_name_for_a_misspelt_one():
    missing = quick_introspect("pymatgen.core.Strucutre")
    assert not missing.found and missing.suggestions[0] == "pymatgen.core.Structure"
    assert "Did you mean: pymatgen.core.Structure" in str(missing)
    assert quick_introspect("numpyy").suggestions[0] == "numpy"
    with pytest.raises(ToolError, match="not a dotted Python name"):
        quick_introspect("import os; os.system('x')")


def test_runtime_probe_snippet_shows_the_close_attribute_when_run():
    snippet = runtime_probe_snippet("AttributeError: 'Structure' object has no attribute 'lattice_vectors'", "s")
    script = "from pymatgen.core import Lattice, Structure\ns = Structure(Lattice.cubic(3), ['Si'], [[0, 0, 0]])\n" + snippet
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert "PROBE type: Structure" in out and "PROBE close to lattice_vectors: ['lattice'" in out
    key = runtime_probe_snippet("KeyError: 'energy'", "result")
    out = subprocess.run([sys.executable, "-c", "result = {'energy_per_atom': -3.7}\n" + key], capture_output=True, text=True, check=True).stdout
    assert "['energy_per_atom']" in out.splitlines()[-1]
    with pytest.raises(ToolError, match="neither a KeyError nor an AttributeError"):
        runtime_probe_snippet("ZeroDivisionError: division by zero", "x")


def test_read_file_reads_package_source_and_refuses_other_places(workspace):
    settings = get_settings()
    eos = importlib.util.find_spec("ase.eos").origin
    part = read_file(eos, settings, start=1, lines=3)
    assert part.start == 1 and part.end == 3 and part.total > 100
    for outside in ["/etc/passwd", eos + "/../../../../../../etc/hostname"]:
        with pytest.raises(ToolError, match="outside the readable folders"):
            read_file(outside, settings)
    with pytest.raises(ToolError, match="is secret"):
        read_file(str(settings.store_root() / "x.json"), settings)
    binary = importlib.util.find_spec("rdkit.Chem.rdMolDescriptors").origin
    with pytest.raises(ToolError, match="binary"):
        read_file(binary, settings)
    with pytest.raises(ToolError, match="has only"):
        read_file(eos, settings, start=10**6)


def test_shell_and_scripts_run_in_the_sandbox(workspace):
    settings = get_settings()
    shell = execute_shell_command("echo hello && python -c 'import ase; print(ase.__version__)'", settings)
    assert shell.ok and shell.answer == {"exit_code": 0} and "hello" in shell.stdout
    failing = execute_shell_command("exit 3", settings)
    assert failing.answer == {"exit_code": 3}
    script = create_and_execute_script("two plus two", "import json\nprint(json.dumps(2 + 2))\n", settings)
    assert script.ok and script.answer == 4 and "two-plus-two" in script.workdir
    with pytest.raises(ToolError):
        execute_shell_command("  ", settings)
