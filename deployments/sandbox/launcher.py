"""The sandbox's first program: it runs inside the containment, before and after the generated code.

It is not imported: ``execute`` reads this file and starts it as ``python -I -c <source> <config>`` with a
last line that calls ``main`` (a cold run) or, after ``zygote.py``'s source, ``serve`` (the warm executor), so
it uses the standard library only. In order, a cold run:

1. under the ``unshare`` fallback, builds the allow-list view itself: a new root of bind mounts (read-only),
   a size-limited tmpfs run folder, a few devices and its own ``/proc``; ``pivot_root`` into it and detaches the
   old root (bubblewrap does the same before this program starts). It keeps only the capabilities it needs to
   give the run namespaces of its own and, where evoskill runs as root, a user id of its own;
2. makes itself impossible to open (not dumpable), enters a new PID namespace and forks ``main.py``'s process:
   PID 1 of that namespace, with a mount namespace and ``/proc`` of its own, ``/proc/sys`` and the other kernel
   knobs read-only, and no way to see or open this launcher. Where evoskill runs as root the process becomes an
   unprivileged user picked for the run (never uid 0 of the host); then it drops every capability and runs
   ``main.py`` under the resource limits, with a clean traceback;
3. waits for it, up to the wall-clock limit, then kills it (and with PID 1 every process of the run);
4. with the run's own rights (its user id, no capabilities), writes a status line and the run folder's regular
   files and folders to the control descriptor (``send_outputs``: framed, bounded in files, bytes and time), so
   outputs written in a run folder that lives only in the sandbox are kept. evoskill reads them as data.
"""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import stat
import sys
import time

TYPE_CHECKING = False  # read as true by type checkers; importing typing would cost milliseconds at every start
if TYPE_CHECKING:
    from typing import Any, NoReturn

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_MOVE, MS_REC, MS_PRIVATE = (
    1, 2, 4, 8, 32, 1024, 2048, 4096, 8192, 16384, 1 << 18)  # fmt: skip
MNT_DETACH = 2
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWNET = 0x00020000, 0x04000000, 0x08000000, 0x20000000, 0x40000000
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 1, 4, 24, 38, 47, 4
# What the launcher and the warm executor keep (CAP_CHOWN, CAP_KILL, CAP_SETGID, CAP_SETUID, CAP_SETPCAP, CAP_NET_ADMIN,
# CAP_SYS_ADMIN): enough to give a run its namespaces (its loopback up), its folder and its user, and to stop it; the run's own
# process keeps none.
KEPT_CAPABILITIES = (0, 5, 6, 7, 8, 12, 21)
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}
# The kernel's keyrings (add_key, request_key, keyctl) and the audit architecture, per machine: denied to generated code.
KEYRING_CALLS = {"x86_64": (0xC000003E, (248, 249, 250)), "aarch64": (0xC00000B7, (217, 218, 219)), "riscv64": (0xC00000F3, (217, 218, 219))}
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
# Kernel knobs under a run's own /proc, shown read-only (sysctls, the magic SysRq key, interrupts, buses, file systems).
PROC_READ_ONLY = ("sys", "sysrq-trigger", "irq", "bus", "fs")
ACCOUNTS = "/etc/passwd", "/etc/group"
FAILED_SETUP = 97
CHUNK = 1 << 16

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


def load_libc() -> None:
    global libc
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)


def set_capabilities(kept: tuple[int, ...] = ()) -> None:
    """Keep only those of the capabilities ``kept`` this process has (effective and permitted; none inheritable or ambient)."""
    import ctypes

    if libc is None:
        load_libc()
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)
    data = (ctypes.c_uint32 * 6)()
    check(libc.capget(header, data), "could not read capabilities")
    low = sum(1 << cap for cap in kept if cap < 32) & data[1]
    high = sum(1 << (cap - 32) for cap in kept if cap >= 32) & data[4]
    data = (ctypes.c_uint32 * 6)(low, low, 0, high, high, 0)  # (effective, permitted, inheritable) for bits 0-31, then 32-63
    check(libc.capset(header, data), "could not set capabilities")


