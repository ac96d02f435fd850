"""Generated code that attacks its sandbox: each payload is stopped, explained to the agent, and leaves the machine healthy.

The limits are the ones evoskill uses (``SandboxLimits.from_settings``). The fixture builds a small machine
around the run: a home folder with every credential evoskill knows of and a Prefect database, a workspace
with its store, trajectories, web accounts and cookie key, a config file, another workspace, a sibling run
folder holding a reference solution, and a benchmark answer file. Each attack runs under every isolation
this machine has, started cold (a new interpreter) and warm (forked by the warm executor); where an
isolation does not claim a property (SECURITY.md's table), the test asserts the documented weakness
instead of skipping.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from deployments.sandbox.execute import SandboxLimits, run_code, warm_up
from deployments.sandbox.models import ExecutionResult
from deployments.settings import Settings
from tests.sandbox_escapes import READ_ALL

CANARY = "sk-canary-7f3a9c"
HOME_CREDENTIALS = [".ssh/id_ed25519", ".aws/credentials", ".azure/accessTokens.json", ".config/gcloud/credentials.db", ".config/gh/hosts.yml",
                    ".kube/config", ".docker/config.json", ".gnupg/private-keys-v1.d/key.key", ".netrc", ".pypirc", ".git-credentials", ".npmrc"]  # fmt: skip
HOME_OTHER = [".prefect/prefect.db", ".bash_history", ".cache/huggingface/token", "projects/notes.txt"]
# What the issue grants generated code, written out here (not read from the sandbox's own code): the system's programs
# and libraries, a few /etc files, the Python environment, its own run folder, its own /proc and /dev.
ALLOWED_ETC = {"ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "mime.types", "nsswitch.conf", "fonts", "alternatives",
               "os-release", "debian_version", "passwd", "group"}  # fmt: skip
ALLOWED = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/dev", "/sys/devices/system/cpu",
           sys.prefix, sys.base_prefix, *(f"/etc/{name}" for name in ALLOWED_ETC)]  # fmt: skip


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
    return sorted(Path("/sys/fs/cgroup").glob("**/evoskill-*")) if Path("/sys/fs/cgroup").is_dir() else []


def needs(isolation: dict[str, bool | str], what: str) -> None:
    if not isolation[what]:
        pytest.skip(f"{isolation['isolation']} isolation does not give {what}: see SECURITY.md")


def _plant(path: Path, text: str = CANARY) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Files generated code must not read, each holding the canary."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("EVOSKILL_LLM_API_KEY", CANARY)
    config = _plant(tmp_path / "config" / "evoskill.toml", f'llm_api_key = "{CANARY}"\n')
    monkeypatch.setenv("EVOSKILL_CONFIG", str(config))
    ws = tmp_path / "ws"
    files = {name: _plant(home / name) for name in [*HOME_CREDENTIALS, *HOME_OTHER]}
    files |= {
        "store": _plant(ws / "store" / "evoskill.skills.sqlite"),
        "trajectory": _plant(ws / "trajectories" / "solve-1.json"),
        "web accounts": _plant(ws / "web-users.json"),
        "cookie key": _plant(ws / "web-secret"),
        "config": config,
        "other workspace": _plant(tmp_path / "other-ws" / "trajectories" / "solve-9.json"),
        "sibling run": _plant(ws / "runs" / "reference-t1-0a1b2c3d" / "main.py", f"print({CANARY!r})"),
        "answer file": _plant(tmp_path / "suite" / "task.json", f'{{"query": "...", "answer": "{CANARY}"}}'),
    }
    return files


@pytest.fixture
def attack(tmp_path: Path, world: dict[str, Path], isolation: dict[str, bool | str], executor: str) -> Callable[..., ExecutionResult]:
    """Run a payload under evoskill's own limits, each isolation and each executor, in the world of the ``world`` fixture."""
    settings = Settings(
        workspace=tmp_path / "ws", sandbox_hidden_paths=[world["answer file"]],
        sandbox_wall_s=20, sandbox_cpu_s=20, sandbox_memory_mb=1024, sandbox_disk_mb=64, sandbox_max_processes=32, sandbox_file_size_mb=8,
        sandbox_output_bytes=4000, sandbox_isolation=isolation["isolation"], sandbox_warm=executor == "warm",
    )  # fmt: skip

    def run(code: str, inputs: tuple[Path, ...] = (), **limits: object) -> ExecutionResult:
        base = SandboxLimits.from_settings(settings, inputs=inputs)
        chosen = SandboxLimits(**{**base.__dict__, **limits})
        assert executor == "cold" or warm_up(chosen)
        result = run_code(code, settings.run_root(), chosen)
        assert result.executor == executor
        return result

    yield run
    # The machine stays healthy: an ordinary run works, nothing of the payloads is left running.
    after = run("import json\nprint(json.dumps(2 + 2))\n")
    assert after.ok and after.answer == 4
    time.sleep(0.2)
    assert _host_processes_running(str(settings.run_root())) == []
    runs = {f"evoskill-{folder.name}" for folder in settings.run_root().iterdir()}
    assert [group for group in _leftover_cgroups() if group.name in runs] == []  # each group is named after its run folder


