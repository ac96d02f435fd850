"""Run generated code in a child process, contained, and read its answer.

Each execution gets a fresh working directory and runs ``main.py`` there in a new process group,
in a ``pids`` cgroup when one can be made, under resource limits (CPU seconds, address space,
open files, file size), inside the strongest isolation that works here (``sandbox_isolation``):

- ``bwrap`` (bubblewrap): the whole filesystem read-only except the run folder, a private
  ``/dev`` (no disks) and ``/proc`` (no other processes), no capabilities, new PID, IPC and
  network namespaces, killed with its parent;
- ``unshare``: new PID (with its own ``/proc``), mount and network namespaces; the filesystem stays
  writable and the code keeps the caller's capabilities;
- ``none``: limits only.

Paths the code must not read (the store, trajectories, web accounts, the config file, credentials
in the home folder, benchmark answer files) are covered in its mount namespace: an empty
read-only tmpfs over a folder, ``/dev/null`` over a file. The environment is rebuilt from an
allow-list, so API keys never reach the code. A wall-clock timeout kills the whole group.
stdout/stderr are captured with a size cap (head and tail kept).

The answer protocol: the script prints its final answer as JSON on its last
non-empty stdout line, or writes ``result.json`` in its working directory.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path
from typing import IO, Any

from pydantic import JsonValue

from deployments.sandbox.models import ExecutionResult
from deployments.sandbox.objects import put_object
from deployments.settings import Settings

__all__ = ["SandboxLimits", "run_code", "isolation_report"]

log = logging.getLogger(__name__)

_ENV_PASSTHROUGH = ("LANG", "LC_ALL", "LC_CTYPE", "TZ")
# Credentials in the home folder of whoever runs evoskill.
_HOME_SECRETS = (".ssh", ".aws", ".azure", ".config/gcloud", ".config/gh", ".kube", ".docker", ".gnupg", ".netrc", ".pypirc",
                 ".git-credentials", ".npmrc")  # fmt: skip
_BWRAP = ("bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/dev/shm", "--unshare-pid", "--unshare-ipc",
          "--unshare-uts", "--die-with-parent", "--new-session", "--cap-drop", "ALL")  # fmt: skip
# Joins the pids cgroup ($1) before anything else starts, then runs the rest of the command.
_JOIN_CGROUP = 'echo $$ > "$1" 2>/dev/null; shift; exec "$@"'

# Outputs longer than this are kept in the run folder (an ObjectRef) and only head and tail travel on.
_INLINE_CHARS, _HEAD_CHARS, _TAIL_CHARS = 8000, 2000, 4000

# Runs inside the child: apply limits, then execute main.py as __main__ with a clean traceback.
_LAUNCHER = r"""
import ctypes, json, os, resource, sys, traceback
cfg = json.loads(sys.argv[1])
if cfg["hide"]:
    libc, MS_RDONLY, MS_BIND = ctypes.CDLL(None, use_errno=True), 1, 4096
    for path in cfg["hide"]:
        if os.path.isdir(path):
            source, fstype, flags, data = b"tmpfs", b"tmpfs", MS_RDONLY, b"size=4k"
        else:
            source, fstype, flags, data = b"/dev/null", None, MS_BIND, None
        if libc.mount(source, path.encode(), fstype, flags, data) != 0:
            sys.stderr.write(f"sandbox: could not hide {path} ({os.strerror(ctypes.get_errno())}); refusing to run\n")
            os._exit(97)
for name, value in cfg["rlimits"].items():
    try:
        resource.setrlimit(getattr(resource, name), (value, value))
    except (ValueError, OSError):
        pass
sys.argv = ["main.py"]
sys.path.insert(0, os.getcwd())
source = open("main.py").read()
try:
    exec(compile(source, "main.py", "exec"), {"__name__": "__main__", "__file__": "main.py"})
except SystemExit:
    raise
except BaseException as exc:
    traceback.print_exception(type(exc), exc, exc.__traceback__.tb_next)
    sys.stderr.flush()
    os._exit(1)
"""


def _setting_default(limit: str) -> Any:
    """The default of the setting ``sandbox_<limit>``, the one source of a limit's default."""
    return Settings.model_fields[f"sandbox_{limit}"].default


