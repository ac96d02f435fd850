"""Run generated code in a child process, contained, and read its answer.

Each execution gets a fresh run folder and runs ``main.py`` there, started by the sandbox's launcher
(``launcher.py``), in a new process group, in a per-run cgroup (a process limit and a memory limit for
the whole process tree) where one can be made, under resource limits (CPU seconds, address space, open
files, file size), inside the strongest isolation that works here (``isolations/``, ``sandbox_isolation``):

- ``bwrap`` (bubblewrap) and ``unshare`` (the fallback; the launcher builds the same view itself with
  bind mounts and ``pivot_root``): an allow-list view of the filesystem (``view.py``), everything
  read-only but the run folder, which is a size-limited tmpfs whose files are handed back afterwards
  (``handback.py``, read as data); a private ``/dev``; the run's process is PID 1 of a PID namespace of its own,
  with its own ``/proc`` (the kernel's knobs read-only), where it cannot see or open its launcher; no capabilities;
  new IPC, UTS and network namespaces;
- ``none``: limits only, the whole filesystem as the user sees it (warned).

Where evoskill runs as root, a run's processes get an unprivileged user id of their own (``isolations/base.py``'s
``RUN_IDS``), in every isolation: generated code is never root of the host.

The environment is rebuilt from an allow-list, so API keys never reach the code. A wall-clock timeout
kills the whole run, the hand-back of its folder included, and so does a cancel (``run_code``'s ``cancel`` event, or
the calling context's, ``deployments/cancel.py``): a cold run's launcher is killed with its PID namespace, a warm run's
runner is told on the run's cancel pipe to kill it, and the run's cgroups, where there are some, are killed too.
stdout/stderr are captured with a size cap (head and tail kept). Run folders are removed after their retention
(``retention.py``).

The answer protocol (``diagnosis.py``): the script prints its final answer as JSON on its last
non-empty stdout line, or writes ``result.json`` in its working directory.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
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
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import IO, Any, cast

from deployments.cancel import current_cancel
from deployments.sandbox.cgroups import RunCgroups, cgroup_support, make_run_cgroups
from deployments.sandbox.diagnosis import Refusals, diagnose, read_answer
from deployments.sandbox.egress import egress_proxy
from deployments.sandbox.handback import HandBack, HandBackBounds
from deployments.sandbox.imports import MAX_IMPORTS, code_imports, roots_of
from deployments.sandbox.isolations import ISOLATIONS, Isolation
from deployments.sandbox.isolations.base import WARM_WORK, run_ids
from deployments.sandbox.limits import MB, SandboxLimits, rlimits
from deployments.sandbox.models import ExecutionResult
from deployments.sandbox.objects import put_object
from deployments.sandbox.retention import mark_run, sweep_now_and_then
from deployments.sandbox.view import EGRESS, SandboxView, build_view, inside
from deployments.sandbox.warm import WarmExecutor, WarmUnavailable, extra_executor, warm_executor

__all__ = ["SandboxLimits", "run_code", "isolation_report", "warm_up", "warm_up_meanwhile", "warm_up_for"]

log = logging.getLogger(__name__)

_ENV_PASSTHROUGH = ("LANG", "LC_ALL", "LC_CTYPE", "TZ")
# Only for a run given GPU devices: which of them it may use, and where the driver's libraries are.
_GPU_ENV_PASSTHROUGH = ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "LD_LIBRARY_PATH")
# Joins the run's cgroups ($2..$N+1, N=$1) before anything else starts, then runs the rest of the command.
_JOIN_CGROUPS = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 96; shift; n=$((n - 1)); done; exec "$@"'
_LAUNCHER = (Path(__file__).parent / "launcher.py").read_text()
# Run after the launcher's source, whose __future__ import (which must come first) covers it too.
_ZYGOTE = (Path(__file__).parent / "zygote.py").read_text().replace("from __future__ import annotations\n", "")
_EGRESS_PORT = 3128  # with the network on: the web proxy on each run's own 127.0.0.1, relayed to evoskill's
_GRACE_S = 15.0  # after the wall-clock limit: for the launcher to start, kill the run and hand its folder back
_HANDBACK_S = 10.0  # of which the hand-back may take this much
_CANCEL_POLL_S = 0.1  # how often a run's wait looks at its cancel event
_CANCEL_GRACE_S = 10.0  # after a cancel, for a warm run's runner to kill it and report

# Outputs longer than this are kept in the run folder (an ObjectRef) and only head and tail travel on.
_INLINE_CHARS, _HEAD_CHARS, _TAIL_CHARS = 8000, 2000, 4000
_SIGNALS = {int(s) for s in signal.Signals}


@cache
def _unavailable(kind: str, network: bool) -> str | None:
    """Why ``kind`` isolation does not work here, or None when it does (a real contained run of a tiny script)."""
    isolation = ISOLATIONS[kind]
    missing = isolation.missing()
    if missing is not None or not isolation.contained:
        return missing
    with tempfile.TemporaryDirectory(prefix="evoskill-probe-") as folder:
        probe = _execute("import json\nprint(json.dumps(1))\n", Path(folder), SandboxLimits(wall_s=30, network=network, warm=False), "probe", kind)
    if probe.ok and probe.answer == 1:
        return None
    lines = [line for line in probe.stderr.strip().splitlines() if line.strip()]
    return lines[-1] if lines else (probe.error or f"exit code {probe.exit_code}")


@cache
def _isolation(wanted: str, network: bool) -> str:
    """The isolation to use: ``wanted``, or for 'auto' the strongest that works (``ISOLATIONS``' order; 'none' last)."""
    if wanted != "auto":
        return wanted
    for kind, isolation in ISOLATIONS.items():
        if not isolation.contained:
            continue
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
    ``disk_bound``: what a run writes in total is bounded; ``memory_cgroup``: the memory limit holds for a run's processes together;
    ``own_user``: a run's processes have a user of their own, not root (only where evoskill runs as root; elsewhere they are
    evoskill's user); ``works``: runs can start here at all (``why_not`` says why not).
    """
    kind = _isolation(wanted, network)
    why_not = _unavailable(kind, network)
    contained = ISOLATIONS[kind].contained and why_not is None
    cgroups = cgroup_support()
    return {
        "isolation": kind,
        "works": why_not is None,
        "why_not": why_not or "",
        "namespaces": contained,
        "allow_list": contained,
        "read_only_filesystem": contained,
        "disk_bound": contained and ISOLATIONS[kind].bounds_disk(),
        "pids_cgroup": cgroups["pids"],
        "memory_cgroup": cgroups["memory"],
        "own_user": run_ids() is not None,
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


def _egress(limits: SandboxLimits) -> dict[str, Any] | None:
    """With the network on, where a run's relay listens and the proxy's socket it carries connections to; else None."""
    return {"socket": EGRESS, "port": _EGRESS_PORT} if limits.network else None


def _egress_socket(limits: SandboxLimits) -> str | None:
    """With the network on, this process's web proxy (started on first use): its socket on the host; else None."""
    if not limits.network:
        return None
    global _egress_folder
    if _egress_folder is None:
        _egress_folder = Path(tempfile.mkdtemp(prefix="evoskill-egress-"))  # short (a socket's path is at most 107 bytes), owner-only
        atexit.register(shutil.rmtree, _egress_folder, True)
    return str(egress_proxy(_egress_folder).socket_path)


_egress_folder: Path | None = None


def _environment(workdir: Path, network: bool = False, gpu: bool = False) -> dict[str, str]:
    env = {k: os.environ[k] for k in (*_ENV_PASSTHROUGH, *(_GPU_ENV_PASSTHROUGH if gpu else ())) if k in os.environ}
    if "LD_LIBRARY_PATH" in env:  # absolute folders only: an empty or relative entry would be the run's own folder
        env["LD_LIBRARY_PATH"] = ":".join(part for part in env["LD_LIBRARY_PATH"].split(":") if part.startswith("/"))
    if network:  # the only way out: evoskill's web proxy, through the run's own 127.0.0.1
        proxy = f"http://127.0.0.1:{_EGRESS_PORT}"
        env.update({name: proxy for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")})
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


@dataclass
class _Started:
    """A run under way: its output streams, its control pipe, and the cold launcher's process (None for a warm run);
    a warm run's cancel pipe (its runner kills the run when a byte comes, or when this end closes)."""

    stdout: IO[bytes]
    stderr: IO[bytes]
    control: int | None
    proc: subprocess.Popen[bytes] | None = None
    cancel: int | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def stop(self, groups: RunCgroups) -> None:
        """Kill the run and whatever hands its folder back, now (from any thread)."""
        with self._lock:
            if self.proc is not None:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            elif self.cancel is not None:
                try:
                    os.write(self.cancel, b"x")
                except OSError:  # the runner is gone already
                    pass
        groups.kill()

    def close_cancel(self, stop: bool) -> None:
        """Close a warm run's cancel pipe; ``stop``: first say so with a byte, so its runner kills the run at once."""
        with self._lock:
            if self.cancel is None:
                return
            try:
                if stop:
                    os.write(self.cancel, b"x")
            except OSError:  # the runner is gone already
                pass
            finally:
                os.close(self.cancel)
                self.cancel = None


def _handback(limits: SandboxLimits) -> dict[str, Any]:
    """What the launcher may hand back of the run folder (its own count: evoskill checks again)."""
    return {"max_files": limits.max_files, "max_bytes": limits.disk_mb * MB, "seconds": _HANDBACK_S}


def _start_cold(workdir: Path, limits: SandboxLimits, isolation: Isolation, groups: RunCgroups) -> tuple[_Started, SandboxView | None, Path | None]:
    """Start a new interpreter for the run: the launcher under ``isolation``; the run's view and a mount point to remove."""
    view = build_view(workdir, limits.inputs, limits.hidden, limits.network, _egress_socket(limits), limits.devices) if isolation.contained else None
    containment = isolation.cold(view, limits, workdir)
    config: dict[str, Any] = {"rlimits": rlimits(limits, groups), "cwd": str(workdir), "ids": run_ids(), "contained": isolation.contained,
                              **containment.config}  # fmt: skip
    pass_fds = list(containment.pass_fds)
    control_read = None
    if isolation.contained:
        control_read, control_write = os.pipe()
        pass_fds.append(control_write)
        config.update(control_fd=control_write, wall_s=limits.wall_s, handback=_handback(limits), egress=_egress(limits))
    cmd = [*containment.prefix, sys.executable, "-I", "-c", f"{_LAUNCHER}\nmain(json.loads(sys.argv[1]))\n", json.dumps(config)]
    if groups.groups:
        cmd = ["/bin/sh", "-c", _JOIN_CGROUPS, "sh", str(len(groups.procs_files)), *groups.procs_files, *cmd]
    try:
        proc = subprocess.Popen(
            cmd, cwd=workdir, env=_environment(workdir, limits.network and isolation.contained, bool(limits.devices)), stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, pass_fds=pass_fds,
        )  # fmt: skip
    finally:
        for fd in pass_fds:
            os.close(fd)
    return _Started(proc.stdout, proc.stderr, control_read, proc), view, containment.mount_point  # type: ignore[arg-type]  # both are PIPEs: not None


@cache
def _warm_view_of(inputs: tuple[str, ...], hidden: tuple[str, ...], network: bool, egress: str | None) -> SandboxView:
    return build_view(WARM_WORK, inputs, hidden, network, egress)


def _warm_view(limits: SandboxLimits) -> SandboxView:
    """The view of warm runs under ``limits`` (the same for every run: their folder is always at ``WARM_WORK``)."""
    return _warm_view_of(limits.inputs, limits.hidden, limits.network, _egress_socket(limits))


def _launch_warm(isolation: Isolation, limits: SandboxLimits, view: SandboxView) -> Callable[[int], subprocess.Popen[bytes]]:
    """How to start the warm executor for runs under ``limits`` (its socket's descriptor in, its process out)."""

    def launch(sock: int) -> subprocess.Popen[bytes]:
        containment = isolation.warm(view, limits)
        config: dict[str, Any] = {"socket_fd": sock, "preload": list(limits.warm_packages), "network": limits.network,
                                  "places": _places(isolation, view, limits), **containment.config}  # fmt: skip
        env = {**_environment(WARM_WORK, limits.network), "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}  # one thread: a fork copies only one
        cmd = [*containment.prefix, sys.executable, "-I", "-c", f"{_LAUNCHER}\n{_ZYGOTE}\nserve(json.loads(sys.argv[1]))\n", json.dumps(config)]
        try:
            return subprocess.Popen(cmd, cwd="/", env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                    start_new_session=True, pass_fds=[sock, *containment.pass_fds])  # fmt: skip
        finally:
            for fd in containment.pass_fds:
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


def _executor_for(kind: str, limits: SandboxLimits, code: str = "") -> WarmExecutor | None:
    """The ready warm executor for a run of ``code`` under these limits, or None: run cold (one starts in the background
    when there is none).

    Where the packages' executor has not imported a module ``code`` imports (``imports.py``), the run goes to the executor
    started for the stored skills' imports (``warm_up_for``) or to one started for exactly its own, where that has them;
    else to the packages' executor. Code whose imports were asked for before (a skill's verification run, then its first
    answer) gets an executor of its own, started in the background (``warm.extra_executor`` bounds how many and how often);
    a run never lands on an executor started for other code's imports."""
    if not limits.warm or limits.devices or not ISOLATIONS[kind].contained:  # a GPU run starts cold: executors have no devices
        return None
    view = _warm_view(limits)
    base = _warm_key(kind, limits, view)
    executor = _warm_executor(kind, limits, view, base)
    if not (executor.alive() and executor.ready.is_set()):
        return None
    wanted = _warmable(base, code_imports(code, roots_of(limits.warm_packages)) if code else frozenset(), executor)
    if executor.holds(wanted):
        return executor
    own = _importing(base, wanted)
    for key in (_for_skills.get(base), own):
        other = _extra(kind, limits, view, key, start=False) if key is not None else None
        if other is not None and other.holds(wanted):
            return other
        if other is not None and other.ready.is_set() and other.alive():  # ready without them: they do not import here
            _unwarmable.setdefault(base, set()).update(wanted - other.modules)
    if len(wanted) <= MAX_IMPORTS and _asked_before(own):
        _extra(kind, limits, view, own)
    return executor


_asked: dict[_WarmProfile, int] = {}  # import sets the packages' executor lacked, and how often runs asked for them
_for_skills: dict[_WarmProfile, _WarmProfile] = {}  # the packages' executor's profile → the one for the stored skills' imports
_unwarmable: dict[_WarmProfile, set[str]] = {}  # modules that failed to import in an executor of that profile


def _importing(base: _WarmProfile, modules: frozenset[str]) -> _WarmProfile:
    """The profile of an executor that imports ``modules`` besides ``base``'s packages (the same set, the same profile)."""
    return replace(base, packages=(*base.packages, *sorted(modules - set(base.packages))))


def _asked_before(profile: _WarmProfile) -> bool:
    """Whether a run asked for these imports before (counted here; a one-off set starts no executor)."""
    if len(_asked) > 1000:
        _asked.clear()
    _asked[profile] = _asked.get(profile, 0) + 1
    return _asked[profile] > 1


def _warmable(base: _WarmProfile, wanted: frozenset[str], executor: WarmExecutor) -> frozenset[str]:
    """``wanted`` less the modules that do not import in an executor here (the packages' executor's failures among them)."""
    failed = _unwarmable.setdefault(base, set())
    failed.update(str(name) for name in executor.info.get("missing", {}))
    return frozenset(m for m in wanted if not any(m == f or m.startswith(f"{f}.") for f in failed))


def _warm_executor(kind: str, limits: SandboxLimits, view: SandboxView, profile: _WarmProfile) -> WarmExecutor:
    """The packages' executor for ``profile`` (started in the background where there is none)."""
    launch = _launch_warm(ISOLATIONS[kind], replace(limits, warm_packages=profile.packages), view)
    return warm_executor(profile, launch, _verify_warm, _spare_groups(limits))


def _extra(kind: str, limits: SandboxLimits, view: SandboxView, profile: _WarmProfile, start: bool = True) -> WarmExecutor | None:
    """The executor that imports ``profile``'s packages, more than the packages' own (``warm.extra_executor``)."""
    launch = _launch_warm(ISOLATIONS[kind], replace(limits, warm_packages=profile.packages), view)
    return extra_executor(profile, launch, _verify_warm, _spare_groups(limits), start)


def _spare_groups(limits: SandboxLimits) -> Callable[[], RunCgroups]:
    """How a warm executor makes the cgroups a run's process waits in (limits and name are the run's, set when it comes)."""
    return lambda: make_run_cgroups(limits.max_processes, limits.memory_mb, f"warm-{uuid.uuid4().hex[:12]}")


def warm_up(limits: SandboxLimits, timeout_s: float = 120.0) -> bool:
    """Start the warm executor for runs under ``limits`` and wait until it is ready; whether it is (a server or worker calls this first)."""
    kind = _isolation(limits.isolation, limits.network)
    if not limits.warm or not ISOLATIONS[kind].contained or _unavailable(kind, limits.network) is not None:
        return False
    view = _warm_view(limits)
    executor = _warm_executor(kind, limits, view, _warm_key(kind, limits, view))
    executor.ready.wait(timeout_s)
    return executor.alive() and executor.ready.is_set()


def warm_up_meanwhile(limits: SandboxLimits) -> None:
    """Start the warm executor for runs under ``limits`` in the background (``warm_up`` on a thread of its own)."""
    import threading

    threading.Thread(target=warm_up, args=(limits,), name="evoskill-warm-up", daemon=True).start()


def warm_up_for(codes: Iterable[str], limits: SandboxLimits) -> bool:
    """Start, in the background, an executor that also imports what ``codes`` import of the packages and the packages'
    executor has not (the stored skills' code: none of their answers then waits for an import); whether one was started.
    Call it once the packages' executor is ready (``warm_up``)."""
    kind = _isolation(limits.isolation, limits.network)
    if not limits.warm or not ISOLATIONS[kind].contained or _unavailable(kind, limits.network) is not None:
        return False
    view = _warm_view(limits)
    base = _warm_key(kind, limits, view)
    executor = _warm_executor(kind, limits, view, base)
    roots = roots_of(limits.warm_packages)
    wanted = _warmable(base, frozenset().union(*(code_imports(code, roots) for code in codes)), executor)
    if not executor.ready.is_set() or executor.holds(wanted) or len(wanted) > MAX_IMPORTS:
        return False
    profile = _importing(base, wanted)
    if _extra(kind, limits, view, profile) is None:
        return False
    _for_skills[base] = profile
    return True


def _places(isolation: Isolation, view: SandboxView, limits: SandboxLimits) -> dict[str, Any]:
    """Where a warm run writes: its folder, the view's other writable places (each a tmpfs of its own per run), the read-only
    paths inside those; the pool its user is picked from."""
    return {"work": view.work, "fresh": list(view.scratch), "kept": [p for p in view.read_only if inside(p, view.scratch)],
            "disk_bytes": limits.disk_mb * MB, "shm_bytes": isolation.shm_bytes, "ids": run_ids(), "egress": _egress(limits)}  # fmt: skip


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
        return {"rlimits": rlimits(limits, groups), "wall_s": limits.wall_s, "disk_bytes": limits.disk_mb * MB, "handback": _handback(limits)}

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
    main = workdir / "main.py"
    main.write_text(code)  # its owner's only, as the workspace is: the launcher reads it before it becomes the run's user
    isolation = ISOLATIONS[kind]
    started_at = time.perf_counter()
    deadline = time.monotonic() + limits.wall_s + (_GRACE_S if isolation.contained else 0)
    run: _Started | None = None
    view: SandboxView | None = None
    mount_point: Path | None = None
    if executor is not None:
        try:
            (run, groups), view = _start_warm(executor, code, limits), _profile(executor).view
        except WarmUnavailable as exc:
            log.warning("sandbox: the warm executor did not take the run (%s); it runs cold", exc)
    if run is None:
        groups = make_run_cgroups(limits.max_processes, limits.memory_mb, workdir.name)
        run, view, mount_point = _start_cold(workdir, limits, isolation, groups)
    warm = run.proc is None
    started = run
    bounds = HandBackBounds(limits.max_files, limits.disk_mb * MB, deadline)
    handback = HandBack(run.control, workdir, bounds, lambda: started.stop(groups)) if run.control is not None else None
    readers = [_Capture(run.stdout, limits.output_bytes), _Capture(run.stderr, limits.output_bytes)]
    for thread in [*readers, *([handback] if handback else [])]:
        thread.start()
    timed_out = cancelled = False
    try:
        if run.proc is not None:
            cancelled = _wait(run.proc, deadline - time.monotonic(), cancel)
        elif handback is not None:
            cancelled = _join(handback, deadline - time.monotonic(), cancel)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        run.close_cancel(stop=cancelled or timed_out)  # a warm run's runner kills what is left of it now (cancelled, or past its deadline)
        refused = Refusals(groups.forks_refused(), groups.memory_kills())
        if cancelled or timed_out:
            run.stop(groups)
        _kill_all(run.proc, groups)
        if run.proc is not None:
            run.proc.wait()
    for reader in readers:
        reader.join(timeout=5)
    exit_code: int | None = run.proc.returncode if run.proc is not None else None
    outputs_problem = left_behind = None
    if handback is not None:
        handback.join(timeout=max(deadline - time.monotonic(), 0) + 1)  # it ends by the deadline on its own
        outputs_problem, left_behind = handback.problem, handback.left_behind
        if handback.status is not None:
            timed_out = timed_out or handback.status.timed_out
            status = handback.status.status
            exit_code = os.waitstatus_to_exitcode(status) if isinstance(status, int) else exit_code
            refused = Refusals(refused.forks, refused.memory_kills, handback.status.cpu_s)
        elif exit_code is not None and exit_code > 128 and (exit_code - 128) in _SIGNALS:
            exit_code = 128 - exit_code  # the wrapper reports a signal's death as 128 + signal
        elif warm and not timed_out and not cancelled:
            outputs_problem = _warm_loss(executor)
    if mount_point is not None:
        try:
            mount_point.rmdir()
        except OSError as exc:
            log.warning("sandbox: %s not removed (%s)", mount_point, exc)
    (stdout, out_cut), (stderr, err_cut) = readers[0].text(), readers[1].text()
    if outputs_problem and not cancelled:
        stderr += f"\nsandbox: {outputs_problem}\n"
    found, answer, problem = (False, None, None) if timed_out or cancelled else read_answer(stdout, workdir)
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
        result.error = None if result.ok else diagnose(result, limits, problem, refused, view)
    if left_behind and not cancelled:  # after the diagnosis, which reads the run's own last error
        result.stderr += f"\nsandbox: not kept from the run folder: {left_behind}\n"
    for stream in ("stdout", "stderr"):  # long outputs stay in the run folder; stages pass a reference and an excerpt
        text = getattr(result, stream)
        if len(text) > _INLINE_CHARS:
            setattr(result, f"{stream}_ref", put_object(text, workdir / "outputs"))
            setattr(result, stream, f"{text[:_HEAD_CHARS]}\n... [{len(text) - _HEAD_CHARS - _TAIL_CHARS} characters: see {stream}_ref] ...\n{text[-_TAIL_CHARS:]}")
    mark_run(workdir, result.ok)
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


def _join(receiver: HandBack, timeout: float, cancel: threading.Event | None = None) -> bool:
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


def _kill_all(proc: subprocess.Popen[bytes] | None, groups: RunCgroups) -> None:
    """Kill what is left of a run; a warm run (no launcher process here) is torn down after it reports: not waited for."""
    if proc is not None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    groups.kill_all_and_remove(wait=proc is not None)


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        log.warning(message)


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
    sweep_now_and_then(run_root, limits.run_retention_s, limits.failed_run_retention_s)
    if limits.devices and not (ISOLATIONS[kind].contained and cgroup_support()["memory"]):
        why = "no memory cgroup would bound them" if ISOLATIONS[kind].contained else f"{kind} isolation has no view to show them in"
        _warn_once(f"sandbox: runs that prefer a GPU get no GPU device here ({why}); they run on the CPU")
        limits = replace(limits, devices=())
    return _execute(code, run_root, limits, name, kind, _executor_for(kind, limits, code), cancel)
