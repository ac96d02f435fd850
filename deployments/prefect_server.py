"""Where the CLI's flows report: a local Prefect server found or started once, then reused.

A per-process ephemeral Prefect API costs ~11 s on every command; a background server (``prefect server start`` on
loopback) costs that once. It runs with Prefect's services on, so its UI lists each stage as a task run and its
scheduler starts scheduled deployments; its UI calls its own API (not Prefect's default port), and its database is
the workspace's, made with the workspace's private umask. ``PREFECT_API_URL`` in the environment always wins. It is
started isolated from the current folder, in a folder of the workspace (``deployments/interpreter.py``): a ``prefect/``
folder where the user stands is never imported; nor by an ephemeral server, which Prefect starts itself.

Each workspace has its own server: on ``prefect_server_port`` where one is set, else on a free port chosen once and
recorded in ``<workspace>/prefect/server-port``. A server of this workspace started otherwise (by an older evoskill) is
replaced; a server of another workspace is never stopped nor used: where it holds the recorded port, another port is
chosen, and where it holds a port the user set, evoskill says so and stops.
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

from deployments.files import write_atomic
from deployments.interpreter import helper_folder, isolation_flags, python_command, safe_path_for_children
from deployments.net import free_port, port_accepts, url_responds
from deployments.settings import Settings
from deployments.workspace import PRIVATE_UMASK, prepare_workspace

__all__ = ["ensure_local_server", "prefect_runtime", "server_env", "server_port", "workspace_servers"]

def _quiet_env() -> dict[str, str]:
    """No telemetry (evoskill works offline; the failed sends are noise)."""
    return {"PREFECT_SERVER_ANALYTICS_ENABLED": "false"}


_DATABASE = "PREFECT_SERVER_DATABASE_CONNECTION_URL"


def _port_file(settings: Settings) -> Path:
    return settings.workspace.resolve() / "prefect" / "server-port"


def server_port(settings: Settings) -> int:
    """The workspace's server port: ``prefect_server_port`` where set, else the one recorded for the workspace (a free one
    chosen and recorded the first time)."""
    if settings.prefect_server_port:
        return settings.prefect_server_port
    recorded = _port_file(settings)
    try:
        port = int(recorded.read_text().strip())
        if 0 < port < 65536:
            return port
    except (OSError, ValueError):
        pass
    return _record_port(settings, free_port())


def _record_port(settings: Settings, port: int) -> int:
    recorded = _port_file(settings)
    recorded.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(recorded, f"{port}\n")
    return port


def server_env(settings: Settings, port: int | None = None) -> dict[str, str]:
    """What the local server is started with: its UI calls its own API, and its database lies in the workspace.

    A database URL or UI API URL the user set in the environment wins.
    """
    database = settings.workspace.resolve() / "prefect" / "prefect.db"
    return {
        **_quiet_env(),
        "PREFECT_SERVER_UI_API_URL": f"http://127.0.0.1:{port or server_port(settings)}/api",
        _DATABASE: f"sqlite+aiosqlite:///{database}",
    }


def _wanted(settings: Settings, port: int | None = None) -> dict[str, str]:
    """The server's own settings: ours, with the user's environment winning."""
    return {key: os.environ.get(key, value) for key, value in server_env(settings, port).items()}


def _server_port_of(argv: list[str]) -> int | None:
    """The port of ``python [FLAGS] -m prefect server start ... --port PORT``; None for any other command line."""
    if "-m" not in argv or "--port" not in argv:
        return None
    at, port_at = argv.index("-m"), argv.index("--port") + 1
    flags_only = all(arg.startswith("-") for arg in argv[1:at])
    if not flags_only or argv[at + 1 : at + 4] != ["prefect", "server", "start"] or port_at >= len(argv) or not argv[port_at].isdigit():
        return None
    return int(argv[port_at])


def _servers() -> list[tuple[int, int, list[str], dict[str, str]]]:
    """The Prefect servers started as evoskill starts them, on any port: pid, port, command line, environment."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            port = _server_port_of(argv)
            if port is None:
                continue
            pairs = (entry / "environ").read_bytes().decode(errors="replace").split("\0")
        except (OSError, ValueError):
            continue
        found.append((int(entry.name), port, argv, dict(p.split("=", 1) for p in pairs if "=" in p)))
    return found


def _servers_on(port: int) -> list[tuple[int, list[str], dict[str, str]]]:
    """The servers evoskill started on ``port``: pid, command line, environment."""
    return [(pid, argv, env) for pid, at, argv, env in _servers() if at == port]


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


def _ours(env: dict[str, str], wanted: dict[str, str]) -> bool:
    """Whether a server keeps its flow runs in this workspace's database (or, started by an older evoskill, names none)."""
    return env.get(_DATABASE) in (None, wanted[_DATABASE])


def _stop_stale(port: int, wanted: dict[str, str]) -> None:
    """Stop a server of this workspace on ``port`` that evoskill started otherwise (``_stale``), so that one started as now
    takes its place; another workspace's server is never stopped."""
    for pid, argv, env in _servers_on(port):
        if not _ours(env, wanted) or not _stale(pid, argv, env, wanted):
            continue
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            continue
        for _ in range(100):
            if not Path(f"/proc/{pid}").exists():
                break
            time.sleep(0.1)


def _another_workspace(port: int, wanted: dict[str, str]) -> str | None:
    """The database of another workspace whose evoskill server holds ``port``, or None."""
    return next((env.get(_DATABASE, "?") for _, _, env in _servers_on(port) if not _ours(env, wanted)), None)


def ensure_local_server(settings: Settings, wait_s: float = 90.0) -> str:
    """The API URL of the workspace's local Prefect server (``server_port``), started if none answers."""
    prepare_workspace(*settings.private_roots())  # the server inherits the private umask
    workspace = settings.workspace.resolve()
    port = server_port(settings)
    wanted = _wanted(settings, port)
    other = _another_workspace(port, wanted)
    if other is not None or (not settings.prefect_server_port and not _servers_on(port) and port_accepts(port, timeout=0.5)):
        if settings.prefect_server_port:
            raise RuntimeError(
                f"port {port} serves another workspace's Prefect server ({other}); set another EVOSKILL_PREFECT_SERVER_PORT, or 0 to choose one"
            )
        port = _record_port(settings, free_port())  # the recorded port was taken meanwhile: this workspace moves
        wanted = _wanted(settings, port)
    api_url = f"http://127.0.0.1:{port}/api"
    _stop_stale(port, wanted)
    if url_responds(f"{api_url}/health", timeout=1.0):
        return api_url
    Path(wanted[_DATABASE].split("///", 1)[-1]).parent.mkdir(parents=True, exist_ok=True)
    cmd = python_command("-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port))
    with open(workspace / "prefect-server.log", "ab") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                                cwd=helper_folder(settings), env={**os.environ, **wanted})  # fmt: skip
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and proc.poll() is None:
        if url_responds(f"{api_url}/health", timeout=1.0):
            return api_url
        time.sleep(0.3)
    raise RuntimeError(f"the local Prefect server did not start on {api_url}; see {workspace / 'prefect-server.log'}")


def workspace_servers() -> list[tuple[int, int, str]]:
    """Every local Prefect server evoskill started on this machine: pid, port, and the workspace its database lies in."""
    found = []
    for pid, port, _, env in _servers():
        database = Path(env[_DATABASE].split("///", 1)[-1]) if _DATABASE in env else None
        workspace = "(none: started by an older evoskill)" if database is None else str(database.parent.parent if database.name == "prefect.db" else database)
        found.append((pid, port, workspace))
    return found


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
