"""Run generated code in a child process, contained, and read its answer.

Each execution gets a fresh run folder and runs ``main.py`` there, started by the sandbox's launcher
(``launcher.py``), in a new process group, in a per-run cgroup (a process limit and a memory limit for
the whole process tree) where one can be made, under resource limits (CPU seconds, address space, open
files, file size), inside the strongest isolation that works here (``sandbox_isolation``):

- ``bwrap`` (bubblewrap) and ``unshare`` (the fallback; the launcher builds the same view itself with
  bind mounts and ``pivot_root``): an allow-list view of the filesystem (``view.py``), everything
  read-only but the run folder, which is a size-limited tmpfs whose files are copied back afterwards;
  a private ``/dev`` and ``/proc``; no capabilities; new PID, IPC and network namespaces;
- ``none``: limits only, the whole filesystem as the user sees it (warned).

The environment is rebuilt from an allow-list, so API keys never reach the code. A wall-clock timeout
kills the whole run, and so does a cancel (``run_code``'s ``cancel`` event, or the calling context's,
``deployments/cancel.py``): a cold run's launcher is killed with its PID namespace, a warm run's runner is told
on the run's cancel pipe to kill it, and the run's cgroups, where there are some, are killed too. stdout/stderr are captured with a size cap (head and tail kept).

The answer protocol: the script prints its final answer as JSON on its last
non-empty stdout line, or writes ``result.json`` in its working directory.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path
from typing import IO, Any, cast

from pydantic import JsonValue

from deployments.cancel import current_cancel
from deployments.run_outputs import OutputRefused, read_inside
from deployments.sandbox.cgroups import RunCgroups, cgroup_support, make_run_cgroups
from deployments.sandbox.models import ExecutionResult
from deployments.sandbox.objects import put_object
from deployments.sandbox.outputs import OutputReceiver
from deployments.sandbox.view import GROUP, PASSWD, SandboxView, build_view, inside, view_paths
from deployments.sandbox.warm import WarmExecutor, WarmUnavailable, warm_executor
from deployments.secret_paths import hidden_paths
from deployments.settings import Settings

__all__ = ["SandboxLimits", "run_code", "isolation_report", "warm_up"]

log = logging.getLogger(__name__)

_ENV_PASSTHROUGH = ("LANG", "LC_ALL", "LC_CTYPE", "TZ")
_BWRAP = ("bwrap", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--new-session", "--cap-drop", "ALL")
# Joins the run's cgroups ($2..$N+1, N=$1) before anything else starts, then runs the rest of the command.
_JOIN_CGROUPS = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 96; shift; n=$((n - 1)); done; exec "$@"'
# The warm executor keeps its namespaces' powers (to give each run its own) inside a user namespace of its own; its runs drop them.
_BWRAP_WARM = ("bwrap", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-user", "--die-with-parent", "--new-session",
               "--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETPCAP")  # fmt: skip
_LAUNCHER = (Path(__file__).parent / "launcher.py").read_text()
# Run after the launcher's source, whose __future__ import (which must come first) covers it too.
_ZYGOTE = (Path(__file__).parent / "zygote.py").read_text().replace("from __future__ import annotations\n", "")
_WARM_WORK = Path("/sandbox")  # a warm run's folder, inside its view (a cold run's is at its own path)
_SHM_BYTES = 64 * 1024 * 1024  # /dev/shm under bubblewrap: its own small tmpfs (semaphores, small shared arrays)
_RESULT_BYTES = 16 * 1024 * 1024  # result.json: an answer, not a data file
_GRACE_S = 30.0  # after the wall-clock limit, for the launcher to kill the run and hand its files back
_CANCEL_POLL_S = 0.1  # how often a run's wait looks at its cancel event
_CANCEL_GRACE_S = 10.0  # after a cancel, for a warm run's runner to kill it and report

# Outputs longer than this are kept in the run folder (an ObjectRef) and only head and tail travel on.
_INLINE_CHARS, _HEAD_CHARS, _TAIL_CHARS = 8000, 2000, 4000


def _setting_default(limit: str) -> Any:
    """The default of the setting ``sandbox_<limit>``, the one source of a limit's default."""
    return Settings.model_fields[f"sandbox_{limit}"].default


