"""The solve pipeline end to end with the scripted LLM: real Prefect flows, real sandbox, real ASE."""

import json
from pathlib import Path

import pytest

from flows.solve import solve
from tests.codes import CRASH, N2_ANSWER, N2_CODE, N2_QUERY, N2_TYPO, WRONG_ANSWER


@pytest.fixture(autouse=True)
def deep_path_only(workspace, monkeypatch):
    """These tests look at the deep solver alone: no triage call, no learn step."""
    monkeypatch.setenv("EVOSKILL_TRIAGE_LLM", "false")
    monkeypatch.setenv("EVOSKILL_LEARN", "false")


def code(stage, source, **extra):
    return {"stage": stage, "content": {"packages": ["ase"], "code": source}, **extra}


def stage_names(result):
    return [s.name for s in result.stages]


def test_first_try_success(scripted):
    scripted([code("research", N2_CODE)])
    result = solve(N2_QUERY)
    assert result.success and result.answer == N2_ANSWER and result.formatted == "9.9372 eV"
    assert stage_names(result) == ["recall", "research", "code-agent", "output-processor"]
    assert result.llm_calls == 1 and result.tokens > 0 and result.path == "deep"
    assert result.code == N2_CODE and result.flow_run_id


def test_three_debug_branches_overlap_and_the_agreeing_pair_wins(scripted):
    scripted(
        [
            code("research", N2_TYPO),
            code("debug:diagnostic", WRONG_ANSWER, delay_s=1.0),
            code("debug:introspection", N2_CODE, delay_s=1.0),
            code("debug:research", N2_CODE, delay_s=1.0),
        ]
    )
    result = solve(N2_QUERY)
    trajectory = json.loads(Path(result.trajectory_path).read_text())
    branches = trajectory["debug"]
    assert [b["strategy"] for b in branches] == ["diagnostic", "introspection", "research"]
    assert all(b["success"] for b in branches)
    starts = [b["started_at"] for b in branches]
    ends = [b["started_at"] + b["wall_s"] for b in branches]
    assert max(starts) < min(ends), "debug branches did not run concurrently"
    # The first branch in pipeline order answers 1.2345, but two branches agree on the right value.
    assert result.success and result.answer == N2_ANSWER
    assert trajectory["answer"]["agreeing_sources"] == ["debug:introspection", "debug:research"]
    assert stage_names(result) == ["recall", "research", "code-agent", "debug:diagnostic", "debug:introspection", "debug:research", "output-processor"]


def test_introspection_branch_sees_probed_facts(scripted):
    path = scripted([code("research", N2_TYPO)] + [code(f"debug:{s}", N2_CODE) for s in ("diagnostic", "introspection", "research")])
    solve(N2_QUERY)
    received = [json.loads(line) for line in path.with_suffix(".received.jsonl").read_text().splitlines()]
    prompts = {r["stage"]: r["messages"][-1]["content"] for r in received}
    assert "close matches: ['molecule'" in prompts["debug:introspection"]
    assert "close matches" not in prompts["debug:diagnostic"] and "molecul" in prompts["debug:diagnostic"]
    # The research strategy starts over: it is not shown the failed script.
    assert "```python" not in prompts["debug:research"] and "```python" in prompts["debug:diagnostic"]


def test_all_branches_fail_honestly_with_each_last_error(scripted, monkeypatch):
    monkeypatch.setenv("EVOSKILL_DEBUG_MAX_ATTEMPTS", "2")
    replies = [code("research", CRASH)]
    for strategy in ("diagnostic", "introspection", "research"):
        replies += [code(f"debug:{strategy}", CRASH), code(f"debug:{strategy}", "print('no json')\n")]
    scripted(replies)
    result = solve(N2_QUERY)
    assert not result.success and result.answer is None
    for source in ("code-agent", "debug:diagnostic", "debug:introspection", "debug:research"):
        assert source in result.error
    assert result.error.count("not a JSON answer") == 3 and "ValueError: scripted failure" in result.error
    assert result.code == "print('no json')\n"


