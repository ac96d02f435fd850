"""The local Prefect server's supervisor: runs ``prefect server start`` as its child and stops it when idle.

``ensure_local_server`` (``deployments/prefect_server.py``) starts ``python -m deployments.prefect_supervisor SPEC``
detached, in its own session, with the server's environment. The supervisor starts the server as its child, records it
in ``<workspace>/prefect/server.json`` and sleeps (``select`` on a wakeup pipe, ``deployments/supervision.py``) until:

- the server exits on its own: ``crashed`` with its exit code or signal (``stopped`` when it exited cleanly, or on
  SIGTERM or SIGINT sent to it by someone else);
- SIGTERM or SIGINT: the server is terminated, ``stopped`` (reason ``stop``);
- its idle deadline: ``idle_stop_s`` after the later of the heartbeat file's mtime and the last check that kept it up.

At the deadline it asks the server (``idle_evidence``): flow runs not final (Running, Pending, Paused, Cancelling),
Scheduled runs expected within an idle period either side of now, and deployments with an active schedule. Any of
them keeps it up for another period, the reason recorded (``kept_for``, shown by ``evoskill status``); none stops it
(``stopped``, reason ``idle``). An API that does not answer at two deadlines in a row stops it too (``unresponsive``).
The heartbeat (``<workspace>/prefect/heartbeat``) is touched by every ``ensure_local_server`` and, while a command holds
the server, by that command (``prefect_runtime``). The check runs holding ``<workspace>/prefect/server.lock`` without
waiting for it: a command holding it is finding or starting the server right now, so it is in use, and a command that
takes it after a stop finds the server gone and starts it again.

Only the supervisor the state file names (same ``id``) rewrites it, so one that ends late never overwrites its
successor's record. Nothing is printed to a terminal: the supervisor's lines go to the server's log.
"""

from __future__ import annotations

import json
import logging
import os
import select
import signal
import subprocess
import sys
import time
import urllib.request
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, TypeAdapter

from deployments.files import LockHeld, file_lock, write_atomic
from deployments.run_owners import crash_orphaned_runs
from deployments.supervision import die_with_parent, stop_asked, terminate, wakeup_pipe

__all__ = [
    "STATE_ENV",
    "Evidence",
    "ServerRecord",
    "SupervisorSpec",
    "Verdict",
    "decide",
    "idle_evidence",
    "read_record",
    "touch",
]

STATE_ENV = "EVOSKILL_PREFECT_SERVER_STATE"  # in the server's environment: the state file naming it
ACTIVE_STATES = ("RUNNING", "PENDING", "PAUSED", "CANCELLING")
_SHOWN = 3  # runs named in a reason
_QUERY_TIMEOUT_S = 10.0
_TERMINATE_GRACE_S = 10.0

log = logging.getLogger("evoskill.prefect_supervisor")

How = Literal["exit", "stop", "idle", "unresponsive"]


class ServerRecord(BaseModel):
    """One supervised server, as recorded in ``<workspace>/prefect/server.json``."""

    id: str
    workspace: str
    port: int
    idle_stop_s: float
    pid: int = 0  # the supervisor
    server_pid: int | None = None
    status: Literal["running", "crashed", "stopped"] = "running"
    reason: Literal["stop", "idle", "unresponsive"] | None = None
    kept_for: str | None = None  # why the last idle check kept it up
    checked_at: float | None = None
    started_at: float
    ended_at: float | None = None
    exit_code: int | None = None
    signal: int | None = None


class SupervisorSpec(BaseModel):
    """What ``ensure_local_server`` hands the supervisor (one JSON argument)."""

    record: ServerRecord
    state_path: Path
    heartbeat_path: Path
    lock_path: Path
    command: list[str]


class Evidence(BaseModel):
    """What the server said at an idle deadline: the runs and deployments that keep it in use."""

    active_runs: list[str] = Field(default_factory=list)
    due_runs: list[str] = Field(default_factory=list)
    scheduled_deployments: list[str] = Field(default_factory=list)


class Verdict(BaseModel):
    """Stop the server (and why), or keep it (and why, where the server gave a reason)."""

    stop: bool
    reason: Literal["idle", "unresponsive"] | None = None
    kept_for: str | None = None


# --- deciding ----------------------------------------------------------------------------------


def _listed(names: list[str]) -> str:
    shown = ", ".join(names[:_SHOWN])
    return shown + (", ..." if len(names) > _SHOWN else "")


