"""The sandbox's first program: it runs inside the containment, before and after the generated code.

It is not imported: ``execute`` reads this file and starts it as ``python -I -c <source> <config>`` with a
last line that calls ``main`` (a cold run) or, after ``zygote.py``'s source, ``serve`` (the warm executor), so
it uses the standard library only. In order, a cold run:

1. under the ``unshare`` fallback, builds the allow-list view itself: a new root of bind mounts (read-only),
   a size-limited tmpfs run folder, a few devices and its own ``/proc``; ``pivot_root`` into it, detaches the
   old root and drops every capability (bubblewrap does the same before this program starts);
2. starts ``main.py`` as ``__main__`` in a child under the resource limits, with a clean traceback;
3. waits for it, up to the wall-clock limit, then kills every other process of the run (in its PID namespace);
4. writes a status line and the run folder's files (a tar stream) to the control descriptor, so outputs
   written in a run folder that lives only in the sandbox are kept.
"""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import sys
import time

TYPE_CHECKING = False  # read as true by type checkers; importing typing would cost milliseconds at every start
if TYPE_CHECKING:
    from typing import Any, NoReturn

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_MOVE, MS_REC, MS_PRIVATE = (
    1, 2, 4, 8, 32, 1024, 2048, 4096, 8192, 16384, 1 << 18)  # fmt: skip
MNT_DETACH = 2
PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 38, 47, 4
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}
# The kernel's keyrings (add_key, request_key, keyctl) and the audit architecture, per machine: denied to generated code.
KEYRING_CALLS = {"x86_64": (0xC000003E, (248, 249, 250)), "aarch64": (0xC00000B7, (217, 218, 219)), "riscv64": (0xC00000F3, (217, 218, 219))}
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
FAILED_SETUP = 97

libc: Any = None  # the C library, loaded (with ctypes) only to build a view

def fail(message: str) -> NoReturn:
    sys.stderr.write(f"sandbox: {message}; refusing to run\n")
    sys.stderr.flush()
    os._exit(FAILED_SETUP)


def check(result: int, what: str) -> None:
    if result != 0:
        import ctypes

        fail(f"{what} ({os.strerror(ctypes.get_errno())})")


def _bytes(value: str | None) -> bytes | None:
    return value.encode() if value is not None else None


def mount(source: str | None, target: str, fstype: str | None = None, flags: int = 0, data: str | None = None) -> None:
    check(libc.mount(_bytes(source), _bytes(target), _bytes(fstype), flags, _bytes(data)), f"could not mount {target}")


def make_point(path: str, like: str) -> None:
    """An empty file or folder at ``path`` to mount ``like`` over."""
    if os.path.isdir(like):
        os.makedirs(path, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if not os.path.exists(path):
            open(path, "w").close()


def bind(source: str, target: str, read_only: bool = True, recursive: bool = True) -> None:
    make_point(target, source)
    mount(source, target, None, MS_BIND | (MS_REC if recursive else 0))
    if read_only:  # keeping the flags the source has (a user namespace may not drop them)
        kept = os.statvfs(target).f_flag & (MS_NOEXEC | MS_NOATIME | MS_NODIRATIME)
        mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | kept)


def link(target: str, path: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.symlink(target, path)


def drop_capabilities() -> None:
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "could not set no_new_privs")
    for cap in range(64):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            break
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    import ctypes

    header = (ctypes.c_uint32 * 2)(0x20080522, 0)
    data = (ctypes.c_uint32 * 6)()
    check(libc.capset(header, data), "could not drop capabilities")


def deny_keyrings() -> None:
    """A seccomp filter: the kernel's keyrings answer EPERM (they are the user's, shared by every run of the user)."""
    known = KEYRING_CALLS.get(os.uname().machine)
    if known is None:  # another architecture: no filter (SECURITY.md)
        return
    import ctypes

    if libc is None:
        load_libc()
    arch, calls = known
    ld, jeq, ret, alu_and = 0x20, 0x15, 0x06, 0x54  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, BPF_RET|K, BPF_ALU|AND|K
    allow, eperm = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM
    n = len(calls)
    program = [(ld, 0, 0, 4), (jeq, 0, n + 2, arch), (ld, 0, 0, 0), (alu_and, 0, 0, 0xBFFFFFFF)]  # other arch: allow; x32 bit off
    program += [(jeq, n - i, 0, call) for i, call in enumerate(calls)]
    program += [(ret, 0, 0, allow), (ret, 0, 0, eperm)]

    class Filter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint32)]

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Filter))]

    filters = (Filter * len(program))(*[Filter(*op) for op in program])
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "could not set no_new_privs")
    check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(Program(len(program), filters)), 0, 0), "could not deny the keyrings")


