"""Run generated code in a child process, contained, and read its answer.

Each execution gets a fresh working directory and runs ``main.py`` there in a new
process group, inside new PID and mount (and, unless allowed, network) namespaces when
``unshare`` works, in a ``pids`` cgroup when one can be made, under resource limits
(CPU seconds, address space, open files, file size). Paths the code must not read
(the store's files, benchmark answer files) are covered in its mount namespace: an
empty read-only tmpfs over a folder, ``/dev/null`` over a file. The environment is rebuilt from
an allow-list, so API keys never reach the code. A wall-clock timeout kills the whole
group. stdout/stderr are captured with a size cap (head and tail kept).

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
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import IO

from tasks.context import put_object
from tasks.models import ExecutionResult
from tasks.settings import Settings

__all__ = ["SandboxLimits", "run_code", "isolation_report"]

log = logging.getLogger(__name__)

_ENV_PASSTHROUGH = ("LANG", "LC_ALL", "LC_CTYPE", "TZ")
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
if cfg["cgroup_procs"]:
    try:
        with open(cfg["cgroup_procs"], "w") as fh:
            fh.write(str(os.getpid()))
    except OSError:
        pass
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


@dataclass(frozen=True)
class SandboxLimits:
    wall_s: float = 120.0
    cpu_s: int = 120
    memory_mb: int = 4096
    max_processes: int = 64
    file_size_mb: int = 256
    output_bytes: int = 64_000
    network: bool = False
    hidden: tuple[str, ...] = ()

    @classmethod
    def from_settings(cls, s: Settings) -> SandboxLimits:
        return cls(
            wall_s=s.sandbox_wall_s,
            cpu_s=s.sandbox_cpu_s,
            memory_mb=s.sandbox_memory_mb,
            max_processes=s.sandbox_max_processes,
            file_size_mb=s.sandbox_file_size_mb,
            output_bytes=s.sandbox_output_bytes,
            network=s.sandbox_network,
            hidden=tuple(str(Path(p).resolve()) for p in [s.store_root(), *s.sandbox_hidden_paths]),
        )


@cache
def _unshare_prefix(network: bool) -> tuple[str, ...]:
    """``unshare`` flags that work here (new PID namespace, no network), or () with a warning."""
    if shutil.which("unshare") is None:
        log.warning("sandbox: 'unshare' not found; generated code runs without PID/network namespaces")
        return ()
    flags = ["unshare", "--pid", "--mount", "--fork", "--kill-child"] + ([] if network else ["--net"])
    probe = subprocess.run([*flags, "true"], capture_output=True)
    if probe.returncode != 0:
        log.warning("sandbox: namespaces unavailable (%s); running without them", probe.stderr.decode().strip())
        return ()
    return tuple(flags)


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


def isolation_report(network: bool = False) -> dict[str, bool]:
    """Which containment primitives this machine gives the sandbox (``hides_paths``: hidden paths are enforced)."""
    namespaces = bool(_unshare_prefix(network))
    return {"namespaces": namespaces, "hides_paths": namespaces, "pids_cgroup": _pids_cgroup_root() is not None}


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
    if hide and not _unshare_prefix(limits.network):
        log.warning("sandbox: cannot hide %s without mount namespaces; generated code can read them", hide)
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


def _make_cgroup(max_processes: int) -> Path | None:
    root = _pids_cgroup_root()
    if root is None:
        return None
    group = root / f"evoskill-{uuid.uuid4().hex[:12]}"
    try:
        group.mkdir()
        (group / "pids.max").write_text(str(max_processes))
    except OSError as exc:
        log.warning("sandbox: could not make a pids cgroup (%s)", exc)
        return None
    return group


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


def _read_answer(stdout: str, workdir: Path) -> tuple[bool, object, str | None]:
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


def _diagnose(result: ExecutionResult, limits: SandboxLimits, answer_problem: str | None) -> str | None:
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
        if "MemoryError" in result.stderr:
            return f"ran out of memory under the {limits.memory_mb} MB limit ({last})"
        if "BlockingIOError" in result.stderr or "Resource temporarily unavailable" in result.stderr:
            return f"could not start more processes (limit {limits.max_processes}): {last}"
        return f"exited with code {code}: {last}"
    return answer_problem


def run_code(code: str, run_root: Path, limits: SandboxLimits, name: str = "run") -> ExecutionResult:
    """Run ``code`` as ``main.py`` in a fresh folder under ``run_root`` and return what happened."""
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
    cfg = {"cgroup_procs": str(group / "cgroup.procs") if group else None, "rlimits": rlimits, "hide": _paths_to_hide(limits, workdir)}
    cmd = [*_unshare_prefix(limits.network), sys.executable, "-I", "-c", _LAUNCHER, json.dumps(cfg)]
    started = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=workdir, env=_environment(workdir), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    readers = [_Capture(proc.stdout, limits.output_bytes), _Capture(proc.stderr, limits.output_bytes)]  # type: ignore[arg-type]
    for reader in readers:
        reader.start()
    timed_out = False
    try:
        proc.wait(timeout=limits.wall_s)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
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
    result.error = None if result.ok else _diagnose(result, limits, problem)
    for stream in ("stdout", "stderr"):  # long outputs stay in the run folder; stages pass a reference and an excerpt
        text = getattr(result, stream)
        if len(text) > _INLINE_CHARS:
            setattr(result, f"{stream}_ref", put_object(text, workdir / "outputs"))
            setattr(result, stream, f"{text[:_HEAD_CHARS]}\n... [{len(text) - _HEAD_CHARS - _TAIL_CHARS} characters: see {stream}_ref] ...\n{text[-_TAIL_CHARS:]}")
    return result
