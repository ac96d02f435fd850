"""The workspace's resident service: the CLI's commands run here, in one process that stays warm between them.

It keeps what every command would otherwise pay for at start: evoskill's and the packages' imports, the Prefect
client, the store, the retrieval index, the warm executors. The CLI (``client.py``) sends it a parsed command line
and relays what the command prints; commands from several clients run at once, each in its own thread.

Protocol, one JSON object per line. The client sends ``{"argv": [...], "inputs": [...], "tty": {"stdin": b, "stdout": b, "stderr": b}}`` (``inputs``: a
solve's ``--input`` paths made absolute);
the service answers ``{"out": text}`` / ``{"err": text}`` as the command prints, ``{"read": true}`` when the command
reads a line of its stdin (the client answers ``{"line": text}``), and ``{"exit": code}`` at the end, then closes the
connection. A client that closes its side (Ctrl-C; or a client that half-closes after its request) cancels its command: its sandbox runs are killed, its LLM calls refused, and its flow run ends
Cancelled (``deployments/cancel.py``). The service stops after ``EVOSKILL_SERVICE_IDLE_STOP_S`` without a command,
on SIGTERM, and when its socket is taken away.

    python -m flows.interfaces.service --socket PATH --record PATH
"""

from __future__ import annotations

import argparse
import contextvars
import io
import json
import logging
import os
import queue
import signal
import socket
import socketserver
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from deployments.settings import Settings
from flows.interfaces.service.place import ServiceRecord

__all__ = ["serve", "RoutedStream", "main"]

_log = logging.getLogger("flows.service")
_channel: contextvars.ContextVar[_Call | None] = contextvars.ContextVar("evoskill_service_call", default=None)
_IDLE_POLL_S = 1.0


class RoutedStream(io.TextIOBase):
    """``sys.stdout``/``sys.stderr``/``sys.stdin`` of the service: each command's reads and writes go to its own client
    (context-local, so threads that run in a copy of the command's context, as Prefect's task runners do, reach it too);
    outside a command, to the process's own stream."""

    def __init__(self, name: str, own: Any) -> None:
        self.name, self.own = name, own

    def write(self, text: str) -> int:
        call = _channel.get()
        if call is None:
            return self.own.write(text)
        call.send({"out" if self.name == "stdout" else "err": text})
        return len(text)

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        call = _channel.get()
        return self.own.readline() if call is None else call.read_line()

    def isatty(self) -> bool:
        call = _channel.get()
        return self.own.isatty() if call is None else bool(call.tty.get(self.name))

    def flush(self) -> None:
        if _channel.get() is None:
            self.own.flush()

    def fileno(self) -> int:  # child processes inherit the service's own streams
        return int(self.own.fileno())

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    def writable(self) -> bool:
        return self.name != "stdin"

    def readable(self) -> bool:
        return self.name == "stdin"


class _Call:
    """One client's command: what it prints goes to the client; the client leaving sets ``cancel``."""

    def __init__(self, conn: socket.socket, tty: dict[str, bool]) -> None:
        self.conn, self.tty = conn, tty
        self.cancel = threading.Event()
        self.lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        if self.cancel.is_set():
            return
        data = (json.dumps(message) + "\n").encode()
        with self._lock:
            try:
                self.conn.sendall(data)
            except OSError:
                self.cancel.set()  # the client has gone

    def read_line(self) -> str:
        self.send({"read": True})
        line = self.lines.get()
        return "" if line is None else line

    def listen(self, reader: io.BufferedReader) -> None:
        """Read the client's replies until it goes away; then cancel the command."""
        try:
            for raw in reader:
                message = json.loads(raw)
                if "line" in message:
                    self.lines.put(str(message["line"]))
        except (OSError, ValueError):
            pass
        self.cancel.set()
        self.lines.put(None)


class _Activity:
    """How many commands run, and since when none has."""

    def __init__(self) -> None:
        self.running, self.since = 0, time.monotonic()
        self._lock = threading.Lock()

    @contextmanager
    def command(self) -> Iterator[None]:
        with self._lock:
            self.running += 1
        try:
            yield
        finally:
            with self._lock:
                self.running -= 1
                self.since = time.monotonic()

    def idle_for(self) -> float:
        with self._lock:
            return 0.0 if self.running else time.monotonic() - self.since


