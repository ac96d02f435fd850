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
