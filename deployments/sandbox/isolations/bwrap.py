"""bubblewrap: the allow-list view from its arguments, a size-limited tmpfs run folder, private ``/dev`` and ``/proc``, new
PID, IPC, UTS and network namespaces (with the network on, evoskill's web proxy is the way out), every capability dropped
but those the launcher needs to give the run its own."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from deployments.sandbox.isolations.base import SHM_BYTES, WARM_WORK, Containment, Isolation, data_fd, etc_files
from deployments.sandbox.limits import MB, SandboxLimits
from deployments.sandbox.view import EGRESS, SandboxView, inside

__all__ = ["Bwrap"]

_COMMON = ("bwrap", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--new-session", "--cap-drop", "ALL")
# launcher.py's KEPT_CAPABILITIES: the launcher and the executor give each run its namespaces, folder and user with these;
# the run's own process keeps none.
_KEPT = ("CAP_CHOWN", "CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_NET_ADMIN", "CAP_SYS_ADMIN")


@cache
def sizes_tmpfs() -> bool:
    """Whether this bubblewrap can limit a tmpfs's size (``--size``, bubblewrap 0.8)."""
    try:
        return "--size" in subprocess.run(["bwrap", "--help"], capture_output=True, text=True).stdout
    except OSError:
        return False


def _parents(paths: Iterable[str], within: Iterable[str]) -> list[str]:
    """The folders above ``paths`` that are not ``/`` and not inside one of ``within`` (mounts of their own), outermost first."""
    found = {str(parent) for path in paths for parent in Path(path).parents if str(parent) != "/"}
    return sorted((folder for folder in found if not inside(folder, within)), key=lambda folder: folder.count("/"))


def _folders(folders: list[str]) -> list[str]:
    """Make ``folders`` readable by every user (bubblewrap makes the folders above a mount point owner-only): a run's own
    user must pass through them."""
    return [arg for folder in folders for arg in ("--perms", "0755", "--dir", folder)]


def command(view: SandboxView, limits: SandboxLimits, etc_fds: dict[str, int], warm: bool = False, main_fd: int | None = None) -> list[str]:
    """bubblewrap's arguments for ``view``; ``warm``: for the warm executor (each run mounts its own folder at ``view.work``);
    ``main_fd``: a cold run's main.py, copied into its folder (the run folder's own is its owner's only).

    As root it keeps the host's user ids (no user namespace), so a run can be given an unprivileged id of its own; otherwise
    its capabilities live in a user namespace of its own.
    """
    work, size = view.work, (["--size", str(limits.disk_mb * MB)] if sizes_tmpfs() else [])
    caps = [arg for cap in _KEPT for arg in ("--cap-add", cap)]
    args = [*_COMMON, *([] if os.geteuid() == 0 else ["--unshare-user"]), *caps, "--unshare-net"]  # the web, if any, through the proxy
    mounted = [*view.read_only, *view.scratch]
    covered = [path for path in view.covered if Path(path).is_dir()]
    etc = [f"/etc/{name}" for name in etc_fds]
    shown = [*mounted, *view.covered, *(link for _, link in view.links), *etc, work, "/dev/shm", "/proc/self", *([EGRESS] if view.egress else [])]
    args += _folders(_parents(shown, mounted))
    for path in view.scratch:
        args += [*size, "--perms", "1777", "--tmpfs", path]
    args += _folders([folder for folder in _parents(shown, view.read_only) if inside(folder, view.scratch) and folder not in view.scratch])
    for path in view.read_only:
        args += ["--ro-bind", path, path]
    for target, link in view.links:
        args += ["--symlink", target, link]
    for path in view.covered:  # reads as empty; a folder is made read-only once the run folder, which may lie in it, is mounted
        args += ["--tmpfs", path] if path in covered else ["--dev-bind", "/dev/null", path]
    if view.egress is not None:
        args += ["--ro-bind", view.egress, EGRESS]
    for name, fd in etc_fds.items():  # a file of the view's own (a run binds its own entries on top), read-only with the rest
        args += ["--perms", "0644", "--file", str(fd), f"/etc/{name}"]
    args += ["--dev", "/dev"]
    for device, seen_at in view.devices:  # a GPU run's devices (the read-only /dev above them does not stop their use)
        parent = os.path.dirname(seen_at)
        args += [*(["--perms", "0755", "--dir", parent] if parent != "/dev" else []), "--dev-bind", device, seen_at]
    args += ["--remount-ro", "/dev", "--perms", "1777", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm", "--proc", "/proc"]
    args += _folders([folder for folder in _parents([work], []) if inside(folder, covered) and folder not in covered])
    args += ["--perms", "0755", "--dir", work] if warm else [*size, "--tmpfs", work, "--perms", "0644", "--file", str(main_fd), f"{work}/main.py"]
    for path in covered:
        args += ["--remount-ro", path]
    return [*args, "--remount-ro", "/", "--chdir", "/" if warm else work, "--"]


class Bwrap(Isolation):
    name = "bwrap"
    program = "bwrap"
    shm_bytes = SHM_BYTES

    def bounds_disk(self) -> bool:
        return sizes_tmpfs()

    def cold(self, view: SandboxView | None, limits: SandboxLimits, workdir: Path) -> Containment:
        assert view is not None  # contained: a run always has a view
        etc_fds = {name: data_fd(text) for name, text in etc_files(workdir).items()}
        main_fd = data_fd((workdir / "main.py").read_text())
        return Containment(command(view, limits, etc_fds, main_fd=main_fd), pass_fds=[*etc_fds.values(), main_fd])

    def warm(self, view: SandboxView, limits: SandboxLimits) -> Containment:
        etc_fds = {name: data_fd(text) for name, text in etc_files(WARM_WORK).items()}
        return Containment(command(view, limits, etc_fds, warm=True), pass_fds=list(etc_fds.values()))
