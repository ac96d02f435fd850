"""One interface for the ways a run is contained: each isolation says how to start the launcher (a cold run) and the
warm executor under it, and what it needs from the launcher besides the run's own settings."""

from __future__ import annotations

import os
import shutil
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from deployments.sandbox.limits import MB, SandboxLimits
from deployments.sandbox.view import GROUP, PASSWD, SandboxView

__all__ = ["Containment", "Isolation", "WARM_WORK", "SHM_BYTES", "RUN_IDS", "run_ids", "etc_files", "data_fd"]

WARM_WORK = Path("/sandbox")  # a warm run's folder, inside its view (a cold run's is at its own path)
SHM_BYTES = 64 * MB  # /dev/shm under bubblewrap: its own small tmpfs (semaphores, small shared arrays)
# Where evoskill runs as root, each run's processes get a user and group id of their own from this pool (the first, how
# many): never uid 0 of the host, and no other run's. It lies above the ranges systemd gives containers and below 2**31.
RUN_IDS = (0x7E000000, 4096)


def run_ids() -> list[int] | None:
    """The pool a run's user is picked from (``[first, count]``), or None where evoskill does not run as root (its runs
    keep evoskill's user, which is not root)."""
    return list(RUN_IDS) if os.geteuid() == 0 else None


def etc_files(home: Path) -> dict[str, str]:
    """``/etc/passwd`` and ``/etc/group`` of the view: one entry, the sandbox's own user (each run shows its own on top)."""
    ids = {"uid": os.getuid(), "gid": os.getgid(), "home": str(home)}
    return {"passwd": PASSWD.format(**ids), "group": GROUP.format(**ids)}


def data_fd(text: str) -> int:
    """A descriptor a program reads ``text`` from, at its start (a memory file: no size a pipe's buffer would block on)."""
    fd = os.memfd_create("evoskill-data", os.MFD_CLOEXEC)
    data = text.encode()
    written = 0
    while written < len(data):
        written += os.write(fd, data[written:])
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


@dataclass
class Containment:
    """How to start a launcher or executor: the command to run it under, what its config gains, the descriptors the
    command reads (closed here once it started), and a mount point to remove after a cold run."""

    prefix: list[str]
    config: dict[str, Any] = field(default_factory=dict)
    pass_fds: list[int] = field(default_factory=list)
    mount_point: Path | None = None


class Isolation(ABC):
    """One way of containing runs (``bwrap``, ``unshare``, ``none``)."""

    name: ClassVar[str]
    program: ClassVar[str | None] = None  # what it needs installed
    contained: ClassVar[bool] = True  # namespaces: the allow-list view, a PID namespace of its own, a run folder handed back
    shm_bytes: ClassVar[int] = 0  # the size of a /dev/shm of its own per run (0: /dev/shm is a link into the run folder)

    def missing(self) -> str | None:
        """Why it cannot be used here before trying a run (its program is not installed), or None."""
        if self.program is not None and shutil.which(self.program) is None:
            return f"'{self.name}' is not installed"
        return None

    def bounds_disk(self) -> bool:
        """Whether what a run writes in total is bounded (a size-limited run folder)."""
        return self.contained

    @abstractmethod
    def cold(self, view: SandboxView | None, limits: SandboxLimits, workdir: Path) -> Containment:
        """How to start the launcher of one run in ``workdir``."""

    @abstractmethod
    def warm(self, view: SandboxView, limits: SandboxLimits) -> Containment:
        """How to start a warm executor whose runs' folders are at ``WARM_WORK``."""
