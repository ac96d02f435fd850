"""The workspace is its owner's alone: everything evoskill writes there is 0600 (files) or 0700 (folders), a Prefect
server started without the private umask is replaced (a real start: ``test_prefect_server.py``), a workspace made before
is tightened when evoskill next starts, and a file the user names outside it is made with the user's own umask."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from deployments import workspace as private
from deployments.net import free_port
from deployments.prefect_server import _stop_stale, server_env
from deployments.prefect_supervisor import SupervisorSpec
from deployments.settings import get_settings
from flows.interfaces.cli.main import main
from tests.codes import N2_CODE, N2_QUERY

CLEAR = {"stage": "triage", "content": {"conflict": "", "question": ""}}


def loose(root: Path) -> list[str]:
    """Every folder or file under ``root`` (``root`` too) that group or others may read, write or enter; links aside."""
    found = []
    for path in [root, *root.rglob("*")]:
        mode = path.lstat().st_mode
        if not stat.S_ISLNK(mode) and mode & 0o077:
            found.append(f"{stat.filemode(mode)} {path.relative_to(root)}")
    return found


@pytest.fixture
def open_umask():
    """The user's umask is the usual 022 (new files 0644) until evoskill starts; it is put back after the test."""
    before = os.umask(0o022)
    yield
    os.umask(before)


def test_what_a_solve_writes_in_the_workspace_is_the_owners_only(scripted, monkeypatch, open_umask, capsys):
    monkeypatch.setenv("EVOSKILL_STORE", "monty")  # the store's SQLite files in <workspace>/store
    scripted([CLEAR, {"stage": "research", "content": {"code": N2_CODE}}])
    assert main(["solve", N2_QUERY, "--json"]) == 0  # a trajectory, a learned skill, the sandbox's run folders, the log
    summary = json.loads(capsys.readouterr().out)
    assert summary["learned"]
    workspace = get_settings().workspace.resolve()
    written = {p.relative_to(workspace).parts[0] for p in workspace.rglob("*") if p.is_file()}
    assert {"store", "trajectories", "runs", "logs"} <= written, written
    assert loose(workspace) == []


def test_the_web_apps_files_and_turns_are_the_owners_only(open_umask, workspace, web_app):
    from deployments.admission import Admission

    web_app.state.web.users.add("ada", "ada-password")  # web-users.json, beside web-secret
    with Admission.from_settings(get_settings()).enter("ada") as ticket:  # a turn: lock files in <workspace>/admission
        assert ticket.admitted
    assert {"web-secret", "web-users.json", "admission"} <= {p.name for p in workspace.iterdir()}
    assert loose(workspace) == []


@pytest.fixture
def stand_in_prefect(tmp_path, monkeypatch):
    """``python -P -m prefect server start --port N`` that only sleeps, with a given umask: what ``_stop_stale`` sees
    (``-P`` stands for the isolation flags evoskill starts its server with, so that the stand-in's own folder is found)."""
    from deployments import prefect_server

    monkeypatch.setattr(prefect_server, "isolation_flags", lambda: ["-P"])
    package = tmp_path / "stand-in" / "prefect"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text("import time\ntime.sleep(120)\n")
    running: list[subprocess.Popen[bytes]] = []

    def start(port: int, umask: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            [sys.executable, "-P", "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)],
            env={**os.environ, **env, "PYTHONPATH": str(package.parent)}, preexec_fn=lambda: os.umask(umask),
        )  # fmt: skip
        running.append(proc)
        deadline = time.monotonic() + 10
        while b"prefect" not in Path(f"/proc/{proc.pid}/cmdline").read_bytes():  # until it runs as the server would
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        assert f"Umask:\t{umask:04o}" in Path(f"/proc/{proc.pid}/status").read_text()
        return proc

    yield start
    for proc in running:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait()


def test_a_server_started_without_the_private_umask_is_replaced(workspace, stand_in_prefect):
    settings = get_settings()
    wanted = server_env(settings)
    loose_server = stand_in_prefect(free_port(), 0o022, wanted)
    private_server = stand_in_prefect(free_port(), 0o077, wanted)
    stopping = threading.Thread(target=_stop_stale, args=(int(loose_server.args[-1]), wanted))
    stopping.start()  # it waits for the process to go: reaped here
    assert loose_server.wait(timeout=10) == -signal.SIGTERM
    stopping.join(timeout=10)
    _stop_stale(int(private_server.args[-1]), wanted)
    assert private_server.poll() is None  # the same settings, made private: kept


def test_a_workspace_made_before_is_tightened_when_evoskill_starts(workspace, tmp_path, monkeypatch, open_umask, capsys):
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("not evoskill's")
    outside.chmod(0o644)
    store = tmp_path / "kept-store"  # a store folder outside the workspace is the owner's only too
    (store / "evoskill").mkdir(parents=True, mode=0o755)
    (store / "evoskill" / "skills.sqlite").write_text("")
    files = {"trajectories/t.json": 0o644, "prefect/prefect.db": 0o644, "logs/evoskill.log": 0o664, "runs/r-1/main.py": 0o755,
             "web-users.json": 0o644, "outputs/r-1/plot.png": 0o666}  # fmt: skip
    for name, mode in files.items():
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o777)
        path.parent.chmod(0o777)
        path.write_text("")
        path.chmod(mode)
    workspace.chmod(0o755)
    (workspace / "link").symlink_to(outside)
    monkeypatch.setenv("EVOSKILL_STORE", "monty")
    monkeypatch.setenv("EVOSKILL_STORE_PATH", str(store))
    assert main(["skills", "list"]) == 0
    assert loose(workspace) == [] and loose(store) == []
    assert stat.S_IMODE((workspace / "runs/r-1/main.py").stat().st_mode) == 0o700  # the owner keeps what they had
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644  # a link is never followed
    # A workspace loosened again is tightened again by the next command.
    workspace.chmod(0o755)
    (workspace / "trajectories/t.json").chmod(0o644)
    private._prepared.clear()  # the next process
    assert main(["skills", "list"]) == 0
    assert loose(workspace) == []


