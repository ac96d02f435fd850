"""The research stage's tools act for the solve's asker: a model in bob's solve cannot pull alice's memories or the cookie key."""

from deployments.llm.client import LLMClient
from deployments.llm.transport import ScriptedTransport
from deployments.settings import get_settings
from skills.store import open_store
from tasks.models import SolveRequest
from tasks.research import research
from tasks.tools.memory import save_to_memory

QUERY = "relax a copper cell with EMT and report the lattice constant"


def test_a_model_in_bobs_solve_gets_neither_alices_memory_nor_the_cookie_key(workspace):
    settings = get_settings(tool_rounds=1, search_packages=["spglib"])
    (workspace / "web-secret").parent.mkdir(parents=True, exist_ok=True)
    (workspace / "web-secret").write_text("COOKIE-KEY-CANARY")
    store = open_store(settings)
    save_to_memory(store, "execution", QUERY, "# ALICE-CANARY alice's code", user="alice")
    save_to_memory(store, "execution", QUERY, "# shared starter code")
    calls = [
        {"name": "search_memory", "arguments": {"query": QUERY, "user": "alice", "k": 10, "threshold": 0.0}},
        {"name": "search_memory", "arguments": {"query": QUERY, "k": 10, "threshold": 0.0}},
        {"name": "read_file", "arguments": {"path": "web-secret"}},
    ]
    transport = ScriptedTransport(replies=[
        {"stage": "research:tools", "content": {"calls": calls}},
        {"stage": "research", "content": {"packages": ["ase"], "code": "print(1)"}},
    ])  # fmt: skip
    result = research.fn.__wrapped__(SolveRequest(query=QUERY, user="bob"), LLMClient(transport, settings))
    prompt = next(messages[-1]["content"] for stage, messages in transport.received if stage == "research")
    assert "# shared starter code" in prompt  # the tools ran, for bob
    assert "ALICE-CANARY" not in prompt and "COOKIE-KEY-CANARY" not in prompt
    assert any("search_memory: arguments do not fit (user" in line for line in result.tool_calls)
