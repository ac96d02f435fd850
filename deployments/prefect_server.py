"""Where the CLI's flows report: a local Prefect server found or started once, then reused.

A per-process ephemeral Prefect API costs ~11 s on every command; a background server (``prefect server start`` on
loopback) costs that once. It runs with Prefect's services on, so its UI lists each stage as a task run and its
scheduler starts scheduled deployments; its UI calls its own API (not Prefect's default port), and its database is
the workspace's, made with the workspace's private umask (a server started without it is replaced).
``PREFECT_API_URL`` in the environment always wins.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from prefect.settings import (
    PREFECT_API_URL,
    PREFECT_FLOWS_HEARTBEAT_FREQUENCY,
    temporary_settings,
)

from deployments.net import url_responds
from deployments.settings import Settings
from deployments.workspace import PRIVATE_UMASK, prepare_workspace

__all__ = ["ensure_local_server", "prefect_runtime", "server_env"]

def _quiet_env() -> dict[str, str]:
    """No telemetry (evoskill works offline; the failed sends are noise)."""
    return {"PREFECT_SERVER_ANALYTICS_ENABLED": "false"}


def server_env(settings: Settings) -> dict[str, str]:
    """What the local server is started with: its UI calls its own API, and its database lies in the workspace.

    A database URL or UI API URL the user set in the environment wins.
    """
    database = settings.workspace.resolve() / "prefect" / "prefect.db"
    return {
        **_quiet_env(),
        "PREFECT_SERVER_UI_API_URL": f"http://127.0.0.1:{settings.prefect_server_port}/api",
        "PREFECT_SERVER_DATABASE_CONNECTION_URL": f"sqlite+aiosqlite:///{database}",
    }


def _wanted(settings: Settings) -> dict[str, str]:
    """The server's own settings: ours, with the user's environment winning."""
    return {key: os.environ.get(key, value) for key, value in server_env(settings).items()}


def _servers_on(port: int) -> list[tuple[int, list[str], dict[str, str]]]:
    """The servers evoskill started on ``port`` (``python -m prefect server start ... --port N``): pid, command line, environment."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            if not (argv[1:5] == ["-m", "prefect", "server", "start"] and "start" in argv and ["--port", str(port)] == argv[argv.index("--port"):][:2]):
                continue
            pairs = (entry / "environ").read_bytes().decode(errors="replace").split("\0")
        except (OSError, ValueError):
            continue
        found.append((int(entry.name), argv, dict(p.split("=", 1) for p in pairs if "=" in p)))
    return found


def _umask(pid: int) -> int | None:
    """The umask of process ``pid`` (None when it cannot be read)."""
    try:
        line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("Umask:"))
    except (OSError, StopIteration):
        return None
    return int(line.split()[1], 8)


def _stop_stale(port: int, wanted: dict[str, str]) -> None:
    """Stop a server on ``port`` that evoskill started with other settings (an older evoskill's: services off, the UI
    calling Prefect's default port, files readable by other users), so that one with these starts in its place."""
    for pid, argv, env in _servers_on(port):
        umask = _umask(pid)
        private = umask is None or umask & PRIVATE_UMASK == PRIVATE_UMASK
        if "--no-services" not in argv and private and all(env.get(k) == v for k, v in wanted.items()):
            continue
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            continue
        for _ in range(100):
            if not Path(f"/proc/{pid}").exists():
                break
            time.sleep(0.1)


def ensure_local_server(settings: Settings, wait_s: float = 90.0) -> str:
    """The API URL of the local Prefect server on ``prefect_server_port``, started if none answers."""
    api_url = f"http://127.0.0.1:{settings.prefect_server_port}/api"
    prepare_workspace(*settings.private_roots())  # the server inherits the private umask
    workspace = settings.workspace.resolve()
    wanted = _wanted(settings)
    _stop_stale(settings.prefect_server_port, wanted)
    if url_responds(f"{api_url}/health", timeout=1.0):
        return api_url
    Path(wanted["PREFECT_SERVER_DATABASE_CONNECTION_URL"].split("///", 1)[-1]).parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(settings.prefect_server_port)]
    with open(workspace / "prefect-server.log", "ab") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                                env={**os.environ, **wanted})  # fmt: skip
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
    os.environ.update({**_quiet_env(), **os.environ})  # an ephemeral server is a child process started from this environment
    if os.environ.get("PREFECT_API_URL"):
        where = os.environ["PREFECT_API_URL"]
    elif settings.prefect_api == "local-server":
        where = ensure_local_server(settings)
        updates[PREFECT_API_URL] = where
    with temporary_settings(updates=updates):
        yield where
