"""The warm executor's program: imports the heavy packages once, then forks a fresh, contained child per run.

Like ``launcher.py`` it is not imported: ``execute`` starts ``python -I -c <launcher.py><zygote.py>serve(cfg)``
inside the same containment as a cold run (bubblewrap, or ``unshare`` with the launcher's view), keeping
only the capabilities it needs to give each run its own namespaces. It uses the standard library and the
launcher's functions only.

Runs start from a *runner* forked ahead of time, so a run waits for none of this:

1. the runner (a fork of the executor) enters new mount, PID, IPC, UTS and network namespaces (with the network on,
   its own 127.0.0.1 carries web requests to evoskill's proxy), mounts a fresh size-limited tmpfs as the run folder and over every other writable place of the
   view, and forks the run's first process, PID 1 of its namespace: it takes a mount namespace and ``/proc`` of its
   own (the kernel's knobs read-only), becomes the run's user (an unprivileged id picked for the run where evoskill
   runs as root), drops every capability, and waits;
2. for a request (a JSON message on the socket with the run's descriptors: stdout, stderr, the control pipe,
   the code, the cancel pipe, the run's cgroups) the executor hands both to the runner and forks the next one;
3. the runner moves the run's process, and itself, into the run's cgroups, writes ``main.py``, gives up its own
   privileges for the run's (its user, no capabilities, not dumpable) and lets the process go: it takes the run's
   stdout and stderr, closes every other descriptor and runs main.py under the limits (when it ends, the kernel ends
   every other process of the run);
4. the runner waits for it up to the wall-clock limit, or until evoskill cancels the run (a byte on, or the close of,
   the run's cancel pipe), then kills it, and with it the run, and writes the status line and the run folder's files
   on the control pipe, as a cold launcher does.

No run sees another's folder, processes or scratch space, and nothing a run does reaches the executor or a
later run: each run is a new fork of the executor as it was after its imports, which never runs code itself.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

    from deployments.sandbox.launcher import (
        CLONE_NEWIPC,
        CLONE_NEWNET,
        CLONE_NEWNS,
        CLONE_NEWPID,
        CLONE_NEWUTS,
        KEPT_CAPABILITIES,
        MS_NODEV,
        MS_NOSUID,
        MS_PRIVATE,
        MS_REC,
        MS_REMOUNT,
        PR_SET_PDEATHSIG,
        become,
        bind,
        build_view,
        check,
        close_all_but,
        enter_run,
        fail,
        libc,
        load_libc,
        loopback_up,
        mount,
        not_dumpable,
        pick_ids,
        send_outputs,
        set_capabilities,
        start_main,
        start_relay,
        wait,
    )  # fmt: skip

MAX_FDS = 16


def preload(names: list[str]) -> tuple[list[str], dict[str, str]]:
    """Import ``names`` (the heavy packages); what was imported, and why the others were not.

    A failed import (an exit too) leaves no module behind (its half-imported modules would break a run that imports it).
    Matplotlib, which some of them import, writes its font cache while it is imported: into a folder of its own here, as
    no run's folder exists yet; runs keep the fonts it found, in memory (the folder itself is not theirs: a run's
    matplotlib writes no cache there)."""
    import importlib
    import tempfile

    cache = None
    for place in ("/dev/shm", "/tmp", "/var/tmp"):
        try:
            cache = tempfile.mkdtemp(prefix="evoskill-mpl-", dir=place)
            break
        except OSError:
            continue
    if cache is not None and "MPLCONFIGDIR" not in os.environ:
        os.environ["MPLCONFIGDIR"] = cache
    done, missing = [], {}
    for name in names:
        before = set(sys.modules)
        try:
            importlib.import_module(name)
            done.append(name)
        except (Exception, SystemExit) as exc:  # a package missing here: runs that need it import it (and fail) themselves
            missing[name] = f"{type(exc).__name__}: {exc}"[:300]
            for added in set(sys.modules) - before:
                del sys.modules[added]
    if cache is not None and os.environ.get("MPLCONFIGDIR") == cache:
        del os.environ["MPLCONFIGDIR"]  # a run's own matplotlib settings live in its own home
    return done, missing


def threads() -> int:
    """Threads of this process (a fork copies only the calling one)."""
    try:
        with open("/proc/self/status") as fh:
            return next(int(line.split()[1]) for line in fh if line.startswith("Threads:"))
    except (OSError, StopIteration, ValueError):
        return 1


def address_space() -> int:
    """Bytes of address space this process has mapped."""
    try:
        with open("/proc/self/status") as fh:
            return next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:"))
    except (OSError, StopIteration, ValueError):
        return 0


def reseed() -> None:
    """New random states: a fork would otherwise give every run the executor's sequence."""
    random = sys.modules.get("random")
    if random is not None:
        random.seed()
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        numpy_random.seed()