def pivot(new_root: str) -> None:
    """Make ``new_root`` the root and detach the old one."""
    os.chdir(new_root)
    number = SYS_PIVOT_ROOT.get(os.uname().machine)
    if number is not None and libc.syscall(number, b".", b".") == 0:
        check(libc.umount2(b".", MNT_DETACH), "could not detach the old root")
    else:  # no pivot_root here: move the new root over / and enter it
        mount(".", "/", None, MS_MOVE)
        check(libc.chroot(b"."), "could not enter the new root")
    os.chdir("/")


def load_libc() -> None:
    global libc
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)


def build_view(cfg: dict[str, Any], warm: bool = False) -> None:
    """The allow-list view as a new root (the ``unshare`` fallback; bubblewrap builds it from its arguments).

    ``warm``: for the warm executor, which mounts each run's folder itself and keeps its capabilities to do so.
    """
    load_libc()
    view, root = cfg["view"], cfg["root"]
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,mode=755")
    size = f",size={cfg['disk_bytes']}" if cfg.get("disk_bytes") else ""
    for path in view["scratch"]:
        os.makedirs(root + path)
        mount("tmpfs", root + path, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777{size}")
    for path in view["read_only"]:
        bind(path, root + path)
    for path in view["covered"]:
        if os.path.isdir(path):
            mount("tmpfs", root + path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "size=4k,mode=755")
        else:
            bind("/dev/null", root + path, read_only=False, recursive=False)  # reads as empty
    for target, path in view["links"]:
        link(target, root + path)
    work = root + view["work"]
    os.makedirs(work, exist_ok=True)
    if not warm:
        mount("tmpfs", work, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=755{size}")
        with open(os.path.join(view["work"], "main.py"), "rb") as src, open(os.path.join(work, "main.py"), "wb") as dst:
            dst.write(src.read())
    os.makedirs(root + "/dev", exist_ok=True)
    mount("tmpfs", root + "/dev", "tmpfs", MS_NOSUID, "size=64k,mode=755")
    for name in DEVICES:
        if os.path.exists("/dev/" + name):
            bind("/dev/" + name, f"{root}/dev/{name}", read_only=False, recursive=False)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2"), ("shm", view["work"] + "/tmp")):  # fmt: skip
        link(target, f"{root}/dev/{name}")
    os.makedirs(root + "/proc")
    mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for name, text in cfg.get("etc", {}).items():
        with open(f"{root}/etc/{name}", "w") as fh:
            fh.write(text)
    mount(None, root, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    pivot(root)
    if not warm:
        drop_capabilities()


def start_main(rlimits: dict[str, int], forked: bool = False, report_fd: int | None = None) -> None:
    """In the child: apply the limits and run main.py as __main__ (a traceback without launcher frames).

    ``forked``: a fork of the warm executor, which ends as the interpreter would (threads joined, atexit handlers
    run, main.py's objects released, buffers flushed) without tearing down the modules it did not import itself,
    and says so on ``report_fd``.
    """
    for name, value in rlimits.items():
        try:
            resource.setrlimit(getattr(resource, name), (value, value))
        except (ValueError, OSError):
            pass
    deny_keyrings()
    sys.argv = ["main.py"]
    sys.path.insert(0, os.getcwd())
    source = open("main.py").read()
    namespace = {"__name__": "__main__", "__file__": "main.py"}
    code = 0
    try:
        exec(compile(source, "main.py", "exec"), namespace)
    except SystemExit as exc:
        if not forked:
            raise
        code = exit_code(exc)
    except BaseException as exc:
        import traceback

        traceback.print_exception(type(exc), exc, exc.__traceback__.tb_next if exc.__traceback__ else None)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)
    if forked:
        finish(namespace, code, report_fd)


def exit_code(exc: SystemExit) -> int:
    """The exit status the interpreter gives ``sys.exit(code)``."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    sys.stderr.write(f"{exc.code}\n")
    return 1


def finish(namespace: dict[str, Any], code: int, report_fd: int | None = None) -> NoReturn:
    """End a forked run as the interpreter would end it, but for freeing the modules the executor had imported.

    ``report_fd``: where to say the run is over (its exit code) once its output is out, before the process is torn down.
    """
    import atexit
    import gc
    import threading

    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()  # non-daemon threads finish first
    atexit._run_exitfuncs()
    namespace.clear()  # main.py's objects: files it left open are flushed and closed
    gc.collect()
    sys.stdout.flush()
    sys.stderr.flush()
    if report_fd is not None:
        for fd in (1, 2):  # the output ends here: whoever reads it need not wait for this process to be torn down
            os.close(fd)
        try:
            os.write(report_fd, str(code).encode())
        except OSError:
            pass
    os._exit(code)


def wait(pid: int, wall_s: float | None, report: Any = None, cancel: int | None = None) -> tuple[int | None, bool]:
    """The child's wait status and whether the wall-clock limit ran out first; ``(None, False)``: cancelled.

    ``report``: a socket on which the child says its exit code once its output is out (a warm run), so its
    teardown is not waited for; when it closes without a word, the child's own status tells how it ended.
    ``cancel``: a descriptor that turns readable (a byte, or its other end closed) when the caller cancels the run.
    """
    if wall_s is None and report is None and cancel is None:
        return os.waitpid(pid, 0)[1], False
    deadline = time.monotonic() + (wall_s if wall_s is not None else float("inf"))
    try:
        pidfd: int | None = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    watched = [fd for fd in (pidfd, report.fileno() if report is not None else None, cancel) if fd is not None]
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status, False
        left = deadline - time.monotonic()
        if left <= 0:
            return None, True
        ready = select.select(watched, [], [], min(left, 3600.0 if pidfd is not None else 0.02))[0]
        if cancel is not None and cancel in ready:
            return None, False
        if report is not None and report.fileno() in ready:
            said = report.recv(64)
            try:
                code = int(said.decode("ascii").strip()) if said else None
            except (UnicodeDecodeError, ValueError):
                code = None
            if code is not None and 0 <= code <= 255:  # the child is to be killed now (the caller does): it has said it is done
                return code << 8, False
            # closed, or not a code: the report is only a hint; the child's own end, the wall clock and a cancel rule
            watched = [fd for fd in (pidfd, cancel) if fd is not None]


def kill_the_rest() -> None:
    """Kill every other process of the run (signals reach only this PID namespace); reap what is ours."""
    try:
        os.kill(-1, signal.SIGKILL)
    except OSError:
        pass
    while True:
        try:
            if os.waitpid(-1, 0)[0] == 0:
                break
        except ChildProcessError:
            break


def send_outputs(fd: int, status: int | None, timed_out: bool) -> None:
    """A status line, then the run folder's files (but main.py) as an uncompressed tar stream."""
    with os.fdopen(fd, "wb") as out:
        out.write((json.dumps({"status": status, "timed_out": timed_out}) + "\n").encode())
        out.flush()
        names = [name for name in sorted(os.listdir(".")) if name != "main.py"]
        if names == ["tmp"] and not os.listdir("tmp"):
            return  # nothing written: no archive
        import tarfile

        try:
            with tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as tar:
                for name in names:
                    tar.add(name, recursive=True)
        except (OSError, tarfile.TarError) as exc:
            sys.stderr.write(f"sandbox: outputs not all kept ({exc})\n")


def main(cfg: dict[str, Any]) -> NoReturn:
    """Run main.py once (``cfg``: the run's folder, limits and control descriptor; under ``unshare``, its view too)."""
    if cfg.get("view"):
        build_view(cfg)
    os.chdir(cfg["cwd"])
    os.makedirs("tmp", exist_ok=True)
    control = cfg.get("control_fd")
    pid = os.fork()
    if pid == 0:
        if control is not None:
            os.close(control)
        start_main(cfg["rlimits"], forked=bool(cfg.get("forked")))
        raise SystemExit(0)  # the interpreter's own exit: buffers flushed, atexit handlers run
    status, timed_out = wait(pid, cfg.get("wall_s"))
    if cfg.get("own_pid_namespace") and os.getpid() <= 2:  # pid 1 or 2 only inside its own PID namespace: never the host's
        kill_the_rest()
    if control is not None:
        send_outputs(control, status, timed_out)
    if timed_out or status is None:
        os._exit(124)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if os.getpid() != 1:  # die the same way, so the caller sees the signal
            signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status))
