"""The embedded LLM server's supervisor: runs the server as its child and records how it ended.

``ensure_server`` (``deployments/llm/server.py``) starts ``python -m deployments.llm.supervisor supervise SPEC``
detached, in its own session. The supervisor starts the server command as its child (by default
``python -m deployments.llm.supervisor llama PORT SETTINGS``: llama-cpp-python's app behind a small
middleware), records it in ``<workspace>/llm-server.json`` and in a machine-wide registry, then
sleeps until the first of:

- the child exits on its own: ``crashed``, with its signal or exit code (also noted in its log);
- SIGTERM or SIGINT (``evoskill llm stop``): the child is terminated, ``stopped`` (reason ``stop``);
- no request for ``idle_stop_s`` seconds: the child is terminated, ``stopped`` (reason ``idle``).

Why a parent and a child: a crash in llama.cpp's native code (a segfault) ends the process it
happens in, so the process that records it must be another one. Why a heartbeat file for
activity: the server sees every request, whoever sends it, so its middleware writes the number of
requests in flight to the file as each one starts and ends; health probes (``GET /v1/models``)
do not count, and ``ensure_server`` touches the file when it hands the server out. The supervisor
reads the file's mtime only when its idle deadline comes up. It never polls: it blocks in
``select`` on a pipe that ``signal.set_wakeup_fd`` writes to on SIGCHLD, SIGTERM and SIGINT.

Only the server the state file names (same ``id``) may rewrite it, so a supervisor that ends late
never overwrites its successor's record. The registry (``$XDG_STATE_HOME/evoskill/llm-servers``,
else ``~/.local/state/...``) holds one file per workspace naming its state file; whoever lists it
drops entries whose server has ended.
"""

from __future__ import annotations

import hashlib
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from deployments.files import file_lock, write_atomic
from deployments.supervision import command_line, die_with_parent, process_alive, stop_asked, terminate, wakeup_pipe

__all__ = [
    "HEARTBEAT_ENV",
    "ServerState",
    "SupervisorSpec",
    "read_state",
    "write_owned",
    "is_live",
    "is_supervisor",
    "command_line",
    "process_alive",
    "idle_for",
    "registered_states",
    "registry_dir",
]

HEARTBEAT_ENV = "EVOSKILL_LLM_HEARTBEAT_FILE"
_TERMINATE_GRACE_S = 10.0


class ServerState(BaseModel):
    """One embedded server, as recorded in ``<workspace>/llm-server.json``."""

    id: str
    workspace: str
    pid: int = 0  # the supervisor; the server runs in its process group
    server_pid: int | None = None
    port: int
    model: str
    model_path: str
    log_path: str
    heartbeat_path: str
    status: Literal["running", "crashed", "stopped"] = "running"
    started_at: float
    ended_at: float | None = None
    exit_code: int | None = None
    signal: int | None = None
    reason: Literal["stop", "idle"] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


class SupervisorSpec(BaseModel):
    """What ``ensure_server`` hands the supervisor (one JSON argument)."""

    state: ServerState
    state_path: Path
    command: list[str]
    idle_stop_s: float


# --- records -------------------------------------------------------------------------


def _supervised_id(pid: int) -> str | None:
    """The record id in the spec of the supervisor running as ``pid``; ``None`` when ``pid`` is no supervisor."""
    argv = command_line(pid)
    if not argv or "deployments.llm.supervisor" not in argv or "supervise" not in argv[:-1]:
        return None
    try:
        return SupervisorSpec.model_validate_json(argv[argv.index("supervise") + 1]).state.id
    except ValueError:
        return None


def is_supervisor(state: ServerState) -> bool:
    """Whether ``state.pid`` is still this record's supervisor: its command line holds the record's id.

    A bare pid is not enough: after the supervisor is killed (out of memory, ``docker stop``) and the
    machine or container restarts, the pid may belong to an unrelated process, or another user's.
    """
    return state.pid > 0 and _supervised_id(state.pid) == state.id and process_alive(state.pid)


def is_live(state: ServerState) -> bool:
    """Whether the record says running and its supervisor still exists."""
    return state.status == "running" and is_supervisor(state)


def read_state(path: Path) -> ServerState | None:
    """The state recorded at ``path``, or ``None`` (absent, or not a state this version wrote)."""
    try:
        return ServerState.model_validate_json(path.read_text())
    except (OSError, ValueError):
        return None


def _record_lock(state_path: Path) -> Path:
    return state_path.with_name(state_path.name + ".lock")


def write_owned(state_path: Path, state: ServerState, claim: bool = False) -> bool:
    """Write ``state`` if the file records the same server, or unconditionally when ``claim``; say whether written."""
    with file_lock(_record_lock(state_path)):
        current = read_state(state_path)
        if not claim and (current is None or current.id != state.id):
            return False
        write_atomic(state_path, state.model_dump_json(indent=1))
        if claim:
            _register(state_path)
        return True


def _heartbeat(state: ServerState) -> tuple[bool, float] | None:
    """Whether a request is in flight, and seconds since the heartbeat file last changed; ``None``: no file."""
    path = Path(state.heartbeat_path)
    try:
        return path.read_text().strip() not in ("", "0"), max(0.0, time.time() - path.stat().st_mtime)
    except OSError:
        return None


def idle_for(state: ServerState) -> float | None:
    """Seconds since the server's last request (or hand-out); 0 while one is in flight, ``None`` when unknown."""
    beat = _heartbeat(state)
    if beat is None:
        return None
    busy, since = beat
    return 0.0 if busy else since


