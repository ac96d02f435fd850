"""The local Prefect server stops when idle: its supervisor's decision from the server's own evidence, and a real server
that a command holding it, a Running flow run and a scheduled deployment keep up, and that stops once none is left."""

from __future__ import annotations

import json
import os
import signal
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from deployments import interpreter, prefect_server
from deployments.net import port_accepts
from deployments.prefect_server import ensure_local_server, idle_stop_note, last_record, prefect_runtime, workspace_servers
from deployments.prefect_supervisor import Evidence, ServerRecord, SupervisorSpec, _ended, _orphaned, decide
from deployments.settings import get_settings
from deployments.supervision import process_alive
from flows.interfaces.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
IDLE_S = 2.0


# --- the decision, from fake evidence -----------------------------------------------------------------------------------


def test_a_command_that_used_the_server_within_the_idle_period_keeps_it_without_asking_it():
    assert decide(IDLE_S, heartbeat_age=1.0, evidence=None).stop is False
    assert decide(0, heartbeat_age=None, evidence=Evidence()).stop is False  # 0: never stops


def test_a_server_with_nothing_in_progress_nor_scheduled_stops_as_idle():
    verdict = decide(IDLE_S, heartbeat_age=IDLE_S + 1, evidence=Evidence())
    assert (verdict.stop, verdict.reason) == (True, "idle")
    assert decide(IDLE_S, heartbeat_age=None, evidence=Evidence()).stop is True  # no heartbeat file: the server's word alone


@pytest.mark.parametrize(
    ("evidence", "kept_for"),
    [
        (Evidence(active_runs=["solve: N2 (Running)"]), "flow runs in progress: solve: N2 (Running)"),
        (Evidence(due_runs=["dancing-okapi"]), "flow runs scheduled now: dancing-okapi"),
        (Evidence(scheduled_deployments=["benchmark-nightly"]), "scheduled deployments: benchmark-nightly"),
        (Evidence(active_runs=list("abcd"), scheduled_deployments=["x"]), "flow runs in progress: a, b, c, ...; scheduled deployments: x"),
    ],
)
def test_runs_in_progress_or_due_and_scheduled_deployments_keep_it_up_with_the_reason(evidence, kept_for):
    verdict = decide(IDLE_S, heartbeat_age=IDLE_S * 10, evidence=evidence)
    assert (verdict.stop, verdict.kept_for) == (False, kept_for)


def test_an_api_that_does_not_answer_twice_in_a_row_stops_the_server():
    first = decide(IDLE_S, heartbeat_age=IDLE_S * 10, evidence=None, unanswered_before=0)
    assert first.stop is False and "did not answer" in (first.kept_for or "")
    assert decide(IDLE_S, heartbeat_age=IDLE_S * 10, evidence=None, unanswered_before=1).reason == "unresponsive"


def test_how_the_server_ended_is_recorded():
    record = ServerRecord(id="x", workspace="/w", port=1, idle_stop_s=IDLE_S, started_at=0.0)
    assert (_ended(record, "idle", -signal.SIGTERM).status, _ended(record, "idle", 0).reason) == ("stopped", "idle")
    assert (_ended(record, "stop", 0).status, _ended(record, "stop", 0).reason) == ("stopped", "stop")
    crashed = _ended(record, "exit", -signal.SIGSEGV)
    assert (crashed.status, crashed.signal, crashed.exit_code, crashed.reason) == ("crashed", signal.SIGSEGV, None, None)
    assert (_ended(record, "exit", 1).status, _ended(record, "exit", 1).exit_code) == ("crashed", 1)
    assert _ended(record, "exit", -signal.SIGTERM).status == "stopped"  # terminated by someone else: not a crash


def test_a_server_whose_workspace_was_removed_or_records_another_server_is_orphaned(tmp_path):
    state = tmp_path / "prefect" / "server.json"
    record = ServerRecord(id="mine", workspace=str(tmp_path), port=1, idle_stop_s=IDLE_S, started_at=0.0)
    spec = SupervisorSpec(record=record, state_path=state, heartbeat_path=state.with_name("heartbeat"), lock_path=state.with_name("server.lock"), command=["true"])
    state.parent.mkdir()
    state.write_text(record.model_dump_json())
    assert not _orphaned(spec)
    state.write_text(record.model_copy(update={"id": "another"}).model_dump_json())  # the workspace made anew, its own server
    assert _orphaned(spec)
    state.unlink()
    assert not _orphaned(spec)  # no record yet: not known to be anyone else's
    state.parent.rmdir()
    assert _orphaned(spec)  # the workspace removed


