"""Chat pages: sessions (new, resume, title/notes/bookmark), questions, feedback, suggested skills, progress, login and logout."""

from __future__ import annotations

import math
import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from deployments.admission import Busy
from deployments.run_outputs import OutputRefused, read_image
from flows.interfaces.web.files import CHAT_PAGE, LOGIN_PAGE
from flows.interfaces.web.state import CurrentUser, WebState, web_state
from flows.session import Conversation, SessionAccessError, owned_session
from skills.documents import Session

__all__ = ["router", "improve_query"]

router = APIRouter()


def _sessions(state: WebState, user: str) -> list[Session]:
    """The user's sessions: bookmarked first, then the most recently used."""
    found = state.store.all(Session, {"user": user})
    return sorted(found, key=lambda s: (not s.bookmarked, -s.updated.timestamp()))


def _conversation(state: WebState, session_id: str, user: str) -> Conversation:
    """The user's session, or 404 — also for another user's session, whose existence is not revealed."""
    try:
        session = owned_session(state.store, session_id, user)
    except SessionAccessError:
        session = None
    if session is None:
        raise HTTPException(status_code=404, detail=f"no session {session_id!r}")
    return Conversation(state.store, session)


def _page(request: Request, user: str, session: Session | None, error: str | None = None, draft: str = "", status: int = 200) -> HTMLResponse:
    state = web_state(request)
    job = state.jobs.running(session.id) if session else None
    context: dict[str, Any] = {
        "user": user,
        "login": state.settings.web_login,
        "sessions": _sessions(state, user),
        "session": session,
        "job": job,
        "error": error,
        "draft": draft,
        "max_chars": state.settings.web_max_query_chars,
        "flow_url": state.flow_run_url,
    }
    return state.templates.TemplateResponse(request, CHAT_PAGE, context, status_code=status)


def _problem(state: WebState, text: str) -> str | None:
    """Why a question cannot be asked, or None."""
    if not text.strip():
        return "the question is empty"
    if len(text) > state.settings.web_max_query_chars:
        return f"the question is {len(text)} characters long; the limit is {state.settings.web_max_query_chars} (EVOSKILL_WEB_MAX_QUERY_CHARS)"
    return None


def _ask(request: Request, user: str, conversation: Conversation, query: str, accept_suggestion: bool = False) -> Response:
    state = web_state(request)
    problem = _problem(state, query)
    if problem is None and conversation.session.status == "stopped":
        problem = "this session is stopped: reopen it to ask more"
    status = 400
    if problem is None:
        try:
            state.jobs.submit(conversation, query.strip(), accept_suggestion)
        except Busy as exc:
            problem, status = str(exc), 429
        except RuntimeError as exc:
            problem = str(exc)
    if problem is not None:
        return _page(request, user, conversation.session if conversation.session.turns or conversation.session.pending else None,
                     error=problem, draft=query, status=status)  # fmt: skip
    return RedirectResponse(f"/chat/{conversation.session.id}", status_code=303)


def improve_query(session: Session, critique: str) -> str | None:
    """The next question after 'improve': the last question again, with the answer it got and the user's critique."""
    last = next((t for t in reversed(session.turns) if t.path != "feedback"), None)
    if last is None:
        return None
    return f"{last.query}\n\nThe previous answer was {last.answer or 'none'}. The user asks to improve it: {critique.strip()}"


@router.get("/", include_in_schema=False)
def home() -> RedirectResponse:
    return RedirectResponse("/chat", status_code=303)


@router.get("/chat", response_class=HTMLResponse)
def new_chat(request: Request, user: CurrentUser) -> HTMLResponse:
    return _page(request, user, None)


@router.post("/chat")
def start_chat(request: Request, user: CurrentUser, query: Annotated[str, Form()] = "") -> Response:
    conversation = Conversation.open(web_state(request).store, uuid.uuid4().hex[:12], user)
    return _ask(request, user, conversation, query)


@router.get("/chat/{session_id}", response_class=HTMLResponse)
def show_chat(request: Request, user: CurrentUser, session_id: str) -> HTMLResponse:
    return _page(request, user, _conversation(web_state(request), session_id, user).session)


@router.post("/chat/{session_id}/ask")
def ask(request: Request, user: CurrentUser, session_id: str, query: Annotated[str, Form()] = "") -> Response:
    return _ask(request, user, _conversation(web_state(request), session_id, user), query)


@router.post("/chat/{session_id}/satisfied")
def satisfied(request: Request, user: CurrentUser, session_id: str) -> Response:
    return _ask(request, user, _conversation(web_state(request), session_id, user), "satisfied")


@router.post("/chat/{session_id}/improve")
def improve(request: Request, user: CurrentUser, session_id: str, critique: Annotated[str, Form()] = "") -> Response:
    conversation = _conversation(web_state(request), session_id, user)
    if not critique.strip():
        return _page(request, user, conversation.session, error="say what to improve", status=400)
    query = improve_query(conversation.session, critique)
    if query is None:
        return _page(request, user, conversation.session, error="nothing to improve yet", status=400)
    return _ask(request, user, conversation, query)


