"""Where the CLI's flows report: a local Prefect server found or started once, then reused.

A per-process ephemeral Prefect API costs ~11 s on every command; a background server
(``prefect server start`` on loopback, services off so that SQLite does not stall flow
creation) costs that once. ``PREFECT_API_URL`` in the environment always wins.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from contextlib import contextmanager
from typing import Any, Iterator

from prefect.settings import (
    PREFECT_API_URL,
    PREFECT_FLOWS_HEARTBEAT_FREQUENCY,
    temporary_settings,
)

from deployments.net import url_responds
from deployments.settings import Settings

__all__ = ["ensure_local_server", "prefect_runtime"]


def _server_env() -> dict[str, str]:
    """The environment of a Prefect server evoskill starts: no telemetry (it works offline; the failed sends are noise)."""
    return {"PREFECT_SERVER_ANALYTICS_ENABLED": "false", **os.environ}


def ensure_local_server(settings: Settings, wait_s: float = 90.0) -> str:
    """The API URL of the local Prefect server on ``prefect_server_port``, started if none answers."""
    api_url = f"http://127.0.0.1:{settings.prefect_server_port}/api"
    if url_responds(f"{api_url}/health", timeout=1.0):
        return api_url
    workspace = settings.workspace.resolve()
    workspace.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1",
           "--port", str(settings.prefect_server_port), "--no-services"]  # fmt: skip
    with open(workspace / "prefect-server.log", "ab") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True, env=_server_env())
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and proc.poll() is None:
        if url_responds(f"{api_url}/health", timeout=1.0):
            return api_url
        time.sleep(0.3)
    raise RuntimeError(f"the local Prefect server did not start on {api_url}; see {workspace / 'prefect-server.log'}")


@contextmanager
def prefect_runtime(settings: Settings) -> Iterator[str]:
    """Run flows against the configured API with heartbeats off (each costs ~1 s per flow run)."""
    updates: dict[Any, str | None] = {PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}
    where = "ephemeral"
    os.environ.update(_server_env())  # an ephemeral server is a child process started from this environment
    if os.environ.get("PREFECT_API_URL"):
        where = os.environ["PREFECT_API_URL"]
    elif settings.prefect_api == "local-server":
        where = ensure_local_server(settings)
        updates[PREFECT_API_URL] = where
    with temporary_settings(updates=updates):
        yield where
