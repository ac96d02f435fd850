"""The CLI's side of the resident service: start it when it is not up, send it a command, relay what it prints.

Light on purpose (no Prefect, no pydantic models): a command that the service runs costs the client little more than
Python's own start. Where the service cannot start, ``run_in_service`` returns None and says why in one line; the
CLI then runs the command in its own process.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from deployments.files import file_lock
from deployments.supervision import process_alive
from flows.interfaces.service.place import ServicePlace, UnsafeRuntimeDir, service_place

__all__ = ["run_in_service", "ServiceUnavailable", "connect"]

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


def _tty() -> dict[str, bool]:
    return {name: bool(getattr(stream, "isatty", lambda: False)()) for name, stream in (("stdin", sys.stdin), ("stdout", sys.stdout), ("stderr", sys.stderr))}


def run_in_service(argv: list[str], inputs: list[str], workspace: Path, log: Path, timeout_s: float) -> int | None:
    """Run the command line ``argv`` in the workspace's service and relay its output (``inputs``: a solve's ``--input``
    paths, absolute); its exit code, or None where the service could not be reached (one line says why; the caller runs
    the command itself). Ctrl-C cancels the command there. A service that went away before it answered (it stopped
    when idle just then) is started again, once."""
    request = (json.dumps({"argv": argv, "inputs": inputs, "tty": _tty()}) + "\n").encode()
    for attempt in (1, 2):
        try:
            conn = connect(workspace, log, timeout_s)
        except ServiceUnavailable as exc:
            print(f"evoskill: running in this process: the workspace service did not start: {exc}", file=sys.stderr)
            return None
        heard = False
        try:
            with conn:
                conn.sendall(request)
                for raw in conn.makefile("rb"):
                    heard = True
                    code = _relay(json.loads(raw), conn)
                    if code is not None:
                        return code
        except OSError as exc:
            if heard or attempt == 2:
                print(f"evoskill: the workspace service went away during the command ({exc}; its log: {log})", file=sys.stderr)
                return 1
            continue
        if heard:
            break
    print(f"evoskill: the workspace service ended the command without an answer (its log: {log})", file=sys.stderr)
    return 1


def _relay(message: dict[str, Any], conn: socket.socket) -> int | None:
    """Print one message of the service's; its exit code when it is the last."""
    if "out" in message:
        sys.stdout.write(message["out"])
        sys.stdout.flush()
    elif "err" in message:
        sys.stderr.write(message["err"])
        sys.stderr.flush()
    elif "read" in message:
        conn.sendall((json.dumps({"line": sys.stdin.readline()}) + "\n").encode())
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
