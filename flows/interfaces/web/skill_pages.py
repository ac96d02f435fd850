"""The skills browser: list and search skills, see one (parameters, provenance, test case, usage), run it, download it.

Each skill is shown as the signed-in user may see it (``skills/disclosure.py``): its teacher sees the question it was
learned from; everyone else a description made from its code and parameters. A run takes its turn with the chat's
questions and the MCP server's calls (``deployments/admission.py``: the same slots and bounds per user); its request waits
without holding the event loop, and a user with too many requests waiting is told busy (429), to retry.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

from deployments.admission import Busy
from flows.interfaces.web.files import SKILL_PAGE, SKILLS_PAGE
from flows.interfaces.web.forms import form_fields, form_params
from flows.interfaces.web.state import CurrentUser, WebState, web_state
from flows.run_skill import run_skill
from skills.disclosure import shared_view
from skills.documents import Skill
from skills.domain import checked_params
from skills.params import ParameterError
from skills.run_errors import explain_run_error
from skills.transfer import export_workflow

__all__ = ["router"]

router = APIRouter()


def _skill(state: WebState, skill_id: str) -> Skill:
    try:
        return state.store.get_skill(skill_id)
    except KeyError:
        raise HTTPException(status_code=404, detail=f"no skill {skill_id!r}") from None


@router.get("/skills", response_class=HTMLResponse)
def list_skills(request: Request, user: CurrentUser, q: str = "") -> HTMLResponse:
    state = web_state(request)
    if q.strip():
        state.store.refresh()  # skills learned by other processes since the last search
        found: list[tuple[Skill, float | None]] = [(skill, round(score, 2)) for skill, score in state.store.search_skills(q[:500], k=50, threshold=0.05)]
    else:
        found = [(skill, None) for skill in sorted(state.store.latest_skills(), key=lambda s: s.name)]
    found = [(shared_view(skill, user), score) for skill, score in found]
    context = {"user": user, "login": state.settings.web_login, "skills": found, "q": q}
    return state.templates.TemplateResponse(request, SKILLS_PAGE, context)


def _skill_page(request: Request, user: str, skill: Skill, values: dict[str, Any] | None = None, status: int | None = None,
                **extra: Any) -> HTMLResponse:  # fmt: skip
    """The skill's page; ``status`` 400 when ``extra`` has an error, else 200, unless given."""
    state = web_state(request)
    skill = shared_view(skill, user)
    context = {
        "user": user,
        "login": state.settings.web_login,
        "skill": skill,
        "fields": form_fields(skill.parameters.json_schema(), values),
        "flow_url": state.flow_run_url(skill.provenance.flow_run_id),
        "result": None,
        "explained": None,
        "error": None,
        **extra,
    }
    return state.templates.TemplateResponse(request, SKILL_PAGE, context, status_code=status or (400 if extra.get("error") else 200))


@router.get("/skills/{skill_id}", response_class=HTMLResponse)
def show_skill(request: Request, user: CurrentUser, skill_id: str) -> HTMLResponse:
    skill = _skill(web_state(request), skill_id)
    return _skill_page(request, user, skill, skill.test_case.params)


@router.post("/skills/{skill_id}/run", response_class=HTMLResponse)
async def run_from_form(request: Request, user: CurrentUser, skill_id: str) -> HTMLResponse:
    """Run the skill with the form's parameters through the ``run-skill`` flow (no LLM), in the user's turn."""
    state = web_state(request)
    skill = _skill(state, skill_id)
    form = {k: v for k, v in (await request.form()).items() if isinstance(v, str)}
    params = form_params(skill.parameters.json_schema(), form)
    try:
        checked_params(skill, params)  # outside what the skill was verified on: refused with the reason
    except ParameterError as exc:
        return _skill_page(request, user, skill, form, error=str(exc))
    try:
        ticket = await run_in_threadpool(state.admission.enter, user)
    except Busy as exc:
        return _skill_page(request, user, skill, form, status=429, error=str(exc))
    with ticket:  # left when the request ends, also cancelled
        await ticket.turn()
        output = await run_in_threadpool(state.in_context, run_skill, skill.id, params)
    explained = None if output.success else explain_run_error(output.error or "", output.params)
    return _skill_page(request, user, state.store.get_skill(skill.id), params, result=output, explained=explained)


@router.get("/skills/{skill_id}/workflow.json")
def download_workflow(request: Request, user: CurrentUser, skill_id: str) -> Response:
    """The skill as a jobflow ``Flow`` with its test case's parameters, runnable with plain jobflow."""
    skill = shared_view(_skill(web_state(request), skill_id), user)
    body = export_workflow(skill, [skill.test_case.params])
    headers = {"Content-Disposition": f'attachment; filename="{skill.id}.workflow.json"'}
    return Response(body, media_type="application/json", headers=headers)
