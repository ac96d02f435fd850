"""The chat as a door over the workspace's resident service: its questions run there (the service the CLI and the MCP
server use), their stages come back to the page, the signed-in user and learning on 'satisfied' travel with them, and
the Cancel button stops a question there."""

from __future__ import annotations

import json
import time
import uuid

import pytest
from fastapi.testclient import TestClient

from deployments.settings import get_settings
from flows.interfaces.service.client import stop_service
from flows.interfaces.service.place import read_records
from skills.documents import Session
from skills.store import open_store
from tests.codes import N2_ANSWER, N2_CODE, N2_QUERY, N2_SKILL
from tests.flows.interfaces.web.conftest import ORIGIN, wait_for_answer
from tests.processes import marked

CLEAR = {"stage": "triage", "content": {"conflict": "", "question": ""}}
DRAFT = {"stage": "compile", "content": {"name": "EMT atomization energy", "description": "Atomization energy with EMT", "code": N2_SKILL}}


@pytest.fixture
def chat(scripted, workspace, monkeypatch):
    """The chat over a store the service opens too, with login on for ada; solves in the chat's own process fail the test."""
    monkeypatch.setenv("EVOSKILL_STORE", "monty")
    monkeypatch.setenv("EVOSKILL_SERVICE", "true")
    monkeypatch.setenv("EVOSKILL_WEB_LOGIN", "true")
    from flows.interfaces.web import app as web_app_module

    def not_here(*args, **kwargs):  # noqa: ANN002, ANN003
        raise AssertionError("the chat solved in its own process")

    monkeypatch.setattr(web_app_module, "solve", not_here)
    app = web_app_module.create_app(get_settings(), prefect_ui="http://127.0.0.1:4200")
    app.state.web.users.add("ada", "ada-password")
    with TestClient(app, base_url=ORIGIN, headers={"Origin": ORIGIN}) as client:
        client.post("/login", data={"name": "ada", "password": "ada-password"})
        yield scripted, app, client
    app.state.web.jobs.close()
    for record in read_records():
        if record.workspace == str(workspace.resolve()):
            stop_service(record.pid)


def _ask(client: TestClient, query: str) -> str:
    asked = client.post("/chat", data={"query": query}, follow_redirects=False)
    assert asked.status_code == 303, asked.text
    return asked.headers["location"].rsplit("/", 1)[-1]


def test_a_chat_question_is_answered_by_the_workspace_service_for_its_signed_in_user(chat):
    scripted, app, client = chat
    scripted([CLEAR, {"stage": "research", "content": {"code": N2_CODE}}, DRAFT])
    sid = _ask(client, N2_QUERY)
    job = app.state.web.jobs.running(sid)
    wait_for_answer(app, sid)
    page = client.get(f"/chat/{sid}").text
    assert f"{N2_ANSWER} eV" in page and "BFGS(n2, logfile=None)" in page
    heard = {(stage, status) for _, stage, status, _ in job.events}
    assert {("research", "start"), ("research", "done")} <= heard, job.events  # the service's stages, on the page
    settings = get_settings()
    assert [r for r in read_records() if r.workspace == str(settings.workspace.resolve())], "no workspace service ran it"
    store = open_store(settings)
    session = store.get(Session, sid)
    assert session.user == "ada" and len(session.turns) == 1 and session.turns[0].success
    assert store.count("skills") == 0  # in the chat, a skill is kept only on 'satisfied'


def test_the_cancel_button_stops_a_question_the_service_runs(chat):
    scripted, app, client = chat
    marker = f"evoskill-chat-service-cancel-{uuid.uuid4().hex}"
    code = (
        "import json, subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', {marker!r}])\n"
        "time.sleep(60)\n"
        "print(json.dumps(1.0))\n"
    )
    scripted([CLEAR, {"stage": "research", "content": {"code": code}}])
    sid = _ask(client, N2_QUERY)
    deadline = time.monotonic() + 180
    while not marked(marker):
        assert time.monotonic() < deadline, "the question's run never started"
        time.sleep(0.05)
    assert client.post(f"/chat/{sid}/cancel", follow_redirects=False).status_code == 303
    cancelled = time.monotonic()
    while marked(marker):
        assert time.monotonic() - cancelled < 10, "the run still lives 10 s after Cancel"
        time.sleep(0.02)
    gone_s = time.monotonic() - cancelled
    wait_for_answer(app, sid, timeout_s=30)
    print(f"\nchat question in the service: its run's processes gone {gone_s:.2f} s after Cancel")
    settings = get_settings()
    (path,) = settings.trajectory_root().glob("*.json")
    trajectory = json.loads(path.read_text())
    assert [call["stage"] for call in trajectory["llm_calls"]] == ["triage", "research"]  # none after the cancel
    assert trajectory["code_agent"]["execution"]["cancelled"] is True
    session = open_store(settings).get(Session, sid)
    assert not session.pending and len(session.turns) == 1 and not session.turns[0].success  # one turn, the cancelled one
