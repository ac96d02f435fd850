"""Chat pages through FastAPI's test client: answers, escaping, limits, users kept apart, the LLM down, session details."""

import re

from deployments.settings import get_settings
from flows.interfaces.web.chat_pages import improve_query
from flows.session import Conversation
from skills.documents import MemoryUnit, Session, SessionTurn, Skill
from skills.store import open_store
from tests.codes import N2_ANSWER, N2_CODE, N2_QUERY, N2_SKILL, O2_QUERY
from tests.flows.interfaces.web.conftest import wait_for_answer

CLEAR = {"stage": "triage", "content": {"conflict": "", "question": ""}}
DRAFT = {"stage": "compile", "content": {"name": "EMT atomization energy", "description": "Atomization energy with EMT", "code": N2_SKILL}}
HOSTILE = "<script>window.pwned=1</script><img src=x onerror=alert(1)>"


def session_id(response) -> str:
    return re.search(r"/chat/(\w+)$", response.headers["location"]).group(1)


def test_answer_shows_code_stages_and_feedback_learns_the_skill(scripted, client, web_app):
    scripted([CLEAR, {"stage": "research", "content": {"code": N2_CODE}}, DRAFT])
    asked = client.post("/chat", data={"query": N2_QUERY}, follow_redirects=False)
    assert asked.status_code == 303
    sid = session_id(asked)
    wait_for_answer(web_app, sid)
    page = client.get(f"/chat/{sid}").text
    assert f"{N2_ANSWER} eV" in page and "BFGS(n2, logfile=None)" in page and f"{N2_ANSWER}\n" in page  # answer, code, output
    assert "output-processor" in page and 'action="/chat/' + sid + '/satisfied"' in page
    assert "http://127.0.0.1:4200/runs/flow-run/" in page  # the Prefect flow run link
    store = open_store(get_settings())
    assert store.count("skills") == 0  # in the chat, a skill is kept only on 'satisfied'

    client.post(f"/chat/{sid}/satisfied")
    wait_for_answer(web_app, sid)
    session = store.get(Session, sid)
    assert [t.satisfied for t in session.turns] == [True] and session.turns[0].skill_id == "atomization_energy_ase_emt-v1"
    assert store.get_skill("atomization_energy_ase_emt-v1").provenance.user == "local"
    assert {m.user for m in store.all(MemoryUnit)} == {"local"}
    page = client.get(f"/chat/{sid}").text
    assert "✓ satisfied" in page and 'href="/skills/atomization_energy_ase_emt-v1"' in page


def test_html_in_questions_and_outputs_is_escaped(scripted, client, web_app):
    code = f"import json\nprint({HOSTILE!r})\nprint(json.dumps({HOSTILE!r}))\n"
    scripted([CLEAR, {"stage": "research", "content": {"code": code}}])
    sid = session_id(client.post("/chat", data={"query": f"What does this print? {HOSTILE} Return a string."}, follow_redirects=False))
    wait_for_answer(web_app, sid)
    page = client.get(f"/chat/{sid}")
    assert "<script>window.pwned" not in page.text and "<img src=x" not in page.text
    assert page.text.count("&lt;script&gt;window.pwned=1&lt;/script&gt;") >= 3  # question, answer, code and output, as text
    assert "script-src 'self'" in page.headers["content-security-policy"]  # and inline script could not run anyway


def test_bad_questions_get_a_clear_error_and_nothing_is_stored(client, web_app):
    too_long = client.post("/chat", data={"query": "x" * 4001})
    assert too_long.status_code == 400 and "4001 characters long; the limit is 4000" in too_long.text
    assert 'maxlength="4000"' in too_long.text
    empty = client.post("/chat", data={"query": "   "})
    assert empty.status_code == 400 and "the question is empty" in empty.text
    assert web_app.state.web.store.count("sessions") == 0


