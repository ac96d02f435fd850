"""The web app: a FastAPI application serving the chat and the skills browser as server-rendered pages.

>>> from deployments.admission import Admission
from deployments.settings import Settings
>>> app = create_app(Settings(store="memory", workspace="/tmp/evoskill-doctest"))   # doctest: +SKIP
>>> uvicorn.run(app, host="127.0.0.1", port=8501)                                   # doctest: +SKIP

Pages are rendered by Jinja2 with autoescaping, and every response forbids inline script (a Content-Security-Policy),
so HTML in questions, answers or program output is shown as text and never runs. Requests to an unknown host name and
state-changing requests from another origin are refused before any page sees them (``guards``); nothing but the static
files may be cached.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TypeVar

from fastapi import FastAPI, Request, Response
from fastapi.responses import PlainTextResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.middleware.sessions import SessionMiddleware

from deployments.admission import Admission
from deployments.cancel import current_cancel
from deployments.settings import Settings
from flows.interfaces.service.client import service_solves
from flows.interfaces.service.solving import solve_in_service
from flows.interfaces.web import chat_pages, skill_pages
from flows.interfaces.web.files import STATIC, STATIC_URL, TEMPLATES
from flows.interfaces.web.guards import refusal
from flows.interfaces.web.jobs import SolveJobs, Solver
from flows.interfaces.web.state import LoginRequired, WebState
from flows.interfaces.web.throttle import LoginThrottle
from flows.interfaces.web.users import UserBook, cookie_secret
from flows.solve import solve
from skills.store import open_store
from tasks.models import SolveResult

__all__ = ["create_app", "flow_solver", "ServiceSolveError"]

T = TypeVar("T")
_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; object-src 'none'; "
    "base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)


"""A route parameter that is the request's user (redirects to the login page when there is none)."""


class ServiceSolveError(RuntimeError):
    """The workspace's service ran the question and gave no answer (cancelled, or it failed there)."""


def flow_solver(settings: Settings | None = None) -> Solver:
    """Answer through the ``solve`` flow; in the chat a skill is learned only when the user says 'satisfied' (a suggested
    skill the user accepts learns the question's wording at once).

    With ``settings`` whose service solves (``service_solves``), the flow runs in the workspace's resident service, the
    door every other command uses: its stage events come back as this job's, and the job's cancel cancels it there.
    Where the service cannot start, the flow runs in this process."""
    def run(query: str, session_id: str, user: str, accept_suggestion: bool = False) -> SolveResult:
        if settings is not None and service_solves(settings):
            cancel = current_cancel() or threading.Event()
            answered = solve_in_service(settings, query, session_id, cancel, accept_suggestion, user, defer_learning=True)
            if answered is not None:
                if answered.result is not None:
                    return answered.result
                if cancel.is_set():  # the service's solve recorded the cancelled turn
                    return SolveResult(success=False, session=session_id, error="cancelled by its user")
                raise ServiceSolveError(answered.error or "no answer")
        return solve(query, session=session_id, user=user, defer_learning=True, accept_suggestion=accept_suggestion)

    return run


def create_app(settings: Settings, prefect_ui: str | None = None) -> FastAPI:
    """The web app over ``settings``' store; questions go to the ``solve`` flow on background threads and skill runs to
    the ``run-skill`` flow, each in its turn (one ``Admission`` for both).

    ``prefect_ui``: the Prefect UI's address, for links to flow runs (none when flows run on an ephemeral API).
    """
    store = open_store(settings)
    context = contextvars.copy_context()
    admission = Admission.from_settings(settings)
    jobs = SolveJobs(store, flow_solver(settings), admission, context)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        jobs.close()

    app = FastAPI(title="evoskill", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    templates = Jinja2Templates(directory=str(TEMPLATES))
    templates.env.globals["static_url"] = STATIC_URL
    users = UserBook(settings.workspace.resolve() / "web-users.json")
    throttle = LoginThrottle(settings.web_login_attempts, settings.web_login_lockout_s)
    ui = prefect_ui.rstrip("/") if prefect_ui else None
    app.state.web = WebState(settings, store, jobs, admission, templates, users, throttle, context, ui)
    secret = settings.web_secret.get_secret_value() if settings.web_secret else cookie_secret(settings.workspace.resolve() / "web-secret")
    app.add_middleware(SessionMiddleware, secret_key=secret, session_cookie="evoskill_session", same_site="strict",
                       max_age=14 * 24 * 3600, https_only=settings.web_secure_cookie)  # fmt: skip

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        refused = refusal(request.method, request.headers, settings.web_allowed_hosts)
        response = PlainTextResponse(refused[1], status_code=refused[0]) if refused else await call_next(request)
        response.headers["Content-Security-Policy"] = _CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "same-origin"
        if not request.url.path.startswith(f"{STATIC_URL}/"):
            response.headers["Cache-Control"] = "no-store"
        return response

    @app.exception_handler(LoginRequired)
    async def to_login(request: Request, _: LoginRequired) -> RedirectResponse:
        return RedirectResponse("/login", status_code=303)

    app.mount(STATIC_URL, StaticFiles(directory=str(STATIC)), name="static")
    app.include_router(chat_pages.router)
    app.include_router(skill_pages.router)

    @app.get("/healthz")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    return app
