"""The CLI's side of the resident service: start it when it is not up, send it a command, relay what it prints.

Light on purpose (no Prefect, no pydantic models): a command that the service runs costs the client little more than
Python's own start. Where the service cannot start, ``run_in_service`` returns None and says why in one line; the
CLI then runs the command in its own process. The MCP server is a door over it too: it sends ``solve`` there with
``Streams.captured`` (the JSON answer kept, the progress lines told as they come) and cancels by closing the connection.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deployments.files import file_lock
from deployments.supervision import process_alive
from flows.interfaces.service.place import ServicePlace, UnsafeRuntimeDir, service_place

__all__ = ["run_in_service", "ServiceUnavailable", "Streams", "connect", "start_service", "service_solves"]

_POLL_S = 0.05


class ServiceUnavailable(RuntimeError):
    """The workspace's service is not running and could not be started."""


def _open(place: ServicePlace) -> socket.socket | None:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(str(place.socket))
    except OSError:
        conn.close()
        return None
    return conn


def _start(place: ServicePlace, log: Path, timeout_s: float) -> socket.socket:
    """Start the service (once, under its lock: a second client waits for the first's) and connect to it."""
    with file_lock(place.lock):
        conn = _open(place)
        if conn is not None:
            return conn
        log.parent.mkdir(parents=True, exist_ok=True)
        print("evoskill: starting this workspace's service (kept warm for the next commands; it stops when idle)", file=sys.stderr, flush=True)
        with open(log, "ab") as out:
            child = subprocess.Popen(
                [sys.executable, "-m", "flows.interfaces.service", "--socket", str(place.socket), "--record", str(place.record)],
                stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True, close_fds=True,
            )  # fmt: skip
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if child.poll() is not None:
                raise ServiceUnavailable(f"it exited with code {child.returncode} (log: {log})")
            conn = _open(place)
            if conn is not None:
                return conn
            time.sleep(_POLL_S)
        child.terminate()
        raise ServiceUnavailable(f"it did not start within {timeout_s:.0f} s (log: {log})")


def connect(workspace: Path, log: Path, timeout_s: float) -> socket.socket:
    """A connection to the workspace's service, started if needed."""
    try:
        place = service_place(workspace)
    except (OSError, UnsafeRuntimeDir) as exc:
        raise ServiceUnavailable(str(exc)) from exc
    return _open(place) or _start(place, log, timeout_s)


def service_solves(settings: Any) -> bool:  # Settings: this module imports no pydantic
    """Whether a door (the chat, the MCP server) sends ``solve`` to the service: the service is on and the store is one
    the service can open too (an in-memory store is this process's alone)."""
    return bool(settings.service) and settings.store != "memory"


def start_service(workspace: Path, log: Path, timeout_s: float) -> str | None:
    """Start the workspace's service (where it is not up) so that a door's first command finds it warm; why it could not, or None."""
    try:
        connect(workspace, log, timeout_s).close()  # a connection that asks nothing: the service just closes it
    except ServiceUnavailable as exc:
        return str(exc)
    return None


@dataclass
class Streams:
    """Where a command's output goes and its input comes from: this process's terminal, or a door's own (``captured``)."""

    out: Callable[[str], Any]
    err: Callable[[str], Any]
    read_line: Callable[[], str]
    tty: dict[str, bool]

    @classmethod
    def terminal(cls) -> Streams:
        def write(stream: Any) -> Callable[[str], None]:
            def to(text: str) -> None:
                stream.write(text)
                stream.flush()

            return to

        tty = {name: bool(getattr(stream, "isatty", lambda: False)()) for name, stream in (("stdin", sys.stdin), ("stdout", sys.stdout), ("stderr", sys.stderr))}
        return cls(write(sys.stdout), write(sys.stderr), sys.stdin.readline, tty)

    @classmethod
    def captured(cls, out: list[str], err_line: Callable[[str], Any]) -> Streams:
        """stdout kept in ``out``; stderr told to ``err_line`` a line at a time; no input, no terminal."""
        pending = [""]

        def err(text: str) -> None:
            *lines, pending[0] = (pending[0] + text).split("\n")
            for line in lines:
                err_line(line)

        return cls(out.append, err, lambda: "", {"stdin": False, "stdout": False, "stderr": False})


def run_in_service(
    argv: list[str], inputs: list[str], workspace: Path, log: Path, timeout_s: float, streams: Streams | None = None,
    cancel: threading.Event | None = None,
) -> int | None:  # fmt: skip
    """Run the command line ``argv`` in the workspace's service and relay its output (``inputs``: a solve's ``--input``
    paths, absolute); its exit code, or None where the service could not be reached (one line says why; the caller runs
    the command itself). Ctrl-C, or setting ``cancel``, cancels the command there. A service that went away before it
    answered (it stopped when idle just then) is started again, once. ``streams``: this terminal's, unless given."""
    streams = streams or Streams.terminal()
    request = (json.dumps({"argv": argv, "inputs": inputs, "tty": streams.tty}) + "\n").encode()
    for attempt in (1, 2):
        try:
            conn = connect(workspace, log, timeout_s)
        except ServiceUnavailable as exc:
            streams.err(f"evoskill: running in this process: the workspace service did not start: {exc}\n")
            return None
        heard = False
        try:
            with conn, _closed_on(cancel, conn):
                conn.sendall(request)
                for raw in conn.makefile("rb"):
                    heard = True
                    code = _relay(json.loads(raw), conn, streams)
                    if code is not None:
                        return code
        except (OSError, ValueError) as exc:  # ValueError: a message cut short (the service died while it wrote)
            if cancel is not None and cancel.is_set():
                return 130
            if heard or attempt == 2:
                streams.err(f"evoskill: the workspace service went away during the command ({exc}; its log: {log})\n")
                return 1
            continue
        if cancel is not None and cancel.is_set():
            return 130
        if heard:
            break
    streams.err(f"evoskill: the workspace service stopped before the command ended (it was killed, or it failed: its log is {log}); "
                "the next command starts it again\n")  # fmt: skip
    return 1


@contextmanager
def _closed_on(cancel: threading.Event | None, conn: socket.socket) -> Iterator[None]:
    """While the block runs, setting ``cancel`` closes ``conn``'s sending side: the service cancels the command it runs
    for it, and ends the connection once that command has stopped (the block reads until then)."""
    if cancel is None:
        yield
        return
    done = threading.Event()

    def watch() -> None:
        while not done.wait(_POLL_S):
            if cancel.is_set():
                try:
                    conn.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                return

    watcher = threading.Thread(target=watch, name="service-cancel", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()


def _relay(message: dict[str, Any], conn: socket.socket, streams: Streams) -> int | None:
    """Pass one message of the service's on; its exit code when it is the last."""
    if "out" in message:
        streams.out(message["out"])
    elif "err" in message:
        streams.err(message["err"])
    elif "read" in message:
        conn.sendall((json.dumps({"line": streams.read_line()}) + "\n").encode())
    elif "exit" in message:
        return int(message["exit"])
    return None


def stop_service(pid: int, grace_s: float = 10.0) -> bool:
    """Stop a service by its pid (SIGTERM); whether it is gone within ``grace_s``."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return True
    deadline = time.monotonic() + grace_s
    while process_alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL_S)
    return True
