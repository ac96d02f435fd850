"""Take back what a contained run hands back, as data: its status line, then its run folder's folders and regular files.

The stream (``launcher.py``'s ``send_outputs``) is a JSON status line; then per entry a JSON header line,
``{"path": "a/b", "type": "dir"}`` or ``{"path": "a/b.txt", "type": "file", "size": n}`` followed by exactly ``n``
bytes; then a JSON end line saying what stayed behind. Nothing in it is trusted:

- every line is bounded and validated (pydantic), every name checked: relative, no ``.`` or ``..`` parts, no NUL,
  parts of at most 255 bytes, at most 64 deep; the names evoskill keeps for itself at the top are refused;
- only folders and regular files are made, each beneath the run's destination and without following a link: every
  part is opened with ``O_NOFOLLOW`` relative to its parent's descriptor, and a file is created with ``O_EXCL``, so
  nothing that is already there is written through;
- at most ``max_files`` entries and ``max_bytes`` bytes (by the length each header states, so a sparse file counts in
  full), copied in 64 KiB chunks, and nothing after ``deadline``.

A stream that breaks a rule is not read further: ``stop_sender`` is called (the caller kills the sender) and
``problem`` says why; what came before stays.
"""

from __future__ import annotations

import json
import os
import select
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = ["HandBack", "HandBackBounds", "RunStatus", "RESERVED_NAMES"]

_CHUNK = 1 << 16
_LINE_BYTES = 8192  # a header line: a path of at most 4096 bytes, quoted, and a few fields
_PART_BYTES, _DEPTH = 255, 64
# Names at the top of a run folder that are evoskill's, never a run's: its script, the unshare fallback's mount point, its own marks.
RESERVED_NAMES = ("main.py", ".sandbox-root")
_RESERVED_PREFIX = ".evoskill"


class RunStatus(BaseModel):
    """How the run's process ended: its wait status, whether the wall clock stopped it, the CPU seconds it used."""

    model_config = ConfigDict(extra="forbid")

    status: int | None
    timed_out: bool = False
    cpu_s: float = Field(default=0.0, ge=0)


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(max_length=4096)
    type: Literal["dir", "file"]
    size: int = Field(default=0, ge=0)


class _End(BaseModel):
    model_config = ConfigDict(extra="forbid")

    end: Literal[True]
    skipped: dict[str, int] = Field(default_factory=dict, max_length=16)
    stopped: str | None = Field(default=None, max_length=200)


@dataclass(frozen=True)
class HandBackBounds:
    """What one hand-back may bring: entries, bytes (by length) and the moment (``time.monotonic()``) it must be over."""

    max_files: int
    max_bytes: int
    deadline: float


class _Refused(Exception):
    """The stream broke a rule; the message says which."""


def _parts(path: str) -> list[str]:
    """The parts of an entry's path, or ``_Refused`` when it is not a plain relative name beneath the folder."""
    parts = path.split("/")
    if not path or len(parts) > _DEPTH:
        raise _Refused(f"an entry's name is empty or deeper than {_DEPTH} folders")
    for part in parts:
        try:
            size = len(part.encode("utf-8"))
        except UnicodeEncodeError:
            size = _PART_BYTES + 1
        if part in ("", ".", "..") or "\x00" in part or size > _PART_BYTES:
            raise _Refused(f"an entry's name is not a plain relative path ({path[:80]!r})")
    if parts[0] in RESERVED_NAMES or parts[0].startswith(_RESERVED_PREFIX):
        raise _Refused(f"an entry takes a name evoskill keeps for itself ({parts[0]!r})")
    return parts


class _Stream:
    """Reads the pipe in chunks, never past the deadline; lines are bounded."""

    def __init__(self, fd: int, deadline: float):
        self.fd, self.deadline = fd, deadline
        self.buffer = bytearray()
        self.ended = False

    def _fill(self) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0 or not select.select([self.fd], [], [], left)[0]:
            raise _Refused("the hand-back did not finish within the run's wall-clock limit")
        data = os.read(self.fd, _CHUNK)
        if not data:
            self.ended = True
        self.buffer += data

    def line(self) -> bytes | None:
        """The next line (without its newline), or None at the end of the stream."""
        while True:
            end = self.buffer.find(b"\n", 0, _LINE_BYTES + 1)
            if end >= 0:
                line = bytes(self.buffer[:end])
                del self.buffer[: end + 1]
                return line
            if len(self.buffer) > _LINE_BYTES:
                raise _Refused("a header line is too long")
            if self.ended:
                if self.buffer:
                    raise _Refused("the stream ends in the middle of a line")
                return None
            self._fill()

    def copy(self, size: int, out: int) -> None:
        """Exactly ``size`` bytes of the stream into the descriptor ``out``, a chunk at a time."""
        while size:
            if not self.buffer:
                if self.ended:
                    raise _Refused("the stream ends in the middle of a file")
                self._fill()
                continue
            chunk = bytes(self.buffer[:size])
            del self.buffer[: len(chunk)]
            view = memoryview(chunk)
            while view:
                view = view[os.write(out, view) :]
            size -= len(chunk)


