"""Ready before the first question: what a long-lived door (the workspace's resident service, the MCP server) loads
once, so that its first answer does not wait for imports, the Prefect server, skill retrieval and matching or the warm
executors (the packages', and one for what the stored skills import besides)."""

from __future__ import annotations

import logging
import os

from deployments.prefect_server import ensure_local_server
from deployments.run_owners import crash_orphaned_runs
from deployments.sandbox.execute import warm_up, warm_up_for
from deployments.sandbox.limits import SandboxLimits
from deployments.settings import Settings
from skills.binding import BindingDeclined, bind
from skills.store import open_store
from tasks.tools.memory import search_memory

__all__ = ["get_ready"]

_log = logging.getLogger(__name__)
_SAMPLE = "the energy per atom of NaCl"  # a question each reader and matcher is tried on once


def get_ready(settings: Settings, solves: bool = True) -> list[str]:
    """Start (or find) the workspace's Prefect server, load skill retrieval and start the warm executors; what could not be
    made ready, one line each (the first question then pays for it, as without this). ``solves``: this door runs solves
    itself (imports the flows, needs the Prefect server); false for one whose solves run in the resident service, which
    gets them ready there."""
    missing = []
    if solves:
        import flows.run_skill  # noqa: F401 - imported here, once, for the door's first answers
        import flows.solve  # noqa: F401
    if solves and settings.prefect_api == "local-server" and not os.environ.get("PREFECT_API_URL"):
        try:
            api = ensure_local_server(settings)
        except Exception as exc:  # noqa: BLE001 - the first command meets it again and says so
            missing.append(f"the Prefect server: {exc}")
        else:
            try:
                if crashed := crash_orphaned_runs(api):  # left Running by a door killed before it (a new service after a crash)
                    _log.info("set Crashed, their process having ended: %s", ", ".join(crashed))
            except (OSError, ValueError) as exc:
                _log.info("could not check for flow runs whose process ended: %s", exc)
    codes: list[str] = []
    try:  # the retrieval's own first use (its lexical and chemical readers) takes seconds once per process
        store = open_store(settings)
        store.search_skills(_SAMPLE, k=1)
        search_memory(store, _SAMPLE, k=1, threshold=settings.memory_threshold, user=settings.user)  # its index is its own
        skills = store.latest_skills()
        codes = [skill.code for skill in skills]
    except Exception as exc:  # noqa: BLE001 - the first question meets it again and says so
        missing.append(f"skill retrieval: {exc}")
        skills = []
    if solves:
        try:  # matching a question to each skill reads name tables and what the skills' functions document, once per process
            for skill in skills:
                try:
                    bind(skill, _SAMPLE)
                except BindingDeclined:
                    pass
        except Exception as exc:  # noqa: BLE001 - the first question meets it again and says so
            missing.append(f"skill matching: {exc}")
    limits = SandboxLimits.from_settings(settings)
    if not warm_up(limits):
        missing.append("the warm executor (runs start cold)")
    elif warm_up_for(codes, limits):
        _log.info("starting a warm executor for the stored skills' other imports")
    for line in missing:
        _log.info("not ready ahead of the first question: %s", line)
    return missing