def not_dumpable() -> None:
    """Nobody without privileges can open this process's descriptors, memory or environment through /proc, or trace it."""
    if libc is None:
        load_libc()
    check(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "could not make the launcher undumpable")


def become(ids: list[int] | None) -> None:
    """Give up every privilege for good: the run's own user and group (``ids``; None: stay who this is), no capabilities
    (the bounding set too), no new privileges. What follows runs, or reads a run's files, with the run's rights only."""
    if libc is None:
        load_libc()
    for cap in range(64):  # needs CAP_SETPCAP: done before the user changes
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            break
    if ids is not None:
        uid, gid = ids
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
    set_capabilities(())
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "could not set no_new_privs")


def pick_ids(pool: list[int] | None) -> list[int] | None:
    """A user and group id for one run from ``pool`` (first id, count), or None where evoskill does not run as root."""
    if not pool:
        return None
    first, count = pool
    uid = first + int.from_bytes(os.urandom(4), "little") % count
    return [uid, uid]


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


def build_view(cfg: dict[str, Any], warm: bool = False) -> None:
    """The allow-list view as a new root (the ``unshare`` fallback; bubblewrap builds it from its arguments).

    ``warm``: for the warm executor, which mounts each run's folder itself. The capabilities stay: the caller keeps
    those it needs (``KEPT_CAPABILITIES``) and each run drops them all.
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
    covered = []
    for path in view["covered"]:
        if os.path.isdir(path):  # read-only once the run folder, which may lie inside it, has its mount point
            mount("tmpfs", root + path, "tmpfs", MS_NOSUID | MS_NODEV, "size=4k,mode=755")
            covered.append(root + path)
        else:
            bind("/dev/null", root + path, read_only=False, recursive=False)  # reads as empty
    for target, path in view["links"]:
        link(target, root + path)
    if view.get("egress"):  # evoskill's web proxy: the only way out of the run's network namespace
        source, shown = view["egress"]
        bind(source, root + shown, recursive=False)
    work = root + view["work"]
    os.makedirs(work, exist_ok=True)
    if not warm:
        mount("tmpfs", work, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=755{size}")
        with open(os.path.join(view["work"], "main.py"), "rb") as src, open(os.path.join(work, "main.py"), "wb") as dst:
            dst.write(src.read())
    for path in covered:
        mount(None, path, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.makedirs(root + "/dev", exist_ok=True)
    mount("tmpfs", root + "/dev", "tmpfs", MS_NOSUID, "size=64k,mode=755")
    for name in DEVICES:
        if os.path.exists("/dev/" + name):
            bind("/dev/" + name, f"{root}/dev/{name}", read_only=False, recursive=False)
    for source, shown in view.get("devices", []):  # a GPU run's devices
        bind(source, root + shown, read_only=False, recursive=False)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2"), ("shm", view["work"] + "/tmp")):  # fmt: skip
        link(target, f"{root}/dev/{name}")
    os.makedirs(root + "/proc")
    mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for name, text in cfg.get("etc", {}).items():
        with open(f"{root}/etc/{name}", "w") as fh:
            fh.write(text)
    mount(None, root + "/dev", None, MS_REMOUNT | MS_RDONLY | MS_NOSUID)
    mount(None, root, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    pivot(root)


def loopback_up() -> None:
    """Bring up the loopback interface of this (new) network namespace: a run's own 127.0.0.1."""
    import fcntl
    import socket
    import struct

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        flags = struct.unpack("16sH22x", fcntl.ioctl(probe, SIOCGIFFLAGS, struct.pack("16sH22x", b"lo", 0)))[1]
        if not flags & IFF_UP:
            fcntl.ioctl(probe, SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags | IFF_UP))


