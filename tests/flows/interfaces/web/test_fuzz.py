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


@given(text, st.integers(-5, 5), st.integers(-5, 5))
def test_session_ids_and_indexes_in_urls(client, session_id, turn, number):
    path = quote(session_id, safe="")
    for url in (f"/chat/{path}", f"/chat/{path}/progress", f"/chat/{path}/turns/{turn}/images/{number}"):
        response = client.get(url)
        assert_handled(response)
        assert response.status_code in (200, 307, 404, 405)
    for action in ("satisfied", "stop", "reopen", "improve"):
        assert_handled(client.post(f"/chat/{path}/{action}", data={"critique": session_id}, follow_redirects=False))


@given(text, text)
def test_login_form(client, name, password):
    assert_handled(client.post("/login", data={"name": name, "password": password}, follow_redirects=False))


@given(text.filter(lambda v: v.strip() and not _is_float(v)), st.dictionaries(st.sampled_from(["formula", "extra"]), text, max_size=2))
def test_skill_run_form_with_a_bad_number(client, emt_skill, fmax, form):
    """A form that does not validate names the parameter and runs nothing."""
    response = client.post(f"/skills/{emt_skill.id}/run", data={**form, "fmax": fmax})
    assert_handled(response)
    assert response.status_code == 400 and "fmax" in response.text and emt_skill.id in response.text
    assert emt_skill.stats.uses == 0 and client.app.state.web.store.get_skill(emt_skill.id).stats.uses == 0


@given(text)
def test_skill_ids_and_searches(client, value):
    assert_handled(client.get(f"/skills/{quote(value, safe='')}"))
    assert_handled(client.get(f"/skills/{quote(value, safe='')}/workflow.json"))
    assert_handled(client.get("/skills", params={"q": value}))


def _is_float(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True
