"""The extension modules' probe answers from the sandbox: taken as untrusted data, and its failures recorded per module."""

import pytest

from deployments.sandbox.models import ExecutionResult
from deployments.settings import get_settings
from tasks.tools import extension_modules
from tasks.tools.extension_modules import parse_extension_modules

MODULE = {"module": "pkg.native", "functions": [{"name": "f", "doc": "Adds.", "sig": "(a, b)"}], "classes": [], "error": None}


def _answering(monkeypatch: pytest.MonkeyPatch, execution: ExecutionResult) -> list[str]:
    """Make the sandbox answer ``execution``; return the probe scripts it was given."""
    scripts: list[str] = []
    monkeypatch.setattr(extension_modules, "run_code", lambda code, *a, **k: scripts.append(code) or execution)
    return scripts


def _parse(tmp_path, names=("pkg.native",)):
    modules = [(name, tmp_path / "site" / (name.replace(".", "/") + ".so"), "stamp") for name in names]
    return {doc.module: doc for doc in parse_extension_modules("pkg", modules, 5.0, get_settings())}


def test_a_described_module_becomes_its_functions_and_the_probe_is_told_where_it_lies(workspace, tmp_path, monkeypatch):
    scripts = _answering(monkeypatch, ExecutionResult(exit_code=0, answer_found=True, answer=[MODULE]))
    doc = _parse(tmp_path)["pkg.native"]
    assert doc.error is None and [(f.qualname, f.text_signature, f.doc) for f in doc.functions] == [("pkg.native.f", "(a, b)", "Adds.")]
    assert str(tmp_path / "site") in scripts[0] and "pkg.native" in scripts[0]


@pytest.mark.parametrize(
    "answer",
    [
        [{**MODULE, "functions": [{"name": "f", "doc": "x" * 5000}]}],  # beyond the bounds
        [{**MODULE, "functions": [{"name": f"f{i}"} for i in range(5000)]}],
        [{**MODULE, "extra": "field"}],
        [MODULE, {**MODULE, "module": "pkg.other"}],  # more modules than asked for
        {"pkg.native": MODULE},
        "not a list",
    ],
)
def test_an_answer_out_of_shape_or_bounds_describes_nothing(workspace, tmp_path, monkeypatch, answer):
    _answering(monkeypatch, ExecutionResult(exit_code=0, answer_found=True, answer=answer))
    doc = _parse(tmp_path)["pkg.native"]
    assert doc.functions == [] and doc.error.startswith("probe answered out of shape or bounds")


def test_a_module_that_was_not_asked_for_is_ignored(workspace, tmp_path, monkeypatch):
    _answering(monkeypatch, ExecutionResult(exit_code=0, answer_found=True, answer=[{**MODULE, "module": "os"}]))
    doc = _parse(tmp_path)["pkg.native"]
    assert doc.functions == [] and doc.error == "the probe did not describe it"


@pytest.mark.parametrize(
    "execution, reason",
    [
        (ExecutionResult(exit_code=None, timed_out=True), "probe timed out after 10 s"),
        (ExecutionResult(exit_code=-11, error="killed by signal 11"), "probe failed: killed by signal 11"),
        (ExecutionResult(exit_code=None, error="the sandbox cannot use bwrap isolation here"), "probe failed: the sandbox cannot use bwrap"),
    ],
)
def test_a_failed_probe_is_recorded_for_each_module(workspace, tmp_path, monkeypatch, execution, reason):
    _answering(monkeypatch, execution)
    docs = _parse(tmp_path, ("pkg.native", "pkg.sub.other"))
    assert all(doc.functions == [] and doc.error.startswith(reason) for doc in docs.values()) and len(docs) == 2
