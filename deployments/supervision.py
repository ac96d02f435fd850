"""What evoskill's supervisors share: a server run as a child, slept on without polling, and ended cleanly.

A supervisor (``deployments/llm/supervisor.py``, ``deployments/prefect_supervisor.py``) starts its server as a child
that dies with it (``die_with_parent``), and sleeps in ``select`` on ``wakeup_pipe``: SIGCHLD and the stop signals wake
it, so it never polls. ``terminate`` ends the child (SIGTERM, then SIGKILL after a grace); ``process_alive`` and
``command_line`` read ``/proc`` to say whether a recorded pid is still the process it was.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from pathlib import Path

__all__ = ["STOP_SIGNALS", "command_line", "die_with_parent", "process_alive", "stop_asked", "terminate", "wakeup_pipe"]

STOP_SIGNALS = frozenset({signal.SIGTERM, signal.SIGINT})


def process_alive(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie, ended but not yet reaped, has)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no procfs: trust kill()
    return stat[stat.rfind(")") + 2] != "Z"


def command_line(pid: int) -> list[str] | None:
    """The arguments process ``pid`` was started with (``None``: gone, not readable, or no procfs)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # PermissionError included: not ours to judge, so not ours
        return None
    return raw.decode(errors="replace").split("\0")[:-1] if raw else None


def wakeup_pipe() -> int:
    """A pipe that wakes ``select`` on SIGCHLD, SIGTERM and SIGINT; returns its read end."""
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    signal.set_wakeup_fd(write_fd)
    for sig in (signal.SIGCHLD, *STOP_SIGNALS):
        signal.signal(sig, lambda *_: None)
    return read_fd


def stop_asked(woken: bytes) -> bool:
    """Whether the signal numbers read from the wakeup pipe hold a stop signal."""
    return bool(set(woken) & {int(s) for s in STOP_SIGNALS})


def die_with_parent() -> None:
    """In the child (``preexec_fn``): be killed when the supervisor dies, however it dies (Linux)."""
    if sys.platform == "linux":
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def terminate(child: subprocess.Popen[bytes], grace_s: float = 10.0) -> int:
    """End ``child`` (SIGTERM, SIGKILL after ``grace_s``) unless it has ended; its exit code (negative: by that signal)."""
    if child.poll() is None:
        child.terminate()
        try:
            child.wait(grace_s)
        except subprocess.TimeoutExpired:
            child.kill()
    return child.wait()
