from deployments.sandbox.execute import SandboxLimits
from tasks.tools.introspect import introspection_notes, probe_request
from tests.codes import N2_TYPO


def test_probe_request_reads_imports_and_errors():
    req = probe_request(N2_TYPO, "ImportError: cannot import name 'molecul' from 'ase.build' (/x.py)")
    assert ["ase.build", "molecul"] in req.missing
    assert "ase.calculators.emt" in req.modules
    req = probe_request("import numpy as np\nnp.arange(1, stepp=2)", "TypeError: arange() got an unexpected keyword argument 'stepp'")
    assert req.called == ["arange"]


def test_notes_suggest_the_real_name(tmp_path):
    error = "ImportError: cannot import name 'molecul' from 'ase.build'"
    notes = introspection_notes(N2_TYPO, error, tmp_path, SandboxLimits(wall_s=60))
    assert any("close matches: ['molecule'" in n for n in notes), notes
    assert any(n.startswith("ase.optimize.BFGS(") for n in notes), notes


def test_no_imports_no_probe(tmp_path):
    assert introspection_notes("print(1)", "NameError", tmp_path, SandboxLimits()) == []