def _run_command(payload: dict[str, Any]) -> int:
    """Run one parsed command line as the CLI would in its own process: only those the CLI sends here, parsed again by
    the CLI's own parser (a client cannot hand it options the command line would refuse)."""
    from flows.interfaces.cli.main import build_parser, goes_to_service, run_command

    argv = payload.get("argv")
    if not isinstance(argv, list) or not all(isinstance(word, str) for word in argv):
        print("evoskill service: a malformed request", file=sys.stderr)
        return 2
    try:
        args = build_parser(argv[0] if argv else "").parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    if not goes_to_service(args):
        print(f"evoskill service: {' '.join(argv[:2])} runs in its own process, not here", file=sys.stderr)
        return 2
    if args.command == "solve":  # the --input paths as the client's folder reads them
        inputs = payload.get("inputs")
        if not isinstance(inputs, list) or len(inputs) != len(args.input) or not all(isinstance(p, str) and Path(p).is_absolute() for p in inputs):
            print("evoskill service: a malformed request", file=sys.stderr)
            return 2
        args.input = inputs
    return run_command(args)


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        raw = self.rfile.readline()
        if not raw:  # a door that only made sure the service is up
            return
        try:
            payload = json.loads(raw)
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            self.wfile.write(b'{"err": "evoskill service: a malformed request\\n"}\n{"exit": 2}\n')
            return
        tty = payload.get("tty")
        call = _Call(self.connection, {str(k): bool(v) for k, v in tty.items()} if isinstance(tty, dict) else {})
        threading.Thread(target=call.listen, args=(self.rfile,), name="service-client", daemon=True).start()
        from deployments.cancel import cancellable

        with self.server.activity.command():
            token = _channel.set(call)
            try:
                with cancellable(call.cancel):
                    code = _run_command(payload)
            except Exception:  # noqa: BLE001 - the command's own handlers print its errors; this is the last resort
                _log.exception("a command failed in the service")
                call.send({"err": "evoskill: the command failed in the workspace service (see its log)\n"})
                code = 1
            finally:
                _channel.reset(token)
            call.send({"exit": code})
        try:  # the command is over: end the connection (and the thread that reads the client's replies)
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    activity: _Activity


def serve(socket_path: Path, record_path: Path, idle_stop_s: float, workspace: str, settings: Settings | None = None) -> None:
    """Serve commands on ``socket_path`` until idle for ``idle_stop_s`` (0: never), SIGTERM, or the socket is removed.
    With ``settings``, the Prefect server and the warm executor are made ready meanwhile (``flows/readiness.py``)."""
    import flows.interfaces.cli.main  # noqa: F401 - what every command imports, before the socket opens
    from flows.readiness import get_ready

    if settings is not None:
        threading.Thread(target=get_ready, args=(settings,), name="service-readiness", daemon=True).start()
    socket_path.unlink(missing_ok=True)
    server = _Server(str(socket_path), _Handler)
    os.chmod(socket_path, 0o600)
    server.activity = _Activity()
    record = ServiceRecord(
        pid=os.getpid(), key=socket_path.stem, workspace=workspace, socket=str(socket_path), started_at=time.time(), idle_stop_s=idle_stop_s
    )
    record_path.write_text(json.dumps(asdict(record)))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, name="service", daemon=True)
    thread.start()
    why = "stopped"
    while not stop.wait(_IDLE_POLL_S):
        if idle_stop_s > 0 and server.activity.idle_for() >= idle_stop_s:
            why = f"idle for {idle_stop_s:.0f} s"
            break
        if not socket_path.exists():
            why = "its socket was removed"
            break
    server.shutdown()
    server.server_close()
    for path in (socket_path, record_path):
        try:
            if path.exists() and (path != record_path or json.loads(path.read_text()).get("pid") == os.getpid()):
                path.unlink()
        except (OSError, ValueError):
            pass
    _remove_lock(socket_path.with_suffix(".lock"))
    _log.info("evoskill service %s ended: %s", socket_path.stem, why)


def _remove_lock(path: Path) -> None:
    """Remove the start lock where no client holds it (one waiting to start a service keeps it)."""
    from deployments.files import LockHeld, file_lock

    try:
        with file_lock(path, wait=False):
            path.unlink()
    except (LockHeld, OSError):
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m flows.interfaces.service", description="The workspace's resident evoskill service.")
    parser.add_argument("--socket", required=True, type=Path)
    parser.add_argument("--record", required=True, type=Path)
    args = parser.parse_args(argv)
    from deployments.settings import get_settings
    from flows.interfaces.cli.terminal import quiet_terminal

    settings = get_settings()
    sys.stdout = RoutedStream("stdout", sys.stdout)
    sys.stderr = RoutedStream("stderr", sys.stderr)
    sys.stdin = RoutedStream("stdin", sys.stdin)
    quiet_terminal()
    serve(args.socket, args.record, settings.service_idle_stop_s, str(settings.workspace.resolve()), settings)
    return 0
