"""Sessions: history is kept per id and resumed; 'satisfied' saves the last answered exchange to memory."""

import json

from deployments.settings import get_settings
from flows.session import is_feedback
from flows.solve import solve
from skills.documents import MemoryUnit, Session
from skills.store import open_store
from tests.codes import N2_ANSWER, N2_CODE, N2_QUERY

CLEAR = {"stage": "triage", "content": {"conflict": ""}}


def test_session_history_feedback_and_resume(scripted, monkeypatch):
    monkeypatch.setenv("EVOSKILL_LEARN", "false")
    script = scripted([CLEAR, {"stage": "research", "content": {"code": N2_CODE}}, CLEAR, {"stage": "simple", "content": {"code": N2_CODE}}])
    first = solve(N2_QUERY, session="lab-1")
    assert first.success and first.session == "lab-1"
    store = open_store(get_settings())
    assert store.count("memories") == 0

    feedback = solve("satisfied", session="lab-1")
    assert feedback.success and feedback.path == "feedback" and feedback.llm_calls == 0
    kinds = sorted(m.kind for m in store.all(MemoryUnit))
    assert kinds == ["execution", "planning"]
    assert [m.solution for m in store.all(MemoryUnit) if m.kind == "execution"] == [N2_CODE]

    # A later command resumes the session; the saved exchange now lets the simple path write from memory.
    again = solve(N2_QUERY.replace("Return", "Please return"), session="lab-1")
    assert again.success and again.path == "simple"
    session = store.get(Session, "lab-1")
    assert [t.satisfied for t in session.turns] == [True, False] and session.title.startswith("Calculate")
    prompts = [json.loads(line) for line in script.with_suffix(".received.jsonl").read_text().splitlines()]
    simple_prompt = [p for p in prompts if p["stage"] == "simple"][-1]["messages"][-1]["content"]
    assert "Earlier in this conversation" in simple_prompt and f"A: {N2_ANSWER} eV" in simple_prompt


def test_feedback_without_an_answer_says_so(scripted):
    scripted([])
    result = solve("satisfied", session="empty")
    assert not result.success and "nothing answered" in result.error


def test_feedback_words():
    assert is_feedback("Satisfied!") and is_feedback("I'm satisfied.") and not is_feedback("satisfied with what? compute X")


def test_a_session_belongs_to_its_user(workspace):
    import pytest

    from flows.session import Conversation, SessionAccessError

    store = open_store(get_settings())
    Conversation.open(store, "ada-1", user="ada").update(title="mine")
    assert Conversation.open(store, "ada-1", user="ada").session.title == "mine"
    with pytest.raises(SessionAccessError, match="no session 'ada-1' for user 'bob'"):
        Conversation.open(store, "ada-1", user="bob")
    with pytest.raises(SessionAccessError):
        solve("satisfied", session="ada-1")  # the CLI's user is 'local'
