"""One control group per sandboxed run: a process limit and a memory limit for the run's whole process tree.

Each controller (``pids``, ``memory``) is found in its own hierarchy (cgroup v1) or the unified one (v2),
under the cgroup evoskill itself runs in, so a run's memory also counts against any limit evoskill is under.
A controller that is missing or not writable here is skipped, with a warning once; ``cgroup_support`` says
which ones a run gets.
"""

from __future__ import annotations

import logging
import os
import signal
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

__all__ = ["RunCgroups", "cgroup_support", "make_run_cgroups"]

log = logging.getLogger(__name__)

_PREFIX = "evoskill-"
_STALE_S = 600


@dataclass(frozen=True)
class _Hierarchy:
    """Where one controller's groups are made, and whether it is cgroup v2."""

    base: Path
    v2: bool


def _mounts() -> list[tuple[str, str, list[str]]]:
    """(mount point, filesystem type, super options) of every cgroup mount."""
    found = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    for line in lines:
        before, _, after = line.partition(" - ")
        parts, tail = before.split(), after.split()
        if len(parts) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2") and parts[3] == "/":
            found.append((parts[4], tail[0], tail[2].split(",")))
    return found


def _own_paths() -> dict[str, str]:
    """This process's cgroup path per v1 controller, and under key '' the v2 path."""
    paths: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return paths
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            paths[name] = path
    return paths


def _writable(folder: Path) -> bool:
    return folder.is_dir() and os.access(folder, os.W_OK) and os.access(folder / "cgroup.procs", os.W_OK)


@cache
def _hierarchy(controller: str) -> _Hierarchy | None:
    """The writable folder where this process can make groups with ``controller``, or None (warned once)."""
    own = _own_paths()
    for mount, kind, options in _mounts():
        if kind == "cgroup" and controller in options:
            base = Path(mount) / own.get(controller, "/").lstrip("/")
            for folder in (base, Path(mount)):  # its own group, else the hierarchy's root
                if _writable(folder):
                    return _Hierarchy(folder, v2=False)
    for mount, kind, _ in _mounts():
        if kind == "cgroup2":
            for folder in (Path(mount) / own.get("", "/").lstrip("/"), Path(mount)):
                subtree = folder / "cgroup.subtree_control"
                try:
                    if controller not in subtree.read_text().split():
                        subtree.write_text(f"+{controller}")
                except OSError:
                    continue
                if _writable(folder):
                    return _Hierarchy(folder, v2=True)
    log.warning("sandbox: no writable %s cgroup here; %s", controller, _WITHOUT[controller])
    return None


_WITHOUT = {
    "pids": "the process limit relies on RLIMIT_NPROC (which does not bind root)",
    "memory": "the memory limit applies to each process (RLIMIT_AS), not to a run's processes together",
}


def cgroup_support() -> dict[str, bool]:
    """Which per-run cgroup limits this machine gives: ``{"pids": ..., "memory": ...}``."""
    return {name: _hierarchy(name) is not None for name in ("pids", "memory")}


@cache
def _sweep_stale(base: Path) -> None:
    """Remove empty run groups left by killed evoskill processes (once per process; young ones may be starting)."""
    for group in base.glob(f"{_PREFIX}*"):
        try:
            if time.time() - group.stat().st_mtime > _STALE_S and not (group / "cgroup.procs").read_text().strip():
                group.rmdir()
        except OSError:
            pass


def _read_counts(path: Path) -> dict[str, int]:
    try:
        return {k: int(v) for k, v in (line.split() for line in path.read_text().splitlines() if len(line.split()) == 2)}
    except (OSError, ValueError):
        return {}


