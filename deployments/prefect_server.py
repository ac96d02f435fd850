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

The server runs under a supervisor (``deployments/prefect_supervisor.py``) that stops it after
``prefect_server_idle_stop_s`` idle, and records how it ended in ``<workspace>/prefect/server.json``. Every
``ensure_local_server`` touches the workspace's heartbeat file, and ``prefect_runtime`` touches it while a command holds
the server, so a server in use is never stopped under a command; finding or starting the server holds
``<workspace>/prefect/server.lock``, which the supervisor's idle check never waits for. A server of this workspace that
runs without a supervisor (an older evoskill's) is replaced where idle stops are on.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
import uuid
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any, Iterator

from prefect.context import tags
from prefect.settings import (
    PREFECT_API_URL,
    PREFECT_CLIENT_MAX_RETRIES,
    PREFECT_FLOWS_HEARTBEAT_FREQUENCY,
    temporary_settings,
)

from deployments.files import file_lock, write_atomic
from deployments.interpreter import helper_folder, isolation_flags, python_command, safe_path_for_children
from deployments.net import free_port, port_accepts, url_responds
from deployments.prefect_supervisor import STATE_ENV, ServerRecord, SupervisorSpec, read_record, touch
from deployments.run_owners import owner_tag
from deployments.settings import Settings
from deployments.supervision import command_line
from deployments.workspace import PRIVATE_UMASK, prepare_workspace

__all__ = [
    "SQLITE_CLIENT_RETRIES",
    "ensure_local_server",
    "idle_stop_note",
    "last_record",
    "supervisor_of",
    "prefect_runtime",
    "server_env",
    "server_port",
    "workspace_servers",
]

_SUPERVISOR = "deployments.prefect_supervisor"

def _quiet_env() -> dict[str, str]:
    """No telemetry (evoskill works offline; the failed sends are noise)."""
    return {"PREFECT_SERVER_ANALYTICS_ENABLED": "false"}


_DATABASE = "PREFECT_SERVER_DATABASE_CONNECTION_URL"
SQLITE_CLIENT_RETRIES = 7  # "503, database is locked" retried this often (Prefect's default: 5) against a SQLite-backed API


def _port_file(settings: Settings) -> Path:
    return settings.workspace.resolve() / "prefect" / "server-port"


def _state_file(settings: Settings) -> Path:
    return settings.workspace.resolve() / "prefect" / "server.json"


def _heartbeat_file(settings: Settings) -> Path:
    return settings.workspace.resolve() / "prefect" / "heartbeat"


def _lock_file(settings: Settings) -> Path:
    return settings.workspace.resolve() / "prefect" / "server.lock"


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


def supervisor_of(pid: int) -> int | None:
    """The pid of the supervisor running server ``pid`` as its child, or None (started without one)."""
    try:
        parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None
    argv = command_line(parent) or []
    return parent if "-m" in argv and argv[argv.index("-m") + 1 :][:1] == [_SUPERVISOR] else None


def _ours(env: dict[str, str], wanted: dict[str, str]) -> bool:
    """Whether a server keeps its flow runs in this workspace's database (or, started by an older evoskill, names none)."""
    return env.get(_DATABASE) in (None, wanted[_DATABASE])


def _stop_stale(port: int, wanted: dict[str, str], unsupervised: bool = False) -> None:
    """Stop a server of this workspace on ``port`` that evoskill started otherwise (``_stale``), or, where
    ``unsupervised``, without a supervisor, so that one started as now takes its place; another workspace's server is
    never stopped. A supervised server is stopped through its supervisor, which records it."""
    for pid, argv, env in _servers_on(port):
        supervisor = supervisor_of(pid)
        if not _ours(env, wanted) or not (_stale(pid, argv, env, wanted) or (unsupervised and supervisor is None)):
            continue
        try:
            os.kill(supervisor or pid, signal.SIGTERM)
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
    """The API URL of the workspace's local Prefect server (``server_port``), started if none answers; the server counts
    as used now (its heartbeat)."""
    prepare_workspace(*settings.private_roots())  # the server and its supervisor inherit the private umask
    with file_lock(_lock_file(settings)):
        api_url = _find_or_start(settings, wait_s)
        touch(_heartbeat_file(settings))
        return api_url


def _find_or_start(settings: Settings, wait_s: float) -> str:
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
    _stop_stale(port, wanted, unsupervised=settings.prefect_server_idle_stop_s > 0)
    if url_responds(f"{api_url}/health", timeout=1.0):
        return api_url
    Path(wanted[_DATABASE].split("///", 1)[-1]).parent.mkdir(parents=True, exist_ok=True)
    record = ServerRecord(id=uuid.uuid4().hex, workspace=str(workspace), port=port, idle_stop_s=settings.prefect_server_idle_stop_s,
                          started_at=time.time())  # fmt: skip
    spec = SupervisorSpec(
        record=record, state_path=_state_file(settings), heartbeat_path=_heartbeat_file(settings), lock_path=_lock_file(settings),
        command=python_command("-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)),
    )  # fmt: skip
    with open(workspace / "prefect-server.log", "ab") as log:
        proc = subprocess.Popen(python_command("-m", _SUPERVISOR, spec.model_dump_json()), stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True, cwd=helper_folder(settings), env={**os.environ, **wanted})  # fmt: skip
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


def _record_of(pid: int) -> ServerRecord | None:
    """The supervisor's record of server ``pid``, found through the state file its environment names."""
    try:
        pairs = Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return None
    state = next((p.split("=", 1)[1] for p in pairs if p.startswith(f"{STATE_ENV}=")), None)
    record = read_record(Path(state)) if state else None
    return record if record is not None and record.server_pid == pid else None


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def idle_stop_note(pid: int) -> str:
    """Whether server ``pid`` stops when idle, and what keeps it up where its last idle check said."""
    record = _record_of(pid)
    if record is None:
        supervised = supervisor_of(pid) is not None
        return "unknown (its record is not readable)" if supervised else "never (started without a supervisor)"
    if record.idle_stop_s <= 0:
        return "never (EVOSKILL_PREFECT_SERVER_IDLE_STOP_S=0)"
    note = f"after {_duration(record.idle_stop_s)} idle"
    return f"{note}; kept up by {record.kept_for}" if record.kept_for else note


def last_record(settings: Settings) -> ServerRecord | None:
    """This workspace's server as its supervisor last recorded it (``None``: never supervised)."""
    return read_record(_state_file(settings))


@contextmanager
def _held(settings: Settings) -> Iterator[None]:
    """Touch the server's heartbeat while a command holds it, so that it is not stopped as idle under the command."""
    idle = settings.prefect_server_idle_stop_s
    if idle <= 0:
        yield
        return
    done = threading.Event()
    heartbeat = _heartbeat_file(settings)

    def beat() -> None:
        while not done.wait(min(60.0, max(0.25, idle / 4))):
            touch(heartbeat)

    thread = threading.Thread(target=beat, name="prefect-server-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


@contextmanager
def prefect_runtime(settings: Settings) -> Iterator[str]:
    """Run flows against the configured API with heartbeats off (each costs ~1 s per flow run).

    Against the local or ephemeral server, whose database is SQLite, the client retries an answer "503, database is
    locked" seven times (about four minutes of backoff at most) rather than Prefect's five (one minute): many solves at
    once lock it for longer than that. ``PREFECT_CLIENT_MAX_RETRIES`` in the environment wins.
    """
    updates: dict[Any, Any] = {PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}
    where = "ephemeral"
    held: AbstractContextManager[None] = nullcontext()
    os.environ.update({**_quiet_env(), **os.environ})  # an ephemeral server is a child process started from this environment
    safe_path_for_children()  # and from this folder, as python -m uvicorn: not importing from it
    if os.environ.get("PREFECT_API_URL"):
        where = os.environ["PREFECT_API_URL"]
    else:  # evoskill's own server, local or ephemeral: SQLite behind it
        if "PREFECT_CLIENT_MAX_RETRIES" not in os.environ:
            updates[PREFECT_CLIENT_MAX_RETRIES] = SQLITE_CLIENT_RETRIES
        if settings.prefect_api == "local-server":
            where = ensure_local_server(settings)
            updates[PREFECT_API_URL] = where
            held = _held(settings)
    with held, temporary_settings(updates=updates), tags(owner_tag()):  # its flow runs name this process (run_owners.py)
        yield where