@dataclass(frozen=True)
class SandboxLimits:
    """The limits of an execution: each field is the setting ``sandbox_<field>`` (``hidden``: the paths covered)."""

    wall_s: float = _setting_default("wall_s")
    cpu_s: int = _setting_default("cpu_s")
    memory_mb: int = _setting_default("memory_mb")
    max_processes: int = _setting_default("max_processes")
    file_size_mb: int = _setting_default("file_size_mb")
    output_bytes: int = _setting_default("output_bytes")
    network: bool = _setting_default("network")
    hidden: tuple[str, ...] = ()
    isolation: str = _setting_default("isolation")

    @classmethod
    def from_settings(cls, s: Settings) -> SandboxLimits:
        limits = {f.name: getattr(s, f"sandbox_{f.name}") for f in fields(cls) if f.name != "hidden"}
        hidden = tuple(str(Path(p).resolve()) for p in [*s.secret_paths(), *s.sandbox_hidden_paths, *_home_secrets()])
        return cls(**limits, hidden=hidden)


def _home_secrets() -> list[Path]:
    try:
        home = Path.home()
    except RuntimeError:  # no HOME and no passwd entry
        return []
    return [home / name for name in _HOME_SECRETS]


def _unshare_flags(network: bool) -> list[str]:
    return ["unshare", "--pid", "--mount", "--mount-proc", "--fork", "--kill-child"] + ([] if network else ["--net"])


@cache
def _unavailable(kind: str, network: bool) -> str | None:
    """Why ``kind`` isolation does not work here, or None when it does."""
    if kind == "none":
        return None
    if shutil.which(kind if kind == "unshare" else "bwrap") is None:
        return f"'{kind}' is not installed"
    probe_cmd = [*_BWRAP, *([] if network else ["--unshare-net"]), "true"] if kind == "bwrap" else [*_unshare_flags(network), "true"]
    probe = subprocess.run(probe_cmd, capture_output=True)
    return None if probe.returncode == 0 else (probe.stderr.decode().strip() or f"exit code {probe.returncode}")


@cache
def _isolation(wanted: str, network: bool) -> str:
    """The isolation to use: ``wanted``, or for 'auto' the strongest that works ('bwrap', 'unshare', 'none')."""
    if wanted != "auto":
        return wanted
    for kind in ("bwrap", "unshare"):
        why = _unavailable(kind, network)
        if why is None:
            return kind
        log.warning("sandbox: %s isolation unavailable (%s)", kind, why)
    log.warning("sandbox: no namespaces here; generated code runs under resource limits only (see SECURITY.md)")
    return "none"


@cache
def _pids_cgroup_root() -> Path | None:
    """A writable cgroup folder with a ``pids`` controller, or None."""
    v1, v2 = Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup")
    if (v1 / "cgroup.procs").exists() and os.access(v1, os.W_OK):
        return v1
    subtree = v2 / "cgroup.subtree_control"
    if subtree.exists() and "pids" in subtree.read_text().split() and os.access(v2, os.W_OK):
        return v2
    log.warning("sandbox: no writable pids cgroup; the process limit relies on RLIMIT_NPROC")
    return None


def isolation_report(network: bool = False, wanted: str = "auto") -> dict[str, bool | str]:
    """Which containment this machine gives the sandbox (``hides_paths``: hidden paths are enforced)."""
    kind = _isolation(wanted, network)
    namespaces = kind != "none" and _unavailable(kind, network) is None
    return {
        "isolation": kind,
        "namespaces": namespaces,
        "hides_paths": namespaces,
        "read_only_filesystem": namespaces and kind == "bwrap",
        "pids_cgroup": _pids_cgroup_root() is not None,
    }


def _paths_to_hide(limits: SandboxLimits, workdir: Path) -> list[str]:
    """The hidden paths that exist and can be covered without hiding the run's own folder or Python."""
    keep = [workdir.resolve(), Path(sys.prefix).resolve(), Path(sys.executable).resolve()]
    hide = []
    for raw in dict.fromkeys(limits.hidden):
        path = Path(raw).resolve()
        if not path.exists():
            continue
        if any(k == path or path in k.parents for k in keep):
            log.warning("sandbox: not hiding %s: it holds the run folder or the Python environment", path)
            continue
        hide.append(str(path))
    covered = {p for p in hide if any(Path(q) in Path(p).parents for q in hide)}  # inside a hidden folder already
    hide = [p for p in hide if p not in covered]
    if hide and _isolation(limits.isolation, limits.network) == "none":
        log.debug("sandbox: cannot hide %s without mount namespaces; generated code can read them", hide)
        return []
    return hide


