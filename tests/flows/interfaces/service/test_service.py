"""The workspace's resident service: the CLI's commands run there warm, print as they would in their own process, and
the service stops when idle; where it cannot start, the command runs in its own process with one line saying so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flows.interfaces.service.client import stop_service
from flows.interfaces.service.place import read_records, runtime_dir, service_place

REPO = Path(__file__).parents[4]


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("EVOSKILL_")}
    return env | {
        "PYTHONPATH": str(REPO), "EVOSKILL_WORKSPACE": str(tmp_path / "ws"), "EVOSKILL_CONFIG": str(tmp_path / "absent.toml"),
        "EVOSKILL_STARTER_LIBRARY": "false", "EVOSKILL_SERVICE": "true", "EVOSKILL_PREFECT_API": "ephemeral", **extra,
    }  # fmt: skip


def _evoskill(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "flows.interfaces.cli.main", *args], capture_output=True, text=True, env=env, cwd=REPO, timeout=300)


def _services_of(workspace: Path) -> list[int]:
    return [r.pid for r in read_records() if r.workspace == str(workspace.resolve())]


@pytest.fixture
def stop_services_after(tmp_path):
    yield
    for pid in _services_of(tmp_path / "ws"):
        stop_service(pid)


def test_a_command_in_the_service_prints_what_it_prints_in_its_own_process(tmp_path, stop_services_after):
    env = _env(tmp_path)
    first = _evoskill(env, "skills", "list")
    assert first.returncode == 0, first.stderr
    assert "starting this workspace's service" in first.stderr
    [pid] = _services_of(tmp_path / "ws")
    second = _evoskill(env, "skills", "list")
    assert second.returncode == 0 and "starting" not in second.stderr
    assert _services_of(tmp_path / "ws") == [pid]  # the same warm process answered
    alone = _evoskill(env | {"EVOSKILL_SERVICE": "false"}, "skills", "list")
    assert (second.stdout, second.stderr) == (alone.stdout, alone.stderr)
    assert "holds no skill yet" in second.stderr
    missing = _evoskill(env, "skills", "show", "no_such_skill-v1")
    assert missing.returncode == 1 and "no_such_skill-v1" in missing.stderr and "Traceback" not in missing.stderr


def test_other_settings_reach_another_service(tmp_path, stop_services_after):
    """A command never reaches a service that would run it with other settings (here another LLM backend)."""
    assert _evoskill(_env(tmp_path), "skills", "list").returncode == 0
    assert _evoskill(_env(tmp_path, EVOSKILL_LLM_BACKEND="scripted"), "skills", "list").returncode == 0
    assert len(_services_of(tmp_path / "ws")) == 2


def test_the_service_stops_when_idle(tmp_path):
    env = _env(tmp_path, EVOSKILL_SERVICE_IDLE_STOP_S="2")
    assert _evoskill(env, "skills", "list").returncode == 0
    [record] = [r for r in read_records() if r.workspace == str((tmp_path / "ws").resolve())]
    pid = record.pid
    deadline = time.monotonic() + 60
    while Path(f"/proc/{pid}").exists():
        assert time.monotonic() < deadline, "the service is still running"
        time.sleep(0.2)
    assert _services_of(tmp_path / "ws") == []
    assert not Path(record.socket).exists() and not (runtime_dir() / f"{record.key}.json").exists()


def test_where_the_service_cannot_start_the_command_runs_here_and_says_so(tmp_path):
    shared = tmp_path / "run"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)  # a folder others may enter: no socket is made there
    (shared / "evoskill").mkdir(mode=0o777)
    (shared / "evoskill").chmod(0o777)
    done = _evoskill(_env(tmp_path, XDG_RUNTIME_DIR=str(shared)), "skills", "list")
    assert done.returncode == 0, done.stderr
    assert "running in this process: the workspace service did not start" in done.stderr
    assert "not a private folder" in done.stderr and "holds no skill yet" in done.stderr
    assert not list((shared / "evoskill").iterdir())


def test_the_key_changes_with_the_settings_and_the_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("EVOSKILL_LLM_BACKEND", "embedded")
    first = service_place(tmp_path)
    assert service_place(tmp_path) == first
    monkeypatch.setenv("EVOSKILL_LLM_BACKEND", "openai")
    assert service_place(tmp_path).key != first.key
    second = service_place(tmp_path).key
    monkeypatch.setenv("HOME", str(tmp_path))  # which credentials are hidden from generated code
    assert service_place(tmp_path).key not in (first.key, second)
    monkeypatch.chdir(tmp_path)
    assert service_place(tmp_path).key not in (first.key, second)
    assert len(str(first.socket)) < 100  # within a Unix socket's path limit


def _ask(place_socket: str, request: bytes) -> list[dict]:
    import json
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(place_socket)
        conn.sendall(request)
        reader = conn.makefile("rb")
        return [json.loads(line) for line in reader]


def test_the_service_runs_only_what_the_cli_sends_it(tmp_path, stop_services_after):
    """A client that writes its own requests gets no more than the command line would give it."""
    assert _evoskill(_env(tmp_path), "skills", "list").returncode == 0
    [record] = [r for r in read_records() if r.workspace == str((tmp_path / "ws").resolve())]
    refused = _ask(record.socket, b'{"argv": ["skills", "delete", "x-v1"], "inputs": [], "tty": {}}\n')
    assert refused[-1] == {"exit": 2} and "runs in its own process" in "".join(m.get("err", "") for m in refused)
    assert _ask(record.socket, b"not json\n")[-1] == {"exit": 2}
    assert _ask(record.socket, b'{"argv": ["solve", "q", "--input", "a"], "inputs": ["relative"], "tty": {}}\n')[-1] == {"exit": 2}
    assert _ask(record.socket, b'{"argv": ["skills", "list"], "inputs": [], "tty": "ab"}\n')[-1] == {"exit": 0}
    usage = _ask(record.socket, b'{"argv": ["skills", "list", "--no-such-option"], "inputs": [], "tty": {}}\n')
    assert usage[-1] == {"exit": 2} and "unrecognized arguments" in "".join(m.get("err", "") for m in usage)
    assert _services_of(tmp_path / "ws") == [record.pid]  # none of it took the service down


def test_a_record_of_another_process_is_not_taken_for_a_service(tmp_path):
    """A forged record naming some process is neither listed nor stopped as a service."""
    decoy = subprocess.Popen(["sleep", "60"])
    try:
        forged = runtime_dir() / "feedfacefeedfacefeed.json"
        forged.write_text(json.dumps({"pid": decoy.pid, "key": forged.stem, "workspace": str(tmp_path / "ws"), "socket": str(forged.with_suffix(".sock")),
                                      "started_at": 0.0, "idle_stop_s": 0.0}))  # fmt: skip
        assert decoy.pid not in [r.pid for r in read_records()]
    finally:
        forged.unlink(missing_ok=True)
        decoy.kill()


def test_a_service_killed_mid_solve_is_said_plainly_and_the_next_one_crashes_its_runs(tmp_path, stop_services_after):
    """kill -9 of the service while it solves: the command says so in one line (no traceback), the solve's sandboxed run
    dies with it, and the next command's service sets the runs the dead one left Running to Crashed, saying why."""
    import urllib.request
    import uuid

    from tests.processes import marked

    marker = f"evoskill-service-kill-{uuid.uuid4().hex}"
    code = f"import json, subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', {marker!r}])\ntime.sleep(60)\nprint(json.dumps(1.0))\n"
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"replies": [{"stage": "triage", "content": {"conflict": "", "question": ""}}, {"stage": "research", "content": {"code": code}}]}))
    env = {k: v for k, v in _env(tmp_path, EVOSKILL_PREFECT_API="local-server", EVOSKILL_LLM_BACKEND="scripted", EVOSKILL_LLM_SCRIPT=str(script),
                                  EVOSKILL_LEARN="false").items() if not k.startswith("PREFECT_API")}  # fmt: skip
    solving = subprocess.Popen([sys.executable, "-m", "flows.interfaces.cli.main", "solve", "--deep", "Sleep a minute, then give the float 1.0"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)  # fmt: skip
    record = tmp_path / "ws" / "prefect" / "server.json"
    try:
        deadline = time.monotonic() + 240
        while not marked(marker):
            assert time.monotonic() < deadline and solving.poll() is None, solving.stderr.read() if solving.poll() is not None else "no run started"
            time.sleep(0.1)
        [service] = _services_of(tmp_path / "ws")
        os.kill(service, 9)
        _, err = solving.communicate(timeout=60)
        assert solving.returncode == 1 and "the workspace service stopped before the command ended" in err and "Traceback" not in err
        gone = time.monotonic() + 10
        while marked(marker):
            assert time.monotonic() < gone, "the killed service's sandboxed run still lives"
            time.sleep(0.1)
        api = f"http://127.0.0.1:{(tmp_path / 'ws' / 'prefect' / 'server-port').read_text().strip()}/api"

        def solve_runs() -> list[dict]:
            request = urllib.request.Request(f"{api}/flow_runs/filter", data=b'{"limit": 10}', headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=10) as reply:
                return [r for r in json.loads(reply.read()) if r["name"].startswith(("solve", "deep-solve"))]

        assert {r["state"]["type"] for r in solve_runs()} == {"RUNNING"}
        assert _evoskill(env, "skills", "list").returncode == 0  # a new service, which gets ready meanwhile
        deadline = time.monotonic() + 120
        while {r["state"]["type"] for r in solve_runs()} != {"CRASHED"}:
            assert time.monotonic() < deadline, solve_runs()
            time.sleep(0.5)
        assert all(f"pid {service}" in r["state"]["message"] for r in solve_runs())
    finally:
        if solving.poll() is None:
            solving.kill()
        for pid in _services_of(tmp_path / "ws"):
            stop_service(pid)
        if record.exists():  # the workspace's Prefect server: its supervisor stops it
            supervisor = json.loads(record.read_text()).get("pid")
            if supervisor:
                os.kill(supervisor, 15)
