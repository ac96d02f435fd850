"""Warm executors: contained processes with the heavy packages imported once, each forking a fresh child per run.

One executor per containment profile (isolation, network, view) and per evoskill process (so one per Dask
worker), started in the background the first time a run asks for it; until it is ready, and wherever it
cannot start, runs go cold (a new interpreter each), with one warning. An executor that stops is started
again for the next run. A few are kept, the least recently used stopped first. Beside them, a few that import
more (``extra_executor``: a skill's or a run's other modules, ``execute.py`` decides which), started one at a
time and not more often than every ``_EXTRA_EVERY_S``, never at the cost of the packages' own. An executor stopped
while it starts is ended as it gets there and never used.

The executor itself is ``zygote.py`` run by the caller's ``launch``; this module keeps it, hands it runs
(a JSON request and the run's descriptors on a Unix socket) and notices when it is gone.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import select
import signal
import socket
import subprocess
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from deployments.sandbox.cgroups import RunCgroups

__all__ = ["WarmExecutor", "WarmUnavailable", "executors", "extra_executor", "warm_executor", "stop_all"]

log = logging.getLogger(__name__)

_KEPT = 3  # executors kept per process (each holds the imported packages in memory)
_START_S = 120.0  # for the imports and the first contained run
_RESTARTS = 3  # an executor that stops more often than this stays cold
_READY_BYTES = 1 << 18  # its ready message lists the modules it imported (a datagram's most, here)
_EXTRAS_KEPT = 2  # executors that import more than the packages (extra_executor), per process
_EXTRA_EVERY_S = 20.0  # at most one of those starts in this time


class WarmUnavailable(RuntimeError):
    """The executor cannot take a run now (stopped, or never started): run it cold."""


Launch = Callable[[int], subprocess.Popen[bytes]]
Verify = Callable[["WarmExecutor"], str | None]
MakeGroups = Callable[[], RunCgroups]


class WarmExecutor:
    """One running executor: ``submit`` hands it a run; ``state`` is starting, ready, stopped or broken."""

    def __init__(self, key: Hashable, launch: Launch, verify: Verify, make_groups: MakeGroups, restarts: int = 0):
        self.key, self.restarts = key, restarts
        self._make_groups = make_groups
        self._spare_groups = RunCgroups()  # the cgroups the next run's process waits in
        self.state = "starting"
        self.why = ""
        self.ready = threading.Event()
        self.info: dict[str, Any] = {}
        self.modules: frozenset[str] = frozenset()  # what it has imported (of the packages it was started for), once ready
        self._launch, self._verify = launch, verify
        self._sock: socket.socket | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        # The thread that starts the executor lives as long as it does: bubblewrap's --die-with-parent follows the starting thread.
        self._thread = threading.Thread(target=self._run, name="evoskill-warm-executor", daemon=True)
        self._thread.start()

    @property
    def waiting_cgroups(self) -> list[str]:
        """The cgroup folders the next run's process waits in."""
        return [str(folder) for folder, _ in self._spare_groups.groups.values()]

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def _run(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            with self._lock:  # stop() before this point: it is not started at all
                if self.state == "stopped":
                    ours.close()
                    self.ready.set()
                    return
                self._proc = self._launch(theirs.fileno())
        except Exception as exc:  # noqa: BLE001 - whatever stops it from starting, runs go cold and waiters are told
            self._give_up(f"could not start it ({exc})")
            return
        finally:
            theirs.close()
        self._sock = ours
        error = bytearray()
        stderr = self._proc.stderr
        assert stderr is not None  # started with stderr=PIPE
        try:
            answered = bool(select.select([ours], [], [], _START_S)[0])
        except (OSError, ValueError):  # its socket closed under it: stopped while it started
            answered = True
        if not answered:
            self._stop_process()
            self._give_up(f"not ready after {_START_S:g} s")
            return
        try:
            message = ours.recv(_READY_BYTES)
            self.info = json.loads(message) if message else {}
        except (OSError, ValueError):
            self.info = {}
        if not self.info.get("ready"):
            try:
                self._proc.wait(timeout=10)  # it is ending: let it say why
            except subprocess.TimeoutExpired:
                pass
            self._stop_process()
            error += stderr.read() or b""
            lines = [line for line in error.decode(errors="replace").splitlines() if line.strip()]
            self._give_up(lines[-1] if lines else f"it exited with code {self._proc.returncode}")
            return
        self.modules = frozenset(str(name) for name in self.info.get("modules", ()))
        if self.info.get("missing"):
            log.info("sandbox: the warm executor runs without %s (not importable here)", ", ".join(self.info["missing"]))
        with self._lock:
            if self.state == "stopped":  # stopped while it started: it is ended, never used
                self._stop_process()
                self.ready.set()
                return
            self.state = "ready"
        try:
            with self._lock:  # the cgroups of the first run's process, which the executor makes ready now
                self._make_spare()
        except OSError as exc:
            self._stop_process()
            self._give_up(f"it did not take its first message ({exc})")
            return
        problem = self._verify(self)
        if problem is not None:
            self._stop_process()
            said = [line for line in (stderr.read() or b"").decode(errors="replace").splitlines() if line.strip()]
            self._give_up(f"its first run failed: {problem}" + (f"; it said: {said[-1]}" if said else ""))
            return
        log.debug("sandbox: warm executor ready (%s imported in %.2f s)", ", ".join(self.info.get("preloaded", [])), self.info.get("import_s", 0.0))
        self.ready.set()
        for line in iter(stderr.readline, b""):  # the executor's own messages (its runs write to their own pipes)
            log.debug("sandbox: warm executor: %s", line.decode(errors="replace").rstrip())
        code = self._proc.wait()
        with self._lock:
            self._spare_groups.kill_all_and_remove(wait=False)
            self._spare_groups = RunCgroups()
        if self.state == "ready":
            self.state, self.why = "stopped", f"it exited with code {code}"
            log.warning("sandbox: the warm executor stopped (%s); the next run starts a new one", self.why)

    def _give_up(self, why: str) -> None:
        with self._lock:
            self._spare_groups.kill_all_and_remove(wait=False)
            self._spare_groups = RunCgroups()
        if self.state == "stopped":  # stopped by evoskill while it started (the process ends, or a newer one took its place): no warning
            log.debug("sandbox: a warm executor stopped while it started (%s)", why)
            self.ready.set()
            return
        self.state, self.why = "broken", why
        log.warning("sandbox: warm executor unavailable (%s); runs start cold", why)
        self.ready.set()

    def _stop_process(self) -> None:
        if self._sock is not None:
            self._sock.close()
        if self._proc is not None and self._proc.poll() is None:
            try:  # its whole process group (it starts a session of its own): an inner containment process does not outlive it
                os.killpg(self._proc.pid, signal.SIGKILL)
            except OSError:
                self._proc.kill()
            self._proc.wait()

    def alive(self) -> bool:
        return self.state == "ready" and self._proc is not None and self._proc.poll() is None

    def holds(self, modules: frozenset[str]) -> bool:
        """Whether the executor is ready with ``modules`` imported: a run that imports them waits for none."""
        return self.alive() and self.ready.is_set() and modules <= self.modules

    def gone(self, within_s: float = 0.0) -> bool:
        """Whether the executor's process has ended (waiting up to ``within_s`` for it to)."""
        if self._proc is None:
            return True
        try:
            self._proc.wait(timeout=within_s)
        except subprocess.TimeoutExpired:
            return False
        return True

    def _make_spare(self) -> None:
        """Make the cgroups the next run's process waits in, and hand them to the executor (the lock held)."""
        assert self._sock is not None
        spare = self._make_groups()
        spare_fds = spare.procs_fds()
        try:
            socket.send_fds(self._sock, [json.dumps({"spare_groups": len(spare_fds)}).encode()], spare_fds)
        except OSError:
            spare.kill_all_and_remove(wait=False)
            raise
        finally:
            for fd in spare_fds:
                os.close(fd)
        self._spare_groups = spare

    def submit(self, request_for: Callable[[RunCgroups], dict[str, Any]], fds: list[int]) -> RunCgroups:
        """Hand the executor a run; its process, made ready ahead of time, is already in the cgroups returned.

        ``request_for`` gives those cgroups the run's limits and returns the request. The executor starts the run
        at once (it reports on its own descriptors); then the next run's process is made ready.
        """
        with self._lock:
            if self._sock is None or not self.alive():
                raise WarmUnavailable(self.why or "not ready")
            groups = self._spare_groups
            try:
                socket.send_fds(self._sock, [json.dumps(request_for(groups)).encode()], fds)
            except OSError as exc:
                groups.kill_all_and_remove(wait=False)
                self._spare_groups = RunCgroups()
                self.state, self.why = "stopped", f"it did not take the run ({exc})"
                raise WarmUnavailable(self.why) from exc
            try:
                self._make_spare()
            except OSError as exc:  # the run is under way; later runs find the executor stopped
                self.state, self.why = "stopped", f"it did not take the next run's cgroups ({exc})"
            return groups

    def stop(self) -> None:
        """Stop the executor (runs it started are ended with it); one still starting is ended as it gets there."""
        with self._lock:
            if self.state in ("starting", "ready"):
                self.state, self.why = "stopped", "stopped by evoskill"
        self._stop_process()
        with self._lock:
            self._spare_groups.kill_all_and_remove(wait=False)
            self._spare_groups = RunCgroups()


_pool: OrderedDict[Hashable, WarmExecutor] = OrderedDict()  # the packages' executors, one per containment profile
_extras: OrderedDict[Hashable, WarmExecutor] = OrderedDict()  # executors that import more (extra_executor)
_last_extra = float("-inf")  # when the last of those started (time.monotonic)
_pool_lock = threading.Lock()
_pool_pid = os.getpid()


def warm_executor(key: Hashable, launch: Launch, verify: Verify, make_groups: MakeGroups) -> WarmExecutor:
    """The executor for ``key``: the running one, else a new one starting in the background.

    ``launch`` starts its process; ``verify`` runs a first run through it; ``make_groups`` makes the cgroups of a run's process.
    """
    global _pool_pid
    with _pool_lock:
        if _pool_pid != os.getpid():  # a forked copy of this process: the parent's executors are not ours
            _pool.clear()
            _extras.clear()
            _pool_pid = os.getpid()
        found = _pool.get(key)
        if found is not None and found.state == "stopped" and found.restarts < _RESTARTS:
            found = WarmExecutor(key, launch, verify, make_groups, found.restarts + 1)
            _pool[key] = found
        elif found is None:
            found = WarmExecutor(key, launch, verify, make_groups)
            _pool[key] = found
            while len(_pool) > _KEPT:
                _pool.popitem(last=False)[1].stop()
        _pool.move_to_end(key)
        return found


def extra_executor(key: Hashable, launch: Launch, verify: Verify, make_groups: MakeGroups, start: bool = True) -> WarmExecutor | None:
    """An executor beyond the packages' (one that imports a skill's or a run's other modules too): the one for ``key`` where
    it runs; else, with ``start``, a new one starting in the background, unless another is starting or one started in the
    last ``_EXTRA_EVERY_S`` (each costs a core for seconds); else None. At most ``_EXTRAS_KEPT`` are kept, the least
    recently used stopped first; the packages' executors are never stopped for them."""
    global _last_extra
    with _pool_lock:
        if _pool_pid != os.getpid():
            return None
        found = _extras.get(key)
        if found is not None and found.state in ("starting", "ready"):
            _extras.move_to_end(key)
            return found
        starting = any(executor.state == "starting" for executor in _extras.values())
        if not start or starting or time.monotonic() - _last_extra < _EXTRA_EVERY_S:
            return None
        _last_extra = time.monotonic()
        found = _extras[key] = WarmExecutor(key, launch, verify, make_groups)
        _extras.move_to_end(key)
        while len(_extras) > _EXTRAS_KEPT:
            _extras.popitem(last=False)[1].stop()
        return found


def executors() -> list[WarmExecutor]:
    """This process's executors, the most recently used first (the packages' before the others)."""
    with _pool_lock:
        return [*reversed(_pool.values()), *reversed(_extras.values())] if _pool_pid == os.getpid() else []


@atexit.register
def stop_all() -> None:
    """Stop every executor of this process."""
    with _pool_lock:
        executors = [*_pool.values(), *_extras.values()] if _pool_pid == os.getpid() else []
        _pool.clear()
        _extras.clear()
    for executor in executors:
        executor.stop()