def test_llm_down_is_a_clear_message_in_the_chat(client, web_app, monkeypatch):
    monkeypatch.setenv("EVOSKILL_LLM_BACKEND", "openai")
    monkeypatch.setenv("EVOSKILL_LLM_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    monkeypatch.setenv("EVOSKILL_LLM_MODEL", "gpt-4o-mini")
    sid = session_id(client.post("/chat", data={"query": N2_QUERY}, follow_redirects=False))
    wait_for_answer(web_app, sid)
    page = client.get(f"/chat/{sid}").text
    assert "No answer" in page and "cannot reach the LLM endpoint at http://127.0.0.1:9/v1" in page


def test_users_never_see_each_others_sessions(client, web_app, monkeypatch):
    state = web_app.state.web
    monkeypatch.setattr(state.settings, "web_login", True)
    state.users.add("ada", "ada-password")
    state.users.add("bob", "bob-password")
    Conversation.open(state.store, "ada-notes", user="ada").update(title="Ada's private question")
    assert client.get("/chat", follow_redirects=False).headers["location"] == "/login"
    assert client.post("/login", data={"name": "ada", "password": "wrong-password"}).status_code == 401
    assert client.post("/login", data={"name": "eve", "password": "whatever1"}).status_code == 401

    client.post("/login", data={"name": "ada", "password": "ada-password"})
    assert "Ada&#39;s private question" in client.get("/chat").text
    assert client.get("/chat/ada-notes").status_code == 200

    client.post("/logout")
    client.post("/login", data={"name": "bob", "password": "bob-password"})
    assert "private question" not in client.get("/chat").text
    for method, url in [("get", "/chat/ada-notes"), ("post", "/chat/ada-notes/ask"), ("get", "/chat/ada-notes/progress"),
                        ("post", "/chat/ada-notes/stop"), ("get", "/chat/ada-notes/turns/0/images/0")]:  # fmt: skip
        response = getattr(client, method)(url, **({"data": {"query": "hi"}} if method == "post" else {}))
        assert response.status_code == 404, url
    assert state.store.get(Session, "ada-notes").status == "open" and not state.store.get(Session, "ada-notes").pending


def test_title_notes_bookmark_stop_reopen_and_an_interrupted_question(client, web_app):
    store = web_app.state.web.store
    Conversation.open(store, "lab-2").update(pending="What is the lattice constant of Cu? Return a float.")
    page = client.get("/chat/lab-2").text
    assert "Interrupted" in page and "Ask again" in page  # the server stopped while answering: the question is kept

    client.post("/chat/lab-2/details", data={"title": "Copper", "notes": "for <b>the</b> paper", "bookmarked": "true"})
    session = store.get(Session, "lab-2")
    assert (session.title, session.notes, session.bookmarked) == ("Copper", "for <b>the</b> paper", True)
    assert "★ Copper" in client.get("/chat").text and "for &lt;b&gt;the&lt;/b&gt; paper" in client.get("/chat/lab-2").text

    client.post("/chat/lab-2/stop")
    refused = client.post("/chat/lab-2/ask", data={"query": "one more"})
    assert refused.status_code == 400 and "this session is stopped" in refused.text
    client.post("/chat/lab-2/reopen")
    assert store.get(Session, "lab-2").status == "open"
    assert client.get("/chat/nope").status_code == 404


def test_improve_asks_again_with_the_answer_and_the_critique():
    session = Session(id="s", turns=[SessionTurn(query="Energy of N2? Return a float in eV.", answer="9.9 eV", success=True, path="deep")])
    query = improve_query(session, "use 4 decimals")
    assert query.startswith("Energy of N2? Return a float in eV.") and "previous answer was 9.9 eV" in query and query.endswith("use 4 decimals")
    assert improve_query(Session(id="t"), "x") is None


def test_skills_page_lists_searches_runs_and_downloads(client, emt_skill):
    listing = client.get("/skills").text
    assert emt_skill.id in listing and "formula, fmax" in listing
    assert emt_skill.id in client.get("/skills", params={"q": "atomization energy"}).text
    assert "No skill matches" in client.get("/skills", params={"q": "zzzz qqqq"}).text
    page = client.get(f"/skills/{emt_skill.id}").text
    assert 'name="formula" value="N2"' in page and "Test case" in page and "0 runs" in page

    bad = client.post(f"/skills/{emt_skill.id}/run", data={"formula": "O2", "fmax": "fast"})
    assert bad.status_code == 400 and "bad skill parameters — fmax" in bad.text and 'value="fast"' in bad.text

    from monty.json import MontyDecoder

    flow = MontyDecoder().decode(client.get(f"/skills/{emt_skill.id}/workflow.json").text)
    assert flow.name == emt_skill.id and len(flow.jobs) == 1
    assert client.get("/skills/no_such-v1").status_code == 404


def test_a_skill_runs_from_the_form(client, emt_skill, workspace):
    page = client.post(f"/skills/{emt_skill.id}/run", data={"formula": "O2", "fmax": "0.01"})
    assert page.status_code == 200 and "Result: 8.5753 eV" in page.text and "1 runs, 1 succeeded" in page.text
    assert open_store(get_settings()).get(Skill, emt_skill.id).stats.uses == 1


def test_a_clarifying_question_is_shown_as_a_question_and_improve_asks_again(scripted, client, web_app):
    ambiguous = "Compute the energy of N2 with EMT, in eV or in kJ/mol. Return a float."
    scripted([{"stage": "triage", "content": {"conflict": "in eV or in kJ/mol", "question": "Which unit do you want, eV or kJ/mol?"}}])
    sid = session_id(client.post("/chat", data={"query": ambiguous}, follow_redirects=False))
    wait_for_answer(web_app, sid)
    page = client.get(f"/chat/{sid}").text
    assert '<span class="label">evoskill asks</span><p class="answer">Which unit do you want, eV or kJ/mol?</p>' in page
    assert "Satisfied" not in page  # nothing to be satisfied with yet

    script = scripted([CLEAR, {"stage": "research", "content": {"code": N2_CODE}}, CLEAR, {"stage": "research", "content": {"code": N2_CODE}}])
    client.post(f"/chat/{sid}/ask", data={"query": N2_QUERY})
    wait_for_answer(web_app, sid)
    client.post(f"/chat/{sid}/improve", data={"critique": "explain which reference energies you used"})
    wait_for_answer(web_app, sid)
    session = web_app.state.web.store.get(Session, sid)
    assert [t.path for t in session.turns] == ["clarify", "deep", "deep"]
    assert session.turns[2].query.endswith("The user asks to improve it: explain which reference energies you used")
    prompts = script.with_suffix(".received.jsonl").read_text()
    assert "Which unit do you want, eV or kJ/mol?" in prompts  # the question asked back is part of the history
    empty = client.post(f"/chat/{sid}/improve", data={"critique": " "})
    assert empty.status_code == 400 and "say what to improve" in empty.text


PLOT_CODE = """import json
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.plot([1, 2, 3], [2.0, 1.0, 3.0])
plt.savefig("energy.png")
print(json.dumps(3))
"""


def test_images_the_code_wrote_are_shown(scripted, client, web_app):
    scripted([CLEAR, {"stage": "research", "content": {"code": PLOT_CODE}}])
    sid = session_id(client.post("/chat", data={"query": "Plot the three energies and return how many there are. Return an integer."}, follow_redirects=False))
    wait_for_answer(web_app, sid)
    page = client.get(f"/chat/{sid}").text
    assert f'src="/chat/{sid}/turns/0/images/0"' in page
    image = client.get(f"/chat/{sid}/turns/0/images/0")
    assert image.status_code == 200 and image.headers["content-type"] == "image/png" and image.content.startswith(b"\x89PNG")
    assert client.get(f"/chat/{sid}/turns/0/images/1").status_code == 404
    assert client.get(f"/chat/{sid}/turns/-1/images/-1").status_code == 404


RAW = "exited with code 1: KeyError: 'Xe2'" + " Traceback" * 3 + " /" + "x" * 400  # a long unbroken raw error
SENTENCE = "The skill could not use formula='Xe2': ase.build.molecule() has no entry for 'Xe2'."


def answered_turn(store, session_id: str) -> None:
    """A skill answer (with what it ran with) after a skill that failed on a value, stage times summing above the wall time."""
    from skills.documents import BoundValue, StageRecord
    from tasks.models import SolveResult

    stages = [
        StageRecord(name="skill", wall_s=1.5, ok=False, detail=f"{SENTENCE}\n{RAW}"),
        StageRecord(name="debug-diagnostic", wall_s=60.0, ok=False, detail="y" * 600),
        StageRecord(name="debug-introspection", wall_s=40.5, ok=True),
    ]
    params = [BoundValue(name="formula", value="O2", words="O2"), BoundValue(name="fmax", value=0.01, words="verified default")]
    result = SolveResult(success=True, path="skill", formatted="8.5753 eV", skill_id="emt-v1", params=params, code=N2_SKILL, stages=stages, wall_s=85.0)
    Conversation.open(store, session_id).add(O2_QUERY, result)


def test_a_skill_answer_shows_what_it_ran_with_and_the_real_wall_time(client, web_app):
    answered_turn(web_app.state.web.store, "ran-with")
    page = client.get("/chat/ran-with").text
    assert "Ran with:</span> <code>formula=&#39;O2&#39; (from &#34;O2&#34;)</code>, <code>fmax=0.01 (the skill&#39;s verified default)</code>" in page
    assert "this answer ran with the values above" in page  # next to the code and its verified defaults
    assert "Stages (85.0 s; the stage times add up to 102.0 s because some ran in parallel)" in page


def test_a_failed_stage_shows_its_sentence_and_keeps_the_raw_error_behind_a_toggle(client, web_app):
    answered_turn(web_app.state.web.store, "failed-stage")
    page = client.get("/chat/failed-stage").text
    row = re.search(r'<tr class="bad"><td>skill</td>.*?</tr>', page, re.S).group(0)
    assert "<details><summary>" + SENTENCE.replace("'", "&#39;") + "</summary>" in row and "KeyError: &#39;Xe2&#39;" in row
    assert 'summary>' + "y" * 157 + "...</summary>" in page  # a long detail is cut in its summary, whole when opened


def test_a_suggested_skill_is_a_button_that_answers_through_it_and_teaches_it_the_wording(scripted, client, web_app):
    from tests.starter import emt_atomization, starter_skill

    atomization = starter_skill("ase_emt_atomization_n2")
    question = "What is the total binding energy of a CO molecule with ASE's EMT calculator? Return a float rounded to 4 decimal places."
    scripted([])  # no model: the code path cannot answer; the skill declined only for words is offered on the turn
    sid = session_id(client.post("/chat", data={"query": question}, follow_redirects=False))
    wait_for_answer(web_app, sid)
    page = client.get(f"/chat/{sid}").text
    assert f'action="/chat/{sid}/turns/0/suggestion"' in page and f"This looks like {atomization.id} with formula=CO" in page
    assert f"Run {atomization.id}</button>" in page

    assert client.post(f"/chat/{sid}/turns/0/suggestion", follow_redirects=False).status_code == 303
    wait_for_answer(web_app, sid)
    store = open_store(get_settings())
    turns = store.get(Session, sid).turns
    assert [t.query for t in turns] == [question, question] and turns[1].path == "skill" and turns[1].skill_id == atomization.id
    assert turns[1].answer == str(emt_atomization("CO")) and turns[1].suggestion.accepted
    assert "Answered through the suggested skill" in client.get(f"/chat/{sid}").text
    assert question in store.get_skill(atomization.id).provenance.queries
    assert client.post(f"/chat/{sid}/turns/1/suggestion").status_code == 404  # that turn's suggestion was taken already
    assert client.post(f"/chat/{sid}/turns/7/suggestion").status_code == 404