def _answer(code: str) -> str:
    return f"import json, os\n{code}\n"


def test_no_secret_of_the_machine_is_readable(attack, isolation, world):
    result = attack(READ_ALL % (json.dumps({k: str(v) for k, v in world.items()}), CANARY))
    assert result.ok
    if isolation["allow_list"]:
        assert result.answer == {}
    elif isolation["own_user"]:  # its own unprivileged user reads what every user may: not the test's owner-only folder
        assert result.answer == {}
    else:  # documented: without namespaces generated code reads what the evoskill user can
        assert set(result.answer) == set(world)


def test_walking_the_filesystem_from_the_root_finds_nothing_outside_the_allow_list(attack, isolation):
    needs(isolation, "allow_list")
    walk = _answer(
        f"allowed = [os.path.realpath(p) for p in {ALLOWED!r}] + [os.getcwd()]\n"
        "def shown(path):\n"
        "    return any(path == a or path.startswith(a.rstrip('/') + '/') for a in allowed)\n"
        "readable = []\n"
        "for top, dirs, files in os.walk('/'):\n"
        "    dirs[:] = [d for d in dirs if not shown(os.path.join(top, d))]\n"
        "    for name in files:\n"
        "        path = os.path.join(top, name)\n"
        "        if shown(path) or shown(os.path.realpath(path)):\n"
        "            continue\n"
        "        try:\n"
        "            open(path, 'rb').close()\n"
        "            readable.append(path)\n"
        "        except OSError:\n"
        "            pass\n"
        "print(json.dumps(readable))"
    )
    result = attack(walk)
    assert result.ok and result.answer == []
    passwd = attack(_answer("print(json.dumps(open('/etc/passwd').read()))"))
    assert passwd.ok and passwd.answer.startswith("sandbox:") and passwd.answer.count("\n") == 1  # not the machine's accounts


def test_another_run_folder_is_not_there(attack, isolation, world):
    sibling = world["sibling run"].parent
    result = attack(_answer(f"print(json.dumps([os.path.exists({str(sibling)!r}), os.listdir('..'), os.listdir('/')]))"))
    assert result.ok
    if isolation["allow_list"]:
        exists, beside, top = result.answer
        assert not exists and sibling.name not in beside + top
        assert beside == [Path(result.workdir).name] or set(beside) <= {p.split("/")[1] for p in ALLOWED} | {"etc", "sandbox", "tmp", "var"}
    else:
        assert result.answer[0] is True and sibling.name in result.answer[1]


def test_a_granted_input_is_readable_and_read_only_and_a_hidden_path_in_it_stays_hidden(attack, isolation, tmp_path, world):
    needs(isolation, "allow_list")
    data = tmp_path / "data"
    _plant(data / "structure.cif", "data_NaCl")
    code = _answer(
        f"text = open({str(data / 'structure.cif')!r}).read()\n"
        "try:\n"
        f"    open({str(data / 'new.txt')!r}, 'w')\n"
        "    wrote = True\n"
        "except OSError:\n"
        "    wrote = False\n"
        f"print(json.dumps([text, wrote, os.path.exists({str(tmp_path / 'home')!r})]))"
    )
    assert attack(code, inputs=(data,)).answer == ["data_NaCl", False, False]
    # Granting a folder that holds a secret: the secret is covered inside it; granting a secret itself is refused.
    home = world[".ssh/id_ed25519"].parents[1]
    result = attack(READ_ALL % (json.dumps({"key": str(world[".ssh/id_ed25519"]), "notes": str(home / "projects/notes.txt")}), CANARY),
                    inputs=(home,))  # fmt: skip
    assert result.ok and result.answer == {"notes": str(home / "projects/notes.txt")}
    refused = attack(READ_ALL % (json.dumps({"store": str(world["store"])}), CANARY), inputs=(world["store"],))
    assert refused.ok and refused.answer == {}


