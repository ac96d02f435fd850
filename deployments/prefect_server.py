"""Where the CLI's flows report: a local Prefect server found or started once, then reused.

A per-process ephemeral Prefect API costs ~11 s on every command; a background server (``prefect server start`` on
loopback) costs that once. It runs with Prefect's services on, so its UI lists each stage as a task run and its
scheduler starts scheduled deployments; its UI calls its own API (not Prefect's default port), and its database is
the workspace's, made with the workspace's private umask. ``PREFECT_API_URL`` in the environment always wins. It is
started isolated from the current folder, in a folder of the workspace (``deployments/interpreter.py``): a ``prefect/``
folder where the user stands is never imported; nor by an ephemeral server, which Prefect starts itself. A server started
otherwise (by an older evoskill) is replaced.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from prefect.settings import (
    PREFECT_API_URL,
    PREFECT_FLOWS_HEARTBEAT_FREQUENCY,
    temporary_settings,
)

from deployments.interpreter import helper_folder, isolation_flags, python_command, safe_path_for_children
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


def _server_argv(argv: list[str], port: int) -> bool:
    """Whether ``argv`` is ``python [FLAGS] -m prefect server start ... --port PORT``."""
    if "-m" not in argv or "--port" not in argv:
        return False
    at = argv.index("-m")
    flags_only = all(arg.startswith("-") for arg in argv[1:at])
    return flags_only and argv[at + 1 : at + 4] == ["prefect", "server", "start"] and argv[argv.index("--port") + 1 : argv.index("--port") + 2] == [str(port)]


def _servers_on(port: int) -> list[tuple[int, list[str], dict[str, str]]]:
    """The servers evoskill started on ``port`` (``python [FLAGS] -m prefect server start ... --port N``): pid, command line, environment."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            if not _server_argv(argv, port):
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


def _stale(pid: int, argv: list[str], env: dict[str, str], wanted: dict[str, str]) -> bool:
    """Whether a server was started otherwise than evoskill starts one now (an older evoskill's): not isolated from the
    folder it was started in, files readable by other users, services off, or other settings (the UI calling Prefect's
    default port)."""
    isolated = argv[1 : argv.index("-m")] == isolation_flags()
    umask = _umask(pid)
    private = umask is None or umask & PRIVATE_UMASK == PRIVATE_UMASK
    return not isolated or not private or "--no-services" in argv or any(env.get(k) != v for k, v in wanted.items())


def _stop_stale(port: int, wanted: dict[str, str]) -> None:
    """Stop a server on ``port`` that evoskill started otherwise (``_stale``), so that one started as now takes its place."""
    for pid, argv, env in _servers_on(port):
        if not _stale(pid, argv, env, wanted):
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
    cmd = python_command("-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(settings.prefect_server_port))
    with open(workspace / "prefect-server.log", "ab") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                                cwd=helper_folder(settings), env={**os.environ, **wanted})  # fmt: skip
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
    safe_path_for_children()  # and from this folder, as python -m uvicorn: not importing from it
    if os.environ.get("PREFECT_API_URL"):
        where = os.environ["PREFECT_API_URL"]
    elif settings.prefect_api == "local-server":
        where = ensure_local_server(settings)
        updates[PREFECT_API_URL] = where
    with temporary_settings(updates=updates):
        yield where
