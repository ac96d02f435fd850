"""Small file primitives shared by the store, the trajectories and the server state."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["LockHeld", "file_lock", "write_atomic"]


class LockHeld(RuntimeError):
    """Another process holds the lock (raised by ``file_lock(..., wait=False)``)."""


@contextmanager
def file_lock(path: Path, wait: bool = True) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if needed) across processes; ``wait=False`` raises ``LockHeld``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError as exc:
            raise LockHeld(f"{path} is locked by another process") from exc
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def write_atomic(path: Path, text: str | bytes) -> Path:
    """Write ``text`` (or bytes) to ``path`` so that a crash never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    if isinstance(text, bytes):
        tmp.write_bytes(text)
    else:
        tmp.write_text(text)
    os.replace(tmp, path)
    return path
