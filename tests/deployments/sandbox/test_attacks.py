"""Generated code that attacks its sandbox: each payload is stopped, explained to the agent, and leaves the machine healthy.

The limits are the ones evoskill uses (``SandboxLimits.from_settings``), so what is hidden by default
(store, trajectories, web accounts, config, credentials in the home folder) is what is tested.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from deployments.sandbox.execute import SandboxLimits, isolation_report, run_code
from deployments.sandbox.models import ExecutionResult
from deployments.settings import Settings

CANARY = "sk-canary-7f3a9c"


def _host_processes_running(marker: str) -> list[str]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if marker in cmdline:
                found.append(cmdline)
    return found


def _leftover_cgroups() -> list[Path]:
    root = Path("/sys/fs/cgroup/pids")
    return sorted(root.glob("evoskill-*")) if root.is_dir() else []


@pytest.fixture(params=["bwrap", "unshare", "none"])
def isolation(request: pytest.FixtureRequest) -> dict[str, bool | str]:
    """Each isolation this machine has (the fallbacks too); what it contains."""
    report = isolation_report(wanted=request.param)
    if request.param != "none" and not report["namespaces"]:
        pytest.skip(f"{request.param} isolation is not available here")
    return report


def needs(isolation: dict[str, bool | str], what: str) -> None:
    if not isolation[what]:
        pytest.skip(f"{isolation['isolation']} isolation does not give {what}: see SECURITY.md")


@pytest.fixture
def attack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolation: dict[str, bool | str]) -> Callable[..., ExecutionResult]:
    """Run a payload under evoskill's own limits and each isolation (a fake home with an SSH key; an API key in the environment)."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY----- canary")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("EVOSKILL_LLM_API_KEY", CANARY)
    settings = Settings(
        workspace=tmp_path / "ws", store_path=tmp_path / "ws" / "store", sandbox_hidden_paths=[tmp_path / "suite" / "task.json"],
        sandbox_wall_s=20, sandbox_cpu_s=20, sandbox_memory_mb=1024, sandbox_max_processes=32, sandbox_file_size_mb=8,
        sandbox_output_bytes=4000, sandbox_isolation=isolation["isolation"],
    )  # fmt: skip
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "task.json").write_text('{"query": "...", "answer": 9.9372}')
    settings.store_root().mkdir(parents=True)
    (settings.store_root() / "evoskill.skills.sqlite").write_text("skill code and answers")
    before = set(_leftover_cgroups())

    def run(code: str, **limits: object) -> ExecutionResult:
        base = SandboxLimits.from_settings(settings)
        return run_code(code, settings.run_root(), SandboxLimits(**{**base.__dict__, **limits}))

    yield run
    # The machine stays healthy: an ordinary run works, nothing of the payloads is left running.
    after = run("import json\nprint(json.dumps(2 + 2))\n")
    assert after.ok and after.answer == 4
    time.sleep(0.2)
    assert _host_processes_running(str(settings.run_root())) == []
    assert set(_leftover_cgroups()) <= before


def _answer(code: str) -> str:
    return f"import json, os\n{code}\n"


def test_reading_the_stores_files_finds_nothing(attack, isolation, tmp_path):
    needs(isolation, "namespaces")
    store = tmp_path / "ws" / "store"
    result = attack(_answer(f"print(json.dumps(os.listdir({str(store)!r})))"))
    assert result.ok and result.answer == []
    assert (store / "evoskill.skills.sqlite").read_text() == "skill code and answers"


def test_reading_a_benchmark_answer_file_finds_it_empty(attack, isolation, tmp_path):
    needs(isolation, "namespaces")
    result = attack(_answer(f"print(json.dumps(open({str(tmp_path / 'suite' / 'task.json')!r}).read()))"))
    assert result.ok and result.answer == ""