def decide(idle_stop_s: float, heartbeat_age: float | None, evidence: Evidence | None, unanswered_before: int = 0) -> Verdict:
    """Whether a server at its idle deadline stops.

    ``heartbeat_age``: seconds since a command last used it (``None``: no heartbeat file); ``evidence``: what its API
    said (``None``: it did not answer); ``unanswered_before``: how many checks in a row before this one it did not answer.
    """
    if idle_stop_s <= 0 or (heartbeat_age is not None and heartbeat_age < idle_stop_s):
        return Verdict(stop=False)
    if evidence is None:
        if unanswered_before >= 1:
            return Verdict(stop=True, reason="unresponsive")
        return Verdict(stop=False, kept_for="its API did not answer; asked again after another idle period")
    reasons = []
    if evidence.active_runs:
        reasons.append(f"flow runs in progress: {_listed(evidence.active_runs)}")
    if evidence.due_runs:
        reasons.append(f"flow runs scheduled now: {_listed(evidence.due_runs)}")
    if evidence.scheduled_deployments:
        reasons.append(f"scheduled deployments: {_listed(evidence.scheduled_deployments)}")
    return Verdict(stop=False, kept_for="; ".join(reasons)) if reasons else Verdict(stop=True, reason="idle")


class _Run(BaseModel):
    name: str
    state_name: str | None = None


class _Schedule(BaseModel):
    active: bool = True


class _Deployment(BaseModel):
    name: str
    paused: bool = False
    schedules: list[_Schedule] = Field(default_factory=list)


_RUNS = TypeAdapter(list[_Run])
_DEPLOYMENTS = TypeAdapter(list[_Deployment])


def _post(port: int, path: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/{path}", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=_QUERY_TIMEOUT_S) as reply:
        return json.loads(reply.read())


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, timezone.utc).isoformat()


def idle_evidence(port: int, idle_stop_s: float, now: float | None = None) -> Evidence | None:
    """Ask the server on ``port`` what keeps it in use (``None``: it did not answer, or not as expected)."""
    now = time.time() if now is None else now
    active = {"flow_runs": {"state": {"type": {"any_": list(ACTIVE_STATES)}}}, "limit": _SHOWN + 1}
    window = {"after_": _iso(now - idle_stop_s), "before_": _iso(now + idle_stop_s)}
    due = {"flow_runs": {"state": {"type": {"any_": ["SCHEDULED"]}}, "expected_start_time": window}, "limit": _SHOWN + 1}
    try:
        running = _RUNS.validate_python(_post(port, "flow_runs/filter", active))
        scheduled = _RUNS.validate_python(_post(port, "flow_runs/filter", due))
        deployments = _DEPLOYMENTS.validate_python(_post(port, "deployments/filter", {"deployments": {"paused": {"eq_": False}}}))
    except (OSError, ValueError) as exc:  # URLError, timeouts, a refused connection; JSON or validation errors
        log.warning("the server's API did not answer at the idle deadline: %s", exc)
        return None
    return Evidence(
        active_runs=[f"{run.name} ({run.state_name})" for run in running],
        due_runs=[run.name for run in scheduled],
        scheduled_deployments=sorted(d.name for d in deployments if not d.paused and any(s.active for s in d.schedules)),
    )


# --- records -----------------------------------------------------------------------------------


def touch(heartbeat: Path) -> None:
    """Mark the server as used now (the heartbeat file's mtime)."""
    try:
        os.utime(heartbeat)
    except FileNotFoundError:
        write_atomic(heartbeat, "")
    except OSError:
        pass


def _age(heartbeat: Path) -> float | None:
    try:
        return max(0.0, time.time() - heartbeat.stat().st_mtime)
    except OSError:
        return None


def read_record(path: Path) -> ServerRecord | None:
    """The record at ``path``, or ``None`` (absent, unreadable, or not one this version wrote)."""
    try:
        return ServerRecord.model_validate_json(path.read_text())
    except (OSError, ValueError):
        return None


def _write_owned(path: Path, record: ServerRecord, claim: bool = False) -> None:
    """Write ``record`` where the file records the same server, or unconditionally when ``claim``."""
    with file_lock(path.with_name(path.name + ".lock")):
        current = read_record(path)
        if claim or (current is not None and current.id == record.id):
            write_atomic(path, record.model_dump_json(indent=1))


def _ended(record: ServerRecord, how: How, code: int) -> ServerRecord:
    """The record of a server that exited with ``code`` (negative: by that signal)."""
    on_its_own = how == "exit"
    clean = code == 0 or -code in (signal.SIGTERM, signal.SIGINT)
    return record.model_copy(
        update={
            "status": "crashed" if on_its_own and not clean else "stopped",
            "reason": None if on_its_own else how,
            "exit_code": code if code >= 0 else None,
            "signal": -code if code < 0 else None,
            "ended_at": time.time(),
        }
    )


# --- the supervisor ------------------------------------------------------------------------------


def _seconds_left(spec: SupervisorSpec, kept_at: float) -> float | None:
    """Seconds until the idle deadline (``None``: never)."""
    idle = spec.record.idle_stop_s
    if idle <= 0:
        return None
    age = _age(spec.heartbeat_path)
    last_used = kept_at if age is None else max(kept_at, time.time() - age)
    return max(0.0, last_used + idle - time.time())