class _Capture(threading.Thread):
    """Drains a pipe, keeping the first and last ``cap // 2`` bytes."""

    def __init__(self, stream: IO[bytes], cap: int):
        super().__init__(daemon=True)
        self.stream, self.half = stream, max(cap // 2, 1)
        self.head, self.tail, self.total = bytearray(), bytearray(), 0

    def run(self) -> None:
        for chunk in iter(lambda: self.stream.read(65536), b""):
            self.total += len(chunk)
            room = self.half - len(self.head)
            if room > 0:
                self.head += chunk[:room]
                chunk = chunk[room:]
            if chunk:
                self.tail = (self.tail + chunk)[-self.half :]

    def text(self) -> tuple[str, bool]:
        cut = self.total - len(self.head) - len(self.tail)
        if cut <= 0:
            return (bytes(self.head) + bytes(self.tail)).decode(errors="replace"), False
        marker = f"\n... [{cut} bytes cut] ...\n".encode()
        return (bytes(self.head) + marker + bytes(self.tail)).decode(errors="replace"), True


@cache
def _sweep_stale_cgroups(root: Path) -> None:
    """Remove empty sandbox cgroups left by killed evoskill processes (once per process; young ones may be starting)."""
    for group in root.glob("evoskill-*"):
        try:
            if time.time() - group.stat().st_mtime > 600 and not (group / "cgroup.procs").read_text().strip():
                group.rmdir()
        except OSError:
            pass


def _make_cgroup(max_processes: int) -> Path | None:
    root = _pids_cgroup_root()
    if root is None:
        return None
    _sweep_stale_cgroups(root)
    group = root / f"evoskill-{uuid.uuid4().hex[:12]}"
    try:
        group.mkdir()
        (group / "pids.max").write_text(str(max_processes))
    except OSError as exc:
        log.warning("sandbox: could not make a pids cgroup (%s)", exc)
        return None
    return group


def _forks_refused(group: Path | None) -> int:
    """How many times the cgroup's process limit refused a fork."""
    try:
        return int(dict(line.split() for line in (group / "pids.events").read_text().splitlines()).get("max", 0)) if group else 0
    except (OSError, ValueError):
        return 0


def _kill_all(proc: subprocess.Popen[bytes], group: Path | None) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if group is None:
        return
    for _ in range(50):
        pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.02)
    try:
        group.rmdir()
    except OSError as exc:
        log.warning("sandbox: cgroup %s not removed (%s)", group, exc)


def _environment(workdir: Path) -> dict[str, str]:
    env = {k: os.environ[k] for k in _ENV_PASSTHROUGH if k in os.environ}
    bin_dir = str(Path(sys.executable).parent)
    env.update(
        PATH=f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
        HOME=str(workdir),
        TMPDIR=str(workdir / "tmp"),
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONUNBUFFERED="1",
        MPLBACKEND="Agg",
        OMP_NUM_THREADS="1",
        HF_HUB_OFFLINE="1",
    )
    return env


def _read_answer(stdout: str, workdir: Path) -> tuple[bool, JsonValue, str | None]:
    lines = [line for line in stdout.strip().splitlines() if line.strip()]
    if lines:
        try:
            return True, json.loads(lines[-1]), None
        except json.JSONDecodeError:
            pass
    result_file = workdir / "result.json"
    if result_file.is_file():
        try:
            return True, json.loads(result_file.read_text()), None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            return False, None, f"result.json is not valid JSON ({exc})"
    last = lines[-1][:200] if lines else "<no output>"
    return False, None, f"the script's last stdout line is not a JSON answer (got: {last!r}); print json.dumps(answer) last"


_SIGNALS = {int(s) for s in signal.Signals}


def _diagnose(result: ExecutionResult, limits: SandboxLimits, answer_problem: str | None, forks_refused: int = 0) -> str | None:
    if result.timed_out and forks_refused:
        return f"killed after the {limits.wall_s:g} s wall-clock limit while starting processes beyond its limit of {limits.max_processes} (a fork bomb?)"
    if result.timed_out:
        return f"killed after the {limits.wall_s:g} s wall-clock limit (endless loop or too slow)"
    code = result.exit_code
    if code is not None and code < 0:
        sig = signal.Signals(-code).name
        why = {
            "SIGXCPU": f"the {limits.cpu_s} s CPU-time limit",
            "SIGXFSZ": f"the {limits.file_size_mb} MB file-size limit",
            "SIGKILL": f"a resource limit (memory {limits.memory_mb} MB or {limits.max_processes} processes)",
        }.get(sig, "a signal")
        return f"killed by {sig}: it exceeded {why}"
    if code not in (0, None):
        tail = [line for line in result.stderr.strip().splitlines() if line.strip()]
        last = tail[-1] if tail else "no error message"
        if "Read-only file system" in result.stderr:
            return f"it wrote outside its run folder, which is read-only to generated code; write files in the current folder ({last})"
        if "File too large" in result.stderr:
            return f"it wrote a file over the {limits.file_size_mb} MB file-size limit ({last})"
        if any(m in result.stderr for m in ("Network is unreachable", "Temporary failure in name resolution", "Name or service not known")):
            return f"it tried to reach the network, which the sandbox does not allow (EVOSKILL_SANDBOX_NETWORK); use local data ({last})"
        if "MemoryError" in result.stderr:
            return f"ran out of memory under the {limits.memory_mb} MB limit ({last})"
        if "BlockingIOError" in result.stderr or "Resource temporarily unavailable" in result.stderr:
            return f"could not start more processes (limit {limits.max_processes}): {last}"
        return f"exited with code {code}: {last}"
    return answer_problem