def test_reading_ssh_keys_finds_nothing(attack, isolation, tmp_path):
    needs(isolation, "namespaces")
    # Through the real home path: the code's own HOME is its run folder.
    ssh = tmp_path / "home" / ".ssh"
    result = attack(_answer(f"print(json.dumps([os.environ['HOME'] == os.getcwd(), os.listdir({str(ssh)!r})]))"))
    assert result.ok and result.answer == [True, []]


def test_api_keys_are_in_neither_the_environment_nor_any_process(attack, isolation):
    needs(isolation, "namespaces")
    code = _answer(
        "found = [k for k, v in os.environ.items() if 'canary' in v]\n"
        "for pid in [p for p in os.listdir('/proc') if p.isdigit()]:\n"
        "    try:\n"
        "        if b'canary' in open(f'/proc/{pid}/environ', 'rb').read():\n"
        "            found.append(pid)\n"
        "    except OSError:\n"
        "        pass\n"
        "print(json.dumps([found, len([p for p in os.listdir('/proc') if p.isdigit()])]))"
    )
    result = attack(code)
    assert result.ok
    found, processes = result.answer
    assert found == [] and processes <= 3  # its own PID namespace: the launcher and the code, not the host's processes
    assert CANARY not in result.stdout + result.stderr


def test_writing_outside_the_run_folder_is_refused(attack, isolation, tmp_path):
    needs(isolation, "read_only_filesystem")
    targets = [str(tmp_path / "outside.txt"), str(tmp_path / "ws" / "runs" / "neighbour.txt"), str(tmp_path / "home" / ".bashrc"),
               str(Path.cwd() / "evoskill-was-here.txt"), "/tmp/evoskill-was-here.txt"]  # fmt: skip
    code = _answer(
        f"errors = []\nfor path in {targets!r}:\n"
        "    try:\n"
        "        open(path, 'w').write('pwned')\n"
        "    except OSError as exc:\n"
        "        errors.append(exc.strerror)\n"
        "open('inside.txt', 'w').write('fine')\n"
        "print(json.dumps(errors))"
    )
    try:
        result = attack(code)
        written = [t for t in targets if Path(t).exists()]
    finally:  # a failure of containment must not leave files behind
        for target in targets:
            Path(target).unlink(missing_ok=True)
    assert result.ok and result.answer == ["Read-only file system"] * len(targets) and written == []
    assert (Path(result.workdir) / "inside.txt").read_text() == "fine"
    # Unhandled, the refusal reaches the agent as an error it can act on.
    failed = attack(f"open({str(tmp_path / 'outside.txt')!r}, 'w').write('pwned')\n")
    assert not failed.ok and "outside its run folder" in failed.error and "current folder" in failed.error


def test_undoing_the_containment_is_refused(attack, isolation, tmp_path):
    needs(isolation, "read_only_filesystem")
    store = tmp_path / "ws" / "store"
    code = _answer(
        "import subprocess\n"
        f"umount = subprocess.run(['umount', {str(store)!r}], capture_output=True).returncode\n"
        "try:\n"
        "    open('/sys/fs/cgroup/pids/cgroup.procs', 'w').write(str(os.getpid()))\n"
        "    escaped = True\n"
        "except OSError:\n"
        "    escaped = False\n"
        "disks = [d for d in os.listdir('/dev') if d.startswith(('sd', 'vd', 'nvme', 'xvd'))]\n"
        "print(json.dumps([umount != 0, escaped, disks, os.listdir(" + repr(str(store)) + ")]))"
    )
    result = attack(code)
    assert result.ok and result.answer == [True, False, [], []]


def test_opening_a_network_connection_is_refused(attack, isolation):
    needs(isolation, "namespaces")
    result = attack("import socket\nsocket.create_connection(('192.0.2.1', 80), timeout=5)\n")
    assert not result.ok and "network" in result.error and "EVOSKILL_SANDBOX_NETWORK" in result.error