@dataclass(frozen=True)
class SandboxLimits:
    """The limits of an execution: each field is the setting ``sandbox_<field>``.

    ``hidden``: paths kept out even where a granted path holds them; ``inputs``: paths granted to this run, read-only.
    """

    wall_s: float = _setting_default("wall_s")
    cpu_s: int = _setting_default("cpu_s")
    memory_mb: int = _setting_default("memory_mb")
    disk_mb: int = _setting_default("disk_mb")
    max_processes: int = _setting_default("max_processes")
    file_size_mb: int = _setting_default("file_size_mb")
    output_bytes: int = _setting_default("output_bytes")
    network: bool = _setting_default("network")
    hidden: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()
    isolation: str = _setting_default("isolation")
    warm: bool = _setting_default("warm")
    warm_packages: tuple[str, ...] = tuple(Settings.model_fields["sandbox_warm_packages"].default_factory())  # type: ignore[call-arg,misc]

    @classmethod
    def from_settings(cls, s: Settings, inputs: Iterable[str | Path] = ()) -> SandboxLimits:
        limits = {f.name: getattr(s, f"sandbox_{f.name}") for f in fields(cls) if f.name not in ("hidden", "inputs", "warm_packages")}
        hidden = tuple(str(p) for p in hidden_paths(s))  # home credentials: outside the view; covered if a granted input holds them
        granted = tuple(str(Path(p).resolve()) for p in [*s.sandbox_inputs, *inputs])
        return cls(**limits, hidden=hidden, inputs=granted, warm_packages=tuple(s.sandbox_warm_packages))


def _unshare_flags(network: bool, own_user: bool = False) -> list[str]:
    """``unshare``'s arguments; ``own_user``: in a user namespace of its own even for root (the warm executor keeps capabilities)."""
    user = [] if os.geteuid() == 0 and not own_user else ["--user", "--map-root-user"]  # an unprivileged user mounts in its own user namespace
    return ["unshare", "--pid", "--mount", "--mount-proc", "--fork", "--kill-child", *user, *([] if network else ["--net"])]


@cache
def _bwrap_sizes_tmpfs() -> bool:
    """Whether this bubblewrap can limit a tmpfs's size (``--size``, bubblewrap 0.8)."""
    try:
        return "--size" in subprocess.run(["bwrap", "--help"], capture_output=True, text=True).stdout
    except OSError:
        return False


@cache
def _unavailable(kind: str, network: bool) -> str | None:
    """Why ``kind`` isolation does not work here, or None when it does (a real contained run of a tiny script)."""
    if kind == "none":
        return None
    if shutil.which(kind if kind == "unshare" else "bwrap") is None:
        return f"'{kind}' is not installed"
    with tempfile.TemporaryDirectory(prefix="evoskill-probe-") as folder:
        probe = _execute("import json\nprint(json.dumps(1))\n", Path(folder), SandboxLimits(wall_s=30, network=network, warm=False), "probe", kind)
    if probe.ok and probe.answer == 1:
        return None
    lines = [line for line in probe.stderr.strip().splitlines() if line.strip()]
    return lines[-1] if lines else (probe.error or f"exit code {probe.exit_code}")


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
    log.warning(
        "sandbox: no namespaces here; generated code runs under resource limits only: it can read every file the evoskill user "
        "can (home folders, workspaces, the Prefect database), write wherever that user can, and reach the network (see SECURITY.md)"
    )
    return "none"