def receive(sock: socket.socket) -> tuple[dict[str, Any], list[int]] | None:
    """The next request on ``sock`` and its descriptors, or None when the other end is gone."""
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(sock, 1 << 16, MAX_FDS)
        except InterruptedError:
            continue
        return (json.loads(data), fds) if data else None


def first_process(link: socket.socket, pts: bool, ids: list[int] | None, home: str) -> NoReturn:
    """PID 1 of a run's namespace: ``enter_run`` (its own mounts and /proc, its user, no capabilities), new random states;
    then, when the runner says so, main.py. It dies with its runner (and the whole run with it)."""
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # a runner that died before this line: its socket says so below
    enter_run(ids, home, pts)
    reseed()
    message = receive(link)
    if message is None:  # the runner is gone: no run
        os._exit(0)
    request, (out, err) = message
    rlimits = request["rlimits"]
    if "RLIMIT_AS" in rlimits:  # the address space the executor's imports take is not the run's: its limit comes on top
        rlimits["RLIMIT_AS"] += address_space()
    os.dup2(out, 1)
    os.dup2(err, 2)
    close_all_but({0, 1, 2, link.fileno()})
    start_main(rlimits, forked=True, report_fd=link.fileno())
    os._exit(0)


def runner(sock: socket.socket, places: dict[str, Any], groups: list[int]) -> NoReturn:
    """A runner (see the module's docstring): made ready ahead of time, then one run, then gone.

    ``places``: the run folder (``work``), the view's other writable places (``fresh``), the read-only paths
    inside those (``kept``), the size of each tmpfs until the run says its own (``disk_bytes``) and the pool of user
    ids a run's user is picked from where evoskill runs as root (``ids``).
    """
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # it waits for the run's process
    close_all_but({0, 1, 2, sock.fileno(), *groups})
    if libc.unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET) != 0:
        import ctypes

        fail(f"could not enter a run's namespaces ({os.strerror(ctypes.get_errno())})")
    loopback_up()
    ids = pick_ids(places.get("ids"))
    start_relay(places.get("egress"), ids)
    check(libc.unshare(CLONE_NEWPID), "could not give the run a PID namespace")
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    size = f",size={places['disk_bytes']}"
    kept = [(path, os.open(path, os.O_PATH | os.O_CLOEXEC)) for path in places["kept"]]
    for path in places["fresh"]:  # the view's other writable places: empty and private to this run
        mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777{size}")
    if places.get("shm_bytes"):
        mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={places['shm_bytes']}")
    for path, fd in kept:  # shown again on top, as the view had them
        bind(f"/proc/self/fd/{fd}", path)
        os.close(fd)
    work = places["work"]
    mount("tmpfs", work, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=755{size}")
    os.chdir(work)
    os.mkdir("tmp")
    os.close(os.open("main.py", os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644))  # filled when the run comes (the folder is its user's by then)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:
        sock.close()
        ours.close()
        first_process(theirs, bool(places.get("shm_bytes")), ids, work)
    theirs.close()
    process = os.pidfd_open(pid)  # signals reach this process only, never a later one with its number
    try:
        serve_run(sock, ours, pid, process, places, groups, ids)
    finally:  # whatever happens here, the run ends with its runner
        kill(process)
    os._exit(0)


def kill(process: int) -> None:
    try:
        signal.pidfd_send_signal(process, signal.SIGKILL)
    except ProcessLookupError:
        pass


def serve_run(sock: socket.socket, ours: socket.socket, pid: int, process: int, places: dict[str, Any], groups: list[int],
              ids: list[int] | None) -> None:  # fmt: skip
    """The runner's part once the run's process waits: its cgroups, then one run."""
    work = places["work"]
    for group in groups:  # the run's process, all it starts and this runner count against the run's limits (set when the run comes)
        try:
            os.write(group, str(pid).encode())
            os.write(group, str(os.getpid()).encode())
        except OSError as exc:
            fail(f"could not move a run's process into its cgroup ({exc})")
        os.close(group)
    message = receive(sock)
    if message is None:  # the executor is gone
        return
    request, (out, err, control, code, cancel) = message
    os.dup2(err, 2)  # what goes wrong from here is the run's to read
    os.close(err)
    if request["disk_bytes"] != places["disk_bytes"]:
        for path in [*places["fresh"], work]:
            mount(None, path, None, MS_REMOUNT | MS_NOSUID | MS_NODEV, f"size={request['disk_bytes']}")
    with os.fdopen(code, "rb") as src, open("main.py", "wb") as dst:
        dst.write(src.read())
    become(ids)  # nothing it does from here needs privileges: it only waits, and reads the run folder back with the run's rights
    not_dumpable()
    try:
        socket.send_fds(ours, [json.dumps(request).encode()], [out, 2])
    except OSError as exc:
        fail(f"the run's process did not start ({exc})")
    os.close(out)
    status, timed_out, cpu_s = wait(pid, request["wall_s"], report=ours, cancel=cancel)
    kill(process)  # PID 1: every process of the run ends with it (it has ended, said it is done, ran out of time or was cancelled)
    try:  # reaped once the kernel has ended every other process of the run: nothing writes while the folder is read back
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    send_outputs(control, status, timed_out, cpu_s, request["handback"])
    os.close(control)
    os.close(2)  # the run's stderr: its reader need not wait for this process to be torn down


def spare(listener: socket.socket, places: dict[str, Any], groups: list[int]) -> socket.socket:
    """A runner forked now, for the next request, its run's process in ``groups``; the socket that hands it the request."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    sys.stdout.flush()
    sys.stderr.flush()
    if os.fork() == 0:
        try:
            listener.close()
            ours.close()
            runner(theirs, places, groups)
        except SystemExit:  # main.py's own end, in the run's process: the interpreter exits as after a cold run
            raise
        except BaseException as exc:  # never back into the executor's loop
            fail(f"could not start the run ({type(exc).__name__}: {exc})")
    theirs.close()
    return ours


def refuse(fds: list[int], why: str) -> None:
    """Tell a run on its stderr that it could not start, and let its descriptors go."""
    try:
        os.write(fds[1], f"sandbox: {why}; refusing to run\n".encode())
    except (IndexError, OSError):
        pass
    for fd in fds:
        os.close(fd)


def serve(cfg: dict[str, Any]) -> NoReturn:
    """Build the view (under ``unshare``), import the heavy packages, then hand each request to a runner until the socket closes."""
    os.umask(0o022)  # what it makes for runs (folders, files) is readable by each run's own user
    if cfg.get("view"):
        build_view(cfg, warm=True)
    else:
        load_libc()
    not_dumpable()
    set_capabilities(KEPT_CAPABILITIES)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    os.chdir("/")
    started = time.perf_counter()
    done, missing = preload(cfg["preload"])
    import gc

    gc.freeze()  # the imported objects: a run's collections skip them (and do not copy their pages)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # runners are reaped by the kernel the moment they end
    listener = socket.socket(fileno=cfg["socket_fd"])
    places = cfg["places"]
    roots = {name.split(".", 1)[0] for name in cfg["preload"]}
    modules = sorted(name for name in sys.modules if name.split(".", 1)[0] in roots)  # what a run of these packages finds imported
    ready = {"ready": True, "preloaded": done, "missing": missing, "modules": modules, "import_s": round(time.perf_counter() - started, 3),
             "threads": threads()}  # fmt: skip
    listener.sendall(json.dumps(ready).encode())
    # Runs, and after each (and first) the cgroups in which the next run's process is to wait: a runner is made ready for it then.
    next_runner: socket.socket | None = None
    groups: list[int] | None = None  # None: no cgroups given for the next run yet
    while True:
        message = receive(listener)
        if message is None:  # evoskill closed the socket (or is gone): stop; the namespace's end kills what is left
            os._exit(0)
        request, fds = message
        if request.get("spare_groups") is not None:
            groups = fds
            next_runner = spare(listener, places, groups)
            continue
        for attempt in range(2):
            try:
                if next_runner is None:
                    raise OSError("no runner was made ready")
                socket.send_fds(next_runner, [json.dumps(request).encode()], fds)
                break
            except OSError as exc:  # the runner died before its run (its setup failed): one more, in the same cgroups
                if next_runner is not None:
                    next_runner.close()
                next_runner = spare(listener, places, groups) if groups is not None and not attempt else None
                if next_runner is None:
                    refuse(fds, f"the warm executor could not start a run ({exc})")
                    fds = []
                    break
        for fd in [*fds, *(groups or [])]:
            os.close(fd)
        if next_runner is not None:
            next_runner.close()
        next_runner, groups = None, None