def test_a_fork_bomb_is_stopped(attack, isolation):
    if not isolation["pids_cgroup"] and os.geteuid() == 0:
        pytest.skip("no pids cgroup, and RLIMIT_NPROC does not bind root")
    started = time.perf_counter()
    result = attack("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n", wall_s=3, max_processes=16)
    assert not result.ok and result.timed_out and "wall-clock limit" in result.error
    if isolation["pids_cgroup"]:
        assert "beyond its limit of 16 (a fork bomb?)" in result.error
    assert time.perf_counter() - started < 15


def test_allocating_far_beyond_the_memory_limit_is_stopped(attack):
    result = attack("blocks = [bytearray(256 * 1024**2) for _ in range(64)]\nprint(len(blocks))\n", memory_mb=512)
    assert not result.ok and "memory" in result.error and "512 MB" in result.error


def test_an_infinite_loop_is_killed(attack):
    result = attack("while True:\n    pass\n", wall_s=1.5)
    assert not result.ok and result.timed_out and "1.5 s wall-clock limit" in result.error


@pytest.mark.parametrize("how", ["new session", "double fork"])
def test_a_child_that_outlives_its_parent_is_killed_with_the_group(attack, how):
    daemon = (
        "import os, subprocess, sys, time\n"
        "beat = os.path.join(os.getcwd(), 'heartbeat')\n"
        "code = f'import time\\nwhile True:\\n    open({beat!r}, \"a\").write(\"x\")\\n    time.sleep(0.05)\\n'\n"
    )
    if how == "new session":
        daemon += "subprocess.Popen([sys.executable, '-c', code], start_new_session=True)\n"
    else:
        daemon += "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        exec(code)\n    os._exit(0)\n"
    daemon += "time.sleep(0.5)\nprint(1)\n"
    result = attack(daemon)
    assert result.ok
    beat = Path(result.workdir) / "heartbeat"
    size = beat.stat().st_size
    assert size > 0  # the child did run
    time.sleep(0.5)
    assert beat.stat().st_size == size  # and is gone with its parent


def test_100_mb_of_output_is_capped(attack):
    code = "import sys, json\nline = 'x' * 1023 + '\\n'\nfor _ in range(100 * 1024):\n    sys.stdout.write(line)\nprint(json.dumps('done'))\n"
    result = attack(code, output_bytes=4000)
    assert result.ok and result.answer == "done" and result.stdout_truncated
    cut = int(re.search(r"\[(\d+) bytes cut\]", result.stdout).group(1))
    assert len(result.stdout) < 5000 and cut > 100 * 1024**2 - 4000


def test_a_file_filling_the_disk_is_stopped_at_the_file_size_limit(attack):
    code = "block = b'0' * 1024**2\nwith open('big.bin', 'wb') as fh:\n    for _ in range(1024):\n        fh.write(block)\nprint(1)\n"
    result = attack(code)  # the attack fixture's limit: 8 MB
    assert not result.ok and "8 MB file-size limit" in result.error
    assert (Path(result.workdir) / "big.bin").stat().st_size <= 8 * 1024**2


def test_the_answer_protocol_cannot_be_spoofed_after_a_failure(attack):
    # A script that prints an answer and then dies is not an answer.
    result = attack("import json, os\nprint(json.dumps(9.9372))\nos._exit(3)\n")
    assert not result.ok and result.answer is None and "code 3" in result.error


def test_an_isolation_that_does_not_work_here_is_a_clear_error(tmp_path, monkeypatch):
    from deployments.sandbox import execute as sandbox

    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    sandbox._unavailable.cache_clear()
    try:
        result = run_code("print(1)\n", tmp_path, SandboxLimits(isolation="bwrap"))
    finally:
        sandbox._unavailable.cache_clear()
    assert not result.ok and result.error == "the sandbox cannot use bwrap isolation here ('bwrap' is not installed); set EVOSKILL_SANDBOX_ISOLATION=auto"
    assert list(tmp_path.iterdir()) == []  # nothing ran, nothing was made