def test_schema_violating_research_reply_is_retried_then_reported(scripted, monkeypatch):
    monkeypatch.setenv("EVOSKILL_LLM_SCHEMA_RETRIES", "1")
    scripted(
        [
            {"stage": "research", "content": {"packages": ["ase"]}},
            {"stage": "research", "text": "I think the answer is 9.9"},
        ]
        + [code(f"debug:{s}", N2_CODE) for s in ("diagnostic", "introspection", "research")]
    )
    result = solve(N2_QUERY)
    research = result.stages[1]
    assert research.name == "research" and not research.ok
    assert "stage research" in research.detail and "CodeReply after 2 tries" in research.detail
    # The debug agents still get their chance, and they succeed.
    assert result.success and result.answer == N2_ANSWER


def test_transient_llm_error_is_retried_by_prefect(scripted):
    scripted([{"stage": "research", "error": "transient"}, code("research", N2_CODE)])
    result = solve(N2_QUERY)
    assert result.success and result.answer == N2_ANSWER
    assert result.llm_calls == 2


def test_unreachable_llm_fails_with_a_clear_message(scripted):
    scripted([{"stage": "research", "error": "unavailable"}])
    result = solve(N2_QUERY)
    assert not result.success and "cannot reach the LLM endpoint at scripted://" in result.error


def test_endless_generated_code_is_killed(scripted, monkeypatch):
    monkeypatch.setenv("EVOSKILL_SANDBOX_WALL_S", "2")
    monkeypatch.setenv("EVOSKILL_DEBUG_STRATEGIES", '["diagnostic"]')
    monkeypatch.setenv("EVOSKILL_DEBUG_MAX_ATTEMPTS", "1")
    scripted([code("research", "while True:\n    pass\n"), code("debug:diagnostic", N2_CODE)])
    result = solve(N2_QUERY)
    assert "wall-clock limit" in result.stages[2].detail
    assert result.success and result.answer == N2_ANSWER


def test_trajectory_records_every_stage_and_call(scripted):
    scripted([code("research", N2_TYPO)] + [code(f"debug:{s}", N2_CODE) for s in ("diagnostic", "introspection", "research")])
    result = solve(N2_QUERY)
    trajectory = json.loads(Path(result.trajectory_path).read_text())
    assert trajectory["result"]["flow_run_id"] == result.flow_run_id
    assert sorted(c["stage"] for c in trajectory["llm_calls"]) == ["debug:diagnostic", "debug:introspection", "debug:research", "research"]
    assert "molecul" in trajectory["code_agent"]["error"]


def test_budget_stops_the_solve(scripted, monkeypatch):
    monkeypatch.setenv("EVOSKILL_MAX_LLM_CALLS", "1")
    scripted([code("research", CRASH)])
    result = solve(N2_QUERY)
    assert not result.success and "call budget spent" in result.error
    assert result.llm_calls == 1


def test_empty_query_is_rejected(scripted):
    scripted([])
    with pytest.raises(ValueError, match="empty"):
        solve("   ")