@router.post("/chat/{session_id}/turns/{turn}/suggestion")
def accept_suggestion(request: Request, user: CurrentUser, session_id: str, turn: int) -> Response:
    """The turn's question asked again, answered through the skill it suggested (which then learns the wording)."""
    conversation = _conversation(web_state(request), session_id, user)
    turns = conversation.session.turns
    offer = turns[turn].suggestion if 0 <= turn < len(turns) else None
    if offer is None or offer.accepted:
        raise HTTPException(status_code=404, detail="no suggestion to accept on that turn")
    return _ask(request, user, conversation, turns[turn].query, accept_suggestion=True)


@router.post("/chat/{session_id}/stop")
def stop(request: Request, user: CurrentUser, session_id: str) -> RedirectResponse:
    _conversation(web_state(request), session_id, user).update(status="stopped")
    return RedirectResponse(f"/chat/{session_id}", status_code=303)


@router.post("/chat/{session_id}/cancel")
def cancel(request: Request, user: CurrentUser, session_id: str) -> RedirectResponse:
    """Cancel the question the session is answering (or waiting to answer)."""
    state = web_state(request)
    _conversation(state, session_id, user)
    state.jobs.cancel(session_id)
    return RedirectResponse(f"/chat/{session_id}", status_code=303)


@router.post("/chat/{session_id}/reopen")
def reopen(request: Request, user: CurrentUser, session_id: str) -> RedirectResponse:
    _conversation(web_state(request), session_id, user).update(status="open")
    return RedirectResponse(f"/chat/{session_id}", status_code=303)


@router.post("/chat/{session_id}/details")
def details(
    request: Request,
    user: CurrentUser,
    session_id: str,
    title: Annotated[str, Form(max_length=200)] = "",
    notes: Annotated[str, Form(max_length=10_000)] = "",
    bookmarked: Annotated[bool, Form()] = False,
) -> RedirectResponse:
    conversation = _conversation(web_state(request), session_id, user)
    conversation.update(title=title.strip() or conversation.session.title, notes=notes, bookmarked=bookmarked)
    return RedirectResponse(f"/chat/{session_id}", status_code=303)


@router.get("/chat/{session_id}/progress")
def progress(request: Request, user: CurrentUser, session_id: str) -> dict[str, Any]:
    """What the page polls while a question is being answered."""
    state = web_state(request)
    _conversation(state, session_id, user)
    job = state.jobs.running(session_id)
    events = [{"t": t, "stage": stage, "status": status, "detail": detail} for t, stage, status, detail in (job.events if job else [])]
    return {"running": job is not None, "position": job.position if job else None, "events": events}


@router.get("/chat/{session_id}/turns/{turn}/images/{number}")
def image(request: Request, user: CurrentUser, session_id: str, turn: int, number: int) -> Response:
    """An image the answering code of one turn handed back: only the turn's kept copies, read by ``read_image``."""
    state = web_state(request)
    session = _conversation(state, session_id, user).session
    try:
        if turn < 0 or number < 0:
            raise IndexError
        data, media = read_image(session.turns[turn].images[number], state.settings)
    except IndexError:
        raise HTTPException(status_code=404, detail="no such image") from None
    except OutputRefused:
        raise HTTPException(status_code=404, detail="the image is gone") from None
    return Response(data, media_type=media)


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request) -> HTMLResponse:
    return web_state(request).templates.TemplateResponse(request, LOGIN_PAGE, {"error": None})


@router.post("/login")
def login(request: Request, name: Annotated[str, Form()] = "", password: Annotated[str, Form()] = "") -> Response:
    """Sign in; after too many wrong passwords for the account or from the address, refuse (429) until the wait ends."""
    state = web_state(request)
    keys = (f"user:{name}", f"addr:{request.client.host if request.client else '?'}")
    wait = state.throttle.wait(*keys)
    if not wait:
        if state.users.verify(name, password):
            state.throttle.succeeded(keys[0])
            request.session.clear()
            request.session.update(user=name, epoch=state.users.epoch(name))
            return RedirectResponse("/chat", status_code=303)
        wait = state.throttle.failed(*keys)
        if not wait:
            return state.templates.TemplateResponse(request, LOGIN_PAGE, {"error": "unknown user or wrong password"}, status_code=401)
    seconds = math.ceil(wait)
    error = f"too many wrong passwords: try again in {seconds} s"
    return state.templates.TemplateResponse(request, LOGIN_PAGE, {"error": error}, status_code=429, headers={"Retry-After": str(seconds)})


@router.post("/logout")
def logout(request: Request) -> RedirectResponse:
    """Sign out, ending every session of the user (the cookies issued before are refused)."""
    state = web_state(request)
    user = request.session.get("user")
    if state.settings.web_login and user and request.session.get("epoch") == state.users.epoch(user):
        state.users.revoke(user)
    request.session.clear()
    return RedirectResponse("/login" if state.settings.web_login else "/chat", status_code=303)