def test_api_keys_are_in_neither_the_environment_nor_any_process(attack, isolation):
    code = _answer(
        "in_env = [k for k, v in os.environ.items() if 'canary' in v]\n"
        "in_procs = []\n"
        "for pid in [p for p in os.listdir('/proc') if p.isdigit()]:\n"
        "    try:\n"
        "        if b'canary' in open(f'/proc/{pid}/environ', 'rb').read():\n"
        "            in_procs.append(pid)\n"
        "    except OSError:\n"
        "        pass\n"
        "print(json.dumps([in_env, in_procs, len([p for p in os.listdir('/proc') if p.isdigit()])]))"
    )
    result = attack(code)
    assert result.ok
    in_env, in_procs, processes = result.answer
    assert in_env == [] and CANARY not in result.stdout + result.stderr  # the environment is rebuilt under every isolation
    if isolation["namespaces"]:
        assert in_procs == [] and processes <= 3  # its own PID namespace: the launcher and the code, not the host's processes
    else:  # documented: without a PID namespace the host's processes are visible
        assert processes > 3


def test_the_kernel_keyrings_are_closed(attack):
    # The user's keyring outlives a run and is shared by every run of the user: a channel between runs (and users).
    code = _answer("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                   "calls = {'x86_64': (248, 250), 'aarch64': (217, 219), 'riscv64': (217, 219)}[os.uname().machine]\n"
                   "added = libc.syscall(calls[0], b'user', b'evoskill-canary', b'x', 1, ctypes.c_int(-4))\nadd_errno = ctypes.get_errno()\n"
                   "found = libc.syscall(calls[1], 0, ctypes.c_int(-4), 0)\n"  # KEYCTL_GET_KEYRING_ID of the user keyring
                   "print(json.dumps([added, os.strerror(add_errno), found]))")  # fmt: skip
    result = attack(code)
    assert result.ok and result.answer == [-1, "Operation not permitted", -1]


def test_writing_outside_the_run_folder_is_refused(attack, isolation, tmp_path):
    if not isolation["read_only_filesystem"]:  # documented: without namespaces the code writes wherever its user can
        result = attack(_answer(f"open({str(tmp_path / 'outside.txt')!r}, 'w').write('written')\nprint(1)"))
        if isolation["own_user"]:  # its own unprivileged user: not into the test's owner-only folder
            assert not result.ok and not (tmp_path / "outside.txt").exists()
        else:
            assert result.ok and (tmp_path / "outside.txt").read_text() == "written"
        return
    targets = [str(tmp_path / "outside.txt"), str(tmp_path / "ws" / "runs" / "neighbour.txt"), str(tmp_path / "home" / ".bashrc"),
               str(Path.cwd() / "evoskill-was-here.txt"), "/usr/evoskill-was-here.txt", "/evoskill-was-here.txt", "/dev/evoskill"]  # fmt: skip
    code = _answer(
        f"errors = []\nfor path in {targets!r}:\n"
        "    try:\n"
        "        open(path, 'w').write('pwned')\n"
        "    except OSError as exc:\n"
        "        errors.append(exc.strerror)\n"
        "open('inside.txt', 'w').write('fine')\n"
        "open('/tmp/scratch.txt', 'w').write('private')\n"
        "import tempfile\nwith tempfile.NamedTemporaryFile('w', delete=False, suffix='.txt') as fh:\n    fh.write('temporary')\n"
        "print(json.dumps(errors))"
    )
    try:
        result = attack(code)
        written = [t for t in [*targets, "/tmp/scratch.txt"] if Path(t).exists()]
    finally:  # a failure of containment must not leave files behind
        for target in targets:
            if not target.startswith(("/usr", "/dev")):
                Path(target).unlink(missing_ok=True)
    # Where the run folder lies under /tmp, its /tmp is a private tmpfs holding it: writes there stay in the sandbox.
    private = [t for t in targets if Path(t).is_relative_to("/tmp") and Path(result.workdir).is_relative_to("/tmp")]
    assert result.ok and written == [] and len(result.answer) >= len(targets) - len(private)
    assert set(result.answer) <= {"Read-only file system", "No such file or directory", "Permission denied"}
    assert (Path(result.workdir) / "inside.txt").read_text() == "fine"
    assert [f.read_text() for f in (Path(result.workdir) / "tmp").glob("*.txt")] in (["temporary"], ["temporary", "private"], ["private", "temporary"])  # its temporary files are kept with its outputs
    # Unhandled, the refusal reaches the agent as an error it can act on.
    failed = attack("open('/home/evoskill-was-here.txt', 'w').write('pwned')\n")
    assert not failed.ok and "/home/evoskill-was-here.txt is outside the sandbox" in failed.error and "current folder" in failed.error
    failed = attack("open('/usr/pwned.txt', 'w').write('pwned')\n")
    assert not failed.ok and "outside its run folder" in failed.error and "current folder" in failed.error