def registry_dir() -> Path:
    """The machine-wide folder naming every workspace's state file."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "evoskill" / "llm-servers"


def _entry(state_path: Path) -> Path:
    key = hashlib.sha256(str(state_path).encode()).hexdigest()[:16]
    return registry_dir() / f"{key}.path"


def _register(state_path: Path) -> None:
    write_atomic(_entry(state_path), str(state_path))


def registered_states() -> list[ServerState]:
    """Every live server in the registry (entries of ended ones are dropped)."""
    found = []
    for entry in sorted(registry_dir().glob("*.path")):
        try:
            state_path = Path(entry.read_text().strip())
        except OSError:  # dropped meanwhile by another listing
            continue
        if not state_path.exists():
            entry.unlink(missing_ok=True)
            continue
        with file_lock(_record_lock(state_path)):
            state = read_state(state_path)
            if state is None or not is_live(state):
                entry.unlink(missing_ok=True)
                continue
        found.append(state)
    return found


# --- the supervisor -----------------------------------------------------------------------


def _start_child(spec: SupervisorSpec) -> subprocess.Popen[bytes]:
    env = {**os.environ, HEARTBEAT_ENV: spec.state.heartbeat_path}
    with open(spec.state.log_path, "ab") as log:
        return subprocess.Popen(
            spec.command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
            preexec_fn=die_with_parent,
        )  # fmt: skip


def _seconds_to_idle(spec: SupervisorSpec) -> float | None:
    """How long to sleep before the idle deadline can come; ``None``: never."""
    if spec.idle_stop_s <= 0:
        return None
    beat = _heartbeat(spec.state)
    if beat is None and not Path(spec.state.heartbeat_path).parent.is_dir():
        return 0.0  # its workspace was removed: nobody can use it again
    if beat is None or beat[0]:
        return max(1.0, min(spec.idle_stop_s, 60.0))
    return max(0.0, spec.idle_stop_s - beat[1])


def _wait(child: subprocess.Popen[bytes], spec: SupervisorSpec, wake_fd: int) -> Literal["exit", "stop", "idle"]:
    """Sleep until the child exits, a stop is asked for, or the server has been idle too long."""
    while True:
        if child.poll() is not None:
            return "exit"
        timeout = _seconds_to_idle(spec)
        if timeout == 0.0:
            return "idle"
        ready, _, _ = select.select([wake_fd], [], [], timeout)
        if ready and stop_asked(os.read(wake_fd, 512)):
            return "exit" if child.poll() is not None else "stop"  # a child that already ended crashed


def _ended(state: ServerState, how: Literal["exit", "stop", "idle"], code: int) -> ServerState:
    """The record of a server that exited with ``code`` (negative: by that signal)."""
    return state.model_copy(
        update={
            "status": "crashed" if how == "exit" else "stopped",
            "reason": None if how == "exit" else how,
            "exit_code": code if code >= 0 else None,
            "signal": -code if code < 0 else None,
            "ended_at": time.time(),
        }
    )


def _note(state: ServerState) -> None:
    """One line in the server's log saying how it ended."""
    if state.signal is not None:
        how = f"signal {state.signal} ({signal.Signals(state.signal).name})"
    else:
        how = f"exit code {state.exit_code}"
    what = f"{state.status} ({state.reason})" if state.reason else state.status
    with open(state.log_path, "a") as log:
        log.write(f"[evoskill supervisor] server pid {state.server_pid} {what}: {how}\n")


def supervise(spec: SupervisorSpec) -> None:
    """Run the server as a child, record it, and record how it ended."""
    wake_fd = wakeup_pipe()
    write_atomic(Path(spec.state.heartbeat_path), "0")
    child = _start_child(spec)
    spec.state = spec.state.model_copy(update={"pid": os.getpid(), "server_pid": child.pid})
    write_owned(spec.state_path, spec.state, claim=True)
    how = _wait(child, spec, wake_fd)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    ended = _ended(spec.state, how, terminate(child, _TERMINATE_GRACE_S))
    write_owned(spec.state_path, ended)
    _note(ended)


# --- the default child: llama-cpp-python's server with a heartbeat -----------------------------


class _Heartbeat:
    """ASGI middleware: writes the number of requests in flight to a file as each starts and ends."""

    def __init__(self, app: Any, path: Path):
        self.app = app
        self.path = path
        self.active = 0

    def _stamp(self, delta: int) -> None:
        self.active += delta
        write_atomic(self.path, str(self.active))

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"].rstrip("/").endswith("/models"):
            await self.app(scope, receive, send)
            return
        self._stamp(+1)
        try:
            await self.app(scope, receive, send)
        finally:
            self._stamp(-1)


def serve_llama(port: int, model_settings: dict[str, Any]) -> None:
    """Serve llama-cpp-python's OpenAI-compatible app on loopback, requests stamping the heartbeat file."""
    import uvicorn
    from llama_cpp.server.app import create_app
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    server = ServerSettings(host="127.0.0.1", port=port)
    app = create_app(server_settings=server, model_settings=[ModelSettings(**model_settings)])
    heartbeat = os.environ.get(HEARTBEAT_ENV)
    uvicorn.run(_Heartbeat(app, Path(heartbeat)) if heartbeat else app, host=server.host, port=port)


def main(argv: list[str]) -> None:
    """``supervise SPEC_JSON`` or ``llama PORT MODEL_SETTINGS_JSON``."""
    import json

    if argv[:1] == ["supervise"] and len(argv) == 2:
        supervise(SupervisorSpec.model_validate_json(argv[1]))
    elif argv[:1] == ["llama"] and len(argv) == 3:
        serve_llama(int(argv[1]), json.loads(argv[2]))
    else:
        sys.exit("usage: python -m deployments.llm.supervisor supervise SPEC_JSON | llama PORT MODEL_SETTINGS_JSON")


if __name__ == "__main__":
    main(sys.argv[1:])