def test_api_keys_never_reach_trajectories_or_generated_code(scripted, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-openai")
    monkeypatch.setenv("EVOSKILL_LLM_API_KEY", "sk-canary-evoskill")
    leak = "import json, os\nprint(json.dumps(' '.join(os.environ.values())))\n"
    scripted([code("research", leak)])
    result = solve("Return the environment as a string.")
    assert result.success and "sk-canary" not in result.answer
    text = Path(result.trajectory_path).read_text()
    assert "sk-canary" not in text


def test_a_crashed_branch_does_not_sink_the_others(scripted):
    scripted(
        [
            code("research", CRASH),
            {"stage": "debug:diagnostic", "error": "unavailable"},
            code("debug:introspection", N2_CODE),
            code("debug:research", N2_CODE),
        ]
    )
    result = solve(N2_QUERY)
    assert result.success and result.answer == N2_ANSWER
    diagnostic = next(s for s in result.stages if s.name == "debug:diagnostic")
    assert not diagnostic.ok and "cannot reach the LLM endpoint" in diagnostic.detail


def test_without_memory_and_debug_agents_it_generates_once_and_runs_once(scripted, monkeypatch):
    monkeypatch.setenv("EVOSKILL_USE_MEMORY", "false")
    monkeypatch.setenv("EVOSKILL_DEBUG_AGENTS", "false")
    script = scripted([code("research", N2_TYPO), code("debug", N2_CODE)])
    result = solve(N2_QUERY)
    assert not result.success and stage_names(result) == ["research", "code-agent", "output-processor"]
    assert result.llm_calls == 1 and "ImportError" in result.error
    assert [json.loads(line)["stage"] for line in script.with_suffix(".received.jsonl").read_text().splitlines()] == ["research"]


def test_without_self_reflection_there_is_no_introspection_branch(scripted, monkeypatch):
    monkeypatch.setenv("EVOSKILL_SELF_REFLECTION", "false")
    scripted([code("research", N2_TYPO), code("debug:diagnostic", N2_CODE), code("debug:research", N2_CODE)])
    result = solve(N2_QUERY)
    assert result.success and result.answer == N2_ANSWER
    assert [n for n in stage_names(result) if n.startswith("debug")] == ["debug:diagnostic", "debug:research"]


def test_debug_agents_fix_a_wrong_import_with_their_tools(scripted, monkeypatch):
    """Each strategy's tools find the real name behind 'Strucutre'; the scripted model writes the fix it was shown."""
    from tests.codes import SI_ANSWER, SI_CODE, SI_QUERY, SI_TYPO

    strategies = ["introspection", "knowledge_graph", "local_package", "research"]
    monkeypatch.setenv("EVOSKILL_DEBUG_STRATEGIES", json.dumps(strategies))
    path = scripted([code("research", SI_TYPO)] + [code(f"debug:{s}", SI_CODE) for s in strategies])
    result = solve(SI_QUERY)
    assert result.success and result.answer == SI_ANSWER
    received = [json.loads(line) for line in path.with_suffix(".received.jsonl").read_text().splitlines()]
    prompts = {r["stage"]: r["messages"][-1]["content"] for r in received}
    assert "quick_introspect: pymatgen.core.Strucutre does not exist. Did you mean: pymatgen.core.Structure" in prompts["debug:introspection"]
    assert "query_knowledge_graph: pymatgen.core.structure.Structure" in prompts["debug:knowledge_graph"]
    assert "read_file:" in prompts["debug:local_package"] and "class Structure(IStructure" in prompts["debug:local_package"]
    assert "search: [api]" in prompts["debug:research"]
    # The Solution Researcher looked up documentation before writing.
    assert "Documentation and examples found with tools" in prompts["research"] and "get_space_group_number" in prompts["research"]
    trajectory = json.loads(Path(result.trajectory_path).read_text())
    introspection = next(b for b in trajectory["debug"] if b["strategy"] == "introspection")
    assert introspection["tool_calls"][0].startswith("quick_introspect: ok")


def test_without_self_reflection_or_continuous_learning_the_tools_are_gone(scripted, monkeypatch):
    monkeypatch.setenv("EVOSKILL_SELF_REFLECTION", "false")
    monkeypatch.setenv("EVOSKILL_CONTINUOUS_LEARNING", "false")
    path = scripted([code("research", N2_TYPO)] + [code(f"debug:{s}", N2_CODE) for s in ("diagnostic", "research")])
    result = solve(N2_QUERY)
    assert result.success and [n for n in stage_names(result) if n.startswith("debug")] == ["debug:diagnostic", "debug:research"]
    received = [json.loads(line) for line in path.with_suffix(".received.jsonl").read_text().splitlines()]
    assert not any("found with tools" in r["messages"][-1]["content"].lower() for r in received)
    trajectory = json.loads(Path(result.trajectory_path).read_text())
    assert trajectory["research"]["tool_calls"] == [] and all(b["tool_calls"] == [] for b in trajectory["debug"])


def test_the_model_may_call_tools_itself_when_rounds_are_enabled(scripted, monkeypatch):
    monkeypatch.setenv("EVOSKILL_TOOL_ROUNDS", "1")
    monkeypatch.setenv("EVOSKILL_CONTINUOUS_LEARNING", "false")
    calls = [{"name": "quick_introspect", "arguments": {"target": "ase.build.molecule"}}, {"name": "nonexistent_tool", "arguments": {}}]
    path = scripted([{"stage": "research:tools", "content": {"calls": calls}}, code("research", N2_CODE)])
    result = solve(N2_QUERY)
    assert result.success and result.llm_calls == 2
    received = [json.loads(line) for line in path.with_suffix(".received.jsonl").read_text().splitlines()]
    menu, research = received[0]["messages"][-1]["content"], received[1]["messages"][-1]["content"]
    assert "quick_introspect(target: str)" in menu and "search(" not in menu  # ncl: no search tool offered
    assert "quick_introspect: ase.build.molecule" in research and "ERROR no tool 'nonexistent_tool' here" in research


@pytest.mark.filterwarnings("ignore:Artifact creation outside:FutureWarning")  # _artifact alone, outside a flow run
def test_the_artifact_shows_what_the_skill_ran_with_and_the_real_wall_time(workspace):
    from deployments.settings import get_settings
    from flows.solve import _artifact
    from skills.documents import BoundValue, StageRecord
    from tasks.models import SolveResult
    from tests.output_attacks import artifacts

    stages = [StageRecord(name="research", wall_s=20.0, ok=True), StageRecord(name="debug-a", wall_s=41.0, ok=False, detail="line one\nline | two"),
              StageRecord(name="debug-b", wall_s=41.0, ok=True)]  # fmt: skip
    params = [BoundValue(name="formula", value="O2", words="O2"), BoundValue(name="fmax", value=0.01, words="verified default")]
    result = SolveResult(success=True, formatted="8.5753 eV", path="skill", skill_id="emt-v1", params=params, wall_s=85.0, stages=stages)
    _artifact(result, "artifact-ran-with question", get_settings())
    text = artifacts().decode(errors="replace")
    assert "**Ran with:** `formula='O2' (from \"O2\")`, `fmax=0.01 (the skill's verified default)`" in text
    assert "wall: 85.00 s (the stage times add up to 102.00 s: some ran in parallel)" in text
    assert "| debug-a | 41.00 | no | line one line \\| two |" in text  # one table row, whatever the detail holds


def test_the_embedded_default_writes_no_code_unless_asked_and_says_what_to_do(workspace, monkeypatch):
    """A question no skill answers, on the embedded default model: no minutes of hopeless code writing, no model started;
    one plain paragraph instead. ``deep=True`` (``evoskill solve --deep``) gives it to the model anyway."""
    from deployments.llm.server import server_status
    from deployments.settings import get_settings

    monkeypatch.setenv("EVOSKILL_LLM_BACKEND", "embedded")
    result = solve(N2_QUERY)
    assert (result.success, result.path, result.llm_calls, stage_names(result)) == (False, "none", 0, ["recall"])
    assert result.error.startswith("no learned skill answers this question, and the configured model (the embedded default")
    assert "--deep" in result.error and "evoskill learn" in result.error and "EVOSKILL_LLM_BACKEND=openai" in result.error
    state = server_status(get_settings())
    assert state is None or state.status != "running"  # the embedded server was never started for it


def test_deep_runs_the_code_path_whatever_the_model(scripted):
    scripted([code("research", N2_CODE)])
    from deployments.settings import get_settings

    assert get_settings(deep_path="never").writes_code() is False
    assert get_settings(llm_backend="embedded").writes_code() is False
    assert get_settings(llm_backend="embedded", deep_path="always").writes_code() is True
    result = solve(N2_QUERY, deep=True)
    assert result.success and result.path == "deep" and result.answer == N2_ANSWER
