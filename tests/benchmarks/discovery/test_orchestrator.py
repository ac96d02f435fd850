"""The ReAct orchestrator driven by the scripted backend: tools act on the buffer, select spends the query."""

from benchmarks.discovery.episode import EpisodeSpec, run_episode
from benchmarks.discovery.system import ChemicalSystem
from deployments.llm.client import LLMClient
from deployments.llm.transport import ScriptedTransport
from deployments.settings import Settings


def _step(tool: str, **args) -> dict:
    return {"stage": "discover:orchestrator", "content": {"tool": tool, **args}}


def test_orchestrator_generates_creates_scores_and_selects():
    replies = [
        _step("generate", generator="prototype", n=2, composition={"Cu": 3, "Pt": 1}),
        _step("create", prototype="B2", elements=["Cu", "Ni"]),
        _step("score_buffer"),
        _step("query_buffer", index=2),
        _step("select", index=2),
        # second query: an out-of-range select is an observation, then the model breaks down → fallback
        _step("select", index=5),
        {"stage": "discover:orchestrator", "text": "I think we should try copper"},
    ]
    transport = ScriptedTransport(replies)
    llm = LLMClient(transport, Settings(llm_schema_retries=0))
    spec = EpisodeSpec(system=ChemicalSystem.parse("Cu-Ni-Pt", max_atoms=4), oracle="emt", policy="orchestrator", budget=2, seed=0)
    result = run_episode(spec, llm=llm)
    assert [r.origin for r in result.records][0] == "B2 (CsCl) Cu/Ni" and result.records[0].formula == "CuNi"
    assert result.records[0].ok
    prompts = [messages[1]["content"] for _, messages in transport.received]
    assert "2 added" in prompts[2] and "added as 2" in prompts[2]
    assert "surrogate E_f" in prompts[3]  # score_buffer's listing reached the model
    assert "select needs an index" in prompts[6]
    assert any("orchestrator stopped" in n for n in result.notes)
    assert any("random pipeline proposed" in n for n in result.notes)
    assert len(result.records) == 2 and result.llm_calls == 7