_ORPHAN_CHECK_S = 60.0
"""How often a supervisor checks that its workspace still records its server."""


def _orphaned(spec: SupervisorSpec) -> bool:
    """Whether nobody can reach this server through its workspace any more: the workspace's record is gone (the
    workspace was removed) or names another server (one started for the workspace after it was removed and made anew)."""
    if not spec.state_path.parent.is_dir():
        return True
    current = read_record(spec.state_path)
    return current is not None and current.id != spec.record.id


def _crash_orphans(port: int) -> None:
    """Set Crashed the runs whose process died without a word (``deployments/run_owners.py``): they keep it up no more."""
    try:
        crashed = crash_orphaned_runs(f"http://127.0.0.1:{port}/api")
    except Exception as exc:  # noqa: BLE001 - never the end of the supervisor: the idle check goes on
        log.warning("could not check for runs whose process ended: %s", exc)
        return
    if crashed:
        log.info("crashed (their process had ended): %s", _listed(crashed))


def _check(child: subprocess.Popen[bytes], spec: SupervisorSpec, unanswered: int) -> tuple[Verdict, int]:
    """At the idle deadline: the verdict, the server already ended where it stops (holding the lock, so that a command
    arriving meanwhile waits, then finds it gone and starts another); and how many checks in a row the API has not
    answered."""
    idle = spec.record.idle_stop_s
    try:
        with file_lock(spec.lock_path, wait=False):
            age = _age(spec.heartbeat_path)
            if age is None or age >= idle:
                _crash_orphans(spec.record.port)
            evidence = idle_evidence(spec.record.port, idle) if age is None or age >= idle else Evidence()
            verdict = decide(idle, _age(spec.heartbeat_path), evidence, unanswered)
            if verdict.stop:
                log.info("stopping the server (%s)", verdict.reason)
                terminate(child, _TERMINATE_GRACE_S)
    except LockHeld:
        return Verdict(stop=False), 0  # a command is finding or starting the server right now
    return verdict, unanswered + 1 if evidence is None else 0


def _watch(child: subprocess.Popen[bytes], spec: SupervisorSpec, wake_fd: int) -> How:
    """Sleep until the server exits, a stop is asked for, or it is idle at its deadline (then ended); say which."""
    record, kept_at, unanswered = spec.record, spec.record.started_at, 0
    while True:
        if child.poll() is not None:
            return "exit"
        if _orphaned(spec):
            log.info("stopping the server: its workspace was removed or records another server")
            terminate(child, _TERMINATE_GRACE_S)
            return "stop"
        timeout = _seconds_left(spec, kept_at)
        if timeout is None or timeout > 0:
            ready, _, _ = select.select([wake_fd], [], [], min(timeout, _ORPHAN_CHECK_S) if timeout is not None else _ORPHAN_CHECK_S)
            if ready and stop_asked(os.read(wake_fd, 512)):
                return "exit" if child.poll() is not None else "stop"  # a server that already ended did so on its own
            continue
        verdict, unanswered = _check(child, spec, unanswered)
        if verdict.stop and verdict.reason is not None:
            return verdict.reason
        kept_at = time.time()
        if verdict.kept_for != record.kept_for:
            log.info("kept up: %s", verdict.kept_for or "in use")
        record = record.model_copy(update={"kept_for": verdict.kept_for, "checked_at": kept_at})
        _write_owned(spec.state_path, record)


def supervise(spec: SupervisorSpec) -> None:
    """Run the server as a child, record it, stop it when idle, and record how it ended."""
    wake_fd = wakeup_pipe()
    touch(spec.heartbeat_path)  # a start is a use
    env = {**os.environ, STATE_ENV: str(spec.state_path)}
    # The server writes where the supervisor does: the workspace's prefect-server.log.
    child = subprocess.Popen(spec.command, stdin=subprocess.DEVNULL, env=env, preexec_fn=die_with_parent)
    spec.record = spec.record.model_copy(update={"pid": os.getpid(), "server_pid": child.pid})
    _write_owned(spec.state_path, spec.record, claim=True)
    how = _watch(child, spec, wake_fd)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    ended = _ended(spec.record, how, terminate(child, _TERMINATE_GRACE_S))
    _write_owned(spec.state_path, ended)
    what = f"{ended.status} ({ended.reason})" if ended.reason else ended.status
    how_text = f"signal {ended.signal}" if ended.signal is not None else f"exit code {ended.exit_code}"
    log.info("server pid %s %s: %s", ended.server_pid, what, how_text)


def main(argv: list[str]) -> None:
    """``python -m deployments.prefect_supervisor SPEC_JSON``."""
    if len(argv) != 1:
        sys.exit("usage: python -m deployments.prefect_supervisor SPEC_JSON")
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="[evoskill supervisor] %(asctime)s %(message)s")
    supervise(SupervisorSpec.model_validate_json(argv[0]))


if __name__ == "__main__":
    main(sys.argv[1:])
