"""End to end through the real embedded model (SmolLM2-135M on a local llama.cpp server).

A 135M model rarely writes working code; the first test checks that the whole pipeline runs on
it and records every stage and call, not that the model is right. The second checks the README's
main job: with the starter library learned, the question binds a skill's parameters from its own
words, and the model is not asked.
"""

import json
import re
from pathlib import Path

import pytest

from benchmarks.task import load_task
from deployments.llm.server import stop_server
from deployments.settings import get_settings
from flows.learn import learn_task
from flows.solve import solve

QUERY = "Calculate the atomization energy of N2 using ASE's EMT calculator; return a float in eV"


@pytest.mark.embedded
def test_solve_on_the_embedded_model(workspace, monkeypatch):
    monkeypatch.setenv("EVOSKILL_LLM_BACKEND", "embedded")
    monkeypatch.setenv("EVOSKILL_DEEP_PATH", "always")  # the embedded default writes code only when asked to
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


def readme_question() -> str:
    """The question of the README's main-job command."""
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    return re.search(r'bash \.ci/setup && \.venv/bin/evoskill solve "([^"]+)"', readme).group(1)


@pytest.mark.embedded
def test_readme_question_is_answered_through_a_skill_on_the_embedded_model(workspace, monkeypatch):
    monkeypatch.setenv("EVOSKILL_LLM_BACKEND", "embedded")
    settings = get_settings()
    for path in sorted(Path("skills/library").glob("*.json")):  # what the setup command learns
        assert learn_task(load_task(path), settings, llm=None).status == "learned"
    try:
        result = solve(readme_question())
    finally:
        stop_server(settings)
    assert result.path == "skill" and result.skill_id == "ase_emt_atomization-v1", result.stages
    assert result.success and result.answer == 8.5753 and result.llm_calls == 0
    trajectory = json.loads(Path(result.trajectory_path).read_text())
    assert trajectory["skill_run"]["params"] == {"formula": "O2", "fmax": 0.01}  # fmax: a setting of the lifted skill, run as stated