# --- a real server ------------------------------------------------------------------------------------------------------


@pytest.fixture
def helpers_from_this_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    """The supervisor and the server import this checkout's packages, however the tests import them (``-I`` would drop
    ``PYTHONPATH``; starting isolated is tested in ``test_prefect_server.py``)."""
    for module in (interpreter, prefect_server):
        monkeypatch.setattr(module, "isolation_flags", lambda: ["-P"])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))


def _until(condition: Callable[[], Any], seconds: float = 120.0) -> Any:
    """Wait for ``condition`` (a safety bound, not a timing under test)."""
    deadline = time.monotonic() + seconds
    while not (value := condition()):
        assert time.monotonic() < deadline, "the condition did not come"
        time.sleep(0.1)
    return value


def _api(url: str, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{url}/{path}", data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        text = reply.read()
    return json.loads(text) if text else None


def test_the_server_stays_up_while_used_and_stops_when_idle(workspace, helpers_from_this_checkout, monkeypatch, capsys):
    monkeypatch.setenv("EVOSKILL_PREFECT_API", "local-server")
    monkeypatch.setenv("EVOSKILL_PREFECT_SERVER_IDLE_STOP_S", str(IDLE_S))
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    settings = get_settings()
    heartbeat = settings.workspace.resolve() / "prefect" / "heartbeat"
    with prefect_runtime(settings) as url:
        record = last_record(settings)
        assert record is not None and record.status == "running" and process_alive(record.server_pid)
        assert [(pid, ws) for pid, _, ws in workspace_servers() if pid == record.server_pid] == [(record.server_pid, str(workspace.resolve()))]
        assert ensure_local_server(settings) == url and last_record(settings).id == record.id  # the supervised server is kept
        # A command holding the server keeps it up past its idle deadline: it touches the heartbeat.
        held_since, checked = heartbeat.stat().st_mtime, last_record(settings).checked_at
        _until(lambda: heartbeat.stat().st_mtime > held_since + IDLE_S + 1)
        assert last_record(settings).status == "running" and last_record(settings).checked_at == checked  # not even asked
        flow = _api(url, "POST", "flows/", {"name": "idle-test"})
        run = _api(url, "POST", "flow_runs/", {"flow_id": flow["id"], "name": "long-solve", "state": {"type": "RUNNING", "name": "Running"}})

    # The command is gone; the Running flow run keeps the server up, and says so.
    kept = _until(lambda: (r := last_record(settings)) and r.kept_for and "long-solve" in r.kept_for and r)
    assert kept.kept_for == "flow runs in progress: long-solve (Running)" and process_alive(kept.server_pid)
    assert idle_stop_note(kept.server_pid) == f"after {IDLE_S:.0f} s idle; kept up by flow runs in progress: long-solve (Running)"
    assert main(["status"]) == 0
    assert "stops when idle" in capsys.readouterr().out

    # A deployment with an active schedule keeps it up too.
    _api(url, "POST", f"flow_runs/{run['id']}/set_state", {"state": {"type": "COMPLETED", "name": "Completed"}, "force": True})
    deployment = _api(url, "POST", "deployments/", {"name": "nightly", "flow_id": flow["id"], "schedules": [{"schedule": {"interval": 86400}, "active": True}]})
    kept = _until(lambda: (r := last_record(settings)) and r.kept_for == "scheduled deployments: nightly" and r)
    assert process_alive(kept.server_pid)
    assert main(["status"]) == 0
    assert "kept up by scheduled deployments: nightly" in capsys.readouterr().out

    # Nothing left: it stops, and records why.
    _api(url, "PATCH", f"deployments/{deployment['id']}", {"paused": True})
    ended = _until(lambda: (r := last_record(settings)) and r.status != "running" and r)
    assert (ended.status, ended.reason) == ("stopped", "idle")
    _until(lambda: not process_alive(ended.server_pid) and not process_alive(ended.pid))
    assert not port_accepts(ended.port) and all(pid != ended.server_pid for pid, _, _ in workspace_servers())
    assert main(["status"]) == 0
    assert "this workspace's Prefect server: stopped (idle) at" in capsys.readouterr().out
