"""Which process runs a flow run, so that a run whose process died without a word is not left Running for ever.

Every flow run evoskill starts (``prefect_runtime``) carries a tag naming its process: ``evoskill-process:HOST:MACHINE:PID:START``
(the host's name; this boot and pid namespace, as a pid means one process only within both; the pid; and the
process's start time in clock ticks since boot, so a pid used again is not taken for it). A process killed with SIGKILL, or a machine that lost power, reports nothing: its runs stay Running in the UI, and
a Running run keeps the local Prefect server from stopping when idle. ``crash_orphaned_runs`` finds the Running runs
whose process on this host has ended and sets them **Crashed**, saying so; the supervisor of the local server does
it at each idle check, and a door does it as it gets ready (after a crash, the next command starts a new service).
A run of another host, boot or pid namespace (a container with the same host name), or without the tag, is never
touched.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import urllib.request
from pathlib import Path
from typing import Any

__all__ = ["owner_tag", "owner_ended", "crash_orphaned_runs"]

log = logging.getLogger(__name__)
_PREFIX = "evoskill-process:"
_ACTIVE = ["RUNNING", "PENDING", "CANCELLING"]
_TIMEOUT_S = 10.0
_LIMIT = 200


def _start_time(pid: int) -> str | None:
    """The process's start time (clock ticks after boot, ``/proc/PID/stat`` field 22), or None where it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 and fields[0] != "Z" else None


def _machine() -> str:
    """This boot of this kernel and this process's pid namespace: a pid names one process only within both (a
    container on the same host name counts its pids apart; a reboot counts them again)."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip().replace("-", "")[:12]
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return ""
    return f"{boot}.{namespace}"


def owner_tag(pid: int | None = None) -> str:
    """The tag naming this process (or ``pid``) as the runner of the flow runs it starts: ``evoskill-process:HOST:MACHINE:
    PID:START`` (MACHINE and START empty where ``/proc`` does not tell them: such a tag is never judged)."""
    pid = os.getpid() if pid is None else pid
    return f"{_PREFIX}{socket.gethostname()}:{_machine()}:{pid}:{_start_time(pid) or ''}"


def owner_ended(tags: list[str]) -> int | None:
    """The pid of the ended process that ``tags`` name as a run's runner; None where the run has no such tag, its runner
    is of another host, boot or pid namespace, the tag does not say when it started, or it still runs (the same pid
    with the same start time)."""
    machine = _machine()
    for tag in tags:
        if not tag.startswith(_PREFIX):
            continue
        parts = tag[len(_PREFIX) :].rsplit(":", 3)
        if len(parts) != 4 or not parts[2].isdigit() or not parts[3] or not machine:
            return None
        host, where, pid, started = parts[0], parts[1], int(parts[2]), parts[3]
        if host != socket.gethostname() or where != machine:
            return None
        return None if _start_time(pid) == started else pid
    return None


def _post(api: str, path: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        f"{api.rstrip('/')}/{path}", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=_TIMEOUT_S) as reply:
        text = reply.read()
    return json.loads(text) if text else None


def crash_orphaned_runs(api: str) -> list[str]:
    """Set Crashed every flow run of the Prefect API at ``api`` (``http://127.0.0.1:PORT/api``) that is still Running,
    Pending or Cancelling while the process of this host that ran it has ended; the names of those runs. Raises
    ``OSError`` or ``ValueError`` where the API does not answer as expected."""
    runs = _post(api, "flow_runs/filter", {"flow_runs": {"state": {"type": {"any_": _ACTIVE}}}, "limit": _LIMIT})
    if not isinstance(runs, list):
        raise ValueError("the API answered something other than a list of flow runs")
    crashed = []
    for run in runs:
        pid = owner_ended([str(t) for t in run.get("tags") or []]) if isinstance(run, dict) and "id" in run else None
        if pid is None:
            continue
        message = f"its evoskill process (pid {pid}) ended without saying how the run ended (killed, or the machine stopped)"
        state = {"type": "CRASHED", "name": "Crashed", "message": message}
        try:
            _post(api, f"flow_runs/{run['id']}/set_state", {"state": state, "force": True})
        except (OSError, ValueError) as exc:  # a run deleted meanwhile: the others are still checked
            log.info("could not set flow run %s Crashed: %s", run.get("name"), exc)
            continue
        crashed.append(str(run.get("name")))
    return crashed