@dataclass
class RunCgroups:
    """The groups of one run: join them first, read what they refused, kill what is left, remove them."""

    groups: dict[str, tuple[Path, bool]] = field(default_factory=dict)  # controller -> (folder, v2)

    @property
    def procs_files(self) -> list[str]:
        """The ``cgroup.procs`` files a starting run writes its pid into."""
        return [str(folder / "cgroup.procs") for folder, _ in self.groups.values()]

    def procs_fds(self) -> list[int]:
        """The ``cgroup.procs`` files opened for writing: whoever holds them can move a process into the groups."""
        return [os.open(path, os.O_WRONLY | os.O_CLOEXEC) for path in self.procs_files]

    def set_limits(self, max_processes: int, memory_mb: int) -> None:
        """The run's limits, on groups made ahead of it."""
        for controller, (folder, v2) in self.groups.items():
            try:
                _limit(folder, v2, controller, max_processes, memory_mb * 1024 * 1024)
            except OSError:  # cgroup v1 keeps memsw >= the limit: raising it, memsw goes first
                if controller == "memory" and not v2 and (folder / "memory.memsw.limit_in_bytes").exists():
                    (folder / "memory.memsw.limit_in_bytes").write_text(str(memory_mb * 1024 * 1024))
                    (folder / "memory.limit_in_bytes").write_text(str(memory_mb * 1024 * 1024))
                else:
                    raise

    def forks_refused(self) -> int:
        """How many times the process limit refused a fork."""
        folder = self.groups.get("pids", (None, False))[0]
        return _read_counts(folder / "pids.events").get("max", 0) if folder else 0

    def memory_kills(self) -> int:
        """How many processes the memory limit killed."""
        folder, v2 = self.groups.get("memory", (None, False))
        if folder is None:
            return 0
        return _read_counts(folder / ("memory.events" if v2 else "memory.oom_control")).get("oom_kill", 0)

    def pids(self) -> list[int]:
        found: set[int] = set()
        for folder, _ in self.groups.values():
            try:
                found.update(int(p) for p in (folder / "cgroup.procs").read_text().split())
            except (OSError, ValueError):
                pass
        return sorted(found)

    def kill(self) -> None:
        """SIGKILL every process in the groups now (they stay, to be removed later)."""
        self._kill()

    def _kill(self) -> bool:
        """SIGKILL every process in the groups; whether there were any."""
        pids = self.pids()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return bool(pids)

    def _remove(self) -> None:
        for folder, _ in self.groups.values():
            for _ in range(25):  # the kernel may take a moment to release a group whose last process just died
                try:
                    folder.rmdir()
                    break
                except OSError as exc:
                    error = exc
                    time.sleep(0.02)
            else:
                log.warning("sandbox: cgroup %s not removed (%s)", folder, error)

    def kill_all_and_remove(self, wait: bool = True) -> None:
        """SIGKILL every process still in the groups, then remove the groups.

        ``wait=False``: send the kills now and leave waiting for the processes to go (and removing the groups) to a
        background thread, for a run whose result does not depend on it (a warm run's process is torn down after it reports).
        """
        if not self._kill():
            self._remove()
        elif wait:
            self._finish()
        else:
            try:
                _REMOVER.submit(self._finish)
            except RuntimeError:  # the interpreter is exiting: no more background work
                self._finish()

    def _finish(self) -> None:
        pause, deadline = 0.001, time.monotonic() + 2.0
        while time.monotonic() < deadline and self._kill():
            time.sleep(pause)  # a killed process leaves its group within milliseconds
            pause = min(pause * 2, 0.02)
        self._remove()


_REMOVER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evoskill-cgroup-remover")


def _limit(folder: Path, v2: bool, controller: str, max_processes: int, memory_bytes: int) -> None:
    if controller == "pids":
        (folder / "pids.max").write_text(str(max_processes))
    elif v2:
        (folder / "memory.max").write_text(str(memory_bytes))
        if (folder / "memory.swap.max").exists():
            (folder / "memory.swap.max").write_text("0")
    else:
        (folder / "memory.limit_in_bytes").write_text(str(memory_bytes))
        if (folder / "memory.memsw.limit_in_bytes").exists():  # swap does not extend the limit
            (folder / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))


def make_run_cgroups(max_processes: int, memory_mb: int, label: str = "") -> RunCgroups:
    """A fresh group per available controller with the run's limits (a controller that fails is left out, warned).

    The groups are named ``evoskill-<label>`` (the run folder's name, unique), so an administrator sees which run a group is.
    """
    run = RunCgroups()
    name = f"{_PREFIX}{label or uuid.uuid4().hex[:12]}"
    for controller in ("pids", "memory"):
        where = _hierarchy(controller)
        if where is None:
            continue
        _sweep_stale(where.base)
        folder = where.base / name
        try:
            folder.mkdir()
            _limit(folder, where.v2, controller, max_processes, memory_mb * 1024 * 1024)
        except OSError as exc:
            log.warning("sandbox: could not make a %s cgroup (%s)", controller, exc)
            try:
                folder.rmdir()
            except OSError:
                pass
            continue
        run.groups[controller] = (folder, where.v2)
    return run
