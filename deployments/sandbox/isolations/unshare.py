"""The ``unshare`` fallback: new mount, PID, IPC, UTS and network namespaces from util-linux's ``unshare``; the launcher
builds the allow-list view itself (bind mounts, a size-limited tmpfs run folder, ``pivot_root``) and keeps only the
capabilities it needs to give the run its own. As root no user namespace is made (the host's ids, so a run can be given an
unprivileged one); otherwise the launcher is root of a user namespace of its own."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

from deployments.sandbox.isolations.base import WARM_WORK, Containment, Isolation, etc_files
from deployments.sandbox.limits import MB, SandboxLimits
from deployments.sandbox.view import SandboxView

__all__ = ["Unshare"]


def flags() -> list[str]:
    """``unshare``'s arguments: a network namespace of its own too (the web, if any, is reached through evoskill's proxy)."""
    user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]  # an unprivileged user mounts in its own user namespace
    return ["unshare", "--pid", "--mount", "--mount-proc", "--ipc", "--uts", "--net", "--fork", "--kill-child", *user]


class Unshare(Isolation):
    name = "unshare"
    program = "unshare"

    def cold(self, view: SandboxView | None, limits: SandboxLimits, workdir: Path) -> Containment:
        assert view is not None  # contained: a run always has a view
        root = workdir / ".sandbox-root"  # the new root's mount point, in the launcher's own namespace only
        root.mkdir()
        config = {"view": view.as_config(), "root": str(root), "disk_bytes": limits.disk_mb * MB, "etc": etc_files(workdir)}
        return Containment(flags(), config, mount_point=root)

    def warm(self, view: SandboxView, limits: SandboxLimits) -> Containment:
        root = Path(tempfile.mkdtemp(prefix="evoskill-warm-root-"))  # a mount point only, in the executor's own namespace
        atexit.register(shutil.rmtree, root, True)
        return Containment(flags(), {"view": view.as_config(), "root": str(root), "etc": etc_files(WARM_WORK)})