def close_all_but(kept: set[int]) -> None:
    """Close every descriptor of this process but ``kept``."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd not in kept:
            try:
                os.close(fd)
            except OSError:
                pass


def start_relay(egress: dict[str, Any] | None, ids: list[int] | None) -> None:
    """With the network on (``egress``: the proxy's socket in the view, the port), a process of its own that listens on the
    run's own 127.0.0.1 (its ``HTTP_PROXY``) and carries each connection to evoskill's web proxy, both ways.

    The proxy decides what may be reached (public addresses only); the relay only moves bytes, half-closes included. It runs
    as the run's user, without privileges, outside the run's PID namespace, and dies with its parent. Started before the run
    gets that namespace: a process that has entered another one for its children cannot start threads.
    """
    if not egress:
        return
    import socket
    import threading

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", egress["port"]))
    listener.listen(64)
    if os.fork():
        listener.close()
        return
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    close_all_but({0, 1, 2, listener.fileno()})
    become(ids)
    not_dumpable()

    def carry(source: Any, sink: Any, done: list[int]) -> None:
        try:
            while data := source.recv(CHUNK):
                sink.sendall(data)
        except OSError:
            pass
        try:
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        done.append(1)
        if len(done) == 2:
            source.close()
            sink.close()

    while True:
        client, _ = listener.accept()
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(egress["socket"])
        except OSError:
            client.close()
            upstream.close()
            continue
        done: list[int] = []
        for source, sink in ((client, upstream), (upstream, client)):
            threading.Thread(target=carry, args=(source, sink, done), daemon=True).start()


def enter_run(ids: list[int] | None, home: str, pts: bool = False) -> None:
    """In the run's first process, PID 1 of its own PID namespace, in its folder: a mount namespace and /proc of its own
    (the kernel's knobs read-only; under bubblewrap, terminals of its own), its own entry in the accounts, its folder
    made its user's, then ``become(ids)``."""
    check(libc.unshare(CLONE_NEWNS), "could not give the run a mount namespace")
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for name in PROC_READ_ONLY:
        if os.path.lexists("/proc/" + name):
            bind("/proc/" + name, "/proc/" + name)
    if pts:  # terminals of its own: another run's are not there (/dev/ptmx points into /dev/pts)
        mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620")
    uid, gid = ids if ids is not None else (os.getuid(), os.getgid())
    entries = (f"sandbox:x:{uid}:{gid}:sandbox:{home}:/bin/sh\n", f"sandbox:x:{gid}:\n")
    for path, text in zip(ACCOUNTS, entries, strict=True):
        if os.path.exists(path):  # shown on top of the view's: a file of the run folder, bound and then unlinked
            made = f".evoskill-{os.path.basename(path)}"
            with open(made, "w") as fh:
                fh.write(text)
            os.chmod(made, 0o644)
            bind(made, path, recursive=False)
            os.unlink(made)
    hand_over(ids)
    become(ids)


def hand_over(ids: list[int] | None) -> None:
    """Make the run folder (the current one) and its ``tmp`` the run's user's."""
    if ids is not None:
        for path in (".", "tmp"):
            os.chown(path, *ids)


def start_main(rlimits: dict[str, int], forked: bool = False, report_fd: int | None = None, source: str | None = None) -> None:
    """In the child: apply the limits and run main.py as __main__ (a traceback without launcher frames).

    ``forked``: a fork of the warm executor, which ends as the interpreter would (threads joined, atexit handlers
    run, main.py's objects released, buffers flushed) without tearing down the modules it did not import itself,
    and says so on ``report_fd``. ``source``: main.py as read before the launcher became the run's user.
    """
    for name, value in rlimits.items():
        try:
            resource.setrlimit(getattr(resource, name), (value, value))
        except (ValueError, OSError):
            pass
    deny_keyrings()
    sys.argv = ["main.py"]
    sys.path.insert(0, os.getcwd())
    if source is None:
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


def wait(pid: int, wall_s: float | None, report: Any = None, cancel: int | None = None) -> tuple[int | None, bool, float]:
    """The child's wait status, whether the wall-clock limit ran out first, and the CPU seconds it used (``None`` status
    and not timed out: cancelled, or it said it is done; the caller kills it then).

    ``report``: a socket on which the child says its exit code once its output is out (a warm run), so its
    teardown is not waited for; when it closes without a word, the child's own status tells how it ended.
    ``cancel``: a descriptor that turns readable (a byte, or its other end closed) when the caller cancels the run.
    """
    deadline = time.monotonic() + (wall_s if wall_s is not None else float("inf"))
    try:
        pidfd: int | None = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    watched = [fd for fd in (pidfd, report.fileno() if report is not None else None, cancel) if fd is not None]
    said: int | None = None
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            return (status if said is None else said << 8), False, usage.ru_utime + usage.ru_stime
        if said is not None:
            return said << 8, False, 0.0
        left = deadline - time.monotonic()
        if left <= 0:
            return None, True, 0.0
        ready = select.select(watched, [], [], min(left, 3600.0 if pidfd is not None else 0.02))[0]
        if cancel is not None and cancel in ready:
            return None, False, 0.0
        if report is not None and report.fileno() in ready:
            message = report.recv(64)
            try:
                code = int(message.decode("ascii").strip()) if message else None
            except (UnicodeDecodeError, ValueError):
                code = None
            if code is not None and 0 <= code <= 255:  # the child is to be killed now (the caller does): it has said it is done
                said = code
                continue
            # closed, or not a code: the report is only a hint; the child's own end, the wall clock and a cancel rule
            watched = [fd for fd in (pidfd, cancel) if fd is not None]


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def send_outputs(fd: int, status: int | None, timed_out: bool, cpu_s: float, bounds: dict[str, Any]) -> None:
    """A status line, then the run folder's folders and regular files (but main.py), each a header line and its bytes.

    Only what a run may hand back goes: no links, devices, pipes or sockets; names that are not UTF-8 stay behind; at
    most ``bounds['max_files']`` entries and ``bounds['max_bytes']`` bytes by length (a sparse file counts in full),
    within ``bounds['seconds']``; folders in name order, each before what it holds. An end line says what stayed
    behind and why. evoskill checks all of it again.
    """
    deadline = time.monotonic() + bounds["seconds"]
    files_left, bytes_left = bounds["max_files"], bounds["max_bytes"]
    skipped: dict[str, int] = {}

    def skip(why: str) -> None:
        skipped[why] = skipped.get(why, 0) + 1

    def header(entry: dict[str, Any]) -> None:
        write_all(fd, (json.dumps(entry) + "\n").encode())

    header({"status": status, "timed_out": timed_out, "cpu_s": round(cpu_s, 3)})
    stopped = None
    root = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    pending = [("", iter(listing(root, "", files_left + 1, skip)))]  # folders being sent: their path, what is left of them
    try:
        while pending and stopped is None:
            prefix, entries = pending[-1]
            entry = next(entries, None)
            if entry is None:
                pending.pop()
                continue
            name, kind = entry
            if time.monotonic() > deadline:
                stopped = f"the hand-back took more than {bounds['seconds']:g} s"
            elif files_left <= 0:
                stopped = f"more than {bounds['max_files']} files and folders"
            elif stat.S_ISDIR(kind):
                header({"path": prefix + name, "type": "dir"})
                files_left -= 1
                pending.append((prefix + name + "/", iter(listing(root, prefix + name + "/", files_left + 1, skip))))
            elif stat.S_ISREG(kind):
                folder = open_folder(root, prefix)
                try:
                    bytes_left = send_file(fd, folder, name, prefix + name, bytes_left, skip, header)
                finally:
                    os.close(folder)
                files_left -= 1
            else:
                skip("links, devices, pipes and sockets")
    except OSError as exc:  # the reader has gone (evoskill stopped the hand-back): nothing more to say
        if exc.errno in (32, 104):  # EPIPE, ECONNRESET
            return
        raise
    finally:
        os.close(root)
    header({"end": True, "skipped": skipped, "stopped": stopped})


def listing(root: int, path: str, most: int, skip: Any) -> list[tuple[str, int]]:
    """The names in the folder ``path`` below ``root`` and their kinds (not following links), at most ``most``, in name
    order; the run's own script and evoskill's names at the top are left out."""
    found: list[tuple[str, int]] = []
    try:
        folder = open_folder(root, path)
    except OSError:
        skip("folders it could not read")
        return found
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if len(found) >= most:
                    break
                if not path and (entry.name == "main.py" or entry.name.startswith(".evoskill")):
                    continue
                try:
                    entry.name.encode("utf-8")
                    found.append((entry.name, entry.stat(follow_symlinks=False).st_mode))
                except (UnicodeEncodeError, OSError):
                    skip("names that are not UTF-8, or gone")
    finally:
        os.close(folder)
    return sorted(found)


def open_folder(root: int, path: str) -> int:
    """The folder ``path`` (``a/b/``) below ``root``, each step opened without following a link."""
    fd = os.dup(root)
    for name in path.split("/"):
        if name:
            try:
                step = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            finally:
                os.close(fd)
            fd = step
    return fd


def send_file(fd: int, folder: int, name: str, path: str, bytes_left: int, skip: Any, header: Any) -> int:
    """One regular file, opened without following links; the bytes left to send after it."""
    try:
        src = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC, dir_fd=folder)
    except OSError:
        skip("files it could not read")
        return bytes_left
    try:
        info = os.fstat(src)
        if not stat.S_ISREG(info.st_mode):
            skip("links, devices, pipes and sockets")
            return bytes_left
        if info.st_size > bytes_left:
            skip("files beyond the run's disk limit (by length)")
            return bytes_left
        header({"path": path, "type": "file", "size": info.st_size})
        left = info.st_size
        while left:
            chunk = os.read(src, min(CHUNK, left)) or bytes(min(CHUNK, left))  # a file that shrank: the frame stays whole
            write_all(fd, chunk)
            left -= len(chunk)
        return bytes_left - info.st_size
    finally:
        os.close(src)


def main(cfg: dict[str, Any]) -> NoReturn:
    """Run main.py once (``cfg``: the run's folder, limits and control descriptor; under ``unshare``, its view too)."""
    os.umask(0o022)  # what it makes for the run (folders, files) is readable by the run's own user
    if cfg.get("view"):
        build_view(cfg)
    else:
        load_libc()
    not_dumpable()
    contained = bool(cfg.get("contained"))
    if contained:
        set_capabilities(KEPT_CAPABILITIES)
    os.chdir(cfg["cwd"])
    os.makedirs("tmp", exist_ok=True)
    with open("main.py") as fh:  # evoskill wrote it for its own user only: read before becoming the run's
        source = fh.read()
    ids = pick_ids(cfg.get("ids"))
    control = cfg.get("control_fd")
    if contained:
        loopback_up()
        start_relay(cfg.get("egress"), ids)
        check(libc.unshare(CLONE_NEWPID), "could not give the run a PID namespace")
    pid = os.fork()
    if pid == 0:
        if control is not None:
            os.close(control)
        if contained:
            enter_run(ids, cfg["cwd"])
        else:
            hand_over(ids)
            become(ids)
        start_main(cfg["rlimits"], source=source)
        raise SystemExit(0)  # the interpreter's own exit: buffers flushed, atexit handlers run
    status, timed_out, cpu_s = wait(pid, cfg.get("wall_s"))
    if status is None:
        os.kill(pid, signal.SIGKILL)  # PID 1 of the run's namespace: every process of the run ends with it
        os.waitpid(pid, 0)
    if control is not None:
        become(ids)  # the run folder is read with the run's own rights
        send_outputs(control, status, timed_out, cpu_s, cfg["handback"])
        os.close(control)
    if timed_out or status is None:
        os._exit(124)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if os.getpid() != 1:  # die the same way, so the caller sees the signal
            signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status))
