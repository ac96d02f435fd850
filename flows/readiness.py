"""Ready before the first question: what a long-lived door (the workspace's resident service, the MCP server) loads
once, so that its first answer does not wait for imports, the Prefect server, skill retrieval or the warm executor."""

from __future__ import annotations

import logging
import os

import flows.run_skill  # noqa: F401 - imported here, once, for the doors' first answers
import flows.solve  # noqa: F401
from deployments.prefect_server import ensure_local_server
from deployments.sandbox.execute import warm_up
from deployments.sandbox.limits import SandboxLimits
from deployments.settings import Settings
from skills.store import open_store

__all__ = ["get_ready"]

_log = logging.getLogger(__name__)


def get_ready(settings: Settings) -> list[str]:
    """Start (or find) the workspace's Prefect server, load skill retrieval and start the warm executor; what could not be
    made ready, one line each (the first question then pays for it, as without this)."""
    missing = []
    if settings.prefect_api == "local-server" and not os.environ.get("PREFECT_API_URL"):
        try:
            ensure_local_server(settings)
        except Exception as exc:  # noqa: BLE001 - the first command meets it again and says so
            missing.append(f"the Prefect server: {exc}")
    try:  # the retrieval's own first use (its lexical and chemical readers) takes seconds once per process
        open_store(settings).search_skills("the energy per atom of NaCl", k=1)
    except Exception as exc:  # noqa: BLE001 - the first question meets it again and says so
        missing.append(f"skill retrieval: {exc}")
    if not warm_up(SandboxLimits.from_settings(settings)):
        missing.append("the warm executor (runs start cold)")
    for line in missing:
        _log.info("not ready ahead of the first question: %s", line)
    return missing
