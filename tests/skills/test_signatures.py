"""Positional parameter names read in the sandbox, never by importing in evoskill's process: right for ordinary
functions, unknown when the probe fails, and its answer taken as untrusted data."""

import sys

import pytest

from deployments.sandbox.models import ExecutionResult
from deployments.settings import get_settings
from skills import signatures
from skills.lifting import lift_script
from skills.signatures import SandboxSignatures, positional_names
from tests.planted import plant
from tests.signatures import POSITIONAL


def test_the_sandbox_reads_the_names_the_fast_tests_use(workspace):
    assert positional_names(list(POSITIONAL), get_settings()) == POSITIONAL


def test_what_cannot_be_imported_or_has_no_signature_is_left_unknown(workspace):
    found = positional_names(["ase.build.bulk", "ase.build.no_such_function", "no_such_module.f", "json"], get_settings())
    assert found == {"ase.build.bulk": ["name", "crystalstructure", "a", "b", "c"]}  # its keyword-only parameters take no position


def test_a_failed_probe_means_no_name_is_known(workspace, monkeypatch):
    monkeypatch.setattr(signatures, "run_code", lambda *a, **k: ExecutionResult(exit_code=None, timed_out=True, error="timed out"))
    reader = SandboxSignatures(get_settings())
    assert reader(["numpy.linspace"]) == {}


@pytest.mark.parametrize(
    "answer",
    [
        {"positional": {"numpy.linspace": ["start", "stop; import os"]}},  # not an identifier
        {"positional": {"numpy.linspace": ["x" * 200]}},  # too long
        {"positional": {"numpy.linspace": ["a"] * 1000}},  # too many
        {"positional": {"numpy.linspace": "start"}},  # not a list
        {"positional": {"numpy.linspace": ["start"]}, "extra": 1},  # unknown field
        ["start", "stop"],
    ],
)
def test_an_answer_out_of_shape_or_bounds_is_refused_whole(workspace, monkeypatch, answer):
    monkeypatch.setattr(signatures, "run_code", lambda *a, **k: ExecutionResult(exit_code=0, answer_found=True, answer=answer))
    assert positional_names(["numpy.linspace"], get_settings()) == {}


def test_names_that_were_not_asked_for_are_dropped(workspace, monkeypatch):
    answer = {"positional": {"numpy.linspace": ["start", "stop"], "os.system": ["command"]}}
    monkeypatch.setattr(signatures, "run_code", lambda *a, **k: ExecutionResult(exit_code=0, answer_found=True, answer=answer))
    assert positional_names(["numpy.linspace"], get_settings()) == {"numpy.linspace": ["start", "stop"]}


def test_each_set_of_names_is_probed_once_per_reader(workspace, monkeypatch):
    probes: list[str] = []
    real = signatures.run_code

    def counted(code, *args, **kwargs):
        probes.append(code)
        return real(code, *args, **kwargs)

    monkeypatch.setattr(signatures, "run_code", counted)
    reader = SandboxSignatures(get_settings())
    assert reader(["numpy.linspace"])["numpy.linspace"][:3] == ["start", "stop", "num"]
    assert reader(["numpy.linspace"]) == reader(["numpy.linspace", "numpy.linspace"])
    assert len(probes) == 1


def test_signatures_are_read_in_the_sandbox_never_by_importing_in_evoskill(workspace, tmp_path, monkeypatch):
    """Importing a module runs it (``ase.__main__`` runs ASE's command line): the modules a script names are imported in
    the sandbox, and the names still come out right."""
    folder = tmp_path / "importable"
    marker = plant(folder, "numpy_planted")
    monkeypatch.syspath_prepend(str(folder))  # importable here, as a module the model made up could be
    script = (
        "import json\nimport numpy as np\nimport numpy_planted\nfrom ase.__main__ import main\nfrom ase.build import bulk\n"
        "grid = np.linspace(3.5, 3.7, 11)\natoms = bulk('Cu', 'fcc', 3.61)\nnumpy_planted.scale(2.5)\nmain(4)\n"
        "print(json.dumps(float(grid[0]) * len(atoms)))\n"
    )
    question = "Sample 3.5-3.7 in 11 steps, build fcc Cu at 3.61, scale by 2.5 and run with 4. Return a float."
    try:
        draft = lift_script(script, [question], SandboxSignatures(get_settings()))
    finally:
        assert not marker.exists() and "numpy_planted" not in sys.modules and "ase.__main__" not in sys.modules
    defaults = {k: v["default"] for k, v in draft.parameters.items()}
    assert {"start": 3.5, "stop": 3.7, "num": 11, "a": 3.61, "element": "Cu"}.items() <= defaults.items()
    assert 2.5 in defaults.values() and 4 in defaults.values()
