"""Receive what a contained run hands back: its status line and its run folder's files (a tar stream).

The run folder of a contained run lives only inside the sandbox (a size-limited tmpfs). The launcher
sends its files when the code has finished; they are unpacked into the run's host folder with tarfile's
``data`` filter (no absolute paths, no links out of the folder, no devices), and never more bytes than
the run could have written.
"""

from __future__ import annotations

import io
import json
import tarfile
import threading
from pathlib import Path
from typing import IO, Any

__all__ = ["OutputReceiver"]

_READ = 1 << 16


class _Bounded:
    """A read-only stream that stops after ``cap`` bytes (and says so)."""

    def __init__(self, stream: IO[bytes], cap: int):
        self.stream, self.left, self.cut = stream, cap, False

    def read(self, size: int = -1) -> bytes:
        want = self.left if size < 0 else min(size, self.left)
        data = self.stream.read(want) if want > 0 else b""
        self.left -= len(data)
        if want <= 0 and size != 0 and self.stream.read(1):
            self.cut = True
        return data


class OutputReceiver(threading.Thread):
    """Reads the control descriptor of one run in the background; ``status`` and ``problem`` once joined."""

    def __init__(self, fd: int, dest: Path, cap_bytes: int):
        super().__init__(daemon=True)
        self.fd, self.dest, self.cap = fd, dest, cap_bytes
        self.status: dict[str, Any] | None = None
        self.problem: str | None = None
        self.files = 0

    def run(self) -> None:
        with io.BufferedReader(io.FileIO(self.fd, "rb"), buffer_size=_READ) as stream:
            line = stream.readline(4096)
            try:
                self.status = json.loads(line) if line.strip() else None
            except json.JSONDecodeError:
                self.status = None
            if self.status is None:
                self.problem = "the run's outputs were not handed back (the sandbox's launcher did not finish)"
                return
            if stream.peek(1):  # no archive: the run wrote nothing
                self._unpack(_Bounded(stream, self.cap))
            stream.read()  # drain, so the launcher never blocks on a full pipe

    def _unpack(self, stream: _Bounded) -> None:
        try:
            with tarfile.open(fileobj=stream, mode="r|") as tar:  # type: ignore[call-overload]  # any object with read() works
                for member in tar:
                    if not (member.isfile() or member.isdir() or member.issym()) or member.name in ("main.py", "./main.py"):
                        continue
                    try:
                        tar.extract(member, self.dest, filter="data")
                        self.files += member.isfile()
                    except (tarfile.FilterError, OSError) as exc:
                        self.problem = f"an output was not kept ({exc})"
        except tarfile.ReadError as exc:
            if self.files or str(exc) != "empty file":
                self.problem = f"the run's outputs were cut short ({exc})"
        if stream.cut:
            self.problem = f"the run's outputs went over {self.cap // (1024 * 1024)} MB and were cut"
