"""Object references and trace compression."""

from deployments.sandbox.objects import load_object, put_object
from deployments.settings import get_settings
from tasks.context import compress_trace, first_line


def test_large_output_travels_as_a_reference_and_loads_back(workspace):
    settings = get_settings()
    text = "line\n" * 10_000
    ref = put_object(text, settings.workspace / "objects")
    assert ref.size == len(text) and len(ref.preview) == 600 and load_object(ref) == text
    assert put_object(text, settings.workspace / "objects").uri == ref.uri  # content-addressed


def test_compressed_trace_keeps_answer_distinct_failures_and_parameters(workspace):
    traceback = 'Traceback (most recent call last):\n  File "main.py", line 3\nImportError: cannot import name \'molecul\''
    summary = compress_trace(
        "step 1", True, 9.9372, [traceback, traceback, None, "exited with code 1: NameError: x"],
        parameters={"packages": ["ase"]}, outputs=["x" * 5000, "short"], settings=get_settings(),
    )  # fmt: skip
    assert summary.key_findings == ["answer = 9.9372"]
    assert summary.failures == ["ImportError: cannot import name 'molecul'", "exited with code 1: NameError: x"]
    assert len(summary.refs) == 1 and load_object(summary.refs[0]) == "x" * 5000
    assert "succeeded" in summary.render() and "packages" in summary.render()
    assert first_line(None) == "" and first_line("just text") == "just text"
