"""The workspace is its owner's alone: folders 0700, files 0600.

``prepare_workspace`` (called by ``get_settings``, so by every door, flow, worker and server evoskill starts) sets
the process's umask to 077, which every process it starts inherits (the Prefect server, the embedded LLM server,
Dask workers, sandboxed runs), creates the workspace (and a store folder kept elsewhere) 0700, and tightens a
workspace made before: every folder and file owned by this user loses its group and other bits, once (a marker
file records it; a loosened root is tightened again). Files a user names outside the workspace
(``evoskill skills export -o FILE``) are made with the user's own umask: ``write_for_user``.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

__all__ = ["PRIVATE_UMASK", "prepare_workspace", "private_umask", "tighten", "user_umask", "write_for_user"]

PRIVATE_UMASK = 0o077
_MARKER = ".private"  # written once a root's tree is tightened

_lock = threading.Lock()
_user_umask: int | None = None
_prepared: set[Path] = set()


def private_umask() -> None:
    """From now on this process, and every process it starts, creates files for their owner only."""
    global _user_umask
    with _lock:
        previous = os.umask(PRIVATE_UMASK)
        if _user_umask is None:
            _user_umask = previous


def user_umask() -> int:
    """The umask the process had before evoskill made it private (the user's own)."""
    with _lock:
        if _user_umask is not None:
            return _user_umask
        current = os.umask(PRIVATE_UMASK)
        os.umask(current)
        return current


def _private(mode: int) -> bool:
    return mode & PRIVATE_UMASK == 0


def tighten(root: Path) -> int:
    """Take group and other permissions off ``root`` and everything in it that this user owns (links are left alone,
    never followed); returns how many entries changed. Nothing happens unless this user owns ``root``."""
    uid = os.getuid()
    try:
        top = os.lstat(root)
    except OSError:
        return 0
    if top.st_uid != uid or not stat.S_ISDIR(top.st_mode):
        return 0
    changed = 0

    def fix(path: str) -> None:
        nonlocal changed
        try:
            info = os.lstat(path)
            if info.st_uid == uid and not stat.S_ISLNK(info.st_mode) and not _private(info.st_mode):
                os.chmod(path, stat.S_IMODE(info.st_mode) & ~PRIVATE_UMASK)
                changed += 1
        except OSError:  # gone meanwhile, or not ours to change
            pass

    fix(str(root))
    for folder, dirs, files in os.walk(root):  # never follows links to folders
        for name in dirs + files:
            fix(os.path.join(folder, name))
    return changed


def _prepare_root(root: Path) -> None:
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    marker = root / _MARKER
    try:
        tight = _private(os.lstat(root).st_mode) and marker.is_file()
    except OSError:
        return
    if not tight:
        tighten(root)
        try:
            marker.touch()
        except OSError:  # a workspace of another user: not ours to mark
            pass


def prepare_workspace(*roots: Path) -> None:
    """Make the process's files private and ``roots`` (``Settings.private_roots``: the workspace, a store kept outside
    it) their owner's only. The umask is set on every call (cheap); each root is created and tightened once per process."""
    private_umask()
    for folder in (p.resolve() for p in roots):
        with _lock:
            if folder in _prepared:
                continue
            _prepared.add(folder)
        try:
            _prepare_root(folder)
        except OSError:  # an unwritable place is reported by whoever writes there
            with _lock:
                _prepared.discard(folder)


def write_for_user(path: Path, text: str) -> Path:
    """Write a file the user named: a new one outside the workspace gets the mode their own umask gives (inside it,
    the workspace's), an existing one keeps its mode, as any other command would."""
    inside = any(path.resolve().is_relative_to(root) for root in list(_prepared))
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        if not inside:
            os.fchmod(fd, 0o666 & ~user_umask())
    except FileExistsError:
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    return path