def isolation_report(network: bool = False, wanted: str = "auto") -> dict[str, bool | str]:
    """Which containment this machine gives the sandbox.

    ``allow_list``: generated code sees only the allow-list view (no other file of the machine);
    ``disk_bound``: what a run writes in total is bounded; ``memory_cgroup``: the memory limit holds for a run's processes together.
    """
    kind = _isolation(wanted, network)
    contained = kind != "none" and _unavailable(kind, network) is None
    cgroups = cgroup_support()
    return {
        "isolation": kind,
        "namespaces": contained,
        "allow_list": contained,
        "read_only_filesystem": contained,
        "disk_bound": contained and (kind == "unshare" or _bwrap_sizes_tmpfs()),
        "pids_cgroup": cgroups["pids"],
        "memory_cgroup": cgroups["memory"],
    }


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


def _environment(workdir: Path) -> dict[str, str]:
    env = {k: os.environ[k] for k in _ENV_PASSTHROUGH if k in os.environ}
    bin_dir = str(Path(sys.executable).parent)
    env.update(
        PATH=f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
        HOME=str(workdir),
        USER="sandbox",
        LOGNAME="sandbox",
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
    if os.path.lexists(workdir / "result.json"):
        try:  # a regular file of the run folder only: never a link or a hard link to a file outside it
            return True, json.loads(read_inside(workdir, "result.json", _RESULT_BYTES)), None
        except OutputRefused as exc:
            return False, None, f"result.json was not read: {exc}"
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            return False, None, f"result.json is not valid JSON ({exc})"
    last = lines[-1][:200] if lines else "<no output>"
    return False, None, f"the script's last stdout line is not a JSON answer (got: {last!r}); print json.dumps(answer) last"


_SIGNALS = {int(s) for s in signal.Signals}


@dataclass(frozen=True)
class _Refusals:
    """What the run's cgroups refused or killed."""

    forks: int = 0
    memory_kills: int = 0


def _outside_view(stderr: str, view: SandboxView | None) -> str | None:
    """The absolute path a 'No such file or directory' error names, when the view does not show it."""
    if view is None:
        return None
    for match in re.finditer(r"No such file or directory: '(/[^']*)'", stderr):
        path = Path(match.group(1))
        if not any(path == Path(p) or Path(p) in path.parents for p in view_paths(view)):
            return str(path)
    return None


def _diagnose(result: ExecutionResult, limits: SandboxLimits, answer_problem: str | None, refused: _Refusals, view: SandboxView | None) -> str | None:
    if result.timed_out and refused.forks:
        return f"killed after the {limits.wall_s:g} s wall-clock limit while starting processes beyond its limit of {limits.max_processes} (a fork bomb?)"
    if result.timed_out:
        return f"killed after the {limits.wall_s:g} s wall-clock limit (endless loop or too slow)"
    if refused.memory_kills:
        return f"ran out of memory: its processes together went over the run's {limits.memory_mb} MB limit; use less memory (smaller arrays, fewer processes)"
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
        outside = _outside_view(result.stderr, view)
        if outside:
            return (f"{outside} is outside the sandbox: generated code sees only its run folder (write files in the current folder), "
                    f"the Python environment, system libraries and inputs granted to the run ({last})")  # fmt: skip
        if "Read-only file system" in result.stderr:
            return f"it wrote outside its run folder, which is read-only to generated code; write files in the current folder ({last})"
        if "File too large" in result.stderr:
            return f"it wrote a file over the {limits.file_size_mb} MB file-size limit ({last})"
        if "No space left on device" in result.stderr:
            return f"it wrote more than the run's {limits.disk_mb} MB disk limit (its folder and /tmp together); write less ({last})"
        if any(m in result.stderr for m in ("Network is unreachable", "Temporary failure in name resolution", "Name or service not known")):
            return f"it tried to reach the network, which the sandbox does not allow (EVOSKILL_SANDBOX_NETWORK); use local data ({last})"
        if "MemoryError" in result.stderr:
            return f"ran out of memory under the {limits.memory_mb} MB limit ({last})"
        if "BlockingIOError" in result.stderr or "Resource temporarily unavailable" in result.stderr:
            return f"could not start more processes (limit {limits.max_processes}): {last}"
        return f"exited with code {code}: {last}"
    return answer_problem


def _data_fd(text: str) -> int:
    """A descriptor bubblewrap reads ``text`` from (a pipe, already closed for writing)."""
    read, write = os.pipe()
    os.write(write, text.encode())
    os.close(write)
    return read


def _bwrap_command(view: SandboxView, limits: SandboxLimits, etc_fds: dict[str, int], warm: bool = False) -> list[str]:
    """bubblewrap's arguments for ``view``; ``warm``: for the warm executor (each run mounts its own folder at ``view.work``)."""
    work, size = view.work, (["--size", str(limits.disk_mb * 1024 * 1024)] if _bwrap_sizes_tmpfs() else [])
    args = [*(_BWRAP_WARM if warm else _BWRAP), *([] if limits.network else ["--unshare-net"])]
    for path in view.scratch:
        args += [*size, "--tmpfs", path]
    for path in view.read_only:
        args += ["--ro-bind", path, path]
    for target, link in view.links:
        args += ["--symlink", target, link]
    for path in view.covered:
        args += ["--tmpfs", path, "--remount-ro", path] if Path(path).is_dir() else ["--dev-bind", "/dev/null", path]  # reads as empty
    for name, fd in etc_fds.items():
        args += ["--ro-bind-data", str(fd), f"/etc/{name}"]
    args += ["--dev", "/dev", "--remount-ro", "/dev", "--size", str(_SHM_BYTES), "--tmpfs", "/dev/shm", "--proc", "/proc"]
    args += ["--dir", work] if warm else [*size, "--tmpfs", work, "--ro-bind", f"{work}/main.py", f"{work}/main.py"]
    return [*args, "--remount-ro", "/", "--chdir", "/" if warm else work, "--"]


def _etc_files(workdir: Path) -> dict[str, str]:
    ids = {"uid": os.getuid(), "gid": os.getgid(), "home": str(workdir)}
    return {"passwd": PASSWD.format(**ids), "group": GROUP.format(**ids)}


def _rlimits(limits: SandboxLimits, groups: RunCgroups) -> dict[str, int]:
    mb = 1024 * 1024
    rlimits = {
        "RLIMIT_CPU": limits.cpu_s,
        "RLIMIT_AS": limits.memory_mb * mb,
        "RLIMIT_FSIZE": limits.file_size_mb * mb,
        "RLIMIT_NOFILE": 1024,
        "RLIMIT_CORE": 0,
    }
    if "pids" not in groups.groups:  # ignored for root, but bounds an unprivileged user
        rlimits["RLIMIT_NPROC"] = limits.max_processes
    return rlimits


@dataclass
class _Started:
    """A run under way: its output streams, its control pipe, and the cold launcher's process (None for a warm run);
    a warm run's cancel pipe (its runner kills the run when a byte comes, or when this end closes)."""

    stdout: IO[bytes]
    stderr: IO[bytes]
    control: int | None
    proc: subprocess.Popen[bytes] | None = None
    cancel: int | None = None


def _start_cold(workdir: Path, limits: SandboxLimits, kind: str, groups: RunCgroups, rlimits: dict[str, int]) -> tuple[_Started, SandboxView | None, Path | None]:
    """Start a new interpreter for the run: the launcher under ``kind`` isolation."""
    contained = kind != "none"
    config: dict[str, Any] = {"rlimits": rlimits, "cwd": str(workdir)}
    prefix: list[str] = []
    pass_fds: list[int] = []
    control_read, root, view = None, None, None
    if contained:
        view = build_view(workdir, limits.inputs, limits.hidden, limits.network)
        control_read, control_write = os.pipe()
        pass_fds.append(control_write)
        config.update(control_fd=control_write, wall_s=limits.wall_s, own_pid_namespace=True)
        if kind == "bwrap":
            etc_fds = {name: _data_fd(text) for name, text in _etc_files(workdir).items()}
            pass_fds += etc_fds.values()
            prefix = _bwrap_command(view, limits, etc_fds)
        else:
            root = workdir / ".sandbox-root"
            root.mkdir()
            config.update(view=view.as_config(), root=str(root), disk_bytes=limits.disk_mb * 1024 * 1024, etc=_etc_files(workdir))
            prefix = _unshare_flags(limits.network)
    cmd = [*prefix, sys.executable, "-I", "-c", f"{_LAUNCHER}\nmain(json.loads(sys.argv[1]))\n", json.dumps(config)]
    if groups.groups:
        cmd = ["/bin/sh", "-c", _JOIN_CGROUPS, "sh", str(len(groups.procs_files)), *groups.procs_files, *cmd]
    try:
        proc = subprocess.Popen(
            cmd, cwd=workdir, env=_environment(workdir), stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, pass_fds=pass_fds,
        )  # fmt: skip
    finally:
        for fd in pass_fds:
            os.close(fd)
    return _Started(proc.stdout, proc.stderr, control_read, proc), view, root  # type: ignore[arg-type]  # both are PIPEs: not None


@cache
def _warm_view_of(inputs: tuple[str, ...], hidden: tuple[str, ...], network: bool) -> SandboxView:
    return build_view(_WARM_WORK, inputs, hidden, network)


def _warm_view(limits: SandboxLimits) -> SandboxView:
    """The view of warm runs under ``limits`` (the same for every run: their folder is always at ``_WARM_WORK``)."""
    return _warm_view_of(limits.inputs, limits.hidden, limits.network)


def _launch_warm(kind: str, limits: SandboxLimits, view: SandboxView) -> Callable[[int], subprocess.Popen[bytes]]:
    """How to start the warm executor for runs under ``limits`` (its socket's descriptor in, its process out)."""

    def launch(sock: int) -> subprocess.Popen[bytes]:
        config: dict[str, Any] = {"socket_fd": sock, "preload": list(limits.warm_packages), "network": limits.network, "places": _places(kind, view, limits)}
        pass_fds = [sock]
        etc = _etc_files(_WARM_WORK)
        if kind == "bwrap":
            etc_fds = {name: _data_fd(text) for name, text in etc.items()}
            prefix = _bwrap_command(view, limits, etc_fds, warm=True)
        else:
            etc_fds = {}
            root = Path(tempfile.mkdtemp(prefix="evoskill-warm-root-"))  # a mount point only, in the executor's own namespace
            atexit.register(shutil.rmtree, root, True)
            config.update(view=view.as_config(), root=str(root), etc=etc)
            prefix = _unshare_flags(limits.network, own_user=True)
        env = {**_environment(_WARM_WORK), "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}  # one thread: a fork copies only one
        cmd = [*prefix, sys.executable, "-I", "-c", f"{_LAUNCHER}\n{_ZYGOTE}\nserve(json.loads(sys.argv[1]))\n", json.dumps(config)]
        try:
            return subprocess.Popen(cmd, cwd="/", env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                    start_new_session=True, pass_fds=[*pass_fds, *etc_fds.values()])  # fmt: skip
        finally:
            for fd in etc_fds.values():
                os.close(fd)

    return launch


def _verify_warm(executor: WarmExecutor) -> str | None:
    """Why ``executor``'s first run did not answer (None when it did): a tiny script through it, in a throwaway folder."""
    profile = _profile(executor)
    with tempfile.TemporaryDirectory(prefix="evoskill-probe-") as folder:
        limits = SandboxLimits(wall_s=30, network=profile.network, warm=True)
        probe = _execute("import json\nprint(json.dumps(1))\n", Path(folder), limits, "probe", profile.kind, executor)
    if probe.ok and probe.answer == 1 and probe.executor == "warm":
        return None
    lines = [line for line in probe.stderr.strip().splitlines() if line.strip()]
    return "; ".join(lines) if lines else (probe.error or f"exit code {probe.exit_code}")


@dataclass(frozen=True)
class _WarmProfile:
    """What a warm executor is for: runs with this isolation, network and view (their folder at ``_WARM_WORK``), these imports."""

    kind: str
    network: bool
    view: SandboxView
    packages: tuple[str, ...]


def _profile(executor: WarmExecutor) -> _WarmProfile:
    return cast(_WarmProfile, executor.key)


def _warm_key(kind: str, limits: SandboxLimits, view: SandboxView) -> _WarmProfile:
    return _WarmProfile(kind, limits.network, view, limits.warm_packages)


def _executor_for(kind: str, limits: SandboxLimits) -> WarmExecutor | None:
    """The ready warm executor for these limits (one starts in the background when there is none), or None: run cold."""
    if not limits.warm or kind == "none":
        return None
    view = _warm_view(limits)
    executor = warm_executor(_warm_key(kind, limits, view), _launch_warm(kind, limits, view), _verify_warm, _spare_groups(limits))
    return executor if executor.alive() and executor.ready.is_set() else None


def _spare_groups(limits: SandboxLimits) -> Callable[[], RunCgroups]:
    """How a warm executor makes the cgroups a run's process waits in (limits and name are the run's, set when it comes)."""
    return lambda: make_run_cgroups(limits.max_processes, limits.memory_mb, f"warm-{uuid.uuid4().hex[:12]}")


def warm_up(limits: SandboxLimits, timeout_s: float = 120.0) -> bool:
    """Start the warm executor for runs under ``limits`` and wait until it is ready; whether it is (a server or worker calls this first)."""
    kind = _isolation(limits.isolation, limits.network)
    if not limits.warm or kind == "none" or _unavailable(kind, limits.network) is not None:
        return False
    view = _warm_view(limits)
    executor = warm_executor(_warm_key(kind, limits, view), _launch_warm(kind, limits, view), _verify_warm, _spare_groups(limits))
    executor.ready.wait(timeout_s)
    return executor.alive() and executor.ready.is_set()


def _places(kind: str, view: SandboxView, limits: SandboxLimits) -> dict[str, Any]:
    """Where a warm run writes: its folder, the view's other writable places (each a tmpfs of its own per run), the read-only paths inside those."""
    return {"work": view.work, "fresh": list(view.scratch), "kept": [p for p in view.read_only if inside(p, view.scratch)],
            "disk_bytes": limits.disk_mb * 1024 * 1024, "shm_bytes": _SHM_BYTES if kind == "bwrap" else 0}  # fmt: skip


def _start_warm(executor: WarmExecutor, code: str, limits: SandboxLimits) -> tuple[_Started, RunCgroups]:
    """Hand the run to the warm executor: its process, waiting in cgroups of its own (given the run's limits), runs ``code``
    and reports on these pipes. WarmUnavailable: run it cold."""
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    control_read, control_write = os.pipe()
    cancel_read, cancel_write = os.pipe()
    code_fd = os.memfd_create("main.py", os.MFD_CLOEXEC)
    os.write(code_fd, code.encode())
    os.lseek(code_fd, 0, os.SEEK_SET)

    def request_for(groups: RunCgroups) -> dict[str, Any]:
        groups.set_limits(limits.max_processes, limits.memory_mb)
        return {"rlimits": _rlimits(limits, groups), "wall_s": limits.wall_s, "disk_bytes": limits.disk_mb * 1024 * 1024}

    try:
        groups = executor.submit(request_for, [out_write, err_write, control_write, code_fd, cancel_read])
    except WarmUnavailable:
        for fd in (out_read, err_read, control_read, cancel_write):
            os.close(fd)
        raise
    finally:
        for fd in (out_write, err_write, control_write, code_fd, cancel_read):
            os.close(fd)
    return _Started(os.fdopen(out_read, "rb"), os.fdopen(err_read, "rb"), control_read, cancel=cancel_write), groups


def _execute(
    code: str, run_root: Path, limits: SandboxLimits, name: str, kind: str, executor: WarmExecutor | None = None,
    cancel: threading.Event | None = None,
) -> ExecutionResult:  # fmt: skip
    """Run ``code`` under ``kind`` isolation (known to work) in a fresh folder under ``run_root``: forked by ``executor``, else cold;
    killed when ``cancel`` is set."""
    workdir = (run_root / f"{name}-{uuid.uuid4().hex[:8]}").resolve()
    (workdir / "tmp").mkdir(parents=True)
    (workdir / "main.py").write_text(code)
    mb = 1024 * 1024
    contained = kind != "none"
    root: Path | None = None
    started_at = time.perf_counter()
    run: _Started | None = None
    view: SandboxView | None = None
    if executor is not None:
        try:
            (run, groups), view = _start_warm(executor, code, limits), _profile(executor).view
        except WarmUnavailable as exc:
            log.warning("sandbox: the warm executor did not take the run (%s); it runs cold", exc)
    if run is None:
        groups = make_run_cgroups(limits.max_processes, limits.memory_mb, workdir.name)
        run, view, root = _start_cold(workdir, limits, kind, groups, _rlimits(limits, groups))
    warm = run.proc is None
    receiver = OutputReceiver(run.control, workdir, (limits.disk_mb + 64) * mb * 2) if run.control is not None else None
    readers = [_Capture(run.stdout, limits.output_bytes), _Capture(run.stderr, limits.output_bytes)]
    for thread in [*readers, *([receiver] if receiver else [])]:
        thread.start()
    timed_out = cancelled = False
    deadline = limits.wall_s + (_GRACE_S if contained else 0)
    try:
        if run.proc is not None:
            cancelled = _wait(run.proc, deadline, cancel)
        elif receiver is not None:
            cancelled = _join(receiver, deadline, cancel)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        if run.cancel is not None:  # a warm run's runner kills what is left of it now (cancelled, or past its deadline)
            _stop_warm(run.cancel, stop=cancelled or timed_out)
            if cancelled and receiver is not None:
                receiver.join(_CANCEL_GRACE_S)
        refused = _Refusals(groups.forks_refused(), groups.memory_kills())
        _kill_all(run.proc, groups)
        if run.proc is not None:
            run.proc.wait()
    for reader in readers:
        reader.join(timeout=5)
    exit_code: int | None = run.proc.returncode if run.proc is not None else None
    outputs_problem = None
    if receiver is not None:
        receiver.join(timeout=_CANCEL_GRACE_S if cancelled else 60)
        outputs_problem = receiver.problem
        if receiver.status is not None:
            timed_out = timed_out or bool(receiver.status.get("timed_out"))
            status = receiver.status.get("status")
            exit_code = os.waitstatus_to_exitcode(status) if isinstance(status, int) else exit_code
        elif exit_code is not None and exit_code > 128 and (exit_code - 128) in _SIGNALS:
            exit_code = 128 - exit_code  # the wrapper reports a signal's death as 128 + signal
        elif warm and not timed_out:
            outputs_problem = _warm_loss(executor)
    if root is not None:
        try:
            root.rmdir()
        except OSError as exc:
            log.warning("sandbox: %s not removed (%s)", root, exc)
    (stdout, out_cut), (stderr, err_cut) = readers[0].text(), readers[1].text()
    if outputs_problem and not cancelled:
        stderr += f"\nsandbox: {outputs_problem}\n"
    found, answer, problem = (False, None, None) if timed_out or cancelled else _read_answer(stdout, workdir)
    result = ExecutionResult(
        exit_code=None if timed_out or cancelled else exit_code,
        stdout=stdout,
        stderr=stderr,
        stdout_truncated=out_cut,
        stderr_truncated=err_cut,
        timed_out=timed_out,
        cancelled=cancelled,
        answer_found=found and exit_code == 0,
        answer=answer if found and exit_code == 0 else None,
        wall_s=time.perf_counter() - started_at,
        workdir=str(workdir),
        executor="warm" if warm else "cold",
    )
    if cancelled:
        result.error = f"cancelled by its caller after {result.wall_s:.1f} s; its processes were killed"
    else:
        result.error = None if result.ok else _diagnose(result, limits, problem, refused, view)
    for stream in ("stdout", "stderr"):  # long outputs stay in the run folder; stages pass a reference and an excerpt
        text = getattr(result, stream)
        if len(text) > _INLINE_CHARS:
            setattr(result, f"{stream}_ref", put_object(text, workdir / "outputs"))
            setattr(result, stream, f"{text[:_HEAD_CHARS]}\n... [{len(text) - _HEAD_CHARS - _TAIL_CHARS} characters: see {stream}_ref] ...\n{text[-_TAIL_CHARS:]}")
    return result


def _warm_loss(executor: WarmExecutor | None) -> str:
    """Why a warm run handed back no status: the executor stopped under it, or the run could not start."""
    if executor is not None and executor.gone(within_s=1.0):
        return "the warm executor stopped during the run, so the run was lost; the next run starts a new one"
    return "the run ended before reporting its status (it could not start, or was killed from outside)"


def _wait(proc: subprocess.Popen[bytes], timeout: float, cancel: threading.Event | None = None) -> bool:
    """Wait for ``proc`` to exit, woken by the kernel the moment it does (``Popen.wait`` polls in steps of up to 50 ms),
    looking at ``cancel`` every ``_CANCEL_POLL_S``; whether it was cancelled first (``proc`` still runs then).
    ``TimeoutExpired`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    try:
        pidfd: int | None = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # before Linux 5.3
        pidfd = None
    try:
        while True:
            if cancel is not None and cancel.is_set():
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(proc.args, timeout)
            step = left if cancel is None else min(left, _CANCEL_POLL_S)
            if pidfd is None:
                try:
                    proc.wait(timeout=step)
                    return False
                except subprocess.TimeoutExpired:
                    continue
            if select.select([pidfd], [], [], step)[0]:
                break
    finally:
        if pidfd is not None:
            os.close(pidfd)
    proc.wait()
    return False


def _join(receiver: OutputReceiver, timeout: float, cancel: threading.Event | None = None) -> bool:
    """Wait for a warm run's report, looking at ``cancel`` every ``_CANCEL_POLL_S``; whether it was cancelled first.
    ``TimeoutExpired`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while receiver.is_alive():
        if cancel is not None and cancel.is_set():
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            raise subprocess.TimeoutExpired("warm run", timeout)
        receiver.join(left if cancel is None else min(left, _CANCEL_POLL_S))
    return False


def _stop_warm(cancel_fd: int, stop: bool) -> None:
    """Close a warm run's cancel pipe; ``stop``: first say so with a byte, so its runner kills the run at once."""
    try:
        if stop:
            os.write(cancel_fd, b"x")
    except OSError:  # the runner is gone already
        pass
    finally:
        os.close(cancel_fd)


def _kill_all(proc: subprocess.Popen[bytes] | None, groups: RunCgroups) -> None:
    """Kill what is left of a run; a warm run (no launcher process here) is torn down after it reports: not waited for."""
    if proc is not None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    groups.kill_all_and_remove(wait=proc is not None)


def run_code(code: str, run_root: Path, limits: SandboxLimits, name: str = "run", cancel: threading.Event | None = None) -> ExecutionResult:
    """Run ``code`` as ``main.py`` in a fresh folder under ``run_root`` and return what happened.

    ``cancel`` (default: the calling context's, ``deployments.cancel``): once it is set the run is killed at once and
    comes back ``cancelled`` with no answer; set before the run, the run does not start.
    """
    cancel = cancel if cancel is not None else current_cancel()
    if cancel is not None and cancel.is_set():
        return ExecutionResult(exit_code=None, cancelled=True, error="cancelled by its caller before it started")
    kind = _isolation(limits.isolation, limits.network)
    why_not = _unavailable(kind, limits.network)
    if why_not is not None:
        return ExecutionResult(exit_code=None, error=f"the sandbox cannot use {kind} isolation here ({why_not}); set EVOSKILL_SANDBOX_ISOLATION=auto")
    return _execute(code, run_root, limits, name, kind, _executor_for(kind, limits), cancel)
