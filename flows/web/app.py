"""The web app: a FastAPI application serving the chat and the skills browser as server-rendered pages.

>>> from tasks.settings import Settings
>>> app = create_app(Settings(store="memory", workspace="/tmp/evoskill-doctest"))   # doctest: +SKIP
>>> uvicorn.run(app, host="127.0.0.1", port=8501)                                   # doctest: +SKIP

Pages are rendered by Jinja2 with autoescaping, and every response forbids inline script (a Content-Security-Policy),
so HTML in questions, answers or program output is shown as text and never runs.
"""

from __future__ import annotations

import contextvars
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

from fastapi import Depends, FastAPI, Request, Response
from fastapi.responses import RedirectResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.middleware.sessions import SessionMiddleware

from flows.web.jobs import SolveJobs, Solver
from flows.web.users import UserBook, cookie_secret
from skills.store import SkillStore, open_store
from tasks.models import SolveResult
from tasks.settings import Settings

__all__ = ["create_app", "WebState", "LoginRequired", "current_user", "CurrentUser", "web_state", "flow_solver"]

T = TypeVar("T")
HERE = Path(__file__).parent
_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; object-src 'none'; "
    "base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)


@dataclass
class WebState:
    """What every page needs: settings, the store, the running solves, the templates and the Prefect UI (if any)."""

    settings: Settings
    store: SkillStore
    jobs: SolveJobs
    templates: Jinja2Templates
    users: UserBook
    context: contextvars.Context
    prefect_ui: str | None = None

    def in_context(self, fn: Callable[..., T], *args: Any) -> T:
        """Call ``fn`` in the context the app was made in (where flows find their Prefect API)."""
        return self.context.copy().run(fn, *args)

    def flow_run_url(self, flow_run_id: str | None) -> str | None:
        return f"{self.prefect_ui}/runs/flow-run/{flow_run_id}" if self.prefect_ui and flow_run_id else None


class LoginRequired(Exception):
    """The page needs a logged-in user."""


def web_state(request: Request) -> WebState:
    return request.app.state.web


def current_user(request: Request) -> str:
    """The user of this request: the logged-in one, or the settings' user when login is off."""
    state = web_state(request)
    if not state.settings.web_login:
        return state.settings.user
    user = request.session.get("user")
    if not user:
        raise LoginRequired()
    return user


CurrentUser = Annotated[str, Depends(current_user)]
"""A route parameter that is the request's user (redirects to the login page when there is none)."""


def flow_solver() -> Solver:
    """Answer through the ``solve`` flow; in the chat a skill is learned only when the user says 'satisfied'."""
    from flows.solve import solve

    def run(query: str, session_id: str, user: str) -> SolveResult:
        return solve(query, session=session_id, user=user, defer_learning=True)

    return run


def create_app(settings: Settings, prefect_ui: str | None = None) -> FastAPI:
    """The web app over ``settings``' store; questions go to the ``solve`` flow on background threads.

    ``prefect_ui``: the Prefect UI's address, for links to flow runs (none when flows run on an ephemeral API).
    """
    from flows.web import chat_pages, skill_pages

    store = open_store(settings)
    context = contextvars.copy_context()
    jobs = SolveJobs(store, flow_solver(), settings.web_solvers, context)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        jobs.close()

    app = FastAPI(title="evoskill", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    users = UserBook(settings.workspace.resolve() / "web-users.json")
    app.state.web = WebState(settings, store, jobs, templates, users, context, prefect_ui.rstrip("/") if prefect_ui else None)
    secret = settings.web_secret.get_secret_value() if settings.web_secret else cookie_secret(settings.workspace.resolve() / "web-secret")
    app.add_middleware(SessionMiddleware, secret_key=secret, session_cookie="evoskill_session", same_site="strict", max_age=14 * 24 * 3600)

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = _CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "same-origin"
        return response

    @app.exception_handler(LoginRequired)
    async def to_login(request: Request, _: LoginRequired) -> RedirectResponse:
        return RedirectResponse("/login", status_code=303)

    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    app.include_router(chat_pages.router)
    app.include_router(skill_pages.router)

    @app.get("/healthz")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    return app