def test_undoing_the_containment_is_refused(attack, isolation):
    needs(isolation, "read_only_filesystem")
    code = _answer(
        "import subprocess\n"
        "umount = subprocess.run(['umount', '-l', '/usr'], capture_output=True).returncode\n"
        "remount = subprocess.run(['mount', '-o', 'remount,rw', '/usr'], capture_output=True).returncode\n"
        "mounted = subprocess.run(['mount', '-t', 'tmpfs', 'none', '/tmp'], capture_output=True).returncode\n"
        "try:\n"
        "    open('/usr/pwned', 'w')\n"
        "    writable = True\n"
        "except OSError:\n"
        "    writable = False\n"
        "disks = [d for d in os.listdir('/dev') if d.startswith(('sd', 'vd', 'nvme', 'xvd'))]\n"
        "print(json.dumps([umount != 0, remount != 0, mounted != 0, writable, disks, os.path.exists('/sys/fs/cgroup')]))"
    )
    result = attack(code)
    assert result.ok and result.answer == [True, True, True, False, [], False]


def test_opening_a_network_connection_is_refused(attack, isolation):
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    code = _answer(f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=5)\n    print(json.dumps('connected'))\n"
                   "except OSError as exc:\n    print(json.dumps(exc.strerror))")  # fmt: skip
    try:
        result = attack(code)
        unhandled = attack("import socket\nsocket.create_connection(('192.0.2.1', 80), timeout=5)\n")
    finally:
        listener.close()
    if isolation["namespaces"]:
        assert result.ok and result.answer in ("Connection refused", "Network is unreachable")  # its own empty network namespace
        assert not unhandled.ok and "network" in unhandled.error and "EVOSKILL_SANDBOX_NETWORK" in unhandled.error
    else:  # documented: without namespaces the network is the host's
        assert result.answer == "connected"


def test_a_fork_bomb_is_stopped(attack, isolation):
    if not isolation["pids_cgroup"] and os.geteuid() == 0 and not isolation["own_user"]:
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


def test_several_processes_together_cannot_exceed_the_memory_limit(attack, isolation):
    needs(isolation, "memory_cgroup")
    # Each child stays under the per-process limit (300 of 512 MB); four of them together do not.
    code = (
        "import os, sys, time\nkids = []\n"
        "for _ in range(4):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        block = b'1' * (300 * 1024**2)\n"
        "        time.sleep(2)\n"
        "        os._exit(0)\n"
        "    kids.append(pid)\n"
        "statuses = [os.waitpid(pid, 0)[1] for pid in kids]\n"
        "sys.exit(0 if not any(statuses) else 1)\n"
    )
    result = attack(code, memory_mb=512)
    assert not result.ok and "processes together went over the run's 512 MB limit" in result.error


def test_many_small_files_cannot_fill_the_disk(attack, isolation):
    code = (
        "import os\nblock = b'0' * 1024**2\n"  # 1 MB files, each far under the 8 MB file-size limit
        "for i in range(64):\n"
        "    with open(f'part-{i}.bin', 'wb') as fh:\n"
        "        fh.write(block)\n"
        "print(1)\n"
    )
    result = attack(code, disk_mb=16)
    kept = list(Path(result.workdir).glob("part-*.bin"))
    if isolation["disk_bound"]:
        assert not result.ok and "16 MB disk limit" in result.error
        assert len(kept) >= 8 and sum(f.stat().st_size for f in kept) <= 16 * 1024**2  # what it wrote in bounds is kept
    else:  # documented: without a size-limited run folder only each file's size is bounded
        assert result.ok and len(kept) == 64


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


@pytest.mark.parametrize("how", ["symlink", "hard link"])
def test_result_json_that_leads_outside_the_run_folder_is_not_read(attack, world, how):
    target = str(_plant(world["web accounts"], json.dumps({"alice": CANARY})))  # valid JSON: read, it would be an answer
    make = f"os.symlink({target!r}, 'result.json')" if how == "symlink" else f"os.link({target!r}, 'result.json')"
    result = attack(f"import os\ntry:\n    {make}\nexcept OSError:\n    pass\n")
    assert not result.ok and result.answer is None and CANARY not in (result.error or "") + result.stdout + result.stderr


def test_an_isolation_that_does_not_work_here_is_a_clear_error(tmp_path, monkeypatch):
    from deployments.sandbox import execute as sandbox
    from deployments.sandbox.isolations import base as isolation_base

    monkeypatch.setattr(isolation_base.shutil, "which", lambda name: None)
    sandbox._unavailable.cache_clear()
    try:
        result = run_code("print(1)\n", tmp_path, SandboxLimits(isolation="bwrap"))
    finally:
        sandbox._unavailable.cache_clear()
    assert not result.ok and result.error == "the sandbox cannot use bwrap isolation here ('bwrap' is not installed); set EVOSKILL_SANDBOX_ISOLATION=auto"
    assert list(tmp_path.iterdir()) == []  # nothing ran, nothing was made
