"""What every page handler shares: the app's state and the signed-in user."""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Request
from fastapi.templating import Jinja2Templates

from deployments.admission import Admission
from deployments.settings import Settings
from flows.interfaces.web.jobs import SolveJobs
from flows.interfaces.web.throttle import LoginThrottle
from flows.interfaces.web.users import UserBook
from skills.store import SkillStore

T = TypeVar("T")

__all__ = ["WebState", "LoginRequired", "web_state", "current_user", "CurrentUser"]


@dataclass
class WebState:
    """What every page needs: settings, the store, the running solves, the turns (``admission``, shared by the solves
    and the skill runs), the templates, the accounts, the login throttle and the Prefect UI (if any)."""

    settings: Settings
    store: SkillStore
    jobs: SolveJobs
    admission: Admission
    templates: Jinja2Templates
    users: UserBook
    throttle: LoginThrottle
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
    """The user of this request: the logged-in one, or the settings' user when login is off.

    A cookie from before the user's last logout or password change (an older epoch) counts as no login.
    """
    state = web_state(request)
    if not state.settings.web_login:
        return state.settings.user
    user = request.session.get("user")
    if not user or request.session.get("epoch") != state.users.epoch(user):
        request.session.clear()
        raise LoginRequired()
    return user


CurrentUser = Annotated[str, Depends(current_user)]
