"""Fuzzing the chat and skills pages: any input gets a page or a clear 4xx, never a server error or a traceback."""

from __future__ import annotations

from urllib.parse import quote

from hypothesis import example, given
from hypothesis import strategies as st

from flows.session import Conversation
from skills.documents import Session

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)
long_text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=0, max_size=300)


def assert_handled(response) -> None:
    assert response.status_code < 500, response.text[-2000:]
    assert "Traceback" not in response.text


@given(st.text(max_size=5000) | st.sampled_from(["", " ", "\x00", "\r\n" * 3, "x" * 4001]))
def test_questions_on_a_stopped_session_are_checked_and_refused(client, web_app, query):
    """Every question is validated; a stopped session refuses valid ones (so fuzzing starts no solves)."""
    store = web_app.state.web.store
    if store.get(Session, "fuzz") is None:
        Conversation.open(store, "fuzz", "local").update(status="stopped")
    response = client.post("/chat/fuzz/ask", data={"query": query})
    assert_handled(response)
    assert response.status_code == 400
    expected = "the question is empty" if not query.strip() else ("the limit is 4000" if len(query) > 4000 else "this session is stopped")
    assert expected in response.text


@given(long_text, long_text, st.sampled_from(["true", "false", "on", "", "maybe", "1"]))
@example("t" * 250, "", "true")
@example("", "", "maybe")
def test_session_details(client, web_app, title, notes, bookmarked):
    store = web_app.state.web.store
    if store.get(Session, "notes") is None:
        Conversation.open(store, "notes", "local").update(title="notes")
    response = client.post("/chat/notes/details", data={"title": title, "notes": notes, "bookmarked": bookmarked}, follow_redirects=False)
    assert_handled(response)
    if response.status_code == 303:
        session = store.get(Session, "notes")
        assert session.notes == notes and (not title.strip() or session.title == title.strip())
    else:
        assert response.status_code == 422  # FastAPI names the field it could not read
        assert ("bookmarked" in response.text and bookmarked == "maybe") or ("title" in response.text and len(title) > 200)


def _routed_as_given(value: str) -> bool:
    """Whether ``value``, quoted into one path segment, reaches the handler as that segment (no '/', no dot segment)."""
    return "/" not in value and value not in ("", ".", "..")


@given(text | st.just("known"), st.integers(-5, 5), st.integers(-5, 5))
@example("known", 0, 0)
def test_session_ids_and_indexes_in_urls(client, web_app, session_id, turn, number):
    """The user's session (no turns yet) is shown, any other id is a 404 naming it; no action on either starts a solve."""
    store = web_app.state.web.store
    if store.get(Session, "known") is None:
        Conversation.open(store, "known", web_app.state.web.settings.user).update(title="known")
    path = quote(session_id, safe="")
    responses = {url: client.get(url) for url in (f"/chat/{path}", f"/chat/{path}/progress", f"/chat/{path}/turns/{turn}/images/{number}")}
    for action in ("stop", "satisfied", "improve", "reopen"):  # stopped first: 'satisfied' must be refused, not asked
        responses[action] = client.post(f"/chat/{path}/{action}", data={"critique": session_id}, follow_redirects=False)
    for response in responses.values():
        assert_handled(response)
    page, progress, image, stop, satisfied, improve, reopen = responses.values()
    if session_id == "known":
        assert page.status_code == 200 and 'action="/chat/known/ask"' in page.text
        assert progress.status_code == 200 and progress.json() == {"running": False, "position": None, "events": []}
        assert image.status_code == 404 and image.json() == {"detail": "no such image"}
        assert (stop.status_code, stop.headers["location"], reopen.status_code) == (303, "/chat/known", 303)
        assert satisfied.status_code == 400 and "this session is stopped" in satisfied.text
        assert improve.status_code == 400 and "nothing to improve yet" in improve.text
        assert store.get(Session, "known").status == "open" and web_app.state.web.jobs.running("known") is None
    elif _routed_as_given(session_id):
        for response in responses.values():
            assert response.status_code == 404 and response.json() == {"detail": f"no session {session_id!r}"}
    else:
        assert all(r.status_code in (200, 307, 404, 405) for r in (page, progress, image))


@given(text | st.just("ada"), text | st.just("correct horse"))
@example("ada", "correct horse")
@example("ada", "correct horsE")
def test_login_form(client, web_app, name, password):
    """Only the right name and password sign in (to the chat); anything else is a 401 saying why."""
    users = web_app.state.web.users
    if users.names() != ["ada"]:
        users.add("ada", "correct horse")
    web_app.state.web.throttle.clear()  # each example starts under the login rate limit (test_attacks tests the limit)
    response = client.post("/login", data={"name": name, "password": password}, follow_redirects=False)
    assert_handled(response)
    if (name, password) == ("ada", "correct horse"):
        assert response.status_code == 303 and response.headers["location"] == "/chat"
    else:
        assert response.status_code == 401 and "unknown user or wrong password" in response.text


@given(text.filter(lambda v: v.strip() and not _is_float(v)), st.dictionaries(st.sampled_from(["formula", "extra"]), text, max_size=2))
def test_skill_run_form_with_a_bad_number(client, emt_skill, fmax, form):
    """A form that does not validate names the parameter and runs nothing."""
    response = client.post(f"/skills/{emt_skill.id}/run", data={**form, "fmax": fmax})
    assert_handled(response)
    assert response.status_code == 400 and "fmax" in response.text and emt_skill.id in response.text
    assert emt_skill.stats.uses == 0 and client.app.state.web.store.get_skill(emt_skill.id).stats.uses == 0


@given(text | st.sampled_from(["emt_atomization_energy", "atomization energy"]))
@example("emt_atomization_energy")
@example("atomization energy")
def test_skill_ids_and_searches(client, emt_skill, value):
    """The stored skill is shown and downloadable by its name and found by its topic; any other id is a 404 naming it."""
    page = client.get(f"/skills/{quote(value, safe='')}")
    workflow = client.get(f"/skills/{quote(value, safe='')}/workflow.json")
    search = client.get("/skills", params={"q": value})
    for response in (page, workflow, search):
        assert_handled(response)
    if value == emt_skill.name:
        assert page.status_code == 200 and emt_skill.id in page.text and 'name="fmax"' in page.text
        assert workflow.status_code == 200 and workflow.json()["name"] == emt_skill.id
    elif _routed_as_given(value):
        for response in (page, workflow):
            assert response.status_code == 404 and response.json() == {"detail": f"no skill {value!r}"}
    assert search.status_code == 200
    if not value.strip() or value == "atomization energy":  # the whole list, or a search for what the skill computes
        assert f'href="/skills/{emt_skill.id}"' in search.text
    else:
        assert f'href="/skills/{emt_skill.id}"' in search.text or "No skill matches" in search.text


def _is_float(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True