def _command(kind: str, limits: SandboxLimits, workdir: Path, rlimits: dict[str, int]) -> list[str]:
    """The command line that runs main.py under ``kind`` isolation, the launcher applying the limits."""
    hide = _paths_to_hide(limits, workdir)
    python = [sys.executable, "-I", "-c", _LAUNCHER, json.dumps({"rlimits": rlimits, "hide": hide if kind == "unshare" else []})]
    if kind == "unshare":
        return [*_unshare_flags(limits.network), *python]
    if kind == "none":
        return python
    here = str(workdir.resolve())
    hidden = []
    for path in hide:
        hidden += ["--tmpfs", path, "--remount-ro", path] if Path(path).is_dir() else ["--dev-bind", "/dev/null", path]
    network = [] if limits.network else ["--unshare-net"]
    return [*_BWRAP, *network, "--bind", here, here, *hidden, "--chdir", here, "--", *python]


def run_code(code: str, run_root: Path, limits: SandboxLimits, name: str = "run") -> ExecutionResult:
    """Run ``code`` as ``main.py`` in a fresh folder under ``run_root`` and return what happened."""
    kind = _isolation(limits.isolation, limits.network)
    why_not = _unavailable(kind, limits.network)
    if why_not is not None:
        return ExecutionResult(exit_code=None, error=f"the sandbox cannot use {kind} isolation here ({why_not}); set EVOSKILL_SANDBOX_ISOLATION=auto")
    workdir = run_root / f"{name}-{uuid.uuid4().hex[:8]}"
    (workdir / "tmp").mkdir(parents=True)
    (workdir / "main.py").write_text(code)
    group = _make_cgroup(limits.max_processes)
    mb = 1024 * 1024
    rlimits = {
        "RLIMIT_CPU": limits.cpu_s,
        "RLIMIT_AS": limits.memory_mb * mb,
        "RLIMIT_FSIZE": limits.file_size_mb * mb,
        "RLIMIT_NOFILE": 1024,
        "RLIMIT_CORE": 0,
    }
    if group is None:  # ignored for root, but bounds an unprivileged user
        rlimits["RLIMIT_NPROC"] = limits.max_processes
    cmd = _command(kind, limits, workdir, rlimits)
    if group is not None:
        cmd = ["/bin/sh", "-c", _JOIN_CGROUP, "sh", str(group / "cgroup.procs"), *cmd]
    started = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=workdir, env=_environment(workdir), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    readers = [_Capture(proc.stdout, limits.output_bytes), _Capture(proc.stderr, limits.output_bytes)]  # type: ignore[arg-type]  # both are PIPEs: not None
    for reader in readers:
        reader.start()
    timed_out = False
    try:
        proc.wait(timeout=limits.wall_s)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        forks_refused = _forks_refused(group)
        _kill_all(proc, group)
        proc.wait()
    for reader in readers:
        reader.join(timeout=5)
    (stdout, out_cut), (stderr, err_cut) = readers[0].text(), readers[1].text()
    found, answer, problem = (False, None, None) if timed_out else _read_answer(stdout, workdir)
    result = ExecutionResult(
        exit_code=None if timed_out else proc.returncode,
        stdout=stdout,
        stderr=stderr,
        stdout_truncated=out_cut,
        stderr_truncated=err_cut,
        timed_out=timed_out,
        answer_found=found and proc.returncode == 0,
        answer=answer if found and proc.returncode == 0 else None,
        wall_s=time.perf_counter() - started,
        workdir=str(workdir),
    )
    if kind != "none" and result.exit_code is not None and result.exit_code > 128 and (result.exit_code - 128) in _SIGNALS:
        result.exit_code = 128 - result.exit_code  # the wrapper reports a signal's death as 128 + signal
    result.error = None if result.ok else _diagnose(result, limits, problem, forks_refused)
    for stream in ("stdout", "stderr"):  # long outputs stay in the run folder; stages pass a reference and an excerpt
        text = getattr(result, stream)
        if len(text) > _INLINE_CHARS:
            setattr(result, f"{stream}_ref", put_object(text, workdir / "outputs"))
            setattr(result, stream, f"{text[:_HEAD_CHARS]}\n... [{len(text) - _HEAD_CHARS - _TAIL_CHARS} characters: see {stream}_ref] ...\n{text[-_TAIL_CHARS:]}")
    return result