class _Tree:
    """Makes folders and files beneath ``dest`` only, never through a link; the last folder's descriptor is kept."""

    def __init__(self, dest: Path):
        self.root = os.open(dest, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        self.held: tuple[tuple[str, ...], int] | None = None

    def folder(self, parts: list[str]) -> int:
        """The descriptor of the folder ``parts`` (each step opened without following a link)."""
        key = tuple(parts)
        if not key:
            return self.root
        if self.held is not None and self.held[0] == key:
            return self.held[1]
        fd = os.dup(self.root)
        for part in parts:
            try:
                step = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            except OSError as exc:
                raise _Refused(f"{'/'.join(parts)[:80]!r} is not a folder of the run ({exc.strerror})") from exc
            finally:
                os.close(fd)
            fd = step
        self.release()
        self.held = (key, fd)
        return fd

    def make_dir(self, parts: list[str]) -> None:
        parent = self.folder(parts[:-1])
        try:
            os.mkdir(parts[-1], 0o700, dir_fd=parent)
        except FileExistsError:
            if not stat.S_ISDIR(os.stat(parts[-1], dir_fd=parent, follow_symlinks=False).st_mode):
                raise _Refused(f"{'/'.join(parts)[:80]!r} is already there and not a folder") from None

    def make_file(self, parts: list[str]) -> int:
        try:
            return os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=self.folder(parts[:-1]))
        except FileExistsError:
            raise _Refused(f"{'/'.join(parts)[:80]!r} comes twice, or is already there") from None

    def release(self) -> None:
        if self.held is not None:
            os.close(self.held[1])
            self.held = None

    def close(self) -> None:
        self.release()
        os.close(self.root)


class HandBack(threading.Thread):
    """Reads one run's hand-back from the pipe ``fd`` into ``dest`` in the background; ``status``, ``files``, ``bytes``,
    ``left_behind`` and ``problem`` once joined. ``stop_sender`` is called when the stream is refused part way."""

    def __init__(self, fd: int, dest: Path, bounds: HandBackBounds, stop_sender: Callable[[], None] = lambda: None):
        super().__init__(daemon=True, name="evoskill-hand-back")
        self.fd, self.dest, self.bounds, self.stop_sender = fd, dest, bounds, stop_sender
        self.status: RunStatus | None = None
        self.files = self.bytes = 0
        self.left_behind: str | None = None
        self.problem: str | None = None

    def run(self) -> None:
        stream = _Stream(self.fd, self.bounds.deadline)
        try:
            first = stream.line()
            if first is None:
                self.problem = "the run's outputs were not handed back (the sandbox's launcher did not finish)"
                return
            self.status = RunStatus.model_validate_json(first)
            self._entries(stream)
        except (_Refused, ValidationError, OSError) as exc:
            why = exc if isinstance(exc, _Refused) else f"the hand-back is malformed ({type(exc).__name__})"
            self.problem = f"the run's outputs were not all kept: {why}"
            self.stop_sender()
        finally:
            os.close(self.fd)

    def _entries(self, stream: _Stream) -> None:
        tree = _Tree(self.dest)
        try:
            entries = 0
            while (line := stream.line()) is not None:
                try:
                    raw = json.loads(line)
                except ValueError:
                    raise _Refused("a header line is not JSON") from None
                if isinstance(raw, dict) and "end" in raw:
                    self._ended(_End.model_validate(raw))
                    return
                entry = _Entry.model_validate(raw)
                parts = _parts(entry.path)
                entries += 1
                if entries > self.bounds.max_files:
                    raise _Refused(f"more than {self.bounds.max_files} files and folders")
                if entry.type == "dir":
                    tree.make_dir(parts)
                    continue
                if entry.size > self.bounds.max_bytes - self.bytes:
                    raise _Refused(f"more than the run's {self.bounds.max_bytes // (1024 * 1024)} MB disk limit")
                out = tree.make_file(parts)
                try:
                    stream.copy(entry.size, out)
                finally:
                    os.close(out)
                self.files += 1
                self.bytes += entry.size
            raise _Refused("the stream ends before its end line")
        finally:
            tree.close()

    def _ended(self, end: _End) -> None:
        said = [f"{count} {why}" for why, count in sorted(end.skipped.items())]
        if end.stopped:
            said.append(f"nothing after {end.stopped}")
        self.left_behind = "; ".join(said) or None