def test_an_exported_skill_file_the_user_names_gets_the_users_umask(workspace, tmp_path, monkeypatch, capsys):
    from skills.store import open_store
    from tests.codes import add_two_skill

    open_store(get_settings()).put_skill(add_two_skill())
    monkeypatch.setattr(private, "_user_umask", 0o022)
    new, existing = tmp_path / "add_two.json", tmp_path / "kept-mode.json"
    existing.write_text("")
    existing.chmod(0o640)
    assert main(["skills", "export", "add_two", "-o", str(new)]) == 0
    assert main(["skills", "export", "add_two", "-o", str(existing)]) == 0
    assert stat.S_IMODE(new.stat().st_mode) == 0o644 and json.loads(new.read_text())["name"] == "add_two"
    assert stat.S_IMODE(existing.stat().st_mode) == 0o640 and json.loads(existing.read_text())["name"] == "add_two"
    inside = get_settings().workspace / "add_two.json"  # named inside the workspace: the workspace's mode
    assert main(["skills", "export", "add_two", "-o", str(inside)]) == 0
    assert stat.S_IMODE(inside.stat().st_mode) == 0o600


# -- each workspace its own Prefect server -------------------------------------------------------------------------------------


def test_each_workspace_records_a_port_of_its_own(workspace, tmp_path):
    from deployments.prefect_server import server_port

    first = get_settings()
    second = first.model_copy(update={"workspace": tmp_path / "other-ws"})
    port = server_port(first)
    assert server_port(first) == port == int((first.workspace / "prefect" / "server-port").read_text())  # chosen once, kept
    assert server_port(second) != port
    assert server_port(first.model_copy(update={"prefect_server_port": 4321})) == 4321  # a port the user sets wins


def test_another_workspaces_server_is_never_stopped(workspace, tmp_path, stand_in_prefect):
    settings = get_settings()
    other = settings.model_copy(update={"workspace": tmp_path / "other-ws"})
    theirs = stand_in_prefect(free_port(), 0o022, server_env(other))  # stale by today's rules, but not this workspace's
    _stop_stale(int(theirs.args[-1]), server_env(settings, int(theirs.args[-1])))
    assert theirs.poll() is None


def test_a_recorded_port_another_workspace_holds_moves_this_workspace_to_a_free_one(workspace, tmp_path, stand_in_prefect, monkeypatch):
    import types

    from deployments import prefect_server
    from deployments.prefect_server import ensure_local_server, server_port

    settings = get_settings()
    held = server_port(settings)
    other = settings.model_copy(update={"workspace": tmp_path / "other-ws", "prefect_server_port": held})
    theirs = stand_in_prefect(held, 0o077, server_env(other))
    started: list[list[str]] = []

    class Exited:
        def poll(self) -> int:
            return 1

    fake = types.SimpleNamespace(Popen=lambda cmd, **kw: started.append(cmd) or Exited(), STDOUT=subprocess.STDOUT, DEVNULL=subprocess.DEVNULL)
    monkeypatch.setattr(prefect_server, "subprocess", fake)
    with pytest.raises(RuntimeError, match="did not start"):
        ensure_local_server(settings, wait_s=1)
    moved = server_port(settings)
    assert moved != held and SupervisorSpec.model_validate_json(started[0][-1]).command[-1] == str(moved) and theirs.poll() is None
    with pytest.raises(RuntimeError, match="another workspace"):  # a port the user set is not silently changed
        ensure_local_server(settings.model_copy(update={"prefect_server_port": held}), wait_s=1)
    assert theirs.poll() is None


def test_this_workspaces_server_without_a_supervisor_is_replaced_where_idle_stops_are_on(workspace, tmp_path, stand_in_prefect):
    """An older evoskill's server runs without a supervisor, so it would never stop when idle: it is replaced, as long as
    it is this workspace's."""
    settings = get_settings()
    port, their_port = free_port(), free_port()
    mine = stand_in_prefect(port, 0o077, server_env(settings, port))  # today's settings, private: not stale otherwise
    theirs = stand_in_prefect(their_port, 0o077, server_env(settings.model_copy(update={"workspace": tmp_path / "other-ws"}), their_port))
    _stop_stale(port, server_env(settings, port))
    assert mine.poll() is None  # idle stops off: kept
    stopping = threading.Thread(target=_stop_stale, args=(port, server_env(settings, port)), kwargs={"unsupervised": True})
    stopping.start()  # it waits for the process to go: reaped here
    assert mine.wait(timeout=10) == -signal.SIGTERM
    stopping.join(timeout=10)
    _stop_stale(their_port, server_env(settings, their_port), unsupervised=True)
    assert theirs.poll() is None
